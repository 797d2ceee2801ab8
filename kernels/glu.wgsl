// glu.wgsl — gated FFN activation y = act(gate) * up over n elements, act = GELU-tanh
// (gelu != 0) or SiLU. Both are written as x * sigmoid(z) with a sigmoid that only ever
// calls exp on -|z| (no overflow, no inf/inf): SiLU z = x; GELU-tanh uses the identity
// 0.5 * (1 + tanh(u)) = sigmoid(2u) with u = sqrt(2/pi) (x + 0.044715 x^3) clamped to
// +-15, so no NaN for any finite x. A is the activation dtype; math in f32.
//! variant glu_f32 glu
//! variant glu_f16 glu alias:A=f16 OUT_MAX=65504
alias A = f32;
// OUT_MAX: outputs are clamped to +-OUT_MAX (65504 in f16 variants: a too-large value saturates
// instead of becoming inf, which would turn into NaN downstream).
override OUT_MAX: f32 = 3.4028234e38;
struct Params { n: u32, gelu: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> gate: array<A>;      // (n)
@group(0) @binding(1) var<storage, read> up: array<A>;        // (n)
@group(0) @binding(2) var<storage, read_write> y: array<A>;   // (n)

//! include common/clampn.wgsl

fn sigmoid(z: f32) -> f32 {
    let e = exp(-abs(z));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), z >= 0.0);
}

@compute @workgroup_size(256)
fn glu(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i >= p.n) { return; }
    let x = f32(gate[i]);
    var z = x;
    if (p.gelu != 0u) { z = 2.0 * clamp(0.7978845608028654 * (x + 0.044715 * x * x * x), -15.0, 15.0); }
    y[i] = A(clampn(x * sigmoid(z) * f32(up[i]), OUT_MAX));
}
