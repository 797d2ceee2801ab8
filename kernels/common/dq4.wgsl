// common/dq4.wgsl — the weight types' block decode, included by matmul.wgsl, matmul_tile.wgsl and matmul_cm.wgsl
// (build.sh '//! include'): a weight type is its case in dq4 / dq4_block (4 consecutive elements of
// a block, the twin of its CPU loop in models/quant.c) and its row in config/dtypes.def. The
// including file declares the weight binding and provides wword(i) (its u32 word i), wwords() (its
// length in words), q6a(bi) and gu(bi) (common/q6a.wgsl over that binding) and the overrides WT (the type, a
// DType value: WT_* below), BLK and BB (its elements and bytes per block). Q6_K and the group types
// (Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL IQ4_XS) are regrouped on the device (q6a, gu: quants on 16 bytes);
// Q3_K's 110-byte blocks start at any even byte: their bytes are read from words with shifts (rd8,
// rd16, rd32).

// The weight types' ids, as config/dtypes.def numbers its rows (build.sh checks every line of the
// files that include this one against the table).
const WT_F32 = 0u;
const WT_F16 = 1u;
const WT_BF16 = 2u;
const WT_Q8_0 = 5u;
const WT_Q4_0 = 6u;
const WT_Q4_K = 7u;
const WT_Q6_K = 8u;
const WT_Q4_1 = 9u;
const WT_Q5_0 = 10u;
const WT_Q5_1 = 11u;
const WT_Q2_K = 12u;
const WT_Q3_K = 13u;
const WT_Q5_K = 14u;
const WT_IQ4_NL = 15u;
const WT_IQ4_XS = 16u;

// ---- bytes of the weight binding ----------------------------------------------------
fn rd8(o: u32) -> u32 { return (wword(o >> 2u) >> ((o & 3u) * 8u)) & 0xffu; }
fn rd16(o: u32) -> u32 { return (wword(o >> 2u) >> ((o & 2u) * 8u)) & 0xffffu; }   // o even: never straddles
fn rd32(o: u32) -> u32 {                                                             // any o: two words, funnel shift
    let sh = (o & 3u) * 8u;                                                          // (branch-free, so loads can be hoisted;
    let i = o >> 2u;                                                                 //  the second word is clamped into the binding)
    let lo = wword(i);
    let hi = wword(min(i + 1u, wwords() - 1u));
    return select((lo >> sh) | (hi << (32u - sh)), lo, sh == 0u);
}

// the f16 d of a block (bits 0..15), its byte offset a.d even
fn q6d(a: Q6A) -> u32 { return wword(a.d / 4u) >> (8u * (a.d & 2u)); }
fn i8v(b: u32) -> i32 { return bitcast<i32>(b << 24u) >> 24u; }

// IEEE half to f32 by bits (subnormals exact on every device, inf/NaN kept).
fn f16v(h: u32) -> f32 {                 // (branch-free)
    let sgn = (h & 0x8000u) << 16u;
    let em = h & 0x7fffu;
    let infnan = bitcast<f32>(sgn | 0x7f800000u | ((em & 0x3ffu) << 13u));
    let normal = bitcast<f32>(sgn | ((em + 0x1c000u) << 13u));
    let sub = f32(em) * 5.9604645e-8;
    return select(select(select(sub, -sub, sgn != 0u), normal, em >= 0x400u), infnan, em >= 0x7c00u);
}

fn row_bytes(k: u32) -> u32 {
    if (BLK == 1u) { return k * BB; }       // (no division for the float types)
    return k / BLK * BB;
}

// A K-quant sub-block j's 6-bit scale and minimum (Q4_K, Q5_K: 12 bytes at o + 4): j < 4 in bytes j,
// j + 4; j >= 4 the low 4 bits in byte j + 4 of the second group and the high 2 atop bytes j - 4 / j.
fn k4_scale_min(o: u32, j: u32) -> vec2<u32> {
    var sc: u32; var mn: u32;
    if (j < 4u) { sc = rd8(o + 4u + j) & 63u; mn = rd8(o + 8u + j) & 63u; }
    else {
        sc = (rd8(o + 8u + j) & 0xfu) | ((rd8(o + j) >> 6u) << 4u);
        mn = (rd8(o + 8u + j) >> 4u) | ((rd8(o + 4u + j) >> 6u) << 4u);
    }
    return vec2<u32>(sc, mn);
}
// Q4_K / Q5_K: the scale d * sc and minimum dmin * m of the 32-element sub-block holding element e
// (0..255) of the super-block at byte o (the same f32 products, in the same order, as quant.c)
fn k4_dm(o: u32, e: u32) -> vec2<f32> {
    let sm = k4_scale_min(o, 2u * (e / 64u) + ((e / 32u) & 1u));
    return vec2<f32>(f16v(rd16(o)) * f32(sm.x), f16v(rd16(o + 2u)) * f32(sm.y));
}

