// matmul_tile.wgsl — the prefill products without matrix units: matmul (64-row x 64-token tiles, f32
// arithmetic; the matmul_split_* variants take one k slice per grid z into f32 partials, which
// splitk.wgsl adds) and matmul_q (the same tiles on int8 activations: devices that accelerate
// dot4I8Packed, f16 activations, the weight types with decode lanes: matmul_q8_*, matmul_q8_split_*).
// Every weight type of config/dtypes.def is dequantized in the kernel from its GGUF block bytes, as
// matmul.wgsl's decode entries do (common/mm_head.wgsl: the bindings, push constants and overrides they
// share; common/dq4.wgsl, ldraw.wgsl: the block decode; common/bgrp.wgsl: the group types' decode that
// matmul_q takes for Q2_K / Q3_K). Variants are made per weight type as matmul.wgsl's (build.sh).
// Bounds: every index is guarded (rows < p.rows, tokens < p.t, k < p.k) and the host checks the
// binding sizes (ops_matmul.c), so the robustness transform is off:
//! norobust
enable f16;
//! variant-each matmul_{t}_a32_y32     matmul            {type} alias:W={w}
//! variant-each matmul_{t}_a16_y32     matmul            {type} alias:W={w} alias:A=f16
//! variant-each matmul_{t}_a16_y16     matmul            {type} YMAX=65504 alias:W={w} alias:A=f16 alias:O=f16
//! variant-each matmul_split_{t}_a32   matmul            {type} KSPLIT=1 alias:W={w}
//! variant-each matmul_split_{t}_a16   matmul            {type} KSPLIT=1 alias:W={w} alias:A=f16
//! variant-lanes matmul_q8_{t}_a16_y32 matmul_q {type} alias:A=f16
//! variant-lanes matmul_q8_{t}_a16_y16 matmul_q {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-lanes matmul_q8_split_{t}_a16 matmul_q {type} KSPLIT=1 alias:A=f16
//! include common/mm_head.wgsl
//! include common/clampn.wgsl
//! include common/dq4.wgsl
//! include common/q6a.wgsl
//! include common/ldraw.wgsl
//! include common/bgrp.wgsl

// ---- matmul (prefill, devices without matrix units): a workgroup of 256 computes a 64-row x
// 64-token tile in 32-wide k steps (one sub-block of Q4_K scales). Per step the 64 x 32 weight tile
// is dequantized into workgroup memory once, as f32, and the 32 x 64 activation tile staged beside
// it; both are k-major by 16-byte vectors (ws[k][row / 4], xs[k][token / 4]: 16 KiB in all, the least
// Vulkan promises). Invocation l multiplies rows 4 (l / 16) .. +3 with tokens 4 (l % 16) .. +3: per k
// one 16-byte load of weights (a warp reads two addresses) and one of activations for 16
// multiply-adds, into four named vec4 accumulators (an array of them may be kept in local memory).
// The next step is loaded into registers before the step's products and written to the tiles after
// them, invocations 0 .. 127 its weight words (common/ldraw.wgsl's ld_raw: 16-byte vectors where the
// type's layout allows, dq4 for the others; row l / 2, weights 16 (l % 2) .. +15, as matmul_cm), 128 ..
// 255 its activations (k l % 32 of tokens l / 32 % 4 + 4 i: a warp reads 32 consecutive values), so
// that no invocation holds both (80 registers on the H100). The activations stay as loaded (A) until
// they are written: converting f16 to f32 at the load made the invocation wait for it there (the
// f16 path ran 12-19% slower than the f32 one, docs/perf-log.md session 29). A row of xs is swizzled
// (token vector v of k at v ^ (k % 16)), so that a warp's stores of one token's 32 k spread over the
// banks. f32 arithmetic, every sum in k order (the f32 class of edge fat).
// Bounds: weight rows past p.rows and tokens past p.t are zeros and not stored; k past p.k is
// zero on both sides (dq4's float types end anywhere).
const TM = 64u;
const TN = 64u;
const TK = 32u;
var<workgroup> ws: array<vec4<f32>, 512>;    // [TK][TM / 4] dequantized weights
var<workgroup> xs: array<vec4<f32>, 512>;    // [TK][TN / 4] activations, swizzled

