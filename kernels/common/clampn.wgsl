// common/clampn.wgsl — included by the kernels that clamp their outputs (build.sh '//! include').
// clamp to +-hi that keeps a NaN (clamp(NaN) is implementation-defined; llvmpipe returns -hi), so a
// fault stays visible to --check-nan and the final logits check instead of turning into a huge finite value
fn clampn(v: f32, hi: f32) -> f32 { return select(clamp(v, -hi, hi), v, (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u); }
