// matmul_cm.wgsl — the prefill product Y (M, T) = W (K, M) . X (K, T) on the GPU's matrix units
// (Tint's subgroup matrices -> SPIR-V cooperative matrices, VK_KHR_cooperative_matrix), for
// every weight type whose cm column in config/dtypes.def is not NO (all but F32 and BF16) and f16
// activations. A workgroup is 4 subgroups of 32 and computes a
// 64-row x 128-token tile. Per 32-wide k step (one sub-block of Q4_K scales) all 128 invocations
// dequantize the 64 x 32 weight tile into shared memory (invocation l: row l / 2, weights
// 16 (l % 2) .. +15) and stages the 128 x 32 activation tile there too (invocation l: tokens
// l / 8 + 16 i, k 4 (l % 8) .. +3, as 8-byte vectors); subgroup s multiplies its 32 tokens (32 s
// .. +31 of the tile) with all 64 rows as 2 x 4 products of 16x16x16 (f16 in, f32 accumulation).
// Both tiles are double-buffered (one barrier per step: step s multiplies one buffer while step
// s + 1 is written into the other); the activations are loaded one step ahead, the weight words
// two. (Staged, pp512 is 9-34% above the matrix loads straight from the buffer at their step on
// the H100, docs/perf-log.md session 24: 157 registers now, 3 workgroups per SM,
// 34 KiB of workgroup memory, so devices with 32 KiB run the tiles.)
// The subgroup's offsets come from @builtin(subgroup_id), which is subgroup-uniform as the matrix operations require (an offset derived from the
// invocation id is not). The host binds the activations up to a whole tile of tokens (rows past t
// are read, multiplied and never stored: a token's products do not mix with another token's).
// Measured on the H200 (docs/perf-log.md #65-#70): prefill 1.76-1.84x the f32 tiles.
// The weight format is a parameter (override WT, its block BLK / BB): Q4_K, Q5_K, Q6_K, Q8_0, Q4_0, IQ4_NL and IQ4_XS have their own
// loads (ld_raw: the words a step needs, two steps ahead, as 16-byte vectors: a Q4_K block is 9
// of them, a Q5_K block 11, Q6_K's ql and qh parts start on 16-byte boundaries: pp512 +3-15% over 8-10 word loads,
// session 25: Q5_K_M 2.2x, Q8_0 +24%, Q4_0 +28%, IQ4_XS 2.2x, IQ4_NL 1.85x over dq4's per-4-weight decode,
// llama-3.2-1b on the H100; the IQ4 codebook is a 16-float workgroup table, kvt,
// docs/perf-log.md session 24) and decode (dq16: bytes to floats without int-to-float
// conversions); every other type
// decodes its 16 weights of a step with common/dq4.wgsl's dq4 (ld_raw and dq16 are common/ldraw.wgsl, shared with matmul.wgsl's tiles),
// at the time of those loads (two steps ahead, the f32 values held as raw's words). So a type is
// its case in dq4 and its row in config/dtypes.def: the `//! variant-each-cm` lines below are made
// once per type whose cm column is not NO (build.sh), its kernels.def rows by an X-macro over it.
// Precision: each dequantized weight w (f32, as matmul.wgsl's dq4) is rounded to f16, as the
// activations are (relative error <= 2^-11 per weight for |w| >= 2^-14; below, f16's subnormals:
// an absolute error <= 2^-25, or 0 where a driver flushes them; f16 x f16 products are exact in f32
// and accumulate in f32). `edge fat` measures <= 3e-4 of the natural magnitude (the f16 class, 1e-3).
// Splitting w into f16 hi + lo parts (two products, the f32 kernel's result to accumulation order)
// cost 18-26% of pp512 on the H200 (docs/perf-log.md, session 23). F16 weights are exact (BF16 ones
// run the tiles: f16 does not hold their exponent range). A weight beyond the f16 range
// (|w| > 65504) turns NaN: its outputs are NaN, never silently wrong. The host (ops_matmul.c, key OP_MATMUL_CM) uses it only on
// devices with a 16x16x16 f16/f32 subgroup-scope configuration and subgroups of 32 (caps.coopmat,
// shown by `edge info`; EDGE_NO_COOPMAT=1 and every EDGE_PROFILE turn it off), for k a multiple of
// 32 (of 256 for the super-block types: whole blocks); elsewhere the prefill products run
// matmul.wgsl's 64 x 64 tiles. matmul_cm_split_*
// (KSPLIT) run a k slice per grid z and write f32 partial slices, as matmul.wgsl's matmul_split_*.
// Bounds: weight rows past p.rows are read as zeros and tokens past p.t are not stored, k is a
// whole number of 32-element steps and of blocks (host check). So the robustness transform is off:
//! norobust
//! tintvalidate
//! variant-each-cm matmul_cm_{t}_a16_y32   matmul_cm {type} alias:A=f16
//! variant-each-cm matmul_cm_{t}_a16_y16   matmul_cm {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-each-cm matmul_cm_split_{t}_a16 matmul_cm {type} KSPLIT=1 alias:A=f16
//! variant-each-cm matmul_cm_b_{t}_a16_y32   matmul_cm_b {type} alias:A=f16
//! variant-each-cm matmul_cm_b_{t}_a16_y16   matmul_cm_b {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-each-cm matmul_cm_b_split_{t}_a16 matmul_cm_b {type} KSPLIT=1 alias:A=f16
enable f16;
enable chromium_experimental_subgroup_matrix;

