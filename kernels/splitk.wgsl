// splitk.wgsl — the second half of a split-k product (ops_matmul.c op_matmul_split): y = the
// sum of the s partial products in part (s slices of n f32 values, summed in slice order), plus
// what y holds when acc = 1 (a fused residual add), rounded to O and clamped as matmul.wgsl's
// store does (a NaN stays a NaN). Grid: ceil(n / 256) workgroups in x, spilling into y.
//! variant splitk_sum_y32 splitk_sum
//! variant splitk_sum_y16 splitk_sum YMAX=65504 alias:O=f16
alias O = f32;
override YMAX: f32 = 0x1.fffffep+127f;
struct Params { n: u32, s: u32, acc: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> part: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<O>;

//! include common/clampn.wgsl

@compute @workgroup_size(256)
fn splitk_sum(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i >= p.n) { return; }
    var v = part[i];
    for (var z = 1u; z < p.s; z = z + 1u) { v = v + part[z * p.n + i]; }
    if (p.acc != 0u) { v = v + f32(y[i]); }
    y[i] = O(clampn(v, YMAX));
}
