// common/ldraw.wgsl — a prefill product's weight loads and decode, 16 weights of a 32-wide k step at
// a time: ld_raw (the words those weights need, as 16-byte vectors where the type's layout allows,
// issued a step or two ahead of their use) and dq16 (the words to f32 weights). Included by
// matmul_cm.wgsl (the cooperative-matrix tiles), matmul_tile.wgsl (the tiles without matrix units) and
// matmul.wgsl (bytes_f32, for the decode lanes).
// The including file declares the weight binding and provides wword(i) and wvec(i) (its u32 word i,
// its 16-byte vector i), kv_iq4(i) (entry i of the IQ4 codebook, KV_IQ4NL), q6a(bi), gu(bi), and includes common/dq4.wgsl (f16v, row_bytes, dq4: every type without its own
// loads here is decoded by dq4 at the time of the loads). k0 is a multiple of 32; p.k whole blocks.

// (scale, min) of Q4_K sub-block j from the 12 scale bytes in words s0, s4, s8
fn q4k_sm(s0: u32, s4: u32, s8: u32, j: u32) -> vec2<f32> {
    if (j < 4u) { return vec2<f32>(f32((s0 >> (8u * j)) & 63u), f32((s4 >> (8u * j)) & 63u)); }
    let sh = 8u * (j - 4u);                      // j >= 4: low 4 bits in byte j + 4, high 2 in the top of bytes j - 4, j
    let q = (s8 >> sh) & 0xffu;
    return vec2<f32>(f32((q & 0xfu) | ((((s0 >> sh) >> 6u) & 3u) << 4u)), f32((q >> 4u) | ((((s4 >> sh) >> 6u) & 3u) << 4u)));
}

// The words row r needs for its weights 16 h .. 16 h + 15 of the 32 from element k0 (a multiple
// of 32), loaded ahead of their use (their latency overlaps the steps before):
//   Q4_K: d|dmin, the 3 scale words, the 4 quant words of those 16 in sub-block j's pair (j = (k0 % 256) / 32).
//   Q5_K: the same, and the 4 qh words of those 16 (bit j of byte l: weight l's fifth bit) (raw[8..11]).
//   IQ4_XS: d|scales_h, scales_l (raw[0..1]), the 4 quant words of sub-block j (raw[2..5]: nibble h of its 16 bytes).
//   Q8_0 / Q4_0 / IQ4_NL / Q4_1 / Q5_0 / Q5_1 (a step is one block): the 16 quant bytes of those 16 (Q8_0) or
//   the block's 16 (the others) as 4 words (raw[0..3]), the scale's half-word (raw[4]; Q4_1, Q5_1: with m
//   above it), Q5_0 / Q5_1's qh (raw[5]). These types are regrouped on
//   the device (gu): every quant load is one 16-byte vector.
//   Q6_K (regrouped: q6a): the 4 ql words and the 4 qh words of those 16 (raw[0..3], raw[9..12]), the
//   word with the 2 scale bytes, the word with d.
//   Every other type: the 16 weights themselves, decoded by dq4, as f32 bits (raw[0..15]).
fn ld_raw(r: u32, k0: u32, h: u32) -> array<u32, 20> {
    var raw: array<u32, 20>;
    if (WT == WT_IQ4_XS) {                        // regrouped (gu): the 8-byte header, one 16-byte load
        let a = gu(r * (p.k / 256u) + k0 / 256u);
        raw[0] = wword(a.y / 4u);
        raw[1] = wword(a.y / 4u + 1u);
        let q = wvec(a.x / 16u + (k0 % 256u) / 32u);
        for (var i = 0u; i < 4u; i = i + 1u) { raw[2u + i] = q[i]; }
        return raw;
    }
    if (HDR != 0u && BLK == 32u) {                 // the 32-element group types (gu): one 16-byte load, the header
        let a = gu(r * (p.k / 32u) + k0 / 32u);
        let q = wvec(a.x / 16u + select(0u, h, WT == WT_Q8_0));   // Q8_0: half h of its 32 bytes
        for (var i = 0u; i < 4u; i = i + 1u) { raw[i] = q[i]; }
        raw[4] = wword(a.y / 4u) >> (8u * (a.y & 2u));   // d (Q4_1, Q5_1: | m << 16; their headers are 4-aligned)
        if (WT == WT_Q5_0 || WT == WT_Q5_1) { raw[5] = rd32(a.y + HDR - 4u); }   // qh: the header's last 4 bytes
        return raw;
    }
    if (WT != WT_Q4_K && WT != WT_Q5_K && WT != WT_Q6_K) {
        let rb = r * row_bytes(p.k);
        for (var i = 0u; i < 4u; i = i + 1u) {
            let v = dq4(rb, k0 + 16u * h + 4u * i, p.k);
            for (var c = 0u; c < 4u; c = c + 1u) { raw[4u * i + c] = bitcast<u32>(v[c]); }
        }
        return raw;
    }
    let nsb = p.k / 256u;
    let j = (k0 % 256u) / 32u;
    if (WT == WT_Q4_K) {
        let ow = (r * nsb + k0 / 256u) * 36u;
        let hd = wvec(ow / 4u);                  // a super-block is 9 vectors: the header, then 8 of quants
        let qv = wvec(ow / 4u + 1u + 2u * (j / 2u) + h);
        for (var i = 0u; i < 4u; i = i + 1u) { raw[i] = hd[i]; raw[4u + i] = qv[i]; }
        return raw;
    }
    if (WT == WT_Q5_K) {
        let ov = (r * nsb + k0 / 256u) * 11u;    // 11 vectors: the header, 2 of qh, 8 of quants
        let hd = wvec(ov);
        let hv = wvec(ov + 1u + h);
        let qv = wvec(ov + 3u + 2u * (j / 2u) + h);
        for (var i = 0u; i < 4u; i = i + 1u) { raw[i] = hd[i]; raw[4u + i] = qv[i]; raw[8u + i] = hv[i]; }
        return raw;
    }
    let a = q6a(r * nsb + k0 / 256u);
    let qa = (a.ql + 64u * (j / 4u) + 32u * (j % 2u) + 16u * h) / 4u;
    let qb = (a.qh + 32u * (j / 4u) + 16u * h) / 4u;
    let lv = wvec(qa / 4u);                      // ql and qh parts start on 16-byte boundaries (q6a)
    let hv = wvec(qb / 4u);
    for (var i = 0u; i < 4u; i = i + 1u) { raw[i] = lv[i]; raw[9u + i] = hv[i]; }
    raw[18] = wword((a.sc + 8u * (j / 4u) + 2u * (j % 4u)) / 4u);
    raw[19] = wword(a.d / 4u) >> (8u * (a.d & 2u));
    return raw;
}