alias A = f16;
alias O = f32;
override WT: u32 = 7u;                 // weight type: the C enum DType, a row of config/dtypes.def (WT_* of common/dq4.wgsl)
override BLK: u32 = 256u;              // its elements and bytes per block (dq4)
override BB: u32 = 144u;
override HDR: u32 = 0u;                // a type regrouped at upload: its header bytes (dtypes.def up G2..G8; common/q6a.wgsl)
override YMAX: f32 = 0x1.fffffep+127f;
override KSPLIT: u32 = 0u;             // matmul_cm_split_*: split-k (grid z = k slice of p.kc, f32 partials), as matmul.wgsl

// the push-constant block of matmul.wgsl (ops_matmul.c WqPush); this kernel reads k, rows, r0, m, t, acc
struct Params { k: u32, rows: u32, r0: u32, m: u32, t: u32, scale: f32, acc: u32, act: u32, ll: u32,
                hd: u32, n_head: u32, n_head_kv: u32, n_rot: u32, log2_base: f32, freq_scale: f32, neox: u32,
                n_ctx: u32, bias: u32, rbase: u32, eps: f32, kc: u32 }
var<immediate> p: Params;

@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;    // weight rows by 16 bytes (GGUF bytes; Q6_K in units, below)
@group(0) @binding(1) var<storage, read> xa: array<vec4<A>>;     // (k, t) activations by 4, bound to a whole tile of tokens
@group(0) @binding(2) var<storage, read_write> y: array<O>;      // (m, t)

// The tile is written out for 4 subgroups x (2 token blocks x 4 row blocks of 16) (c<i><j> below).
const NSG = 4u;                                  // subgroups per workgroup (128 invocations)
const TM = 64u;                                  // rows per tile (ops_matmul.c WQ_CM_TM)
const TN = 128u;                                 // tokens per tile, 32 per subgroup (ops_matmul.c WQ_CM_TN)
const TK = 32u;                                  // k per step (one sub-block of Q4_K scales)
const TS = TK + 8u;                              // row stride of the weight tiles (16-byte aligned rows, padded)
var<workgroup> wh: array<f16, 2 * TM * TS>;      // weights [buffer][row][k]
var<workgroup> xs: array<f16, 2 * TN * TS>;      // activations [buffer][token][k]
var<workgroup> os: array<f32, 256 * NSG>;        // output staging: one 16x16 square per subgroup
const TB = 32u;                                  // matmul_cm_b: tokens per tile (ops_matmul.c WQ_CMB_TN)
var<workgroup> xb: array<f16, 2 * TB * TS>;      // matmul_cm_b: activations [buffer][token][k]
var<workgroup> kvt: array<f32, 16>;              // IQ4_NL / IQ4_XS: the codebook (a constant array indexed at run time may live in local memory)

//! include common/clampn.wgsl
fn wword(i: u32) -> u32 { return w[i >> 2u][i & 3u]; }
fn wvec(i: u32) -> vec4<u32> { return w[i]; }
fn kv_iq4(i: u32) -> f32 { return kvt[i]; }
fn wwords() -> u32 { return 4u * arrayLength(&w); }
// The block decode of every weight type (dq4, f16v; the WT_* ids):
//! include common/dq4.wgsl

