// matvec.wgsl — y[r] = sum_k W[r, k] * x[k] for decode: one workgroup per output row,
// f32 accumulation, shared-memory reduction (portable: no subgroup operations needed).
// W is row-major (rows, k). Rows beyond 65535 use the dispatch's y dimension.
struct Params { k: u32, rows: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> w: array<f32>;        // (rows, k)
@group(0) @binding(1) var<storage, read> x: array<f32>;        // (k)
@group(0) @binding(2) var<storage, read_write> y: array<f32>;  // (rows)
var<workgroup> part: array<f32, 256>;

@compute @workgroup_size(256)
fn matvec_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
              @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nw.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let base = row * p.k;
    var s = 0.0;
    for (var i = l; i < p.k; i = i + 256u) { s = s + w[base + i] * x[i]; }
    part[l] = s;
    workgroupBarrier();
    for (var m = 128u; m > 0u; m = m >> 1u) {
        if (l < m) { part[l] = part[l] + part[l + m]; }
        workgroupBarrier();
    }
    if (l == 0u) { y[row] = part[0]; }
}
