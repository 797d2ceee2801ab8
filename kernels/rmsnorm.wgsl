// rmsnorm.wgsl — y = x / sqrt(mean(x^2) + eps) * w, one workgroup per row of n f32 values,
// and the fused residual form x += rmsnorm(o) * w (Gemma post-attention / post-FFN norms).
// The weight is used as stored (Gemma files already hold 1+w). NaN-safe for finite input:
// when max|x|^2 would overflow the sum of squares, the row is pre-scaled by 1/max|x|.
// O is the output dtype of rmsnorm (f32, or f16 to feed f16-activation matmuls);
// rmsnorm_add always runs with O = f32 (the residual stream). rmsnorm_add_norm is rmsnorm_add
// followed by the next rmsnorm of the updated residual (Gemma: a post-norm and the next
// pre-norm in one dispatch): x += rmsnorm(o) * w, h = rmsnorm(x) * w2, h in O.
//! variant rmsnorm_f32      rmsnorm
//! variant rmsnorm_f32_f16o rmsnorm     alias:O=f16 OUT_MAX=65504
//! variant rmsnorm_add_f32  rmsnorm_add
//! variant rmsnorm_add_norm_f32      rmsnorm_add_norm
//! variant rmsnorm_add_norm_f32_f16o rmsnorm_add_norm alias:O=f16 OUT_MAX=65504
alias O = f32;
// OUT_MAX: outputs are clamped to +-OUT_MAX (65504 in f16 variants: a too-large value saturates
// instead of becoming inf, which would turn into NaN downstream).
override OUT_MAX: f32 = 3.4028234e38;
struct Params { n: u32, rows: u32, eps: f32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> x: array<f32>;       // (rows, n) the normalized input
@group(0) @binding(1) var<storage, read> w: array<f32>;       // (n)
@group(0) @binding(2) var<storage, read_write> y: array<O>;   // (rows, n) output, or the residual x
@group(0) @binding(2) var<storage, read_write> res: array<f32>;  // rmsnorm_add_norm: (rows, n) the residual
@group(0) @binding(3) var<storage, read> w2: array<f32>;          // rmsnorm_add_norm: (n) the next norm's weight
@group(0) @binding(4) var<storage, read_write> h: array<O>;       // rmsnorm_add_norm: (rows, n) its output
var<workgroup> part: array<f32, 256>;

// Both reductions leave every invocation with the result and end on a barrier,
// so `part` may be written again right after.
//! include common/clampn.wgsl

// two levels: 16 invocations sum 16 values each, then every invocation sums those 16
var<workgroup> part16: array<vec2<f32>, 16>;
fn reduce_sum(l: u32, v: f32) -> f32 {
    part[l] = v;
    workgroupBarrier();
    if (l < 16u) { var a = part[16u * l]; for (var t = 1u; t < 16u; t = t + 1u) { a = a + part[16u * l + t]; } part16[l] = vec2<f32>(a, 0.0); }
    let all = workgroupUniformLoad(&part16);
    var r = all[0].x;
    for (var t = 1u; t < 16u; t = t + 1u) { r = r + all[t].x; }
    return r;
}

// (max, sum) of the invocations' (m, s); every invocation gets it
var<workgroup> part2: array<vec2<f32>, 256>;
fn reduce_ms(l: u32, m: f32, s: f32) -> vec2<f32> {
    part2[l] = vec2<f32>(m, s);
    workgroupBarrier();
    if (l < 16u) {
        var a = part2[16u * l];
        for (var t = 1u; t < 16u; t = t + 1u) { let b = part2[16u * l + t]; a = vec2<f32>(max(a.x, b.x), a.y + b.y); }
        part16[l] = a;
    }
    let all = workgroupUniformLoad(&part16);
    var r = all[0];
    for (var t = 1u; t < 16u; t = t + 1u) { let b = all[t]; r = vec2<f32>(max(r.x, b.x), r.y + b.y); }
    return r;
}

// 1/rms of row `base`: one pass for max|x| and the sum of squares, reduced together; a
// second pass with the row pre-scaled by 1/max|x| only when the squares could overflow.
fn row_inv_rms(l: u32, base: u32) -> f32 {
    var m = 0.0;
    var s = 0.0;
    var i = l;
    for (; i + 768u < p.n; i = i + 1024u) {      // four loads in flight per pass
        let v = vec4<f32>(x[base + i], x[base + i + 256u], x[base + i + 512u], x[base + i + 768u]);
        m = max(m, max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w))));
        s = s + dot(v, v);
    }
    for (; i < p.n; i = i + 256u) { let v = x[base + i]; m = max(m, abs(v)); s = s + v * v; }
    let r = reduce_ms(l, m, s);
    if (r.x < 1e15) { return 1.0 / sqrt(r.y / f32(p.n) + p.eps); }
    // sc = 1/max|x| when the squares could overflow f32 (and for NaN rows, which stay NaN).
    let sc = 1.0 / r.x;
    var s2 = 0.0;
    for (var i = l; i < p.n; i = i + 256u) { let v = x[base + i] * sc; s2 = s2 + v * v; }
    return prescaled_inv(l, s2, sc);
}