// Q6_K super-block bi's parts as byte offsets (common/q6a.wgsl); the binding's block count
// floor(range / 210) from its words: 8 blocks per 420
//! include common/q6a.wgsl
fn q6a(bi: u32) -> Q6A {
    let nw = wwords();
    return q6a_at(bi, nw / 420u * 8u + (nw % 420u) * 4u / 210u);
}
fn gu(bi: u32) -> vec2<u32> {              // a group type's block bi: its quants, its header (gu_at)
    let nw = wwords();
    return gu_at(bi, nw / BB * 4u + (nw % BB) * 4u / BB);
}
// The loads of a step's weights (ld_raw, two steps ahead here) and their decode (dq16):
//! include common/ldraw.wgsl

// Dequantize row r's 16 weights into tile buffer b, rounded to f16. A block whose bound leaves
// the f16 range (or is NaN) takes the per-weight path: a weight beyond it becomes NaN.
fn put16(b: u32, dr: u32, dh: u32, raw: array<u32, 20>, r: u32, k0: u32) {
    let d = dq16(raw, r, k0, dh);
    let fo = b * TM * TS + dr * TS + 16u * dh;
    if (d.bound <= 65504.0) {
        for (var i = 0u; i < 16u; i = i + 1u) { wh[fo + i] = f16(d.v[i]); }
        return;
    }
    let nanh = bitcast<vec2<f16>>(0x7e007e00u | (p.acc & 0u)).x;   // a runtime NaN (a constant one is a WGSL error)
    for (var i = 0u; i < 16u; i = i + 1u) {
        wh[fo + i] = select(nanh, f16(clamp(d.v[i], -65504.0, 65504.0)), abs(d.v[i]) <= 65504.0);
    }
}

fn store(idx: u32, s: f32) {
    var v = s;
    if (p.acc != 0u) { v = v + f32(y[idx]); }
    y[idx] = O(clampn(v, YMAX));
}

alias ML = subgroup_matrix_left<f16, 16, 16>;
alias MR = subgroup_matrix_right<f16, 16, 16>;
alias MC = subgroup_matrix_result<f32, 16, 16>;
// Every matrix is a named variable, not an array element: an array of matrices indexed in loops
// can be kept in local memory by the driver.
fn lda(o: u32) -> ML { return subgroupMatrixLoad<ML>(&xs, o, false, TS); }       // 16 tokens x 16 k from xs[o]
// The activations of one step: invocation l loads tokens l / 8 + 16 i (i < 8), k 4 (l % 8) .. +3,
// as 8-byte vectors one step ahead, and stores them into xs after the step's products
struct XL { v0: vec4<A>, v1: vec4<A>, v2: vec4<A>, v3: vec4<A>, v4: vec4<A>, v5: vec4<A>, v6: vec4<A>, v7: vec4<A> }
fn ldx(t0: u32, k0: u32, l: u32) -> XL {
    let kq = p.k / 4u;
    let b = (t0 + l / 8u) * kq + k0 / 4u + l % 8u;
    let s = 16u * kq;
    return XL(xa[b], xa[b + s], xa[b + 2u * s], xa[b + 3u * s], xa[b + 4u * s], xa[b + 5u * s], xa[b + 6u * s], xa[b + 7u * s]);
}
fn st4(o: u32, v: vec4<A>) { xs[o] = v.x; xs[o + 1u] = v.y; xs[o + 2u] = v.z; xs[o + 3u] = v.w; }
fn stx(buf: u32, x: XL, l: u32) {
    let o = buf * TN * TS + (l / 8u) * TS + 4u * (l % 8u);
    let s = 16u * TS;
    st4(o, x.v0); st4(o + s, x.v1); st4(o + 2u * s, x.v2); st4(o + 3u * s, x.v3);
    st4(o + 4u * s, x.v4); st4(o + 5u * s, x.v5); st4(o + 6u * s, x.v6); st4(o + 7u * s, x.v7);
}
fn ldw(o: u32) -> MR { return subgroupMatrixLoad<MR>(&wh, o, true, TS); }
fn mm(a: ML, b: MR, c: MC) -> MC { return subgroupMatrixMultiplyAccumulate(a, b, c); }
// one 16x16 result (tokens t .. +15, rows r .. +15) through the subgroup's staging square
fn out16(c: MC, so: u32, ln: u32, yo: u32, t: u32, r: u32) {
    subgroupMatrixStore(&os, so, c, false, 16u);
    workgroupBarrier();
    for (var e = ln; e < 256u; e = e + 32u) {
        let te = t + e / 16u;
        let re = r + e % 16u;
        if (te < p.t && re < p.rows) { store(yo + te * p.m + p.r0 + re, os[so + e]); }
    }
    workgroupBarrier();
}

