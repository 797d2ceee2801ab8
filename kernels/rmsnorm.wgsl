// rmsnorm.wgsl — y = x / sqrt(mean(x^2) + eps) * w, one workgroup per row of n f32 values.
// The weight is used as stored (Gemma files already hold 1+w). NaN-safe for finite input:
// when max|x|^2 would overflow the sum of squares, the row is pre-scaled by 1/max|x|.
struct Params { n: u32, rows: u32, eps: f32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> x: array<f32>;       // (rows, n)
@group(0) @binding(1) var<storage, read> w: array<f32>;       // (n)
@group(0) @binding(2) var<storage, read_write> y: array<f32>; // (rows, n)
var<workgroup> part: array<f32, 256>;

fn reduce_sum(l: u32) -> f32 {
    workgroupBarrier();
    for (var k = 128u; k > 0u; k = k >> 1u) {
        if (l < k) { part[l] = part[l] + part[l + k]; }
        workgroupBarrier();
    }
    let r = workgroupUniformLoad(&part[0]);
    return r;
}

fn reduce_max(l: u32) -> f32 {
    workgroupBarrier();
    for (var k = 128u; k > 0u; k = k >> 1u) {
        if (l < k) { part[l] = max(part[l], part[l + k]); }
        workgroupBarrier();
    }
    let r = workgroupUniformLoad(&part[0]);
    return r;
}

@compute @workgroup_size(256)
fn rmsnorm_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let base = row * p.n;
    var m = 0.0;
    for (var i = l; i < p.n; i = i + 256u) { m = max(m, abs(x[base + i])); }
    part[l] = m;
    m = reduce_max(l);
    // sc = 1 for ordinary rows; 1/max|x| when the squares could overflow f32.
    let sc = select(1.0, 1.0 / m, m >= 1e15);
    var s = 0.0;
    for (var i = l; i < p.n; i = i + 256u) { let v = x[base + i] * sc; s = s + v * v; }
    part[l] = s;
    s = reduce_sum(l);
    let inv = sc / sqrt(s / f32(p.n) + p.eps * sc * sc);
    for (var i = l; i < p.n; i = i + 256u) { y[base + i] = x[base + i] * inv * w[i]; }
}
