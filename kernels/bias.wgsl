// bias.wgsl — y (n, T) += b (n), broadcast over rows (Qwen2 q/k/v bias). A is the
// activation dtype of y; the bias is f32 and the sum is formed in f32.
//! variant add_bias_f32 add_bias
//! variant add_bias_f16 add_bias alias:A=f16 OUT_MAX=65504
alias A = f32;
// OUT_MAX: outputs are clamped to +-OUT_MAX (65504 in f16 variants: a too-large value saturates
// instead of becoming inf, which would turn into NaN downstream).
override OUT_MAX: f32 = 3.4028234e38;
struct Params { n: u32, total: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> b: array<f32>;        // (n)
@group(0) @binding(1) var<storage, read_write> y: array<A>;    // (n, T)

//! include common/clampn.wgsl

@compute @workgroup_size(256)
fn add_bias(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i >= p.total) { return; }
    y[i] = A(clampn(f32(y[i]) + b[i % p.n], OUT_MAX));
}