// The k range of a product and where its sums go: matmul_cm_split_* (KSPLIT) take the k slice [k0, ke)
// of grid z (p.kc a multiple of 256) and write their partial sums to y's z-th (m, t) slice.
struct KRange { k0: u32, ke: u32, yo: u32 }
fn k_range(z: u32) -> KRange {
    if (KSPLIT != 0u) { let k0 = z * p.kc; return KRange(k0, min(k0 + p.kc, p.k), z * p.m * p.t); }
    return KRange(0u, p.k, 0u);
}
// The weight tile's double buffer (both entries): step s multiplies buffer s % 2 while invocation l
// dequantizes its row dr's weights 16 dh .. +15 of step s + 1 into the other (one barrier per step);
// its raw words run two steps ahead. w_first fills buffer 0 with the first step and returns the
// second's words. (The loops' next-step lines stay in each entry: as a function taking and returning
// the words, they made the H100's prefill 4-5% slower.)
fn w_first(l: u32, live: bool, r: u32, dr: u32, dh: u32, kr: KRange) -> array<u32, 20> {
    var raw: array<u32, 20>;
    if (WT == WT_IQ4_NL || WT == WT_IQ4_XS) {
        if (l < 16u) { kvt[l] = KV_IQ4NL[l]; }
        workgroupBarrier();
    }
    if (live) { raw = ld_raw(r, kr.k0, dh); }
    put16(0u, dr, dh, raw, r, kr.k0);
    if (live && kr.k0 + TK < kr.ke) { raw = ld_raw(r, kr.k0 + TK, dh); }
    return raw;
}
@compute @workgroup_size(128)
fn matmul_cm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
             @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) ln: u32) {
    let l = lid.x;
    let row0 = wid.x * TM;
    let t0 = wid.y * TN;
    let tq = t0 + sg * 32u;                      // this subgroup's tokens tq .. tq + 31 (2 blocks of 16)
    let dr = l / 2u;                             // dequantization: row dr, weights 16 dh .. +15 of each step
    let dh = l % 2u;
    let live = row0 + dr < p.rows;
    let kr = k_range(wid.z);
    let k0 = kr.k0; let ke = kr.ke;
    // c<i><j>: token block i, row block j
    var c00: MC; var c01: MC; var c02: MC; var c03: MC; var c10: MC; var c11: MC; var c12: MC; var c13: MC;
    var xl = ldx(t0, k0, l);                     // in flight while w_first waits for its words
    var raw = w_first(l, live, row0 + dr, dr, dh, kr);
    stx(0u, xl, l);
    workgroupBarrier();
    for (var kb = k0; kb < ke; kb = kb + TK) {
        let cur = (kb - k0) / TK % 2u;
        let bo = cur * TM * TS;
        let more = kb + TK < ke;
        if (more) { xl = ldx(t0, kb + TK, l); }
        // a<i><h>: token block i, k half h of the step
        let xo = cur * TN * TS + sg * 32u * TS;
        let a00 = lda(xo); let a01 = lda(xo + 16u); let a10 = lda(xo + 16u * TS); let a11 = lda(xo + 16u * TS + 16u);
        { let b = ldw(bo); c00 = mm(a00, b, c00); c10 = mm(a10, b, c10); }
        { let b = ldw(bo + 16u * TS); c01 = mm(a00, b, c01); c11 = mm(a10, b, c11); }
        { let b = ldw(bo + 32u * TS); c02 = mm(a00, b, c02); c12 = mm(a10, b, c12); }
        { let b = ldw(bo + 48u * TS); c03 = mm(a00, b, c03); c13 = mm(a10, b, c13); }
        { let b = ldw(bo + 16u); c00 = mm(a01, b, c00); c10 = mm(a11, b, c10); }
        { let b = ldw(bo + 16u * TS + 16u); c01 = mm(a01, b, c01); c11 = mm(a11, b, c11); }
        { let b = ldw(bo + 32u * TS + 16u); c02 = mm(a01, b, c02); c12 = mm(a11, b, c12); }
        { let b = ldw(bo + 48u * TS + 16u); c03 = mm(a01, b, c03); c13 = mm(a11, b, c13); }
        if (more) {
            put16(1u - cur, dr, dh, raw, row0 + dr, kb + TK);
            stx(1u - cur, xl, l);
            if (live && kb + 2u * TK < ke) { raw = ld_raw(row0 + dr, kb + 2u * TK, dh); }
        }
        workgroupBarrier();
    }
    let so = sg * 256u;
    out16(c00, so, ln, kr.yo, tq, row0);
    out16(c01, so, ln, kr.yo, tq, row0 + 16u);
    out16(c02, so, ln, kr.yo, tq, row0 + 32u);
    out16(c03, so, ln, kr.yo, tq, row0 + 48u);
    out16(c10, so, ln, kr.yo, tq + 16u, row0);
    out16(c11, so, ln, kr.yo, tq + 16u, row0 + 16u);
    out16(c12, so, ln, kr.yo, tq + 16u, row0 + 32u);
    out16(c13, so, ln, kr.yo, tq + 16u, row0 + 48u);
}