// The four 4-bit values of 32-element blocks whose 16 quant bytes at q (16-byte aligned: gu) hold
// elements 0..15 in their low nibbles and 16..31 in their high ones (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
// IQ4_XS's sub-blocks): elements e .. e + 3 (e a multiple of 4) in the low nibble of each byte of the result.
fn nib4(q: u32, e: u32) -> u32 { return wword((q + e % 16u) / 4u) >> select(0u, 4u, e >= 16u); }

// IQ4_NL / IQ4_XS: a nibble indexes ggml's kvalues_iq4nl
const KV_IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
// IQ4_XS: sub-block j's scale (its 6 bits less 32) from the super-block header's two words:
// h0 = d | scales_h << 16 (2 bits per sub-block), h1 = scales_l (4 bits per sub-block)
fn iq4xs_ls(h0: u32, h1: u32, j: u32) -> i32 {
    return i32(((h1 >> (4u * j)) & 0xfu) | (((h0 >> (16u + 2u * j)) & 3u) << 4u)) - 32i;
}

// The block types past Q6_K: elements e .. e + 3 (e a multiple of 4) of the block at byte o (its
// GGUF offset; the group types' parts through gu: a.y the header, a.x the quants). One case per type,
// each the twin of its loop in models/quant.c (ggml's order of operations).
fn dq4_block(o: u32, e: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (WT == WT_Q4_1 || WT == WT_Q5_1) {           // f16 d, m; (Q5_1: u32 qh;) u8 q[16]; x = d*q + m
        let a = gu(o / BB);
        let d = f16v(rd16(a.y));
        let m = f16v(rd16(a.y + 2u));
        let five = WT == WT_Q5_1;
        let q = nib4(a.x, e);
        let qh = select(0u, wword(a.y / 4u + 1u) >> e, five);  // bit e + c: element e + c's fifth bit (Q5_1's headers: 8 bytes)
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = f32(((q >> (8u * c)) & 0xfu) | (((qh >> c) & 1u) << 4u)) * d + m; }
        return v;
    }
    if (WT == WT_Q5_0) {                             // f16 d; u32 qh; u8 q[16]; x = d*(q - 16)
        let a = gu(o / BB);
        let d = f16v(rd16(a.y));
        let qh = rd32(a.y + 2u) >> e;
        let q = nib4(a.x, e);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = f32(i32(((q >> (8u * c)) & 0xfu) | (((qh >> c) & 1u) << 4u)) - 16) * d; }
        return v;
    }
    if (WT == WT_IQ4_NL) {                           // f16 d; u8 q[16]; x = d*kv[q]
        let a = gu(o / BB);
        let d = f16v(rd16(a.y));
        let q = nib4(a.x, e);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = d * KV_IQ4NL[(q >> (8u * c)) & 0xfu]; }
        return v;
    }
    if (WT == WT_IQ4_XS) {                           // f16 d; u16 scales_h; u8 scales_l[4]; u8 q[128]: 8 sub-blocks of 32
        let a = gu(o / BB);
        let ib = e / 32u;
        let dl = f16v(rd16(a.y)) * f32(iq4xs_ls(wword(a.y / 4u), wword(a.y / 4u + 1u), ib));   // header 8-byte aligned (gu)
        let q = nib4(a.x + 16u * ib, e % 32u);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = dl * KV_IQ4NL[(q >> (8u * c)) & 0xfu]; }
        return v;
    }
    if (WT == WT_Q5_K) {                             // f16 d, dmin; 12 scale bytes; u8 qh[32]; u8 q[128]
        let g = e / 64u;
        let hi = (e / 32u) & 1u;
        let dm = k4_dm(o, e);
        let q = rd32(o + 48u + 32u * g + e % 32u) >> (4u * hi);
        let qh = rd32(o + 16u + e % 32u) >> (2u * g + hi);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = dm.x * f32(((q >> (8u * c)) & 0xfu) + 16u * ((qh >> (8u * c)) & 1u)) - dm.y; }
        return v;
    }
    // Q2_K and Q3_K: per 128 elements (n), 4 shifts (j) of 2 bits over 32 quant bytes, 16 elements (half) a scale
    let n = e / 128u;
    let j = (e % 128u) / 32u;
    let half = (e % 32u) / 16u;
    let l = e % 16u;
    let is = 8u * n + 2u * j + half;
    if (WT == WT_Q2_K) {                             // u8 scales[16] (4-bit scale, 4-bit min); u8 q[64]; f16 d, dmin
        let sc = rd8(o + is);
        let dl = f16v(rd16(o + 80u)) * f32(sc & 0xfu);
        let ml = f16v(rd16(o + 82u)) * f32(sc >> 4u);
        let q = rd32(o + 16u + 32u * n + 16u * half + l) >> (2u * j);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = dl * f32((q >> (8u * c)) & 3u) - ml; }
        return v;
    }
    // Q3_K: u8 hmask[32]; u8 q[64]; 12 bytes of 6-bit scales; f16 d; x = d*(sc - 32) * (q - (hmask bit ? 0 : 4))
    let b = is % 4u;
    let gs = is / 4u;
    let sc = ((rd8(o + 96u + b + 4u * (gs & 1u)) >> (4u * (gs >> 1u))) & 0xfu) | (((rd8(o + 104u + b) >> (2u * gs)) & 3u) << 4u);
    let dl = f16v(rd16(o + 108u)) * f32(i32(sc) - 32);
    let q = rd32(o + 32u + 32u * n + 16u * half + l) >> (2u * j);
    let hm = rd32(o + 16u * half + l) >> (4u * n + j);
    for (var c = 0u; c < 4u; c = c + 1u) { v[c] = dl * f32(i32((q >> (8u * c)) & 3u) - select(4, 0, ((hm >> (8u * c)) & 1u) != 0u)); }
    return v;
}

