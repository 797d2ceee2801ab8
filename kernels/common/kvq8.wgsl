// common/kvq8.wgsl — the q8_0 KV cache's row layout (kv_store.wgsl writes it, attention.wgsl reads it):
// a row of kv_dim values holds KP = kv_dim rounded up to 64 int8 quants, 4 per u32 word (element c:
// byte c % 4 of word c / 4), then KP / 32 f16 scales, two per word (block b = c / 32: half b % 2 of word
// KP / 4 + b / 2); value = q * d, blocks of 32 as llama.cpp's Q8_0. Row r starts at word r * KP * 17 / 64.
fn q8_kp(kv_dim: u32) -> u32 { return (kv_dim + 63u) / 64u * 64u; }
fn q8_row_words(kp: u32) -> u32 { return kp / 4u + kp / 64u; }
// roundf: halves away from zero (WGSL's round() takes them to even); x - trunc(x) is exact in f32
fn q8_round(x: f32) -> i32 {
    let t = trunc(x);
    return i32(t + select(0.0, sign(x), abs(x - t) >= 0.5));
}
// f16 bits <-> f32 by integer arithmetic (not pack2x16float / unpack2x16float, which flush f16
// subnormals on some drivers: small blocks have subnormal scales). f2h: x in [0, 65504], to nearest even.
fn h2f(h: u32) -> f32 {
    let e = (h >> 10u) & 31u;
    let m = h & 1023u;
    let v = select(ldexp(f32(m | 1024u), i32(e) - 25), ldexp(f32(m), -24), e == 0u);
    return select(v, -v, (h & 32768u) != 0u);
}
fn rne_shift(m: u32, sh: u32) -> u32 {            // m >> sh rounded to nearest even (1 <= sh <= 24)
    let r = m >> sh;
    let rem = m & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    return r + select(0u, 1u, rem > half || (rem == half && (r & 1u) != 0u));
}
fn f2h(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let e = i32(b >> 23u) - 127;
    let m = (b & 0x7fffffu) | 0x800000u;
    if (e < -25) { return 0u; }
    if (e < -14) { return rne_shift(m, u32(-e - 1)); }        // subnormal: x 2^24 = m 2^(e + 1)
    return (u32(e + 15) << 10u) + rne_shift(m & 0x7fffffu, 13u); // (a carry moves into the exponent)
}
// element c's value from its quant word qw and its block's scale word sw
fn q8_val(qw: u32, sw: u32, c: u32) -> f32 {
    let q = f32(unpack4xI8(qw)[c % 4u]);
    return q * h2f((sw >> (16u * ((c / 32u) % 2u))) & 65535u);
}
// elements 4 c4 .. 4 c4 + 3 (one quant word) with their block's scale word
fn q8_vec(qw: u32, sw: u32, c4: u32) -> vec4<f32> {
    return vec4<f32>(unpack4xI8(qw)) * h2f((sw >> (16u * ((c4 / 8u) % 2u))) & 65535u);
}