// matmul_cm_b: the same product for the few rows of a batched decode step (xf_decode_rows on the
// prefill products: at most EDGE_MAX_SEQ tokens): a 64-row x 32-token tile, subgroup sg taking rows
// 16 sg .. +15 for both blocks of 16 tokens, so a workgroup does a quarter of matmul_cm's matrix work
// per k step on the same weight tile (dequantized and double-buffered as above) with 2 accumulators
// and 19 KiB of workgroup memory. Each output is the same sum in the same k order as matmul_cm's.
fn ldb(o: u32) -> ML { return subgroupMatrixLoad<ML>(&xb, o, false, TS); }
fn st4b(o: u32, v: vec4<A>) { xb[o] = v.x; xb[o + 1u] = v.y; xb[o + 2u] = v.z; xb[o + 3u] = v.w; }
// invocation l: tokens l / 8 and l / 8 + 16, k 4 (l % 8) .. +3 of the step
fn ldxb(t0: u32, k0: u32, l: u32) -> array<vec4<A>, 2> {
    let kq = p.k / 4u;
    let b = (t0 + l / 8u) * kq + k0 / 4u + l % 8u;
    return array<vec4<A>, 2>(xa[b], xa[b + 16u * kq]);
}
fn stxb(buf: u32, x: array<vec4<A>, 2>, l: u32) {
    let o = buf * TB * TS + (l / 8u) * TS + 4u * (l % 8u);
    st4b(o, x[0]); st4b(o + 16u * TS, x[1]);
}

@compute @workgroup_size(128)
fn matmul_cm_b(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
               @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) ln: u32) {
    let l = lid.x;
    let row0 = wid.x * TM;
    let t0 = wid.y * TB;
    let dr = l / 2u;
    let dh = l % 2u;
    let live = row0 + dr < p.rows;
    let kr = k_range(wid.z);
    let k0 = kr.k0; let ke = kr.ke;
    var c0: MC; var c1: MC;                      // token block 0 / 1, rows 16 sg .. +15
    var xl = ldxb(t0, k0, l);
    var raw = w_first(l, live, row0 + dr, dr, dh, kr);
    stxb(0u, xl, l);
    workgroupBarrier();
    for (var kb = k0; kb < ke; kb = kb + TK) {
        let cur = (kb - k0) / TK % 2u;
        let bo = cur * TM * TS + sg * 16u * TS;
        let more = kb + TK < ke;
        if (more) { xl = ldxb(t0, kb + TK, l); }
        let xo = cur * TB * TS;
        { let b = ldw(bo); c0 = mm(ldb(xo), b, c0); c1 = mm(ldb(xo + 16u * TS), b, c1); }
        { let b = ldw(bo + 16u); c0 = mm(ldb(xo + 16u), b, c0); c1 = mm(ldb(xo + 16u * TS + 16u), b, c1); }
        if (more) {
            put16(1u - cur, dr, dh, raw, row0 + dr, kb + TK);
            stxb(1u - cur, xl, l);
            if (live && kb + 2u * TK < ke) { raw = ld_raw(row0 + dr, kb + 2u * TK, dh); }
        }
        workgroupBarrier();
    }
    let so = sg * 256u;
    out16(c0, so, ln, kr.yo, t0, row0 + 16u * sg);
    out16(c1, so, ln, kr.yo, t0 + 16u, row0 + 16u * sg);
}