// Q5_0 / Q5_1: bits 0..3 of h as bit 4 of the 4 bytes
fn hb4(h: u32) -> u32 { return (((h & 0xfu) * 0x00204081u) & 0x01010101u) << 4u; }

// The four bytes of v as floats minus off, without int-to-float conversions (a fraction of the float
// rate): 0x4b000000 | b is the float 2^23 + b exactly, so one subtraction of 2^23 + off gives b - off
// exactly. Byte 1 stays at bits 8..15 (byte 2 is shifted there) under the exponent of 2^15, whose
// mantissa bit 8 weighs 1 (0x47000000 | b << 8 is 2^15 + b), so two of the four bytes need no shift.
// The decode lanes on f32 activations wait on their integer ops: H100 portable tg128 +1.4-2.3%; the
// tiles without matrix units, pp512 -0.3 to -1.1% (docs/perf-log.md, session 32; the lanes' scales by
// this trick instead of f32(u32) lost as much as the bytes gained).
fn bytes_f32(v: u32, off: f32) -> vec4<f32> {
    let b = vec4<u32>(v & 0xffu, v & 0xff00u, (v >> 8u) & 0xff00u, v >> 24u) |
            vec4<u32>(0x4b000000u, 0x47000000u, 0x47000000u, 0x4b000000u);
    return bitcast<vec4<f32>>(b) - (vec4<f32>(8388608.0, 32768.0, 32768.0, 8388608.0) + off);
}