// the next step's activations of invocation l (128 .. 255): k k0 + l % 32 of tokens t0 + l / 32 % 4 + 4 i
// (0 past p.t, ke), held as loaded (A) until mm_stage: a conversion here would wait for the loads
fn mm_ldx(t0: u32, k0: u32, ke: u32, l: u32) -> array<A, 16> {
    var v: array<A, 16>;
    let k = k0 + l % 32u;
    for (var i = 0u; i < 16u; i = i + 1u) {
        let t = t0 + (l / 32u) % 4u + 4u * i;
        v[i] = A(0.0);
        if (t < p.t && k < ke) { v[i] = x[t * p.k + k]; }
    }
    return v;
}
fn xs_at(k: u32, v: u32) -> u32 { return k * (TN / 4u) + (v ^ (k % 16u)); }   // token vector v of k
// invocations 0 .. 127 stage a step's weights (row l / 2, k 16 (l % 2) .. +15), 128 .. 255 its activations
fn mm_stage(raw: array<u32, 20>, xv: array<A, 16>, live: bool, r: u32, k0: u32, l: u32) {
    if (l < 128u) {
        let h = l % 2u;
        let d = dq16(raw, r, k0, h);
        let rr = l / 2u;
        for (var i = 0u; i < 16u; i = i + 1u) { ws[((16u * h + i) * TM + rr) / 4u][rr % 4u] = select(0.0, d.v[i], live); }
        return;
    }
    let k = l % 32u;
    for (var i = 0u; i < 16u; i = i + 1u) {
        let t = (l / 32u) % 4u + 4u * i;
        xs[xs_at(k, t / 4u)][t % 4u] = f32(xv[i]);
    }
}

@compute @workgroup_size(256)
fn matmul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let row0 = wid.x * TM;
    let t0 = wid.y * TN;
    let tv = l % 16u;                   // this invocation's tokens 4 tv .. +3
    let rg = (l / 16u) * 4u;            // and rows rg .. rg + 3
    let dr = row0 + (l % 128u) / 2u;    // its row of the weight tile (invocations 0 .. 127)
    let live = dr < p.rows;
    var kb = 0u; var ke = p.k; var yo = 0u;
    if (KSPLIT != 0u) { kb = wid.z * p.kc; ke = min(kb + p.kc, p.k); yo = wid.z * p.m * p.t; }
    var a0 = vec4<f32>(0.0); var a1 = vec4<f32>(0.0); var a2 = vec4<f32>(0.0); var a3 = vec4<f32>(0.0);
    var raw: array<u32, 20>;
    var xv: array<A, 16>;
    if (l < 128u) { if (live) { raw = ld_raw(dr, kb, l % 2u); } } else { xv = mm_ldx(t0, kb, ke, l); }
    mm_stage(raw, xv, live, dr, kb, l);
    workgroupBarrier();
    for (var k0 = kb; k0 < ke; k0 = k0 + TK) {
        let more = k0 + TK < ke;
        if (more) {
            if (l < 128u) { if (live) { raw = ld_raw(dr, k0 + TK, l % 2u); } } else { xv = mm_ldx(t0, k0 + TK, ke, l); }
        }
        for (var kk = 0u; kk < TK; kk = kk + 1u) {
            let w0 = ws[(kk * TM + rg) / 4u];
            let xq = xs[xs_at(kk, tv)];
            a0 = a0 + w0.x * xq; a1 = a1 + w0.y * xq; a2 = a2 + w0.z * xq; a3 = a3 + w0.w * xq;
        }
        if (more) {
            workgroupBarrier();
            mm_stage(raw, xv, live, dr, k0 + TK, l);
            workgroupBarrier();
        }
    }
    let t = t0 + 4u * tv;
    mm_out(yo, row0 + rg, t, a0); mm_out(yo, row0 + rg + 1u, t, a1);
    mm_out(yo, row0 + rg + 2u, t, a2); mm_out(yo, row0 + rg + 3u, t, a3);
}
// row r's outputs for tokens t .. t + 3
fn mm_out(yo: u32, r: u32, t: u32, a: vec4<f32>) {
    if (r >= p.rows) { return; }
    for (var j = 0u; j < 4u; j = j + 1u) {
        if (t + j < p.t) { store(yo + (t + j) * p.m + p.r0 + r, a[j]); }
    }
}

