// softcap.wgsl — y = cap * tanh(x / cap) over n f32 values (Gemma 2 final logits).
// The tanh argument is clamped to +-15 (tanh is exactly +-1 in f32 there), so no NaN;
// tanh_acc keeps the relative error small for tiny x too.
struct Params { n: u32, cap: f32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

// tanh with small relative error everywhere: an odd series below |z| = 0.3 (the builtin
// loses all relative precision for tiny arguments), (1 - e)/(1 + e) with e = exp(-2|z|) above
// (never overflows). Exactly +-1 from |z| = 9.1 on in f32, so clamping callers lose nothing.
fn tanh_acc(z: f32) -> f32 {
    let a = abs(z);
    if (a < 0.3) {
        let z2 = z * z;
        return z * (1.0 + z2 * (-1.0 / 3.0 + z2 * (2.0 / 15.0 + z2 * (-17.0 / 315.0 + z2 * (62.0 / 2835.0 - z2 * (1382.0 / 155925.0))))));
    }
    let e = exp(-2.0 * a);
    return sign(z) * ((1.0 - e) / (1.0 + e));
}

@compute @workgroup_size(256)
fn softcap_f32(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i >= p.n) { return; }
    y[i] = p.cap * tanh_acc(clamp(x[i] / p.cap, -15.0, 15.0));
}