// Weights 16 h .. 16 h + 15 of those 32, from raw (as matmul.wgsl's dq4), and a bound on their
// magnitude (from the block's scales: the f16 range check is per step, not per weight).
struct Dq { v: array<f32, 16>, bound: f32 }
fn dq16(raw: array<u32, 20>, r: u32, k0: u32, h: u32) -> Dq {
    var d: Dq;
    if (WT == WT_IQ4_NL || WT == WT_IQ4_XS) {    // nibble h of each byte through the codebook
        var dd: f32; var qo = 0u;
        if (WT == WT_IQ4_NL) { dd = f16v(raw[4]); } else {
            dd = f16v(raw[0]) * f32(iq4xs_ls(raw[0], raw[1], (k0 % 256u) / 32u));
            qo = 2u;
        }
        for (var i = 0u; i < 4u; i = i + 1u) {
            let b = (raw[qo + i] >> (4u * h)) & 0x0f0f0f0fu;
            for (var c = 0u; c < 4u; c = c + 1u) { d.v[4u * i + c] = dd * kv_iq4((b >> (8u * c)) & 0xfu); }
        }
        d.bound = 127.0 * abs(dd);
        return d;
    }
    if (WT == WT_Q4_1 || WT == WT_Q5_0 || WT == WT_Q5_1) {   // nibble h of each byte; Q5_*: element e's fifth bit is qh's bit e
        let dd = f16v(raw[4] & 0xffffu);
        let mm = select(0.0, f16v(raw[4] >> 16u), WT != WT_Q5_0);
        for (var i = 0u; i < 4u; i = i + 1u) {
            var b = (raw[i] >> (4u * h)) & 0x0f0f0f0fu;
            if (WT != WT_Q4_1) { b = b | hb4(raw[5] >> (16u * h + 4u * i)); }
            let q = bytes_f32(b, select(0.0, 16.0, WT == WT_Q5_0));
            for (var c = 0u; c < 4u; c = c + 1u) { d.v[4u * i + c] = select(q[c] * dd + mm, dd * q[c], WT == WT_Q5_0); }
        }
        d.bound = select(select(15.0, 31.0, WT == WT_Q5_1) * abs(dd) + abs(mm), 16.0 * abs(dd), WT == WT_Q5_0);
        return d;
    }
    if (WT == WT_Q8_0 || WT == WT_Q4_0) {        // Q8_0: i8 bytes (x ^ 0x80 is x + 128); Q4_0: nibble h of each byte, minus 8
        let dd = f16v(raw[4]);
        for (var i = 0u; i < 4u; i = i + 1u) {
            var q: vec4<f32>;
            if (WT == WT_Q8_0) { q = bytes_f32(raw[i] ^ 0x80808080u, 128.0); } else { q = bytes_f32((raw[i] >> (4u * h)) & 0x0f0f0f0fu, 8.0); }
            for (var c = 0u; c < 4u; c = c + 1u) { d.v[4u * i + c] = dd * q[c]; }
        }
        d.bound = select(8.0, 128.0, WT == WT_Q8_0) * abs(dd);
        return d;
    }
    if (WT != WT_Q4_K && WT != WT_Q5_K && WT != WT_Q6_K) {   // decoded by ld_raw; the bound is their sum of |w| (NaN stays NaN)
        d.bound = 0.0;
        for (var i = 0u; i < 16u; i = i + 1u) { d.v[i] = bitcast<f32>(raw[i]); d.bound = d.bound + abs(d.v[i]); }
        return d;
    }
    let j = (k0 % 256u) / 32u;                   // sub-block
    if (WT == WT_Q4_K || WT == WT_Q5_K) {             // qs[32 (j / 2) + 16 h ..]: low nibbles j even, high odd
        let sm = q4k_sm(raw[1], raw[2], raw[3], j);   // (Q5_K: the same scales; qh bit j is the fifth bit)
        let dl = f16v(raw[0]) * sm.x;
        let ml = f16v(raw[0] >> 16u) * sm.y;
        for (var i = 0u; i < 4u; i = i + 1u) {
            var b = (raw[4u + i] >> (4u * (j % 2u))) & 0x0f0f0f0fu;
            if (WT == WT_Q5_K) { b = b | (((raw[8u + i] >> j) & 0x01010101u) << 4u); }
            let q = bytes_f32(b, 0.0);
            for (var c = 0u; c < 4u; c = c + 1u) { d.v[4u * i + c] = dl * q[c] - ml; }
        }
        d.bound = select(15.0, 31.0, WT == WT_Q5_K) * abs(dl) + abs(ml);
        return d;
    }
    // Q6_K: element e = 32 j + 16 h + i of the super-block: quarter qq = j % 4, l = 16 h + i; raw
    // holds the words of bytes l .. l + 15 (the scale offset is 16-aligned: 2 qq % 4 places the byte)
    let qq = j % 4u;
    let sc = (raw[18] >> (8u * ((2u * qq) % 4u) + 8u * h)) & 0xffu;
    let ds = f16v(raw[19]) * f32(bitcast<i32>(sc << 24u) >> 24u);
    for (var i = 0u; i < 4u; i = i + 1u) {
        let ql = (raw[i] >> (4u * (qq >> 1u))) & 0x0f0f0f0fu;
        let qh = ((raw[9u + i] >> (2u * qq)) & 0x03030303u) << 4u;
        let q = bytes_f32(ql | qh, 32.0);
        for (var c = 0u; c < 4u; c = c + 1u) { d.v[4u * i + c] = ds * q[c]; }
    }
    d.bound = 32.0 * abs(ds);
    return d;
}