// ---- matmul_q (prefill on int8 activations: devices that accelerate dot4I8Packed (caps.idot) and
// have no matrix units; the types with decode lanes, K or B; ops_matmul.c wq_q8_tile): matmul's
// 64-row x 64-token tile and 32-wide k steps, its invocation layout (rows 4 (l / 16) .. +3 with tokens
// 4 (l % 16) .. +3) and its loads one step ahead (ld_raw), but both tiles as int8. Per step
// invocations 0 .. 127 decode their row's 16 weights (half h = l % 2 of the step) to signed bytes with
// a scale d and a minimum m (iq16: w = d u + m, dq16's twin), 128 .. 255 quantize their token's 16
// activations (two 16-byte loads of f16): q = round(x 127 / max|x|), scale max|x| / 127, and the sum
// of the dequantized values (for m). Per half an output takes 4 dot4I8Packed and d_w d_x s + m_w sum_x:
// per 32 weights and token 8 integer dot products and 6 f32 operations where matmul takes 32 fma.
// The product is W . Q16(x) up to f32 rounding (edge fat's int8 class: fat_q8_tile; Q16: the int8
// rounding per 16, about 16x f16's, test/fixtures.c TOL_GPU_I8_REL). Measured on the H200
// (docs/perf-log.md, session 39): pp512 1.6x matmul's tiles; single buffer (two buffers and one barrier
// a step: 2% slower), a scale per 16 (per 32: 95 registers, 22% slower), the quantization by the
// 1.5 2^23 rounding trick (round + clamp + convert: 7% slower).
var<workgroup> mqw: array<vec4<u32>, 128>;   // [8 words][16]: word j of rows 4v .. 4v + 3
var<workgroup> mqx: array<vec4<u32>, 128>;   // [8 words][16]: word j of tokens 4v .. 4v + 3
var<workgroup> mqwd: array<vec4<f32>, 32>;   // [half][16]: the rows' d
var<workgroup> mqwm: array<vec4<f32>, 32>;   // [half][16]: the rows' m
var<workgroup> mqxd: array<vec4<f32>, 32>;   // [half][16]: the tokens' scale
var<workgroup> mqxs: array<vec4<f32>, 32>;   // [half][16]: the tokens' sum of dequantized values
struct Iq { u: vec4<u32>, d: f32, m: f32 }
// bytes u (< 128 each) minus off, as int8
fn sub8(u: u32, off: u32) -> u32 { return ((u | 0x80808080u) - off * 0x01010101u) ^ 0x80808080u; }
fn iq_has_m() -> bool { return WT == WT_Q4_K || WT == WT_Q5_K || bgrp_min(); }
// weights 16 h .. 16 h + 15 of the step at k0 of row r as signed bytes (the twin of dq16's cases)
fn iq16(raw: array<u32, 20>, r: u32, k0: u32, h: u32) -> Iq {
    var o = Iq(vec4<u32>(0u), 0.0, 0.0);
    if (WT == WT_Q2_K || WT == WT_Q3_K) {         // the group lanes' decode (no loads ahead)
        let g = bgrp(r, k0 / 32u);
        let off = u32(bgrp_off());
        for (var i = 0u; i < 4u; i = i + 1u) { o.u[i] = sub8(g.u[4u * h + i], off); }
        o.d = g.d[h]; o.m = g.m[h];
        return o;
    }
    if (WT == WT_IQ4_NL || WT == WT_IQ4_XS) {
        var qo = 0u;
        if (WT == WT_IQ4_NL) { o.d = f16v(raw[4]); } else {
            o.d = f16v(raw[0]) * f32(iq4xs_ls(raw[0], raw[1], (k0 % 256u) / 32u));
            qo = 2u;
        }
        for (var i = 0u; i < 4u; i = i + 1u) { o.u[i] = kv4((raw[qo + i] >> (4u * h)) & 0x0f0f0f0fu) ^ 0x80808080u; }
        return o;
    }
    if (WT == WT_Q4_1 || WT == WT_Q5_0 || WT == WT_Q5_1) {
        o.d = f16v(raw[4] & 0xffffu);
        if (WT != WT_Q5_0) { o.m = f16v(raw[4] >> 16u); }
        for (var i = 0u; i < 4u; i = i + 1u) {
            var b = (raw[i] >> (4u * h)) & 0x0f0f0f0fu;
            if (WT != WT_Q4_1) { b = b | hb4(raw[5] >> (16u * h + 4u * i)); }
            o.u[i] = select(b, sub8(b, 16u), WT == WT_Q5_0);
        }
        return o;
    }
    if (WT == WT_Q8_0 || WT == WT_Q4_0) {
        o.d = f16v(raw[4]);
        for (var i = 0u; i < 4u; i = i + 1u) { o.u[i] = select(sub8((raw[i] >> (4u * h)) & 0x0f0f0f0fu, 8u), raw[i], WT == WT_Q8_0); }
        return o;
    }
    let j = (k0 % 256u) / 32u;
    if (WT == WT_Q4_K || WT == WT_Q5_K) {
        let sm = q4k_sm(raw[1], raw[2], raw[3], j);
        o.d = f16v(raw[0]) * sm.x;
        o.m = -(f16v(raw[0] >> 16u) * sm.y);
        for (var i = 0u; i < 4u; i = i + 1u) {
            var b = (raw[4u + i] >> (4u * (j % 2u))) & 0x0f0f0f0fu;
            if (WT == WT_Q5_K) { b = b | (((raw[8u + i] >> j) & 0x01010101u) << 4u); }
            o.u[i] = b;
        }
        return o;
    }
    let qq = j % 4u;                              // Q6_K
    let sc = (raw[18] >> (8u * ((2u * qq) % 4u) + 8u * h)) & 0xffu;
    o.d = f16v(raw[19]) * f32(bitcast<i32>(sc << 24u) >> 24u);
    for (var i = 0u; i < 4u; i = i + 1u) {
        let ql = (raw[i] >> (4u * (qq >> 1u))) & 0x0f0f0f0fu;
        let qh = ((raw[9u + i] >> (2u * qq)) & 0x03030303u) << 4u;
        o.u[i] = sub8(ql | qh, 32u);
    }
    return o;
}
// the next step's activations of invocation l (128 .. 255): token t0 + (l - 128) / 2, k k0 + 16 h .. +15
// (k0 + 16 h is a multiple of 16 and the slice ends at a multiple of 256: a half is in or out whole)
fn mq_ldx(t0: u32, k0: u32, ke: u32, l: u32) -> array<vec4<u32>, 2> {
    let t = t0 + (l - 128u) / 2u;
    let kb = k0 + 16u * (l % 2u);
    var v = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    if (t < p.t && kb < ke) { let i = (t * p.k + kb) / 8u; v[0] = x8[i]; v[1] = x8[i + 1u]; }
    return v;
}
fn mq_stage(raw: array<u32, 20>, xh: array<vec4<u32>, 2>, live: bool, r: u32, k0: u32, l: u32) {
    let h = l % 2u;
    let hv = 16u * h;
    if (l < 128u) {
        var o = Iq(vec4<u32>(0u), 0.0, 0.0);
        if (live) { o = iq16(raw, r, k0, h); }
        let rr = l / 2u;
        for (var i = 0u; i < 4u; i = i + 1u) { mqw[(4u * h + i) * 16u + rr / 4u][rr % 4u] = o.u[i]; }
        mqwd[hv + rr / 4u][rr % 4u] = o.d;
        mqwm[hv + rr / 4u][rr % 4u] = o.m;
        return;
    }
    let t = (l - 128u) / 2u;
    var mh = vec2<f16>(0.0);                      // max |x| and NaN / Inf on the f16 pairs (exact)
    var nh = vec2<f16>(0.0);
    for (var i = 0u; i < 8u; i = i + 1u) {
        let v = bitcast<vec2<f16>>(xh[i / 4u][i % 4u]);
        mh = max(mh, abs(v));
        nh = nh + v * vec2<f16>(0.0);
    }
    let m = f32(max(mh.x, mh.y));
    let inv = select(127.0 / m, 0.0, m == 0.0);
    var qs = 0i;
    for (var i = 0u; i < 4u; i = i + 1u) {
        let u = xh[i / 2u];
        let xv = vec4<f32>(vec2<f32>(bitcast<vec2<f16>>(u[2u * (i % 2u)])), vec2<f32>(bitcast<vec2<f16>>(u[2u * (i % 2u) + 1u])));
        // x 127 / m rounded to the nearest integer (ties to even) by adding 1.5 2^23: the low byte of the
        // sum's bits is the int8 (|x 127 / m| <= 127, so no clamp)
        let q = pack4xU8(bitcast<vec4<u32>>(xv * inv + 12582912.0));
        mqx[(4u * h + i) * 16u + t / 4u][t % 4u] = q;
        qs = qs + dot4I8Packed(q, 0x01010101u);
    }
    let d = m / 127.0 + f32(nh.x + nh.y);
    mqxd[hv + t / 4u][t % 4u] = d;
    mqxs[hv + t / 4u][t % 4u] = d * f32(qs);
}
// one step's products of the invocation's 4 rows (w: a row's word per component) and 4 tokens
fn mq_step(rv: u32, tv: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
    for (var h = 0u; h < 2u; h = h + 1u) {
        var s = array<vec4<i32>, 4>(vec4<i32>(0), vec4<i32>(0), vec4<i32>(0), vec4<i32>(0));
        for (var jj = 0u; jj < 4u; jj = jj + 1u) {
            let j = 4u * h + jj;
            let wv = mqw[j * 16u + rv];
            let xv = mqx[j * 16u + tv];
            for (var r = 0u; r < 4u; r = r + 1u) {
                s[r] = s[r] + vec4<i32>(dot4I8Packed(wv[r], xv.x), dot4I8Packed(wv[r], xv.y),
                                        dot4I8Packed(wv[r], xv.z), dot4I8Packed(wv[r], xv.w));
            }
        }
        let dw = mqwd[16u * h + rv];
        let dx = mqxd[16u * h + tv];
        for (var r = 0u; r < 4u; r = r + 1u) { (*acc)[r] = (*acc)[r] + (dw[r] * dx) * vec4<f32>(s[r]); }
        if (iq_has_m()) {
            let mw = mqwm[16u * h + rv];
            let sx = mqxs[16u * h + tv];
            for (var r = 0u; r < 4u; r = r + 1u) { (*acc)[r] = (*acc)[r] + mw[r] * sx; }
        }
    }
}

