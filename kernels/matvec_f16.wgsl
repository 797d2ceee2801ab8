// matvec_f16.wgsl — y[r] = sum_k W[r, k] * x[k] with f16 weights read as packed pairs of
// u32 words, so devices without 16-bit storage run it too. The halves are decoded by bits, not
// with unpack2x16float: Debian 12's arm64 lavapipe (LLVM 15) aborts compiling that builtin
// (docs/porting.md, known driver bugs). f32 accumulation; k must be even (model rows always are).
struct Params { k: u32, rows: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> w: array<u32>;        // (rows, k/2) packed f16 pairs
@group(0) @binding(1) var<storage, read> x: array<vec2<f32>>;  // (k/2)
@group(0) @binding(2) var<storage, read_write> y: array<f32>;  // (rows)
var<workgroup> part: array<f32, 256>;

// IEEE half (low 16 bits of h) to f32: normals and inf/NaN by bits, subnormals exactly.
fn half_to_f32(h: u32) -> f32 {
    let sgn = (h & 0x8000u) << 16u;
    let em = h & 0x7fffu;
    if (em >= 0x7c00u) { return bitcast<f32>(sgn | 0x7f800000u | ((em & 0x3ffu) << 13u)); }
    if (em >= 0x400u) { return bitcast<f32>(sgn | ((em + 0x1c000u) << 13u)); }
    let v = f32(em) * 5.9604645e-8;
    return select(v, -v, sgn != 0u);
}

@compute @workgroup_size(256)
fn matvec_f16w_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                   @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let half_k = p.k / 2u;
    let base = row * half_k;
    var s = 0.0;
    for (var i = l; i < half_k; i = i + 256u) {
        let ww = w[base + i];
        let wv = vec2<f32>(half_to_f32(ww & 0xffffu), half_to_f32(ww >> 16u));
        let xv = x[i];
        s = s + wv.x * xv.x + wv.y * xv.y;
    }
    part[l] = s;
    workgroupBarrier();
    for (var m = 128u; m > 0u; m = m >> 1u) {
        if (l < m) { part[l] = part[l] + part[l + m]; }
        workgroupBarrier();
    }
    if (l == 0u) { y[row] = part[0]; }
}