// Elements i..i+3 (i a multiple of 4) of the row starting at byte rb; k = row length
// (float types may end mid-vector: missing elements are 0). Formulas and their order
// of operations are ggml's (models/quant.c).
fn dq4(rb: u32, i: u32, k: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (WT <= WT_BF16) {
        for (var c = 0u; c < 4u; c = c + 1u) {
            if (i + c < k) {
                if (WT == WT_F32) { v[c] = bitcast<f32>(wword(rb / 4u + i + c)); }
                else if (WT == WT_F16) { v[c] = f16v(rd16(rb + 2u * (i + c))); }
                else { v[c] = bitcast<f32>(rd16(rb + 2u * (i + c)) << 16u); }
            }
        }
        return v;
    }
    if (WT == WT_Q8_0) {                // Q8_0: f16 d; i8 q[32] (regrouped in units: gu)
        let a = gu(rb / 34u + i / 32u);
        let d = f16v(rd16(a.y));
        let q = wword((a.x + i % 32u) / 4u);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = f32(bitcast<i32>(q << (24u - 8u * c)) >> 24u) * d; }
        return v;
    }
    if (WT == WT_Q4_0) {                // Q4_0: f16 d; u8 q[16], lo nibbles = 0..15, hi = 16..31 (gu)
        let a = gu(rb / 18u + i / 32u);
        let d = f16v(rd16(a.y));
        let q = nib4(a.x, i % 32u);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = f32(i32((q >> (8u * c)) & 0xfu) - 8) * d; }
        return v;
    }
    if (WT == WT_Q4_K) {                // Q4_K: f16 d, dmin; 12 scale bytes; 128 nibble bytes
        let o = rb + i / 256u * 144u;
        let e = i % 256u;
        let g = e / 64u;
        let hi = (e / 32u) & 1u;
        let dm = k4_dm(o, e);
        let q = rd32(o + 16u + 32u * g + e % 32u) >> (4u * hi);
        for (var c = 0u; c < 4u; c = c + 1u) { v[c] = dm.x * f32((q >> (8u * c)) & 0xfu) - dm.y; }
        return v;
    }
    if (WT == WT_Q6_K) {                // Q6_K: u8 ql[128], qh[64]; i8 scales[16]; f16 d (regrouped in units: q6a)
        let a = q6a(rb / 210u + i / 256u);
        let e = i % 256u;
        let h = e / 128u;
        let qq = (e % 128u) / 32u;
        let l = e % 32u;                // a multiple of 4: whole words
        let ql = wword((a.ql + 64u * h + l + (qq & 1u) * 32u) / 4u) >> (4u * (qq >> 1u));
        let qh = wword((a.qh + 32u * h + l) / 4u) >> (2u * qq);
        let ds = f16v(q6d(a) & 0xffffu) * f32(i8v(rd8(a.sc + 8u * h + l / 16u + 2u * qq)));
        for (var c = 0u; c < 4u; c = c + 1u) {
            let q = ((ql >> (8u * c)) & 0xfu) | (((qh >> (8u * c)) & 3u) << 4u);
            v[c] = ds * f32(i32(q) - 32);
        }
        return v;
    }
    return dq4_block(rb + i / BLK * BB, i % BLK);
}