// 1 / rms from this invocation's share s2 of the sum of (x * sc)^2, sc = 1 / max|x|
fn prescaled_inv(l: u32, s2: f32, sc: f32) -> f32 { return sc / sqrt(reduce_sum(l, s2) / f32(p.n) + p.eps * sc * sc); }

@compute @workgroup_size(256)
fn rmsnorm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
           @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let base = row * p.n;
    let inv = row_inv_rms(lid.x, base);
    var i = lid.x;
    for (; i + 768u < p.n; i = i + 1024u) {
        let v = vec4<f32>(x[base + i], x[base + i + 256u], x[base + i + 512u], x[base + i + 768u]);
        let g = vec4<f32>(w[i], w[i + 256u], w[i + 512u], w[i + 768u]);
        let r = v * inv * g;
        y[base + i] = O(clampn(r.x, OUT_MAX)); y[base + i + 256u] = O(clampn(r.y, OUT_MAX));
        y[base + i + 512u] = O(clampn(r.z, OUT_MAX)); y[base + i + 768u] = O(clampn(r.w, OUT_MAX));
    }
    for (; i < p.n; i = i + 256u) { y[base + i] = O(clampn(x[base + i] * inv * w[i], OUT_MAX)); }
}

@compute @workgroup_size(256)
fn rmsnorm_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let base = row * p.n;
    let inv = row_inv_rms(lid.x, base);
    for (var i = lid.x; i < p.n; i = i + 256u) { y[base + i] = O(f32(y[base + i]) + x[base + i] * inv * w[i]); }
}

// rmsnorm_add_norm: the row stays in registers (n <= 4096, a multiple of 4: the host checks,
// op_rmsnorm_add_norm_fits), read and written as 16-byte vectors, invocation l holding vectors
// l + 256 j; every input is loaded up front, so the kernel waits for memory once; then two
// reductions (max and sum of squares together, as row_inv_rms, with its pre-scaled pass when the
// squares could overflow).
@group(0) @binding(0) var<storage, read> xv4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> wv4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> resv4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> w2v4: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> hv4: array<vec4<O>>;
const RN4 = 4u;
// 1 / rms of the values v (this invocation's share) given their reduced (max, sum of squares)
fn inv_rms_regs4(l: u32, v: ptr<function, array<vec4<f32>, 4>>, r: vec2<f32>) -> f32 {
    if (r.x < 1e15) { return 1.0 / sqrt(r.y / f32(p.n) + p.eps); }
    let sc = 1.0 / r.x;
    var s2 = 0.0;
    for (var j = 0u; j < RN4; j = j + 1u) { let t = (*v)[j] * sc; s2 = s2 + dot(t, t); }
    return prescaled_inv(l, s2, sc);
}
fn absmax4(v: vec4<f32>) -> f32 { let a = abs(v); return max(max(a.x, a.y), max(a.z, a.w)); }

@compute @workgroup_size(256)
fn rmsnorm_add_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                    @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let n4 = p.n / 4u;
    let base = row * n4;
    var ov: array<vec4<f32>, 4>; var rv: array<vec4<f32>, 4>; var g1: array<vec4<f32>, 4>; var g2: array<vec4<f32>, 4>;
    for (var j = 0u; j < RN4; j = j + 1u) {      // vectors l + 256 j (0 past the row)
        let i = l + 256u * j;
        if (i < n4) { ov[j] = xv4[base + i]; rv[j] = resv4[base + i]; g1[j] = wv4[i]; g2[j] = w2v4[i]; }
        else { ov[j] = vec4<f32>(0.0); rv[j] = vec4<f32>(0.0); g1[j] = vec4<f32>(0.0); g2[j] = vec4<f32>(0.0); }
    }
    var m = 0.0; var s = 0.0;
    for (var j = 0u; j < RN4; j = j + 1u) { m = max(m, absmax4(ov[j])); s = s + dot(ov[j], ov[j]); }
    let inv = inv_rms_regs4(l, &ov, reduce_ms(l, m, s));
    m = 0.0; s = 0.0;
    for (var j = 0u; j < RN4; j = j + 1u) { rv[j] = rv[j] + ov[j] * inv * g1[j]; m = max(m, absmax4(rv[j])); s = s + dot(rv[j], rv[j]); }
    let inv2 = inv_rms_regs4(l, &rv, reduce_ms(l, m, s));
    for (var j = 0u; j < RN4; j = j + 1u) {
        let i = l + 256u * j;
        if (i < n4) {
            resv4[base + i] = rv[j];
            let t = rv[j] * inv2 * g2[j];
            hv4[base + i] = vec4<O>(O(clampn(t.x, OUT_MAX)), O(clampn(t.y, OUT_MAX)), O(clampn(t.z, OUT_MAX)), O(clampn(t.w, OUT_MAX)));
        }
    }
}
