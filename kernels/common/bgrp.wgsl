// common/bgrp.wgsl — included by matmul.wgsl and matmul_tile.wgsl: the group types' block decode (bgrp),
// read by the decode group lanes (the f32 and int8 families; IQ4 on f16 pairs takes iq4_raw alone) and by
// matmul_q for Q2_K / Q3_K. `red` is the decode
// lanes' reduction array (one partial sum per invocation, matmul.wgsl's mv_reduce); while the lanes run it
// holds IQ4's codebook table (matmul.wgsl's lut_init*), which kv8 reads.
var<workgroup> red: array<f32, 128>;

// ---- the group lanes (lanes B in config/dtypes.def: Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K IQ4_NL IQ4_XS) ----
// A row is taken in groups of 32 elements (a block; Q2_K Q3_K IQ4_XS: 32 elements of a super-block),
// 8 per unit of 256, lane c of a unit taking group c whole, so its scales are decoded once per 16 or
// 32 weights. A type is its case in bgrp: the group's 32 quants as bytes u (word j: elements 4j ..
// 4j + 3) and per half (words 0..3, 4..7: Q2_K / Q3_K have a scale per 16) a scale d and minimum m,
// x = d (u - bgrp_off) + m; the lane families read only that: f32 (b_lane), f16 pairs (b_lane_x),
// int8 (b_lane_q); IQ4's u is the codebook's value + 128 from the f32 lanes' table and the value as int8
// from the int8 lanes' (matmul.wgsl lut_init*), and the f16-pair lanes and IQ4_XS's int8 lane read
// iq4_raw (the scale and the nibbles) instead. The regrouped types (gu) take their quants as 16-byte loads; Q3_K's 110-byte blocks
// start at even bytes: span8 reads them as words.
struct BGrp { d: vec2<f32>, m: vec2<f32>, u: array<u32, 8> }
// words j < n of the bytes from even byte o: n + 1 aligned loads, funnel-shifted where o % 4 == 2 (the
// last load is the word holding bytes o + 4n - 2, o + 4n - 1: inside the block, unused when aligned)
fn span8(o: u32, n: u32) -> array<u32, 8> {
    let sh = (o & 2u) * 8u;
    let i = o >> 2u;
    var a: array<u32, 9>;
    for (var j = 0u; j < n; j = j + 1u) { a[j] = wword(i + j); }
    a[n] = wword((o + 4u * n - 2u) >> 2u);
    var r: array<u32, 8>;
    for (var j = 0u; j < n; j = j + 1u) { r[j] = select((a[j] >> sh) | (a[j + 1u] << (32u - sh)), a[j], sh == 0u); }
    return r;
}
// IQ4_NL / IQ4_XS: 4 nibbles (one per byte) to kvalues_iq4nl + 128, by bytes (KV_IQ4NL packed in 4 words)
fn kv4(q: u32) -> u32 {
    let n = vec4<u32>(q & 0xffu, (q >> 8u) & 0xffu, (q >> 16u) & 0xffu, q >> 24u);
    let b2 = (n & vec4<u32>(4u)) != vec4<u32>(0u);
    let lo = select(vec4<u32>(0x3f2d1801u), vec4<u32>(0x766a5d4fu), b2);   // 1 24 45 63 | 79 93 106 118
    let hi = select(vec4<u32>(0xa6998d81u), vec4<u32>(0xf1d9c5b5u), b2);   // 129 141 153 166 | 181 197 217 241
    let v = (select(lo, hi, (n & vec4<u32>(8u)) != vec4<u32>(0u)) >> ((n & vec4<u32>(3u)) * 8u)) & vec4<u32>(0xffu);
    return v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
}
fn is_iq4() -> bool { return WT == WT_IQ4_NL || WT == WT_IQ4_XS; }
fn kvb(q: u32, sh: u32, j: u32) -> u32 { return bitcast<u32>(red[16u * j + ((q >> sh) & 0xfu)]); }
// (kv4(q & 0x0f0f0f0f), kv4((q >> 4) & 0x0f0f0f0f)): the 4 low and the 4 high nibbles of q's bytes (each byte
// ^ 0x80, i.e. the values as int8, under the int8 lanes' table)
fn kv8(q: u32) -> vec2<u32> {
    return vec2<u32>(kvb(q, 0u, 0u) | kvb(q, 8u, 1u) | kvb(q, 16u, 2u) | kvb(q, 24u, 3u),
                     kvb(q, 4u, 0u) | kvb(q, 12u, 1u) | kvb(q, 20u, 2u) | kvb(q, 28u, 3u));
}
fn bgrp_off() -> f32 {
    if (WT == WT_Q4_0) { return 8.0; }
    if (WT == WT_Q5_0) { return 16.0; }
    if (WT == WT_Q3_K) { return 4.0; }
    if (WT == WT_Q4_1 || WT == WT_Q5_1 || WT == WT_Q2_K) { return 0.0; }
    return 128.0;                                      // Q8_0 (i8 ^ 0x80), IQ4_NL / IQ4_XS (kv4; the f32 lanes)
}
fn bgrp_min() -> bool { return WT == WT_Q4_1 || WT == WT_Q5_1 || WT == WT_Q2_K; }
// Q2_K / Q3_K group gg (0..7) of the super-block at byte o: 128-element half n, shift j (2 bits each)
fn bgrp_k23(o: u32, gg: u32) -> BGrp {
    var r = BGrp(vec2<f32>(0.0), vec2<f32>(0.0), array<u32, 8>());
    let n = gg / 4u;
    let j = gg % 4u;
    for (var h = 0u; h < 2u; h = h + 1u) {             // halves of 16: scale is = 8n + 2j + h
        let is = 8u * n + 2u * j + h;
        if (WT == WT_Q2_K) {                           // u8 scales[16] (4-bit scale, 4-bit min); u8 q[64]; f16 d, dmin
            let sc = rd8(o + is);
            r.d[h] = f16v(rd16(o + 80u)) * f32(sc & 0xfu);
            r.m[h] = -(f16v(rd16(o + 82u)) * f32(sc >> 4u));
            for (var w = 0u; w < 4u; w = w + 1u) { r.u[4u * h + w] = (wword((o + 16u + 32u * n + 16u * h) / 4u + w) >> (2u * j)) & 0x03030303u; }
        } else {                                       // Q3_K: u8 hmask[32]; u8 q[64]; 12 scale bytes; f16 d; u = q + 4 hmask bit
            let b = is % 4u;
            let gs = is / 4u;
            let sc = ((rd8(o + 96u + b + 4u * (gs & 1u)) >> (4u * (gs >> 1u))) & 0xfu) | (((rd8(o + 104u + b) >> (2u * gs)) & 3u) << 4u);
            r.d[h] = f16v(rd16(o + 108u)) * f32(i32(sc) - 32);
            let q = span8(o + 32u + 32u * n + 16u * h, 4u);
            let hm = span8(o + 16u * h, 4u);
            for (var w = 0u; w < 4u; w = w + 1u) {
                r.u[4u * h + w] = ((q[w] >> (2u * j)) & 0x03030303u) | (((hm[w] >> (4u * n + j)) & 0x01010101u) << 2u);
            }
        }
    }
    return r;
}
// IQ4_NL / IQ4_XS group g of row `row`: its scale and its 16 quant bytes (nibbles, the codebook's indices)
struct IQ4Raw { d: f32, q: vec4<u32> }
fn iq4_raw(row: u32, g: u32) -> IQ4Raw {
    let b0 = row * (p.k / BLK);
    if (WT == WT_IQ4_XS) {                             // f16 d; u16 scales_h; u8 scales_l[4]; u8 q[128] (gu)
        let a = gu(b0 + g / 8u);
        let ib = g % 8u;
        let h0 = wword(a.y / 4u);                      // d | scales_h << 16 (the header is 8-byte aligned)
        return IQ4Raw(f16v(h0 & 0xffffu) * f32(iq4xs_ls(h0, wword(a.y / 4u + 1u), ib)), wvec(a.x / 16u + ib));
    }
    let a = gu(b0 + g);                                // IQ4_NL: f16 d; u8 q[16]
    return IQ4Raw(f16v(rd16(a.y)), wvec(a.x / 16u));
}
// group g of row `row`, each case the twin of its dq4_block / dq4 case (models/quant.c)
fn bgrp(row: u32, g: u32) -> BGrp {
    var r = BGrp(vec2<f32>(0.0), vec2<f32>(0.0), array<u32, 8>());
    if (WT == WT_Q2_K || WT == WT_Q3_K) { return bgrp_k23(row * row_bytes(p.k) + g / 8u * BB, g % 8u); }
    let b0 = row * (p.k / BLK);                        // the row's first block
    if (WT == WT_Q8_0) {                               // f16 d; i8 q[32] (regrouped: gu, two 16-byte loads)
        let a = gu(b0 + g);
        r.d = vec2<f32>(f16v(rd16(a.y)));
        let q0 = wvec(a.x / 16u);
        let q1 = wvec(a.x / 16u + 1u);
        for (var j = 0u; j < 4u; j = j + 1u) { r.u[j] = q0[j] ^ 0x80808080u; r.u[j + 4u] = q1[j] ^ 0x80808080u; }
        return r;
    }
    if (is_iq4()) {
        let a = iq4_raw(row, g);
        r.d = vec2<f32>(a.d);
        for (var j = 0u; j < 4u; j = j + 1u) {
            let kk = kv8(a.q[j]);
            r.u[j] = kk.x; r.u[j + 4u] = kk.y;
        }
        return r;
    }
    // the 32-element 4-bit blocks (gu): f16 d (Q4_1, Q5_1: and m); Q5_*: u32 qh; u8 q[16], lo nibbles 0..15
    let a = gu(b0 + g);
    let one = bgrp_min();
    let five = WT == WT_Q5_0 || WT == WT_Q5_1;
    r.d = vec2<f32>(f16v(rd16(a.y)));
    if (one) { r.m = vec2<f32>(f16v(rd16(a.y + 2u))); }
    var qh = 0u;
    if (five) { qh = rd32(a.y + select(2u, 4u, one)); }
    let q = wvec(a.x / 16u);
    for (var j = 0u; j < 4u; j = j + 1u) {
        var lo = q[j] & 0x0f0f0f0fu;
        var hi = (q[j] >> 4u) & 0x0f0f0f0fu;
        if (five) { lo = lo | hb4(qh >> (4u * j)); hi = hi | hb4(qh >> (16u + 4u * j)); }
        r.u[j] = lo; r.u[j + 4u] = hi;
    }
    return r;
}
