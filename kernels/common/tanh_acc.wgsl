// common/tanh_acc.wgsl — included by attention.wgsl (softcapped scores) and softcap.wgsl.
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