@compute @workgroup_size(256)
fn matmul_q(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let row0 = wid.x * TM;
    let t0 = wid.y * TN;
    let tv = l % 16u;
    let rv = l / 16u;                   // rows 4 rv .. 4 rv + 3
    let dr = row0 + (l % 128u) / 2u;
    let live = dr < p.rows;
    var kb = 0u; var ke = p.k; var yo = 0u;
    if (KSPLIT != 0u) { kb = wid.z * p.kc; ke = min(kb + p.kc, p.k); yo = wid.z * p.m * p.t; }
    var acc = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    var raw: array<u32, 20>;
    var xv = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    let dqk = WT == WT_Q2_K || WT == WT_Q3_K;     // (iq16 loads these itself)
    if (l < 128u) { if (live && !dqk) { raw = ld_raw(dr, kb, l % 2u); } } else { xv = mq_ldx(t0, kb, ke, l); }
    mq_stage(raw, xv, live, dr, kb, l);
    workgroupBarrier();
    for (var k0 = kb; k0 < ke; k0 = k0 + TK) {
        let more = k0 + TK < ke;
        if (more) {
            if (l < 128u) { if (live && !dqk) { raw = ld_raw(dr, k0 + TK, l % 2u); } } else { xv = mq_ldx(t0, k0 + TK, ke, l); }
        }
        mq_step(rv, tv, &acc);
        if (more) {
            workgroupBarrier();
            mq_stage(raw, xv, live, dr, k0 + TK, l);
            workgroupBarrier();
        }
    }
    let t = t0 + 4u * tv;
    for (var r = 0u; r < 4u; r = r + 1u) { mm_out(yo, row0 + 4u * rv + r, t, acc[r]); }
}

