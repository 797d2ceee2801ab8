// softcap.wgsl — y = cap * tanh(x / cap) over n f32 values (Gemma 2 final logits).
// The tanh argument is clamped to +-15 (tanh is exactly +-1 in f32 there), so no NaN;
// tanh_acc keeps the relative error small for tiny x too.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
struct Params { n: u32, cap: f32 }
var<immediate> p: Params;

//! include common/tanh_acc.wgsl

@compute @workgroup_size(256)
fn softcap_f32(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i >= p.n) { return; }
    y[i] = p.cap * tanh_acc(clamp(x[i] / p.cap, -15.0, 15.0));
}
