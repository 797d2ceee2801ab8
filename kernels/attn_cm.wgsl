// attn_cm.wgsl — prefill attention on the GPU's matrix units (Tint's subgroup matrices -> SPIR-V
// cooperative matrices, VK_KHR_cooperative_matrix): attention.wgsl's attn_flash, for f16 activations,
// an f16 cache, head_dim 64, 128 or 256 (one build each: HD), softcap as attn_flash, a sliding window's
// ring cache in the head_dim 256 RING build (ops_attn.c op_attention_cm_fits; elsewhere attn_flash runs). A
// workgroup is 4 subgroups of 32 and takes 16 queries of one head (grid (n_head, ceil(T / 16)));
// keys go in chunks of KC (64; 32 for head_dim 256: workgroup memory) from the chunk of the first
// query's first key to the last query's position, one pass:
//   1. subgroup s: S = Q K^T of the chunk's 16-key group s % NKG (NKG = KC / 16) over its part
//      s / NKG of head_dim (head_dim 256: two subgroups per group, each half of head_dim; f16 in, f32
//      accumulation) into its square of sS (a group's scores: its parts' sum, times scale, softcapped)
//   2. its invocations turn S into weights e = 2^11 exp(S - m) (0 outside a query's keys) against the
//      row's reference m, as f16 hi + lo parts (sP, sPl: e to ~2^-22), and the query's sum l of e
//   3. subgroup s, at the next chunk's step 1: O += P V + Pl V for its output columns (head_dim / 64
//      blocks of 16; 2 products per block and 16 keys)
// The chunk's keys and values go through workgroup memory (sK, sV): all 128 invocations load them as
// 8-byte vectors a chunk ahead (the keys of chunk c + 1 and the values of chunk c while chunk c is
// made) and store them after step 1, so the matrix loads read workgroup memory (rows padded by 8
// values: no bank conflicts). H100, attention of a 512-token batch of a 2,048-token prompt: 445 -> 277
// us per layer (llama-3.2-1b), 469 -> 345 (llama-3.2-3b) against matrix loads from the cache (then
// 178 / 177 with one build per head_dim: HD below).
// The reference m is a row's running maximum, moved only when a score passes it by more than TAU (a
// flag, one uniform load per chunk): then the chunk's row maxima make the new m, O and l are scaled by
// exp(m_old - m_new) (O through sS: the matrices' elements are not addressable) and the weights are
// made again. So e <= 2^11 e^TAU < 2^15 (f16's range), and the first chunk always sets it (O is 0 then:
// not scaled). Rescales are rare after the first chunk (the running maximum settles: with none after
// it, attention is 1-3% faster), so a chunk costs one barrier after the scores and the flag's uniform
// load. H100, pp2048 against the two-pass kernel of session 24 (a subgroup per 16 queries, 16-key
// chunks, S made twice, keys and values matrix-loaded from the cache): llama-3.2-1b +19%,
// qwen2.5-1.5b +26%, llama-3.2-3b +20% (docs/perf-log.md session 25).
// Every workgroup variable is whole 16-byte units (tools/spvgen.c fails the build otherwise): the
// driver may order them as it likes, and an 8-byte flag array once put sP 8 bytes off, so the matrix
// loads of P read rows shifted by 4 values (row 0 took the flag's bits: NaN).
// Precision: q, k and v are f16 values already, products accumulate in f32; e in f16 alone moved each
// weight by up to 2^-11 (8.6e-4 of fat's 1e-3 bound; P V with the lo part costs ~10% of attention),
// so e keeps its lo part, a normal f16 for weights down to 2^-15 of the row's largest (a driver may
// flush f16 subnormals: the H200 does). `edge fat`: 4.9e-4, the f16 output's rounding.
// Keys: rows kr0 + j of the cache, j % n_ctx in the RING build (a sliding layer's ring, as
// attn_flash: ring); a window masks the keys before qp - window + 1, and the chunks start at the one of the
// first query's first key. A 16-key group is 16 whole rows: the last
// ones end at jhi, the last query's position (first row jhi - 15; keys before the group's first, read
// again, are masked; a group wholly past jhi reads those rows too and masks them all, and its products
// with V are skipped), so every row read holds a key this sequence wrote, except where the keys so far
// are fewer than 16 (jhi < 15: rows 0 .. 15, the host asks n_ctx >= 80). Such rows can hold anything
// (stale rows of an earlier sequence, never-written memory): a key row past jhi only enters masked
// scores, and a value row past jhi is stored as zeros (NaN bits times a zero weight would be NaN). A
// masked key gets weight 0; a NaN score of one of the query's own keys stays NaN through the sum and
// the output. Queries past T are never read (q goes through sQ, zero rows) nor stored. So the
// robustness transform is off:
//! norobust
//! tintvalidate
//! variant attn_cm_f16_f16c attn_cm HD=128
//! variant attn_cm_h64_f16_f16c attn_cm HD=64 alias:KArr=KArr64 alias:QArr=QArr64
//! variant attn_cm_h256_f16_f16c attn_cm HD=256 alias:KArr=KArr256 alias:QArr=QArr256 alias:PArr=PArr256
//! variant attn_cm_h256w_f16_f16c attn_cm HD=256 RING=1 alias:KArr=KArr256 alias:QArr=QArr256 alias:PArr=PArr256
enable f16;
enable chromium_experimental_subgroup_matrix;

struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32,
                q0: u32 }             // attention.wgsl's push constants (ops_attn.c AttnPush)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<f16>;           // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f16>>;    // (head_dim * n_head_kv, n_ctx, n_seq) by 4
@group(0) @binding(2) var<storage, read> vc: array<vec4<f16>>;    // (head_dim * n_head_kv, n_ctx, n_seq) by 4
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // the rows table
@group(0) @binding(4) var<storage, read_write> outf: array<f16>;  // (head_dim, n_head, T)

const F32_MAX = 3.4028234e38;
// head_dim, fixed per build (ops_attn.c op_attention_cm_op: the host asks p.head_dim == HD), so the
// kernel's shape is constant for the driver's compiler: H100, attention of a 512-token batch at 2,048
// tokens, per layer, against one build for both head dims: llama-3.2-1b (64) 277 -> 178 us,
// llama-3.2-3b (128) 345 -> 177 us
override HD: u32 = 128u;
const QB = 16u;                                  // queries per workgroup (ops_attn.c ATTN_CM_QB)
const NSG = 4u;                                  // subgroups per workgroup
override KC: u32 = select(64u, 32u, HD > 128u);  // keys per chunk (head_dim 256: 32, so that sK and sV fit 48 KiB)
override NKG: u32 = KC / 16u;                    // 16-key groups per chunk
override HSP: u32 = NSG / NKG;                   // subgroups per group (each a part of head_dim for S)
override NDS: u32 = HD / 16u / HSP;              // a subgroup's 16-wide head_dim slices for S
override NB: u32 = HD / 16u / NSG;               // output blocks per subgroup: sg, sg + NSG, ...
override KPI: u32 = KC / 8u;                     // keys per invocation in the weights (two per query and 16-key part)
const TAU = 2.7;                                 // a score may pass its row's reference by this much (e^TAU < 16)
const WS = 2048.0;                               // the weights' factor 2^11 (out = O / l cancels it)
override KS: u32 = HD + 8u;                      // row stride of sK / sV / sQ in values (+ 8: no bank conflicts)
override PS: u32 = select(KC + 8u, KC, HD > 128u);   // row stride of sP / sPl (head_dim 256: unpadded, 48 KiB)
// The workgroup arrays' sizes per build (the matrix loads take fixed-size arrays only, so they are
// types, which each variant line picks: KC x KS, QB x KS and QB x PS values of the build's HD)
alias KArr128 = array<f16, 8704>;  alias QArr128 = array<f16, 2176>;  alias PArr128 = array<f16, 1152>;
alias KArr64 = array<f16, 4608>;   alias QArr64 = array<f16, 1152>;
alias KArr256 = array<f16, 8448>;  alias QArr256 = array<f16, 4224>;  alias PArr256 = array<f16, 512>;
alias KArr = KArr128;
alias QArr = QArr128;
alias PArr = PArr128;
var<workgroup> sK: KArr;                         // the chunk's keys [key][head_dim] (row stride head_dim + 8)
var<workgroup> sV: KArr;                         // the values of the chunk before [key][head_dim]
var<workgroup> sQ: QArr;                         // the 16 queries [query][head_dim] (zero past T)
var<workgroup> sS: array<f32, 256 * NSG>;        // per subgroup: its 16 x 16 scores [query][key], or an output block
var<workgroup> sP: PArr;                         // the chunk's weights [query][key]: hi parts
var<workgroup> sPl: PArr;                        // lo parts
var<workgroup> sM: array<f32, 16>;               // each query's reference m
var<workgroup> sA: array<f32, 16>;               // each query's rescale factor exp(m_old - m_new)
var<workgroup> sR: array<f32, 128>;              // partial row maxima, then partial sums
var<workgroup> sF: array<u32, 4>;                // a chunk's rescale flag, by the chunk's parity (2 used)
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/tanh_acc.wgsl
//! include common/rows.wgsl

alias ML = subgroup_matrix_left<f16, 16, 16>;
alias MR = subgroup_matrix_right<f16, 16, 16>;
alias MC = subgroup_matrix_result<f32, 16, 16>;

// The chunk's keys and values go through sK / sV: invocation l loads vectors of 4 values (column
// 4 (l % hq) of rows l / hq + rpl u, hq = head_dim / 4, rpl = 128 / hq; u < 8, and 8 .. 15 for
// head_dim 128 and 256: X8 a and b) one chunk ahead and stores them after the chunk's scores are made.
struct X8 { v0: vec4<f16>, v1: vec4<f16>, v2: vec4<f16>, v3: vec4<f16>, v4: vec4<f16>, v5: vec4<f16>, v6: vec4<f16>, v7: vec4<f16> }
// where a chunk's rows come from: the cache's first row kr0, row width kvw (vec4 units: kvw / 4), the
// KV head's offset hc, the last key jhi, the chunk's first key j0
struct Src { kr0: u32, kvw: u32, hc: u32, jhi: u32, hq: u32, rpl: u32 }
// the key of the chunk's row r: its 16-key group's keys end at jhi at the latest
fn crow(r: u32, j0: u32, q: Src) -> u32 { return chunk_row(j0 + 16u * (r / 16u), q.jhi) + r % 16u; }
// Key j's cache row is j % n_ctx (a sliding layer's ring; j itself elsewhere, all keys below n_ctx).
// A chunk's keys lie in [min(j0, jhi - 15), min(j0 + KC - 1, max(jhi, 15))] (crow), fewer than n_ctx
// (the host asks n_ctx >= KC + 16): one modulo per chunk makes the base b of its first key's row, and
// a key's row is j - b, or (where the chunk passes the ring's end: wrap) j - b - n_ctx past it. Only
// the RING build (attn_cm_h256w, for sliding-window layers) has that code: in the others a key's row
// is j (H100, pp2048: the ring code cost llama-3.2-3b 11% with a test per row, 6% with one per chunk).
override RING: bool = false;
struct Ring { b: u32, wrap: bool }
fn ring(j0: u32, q: Src) -> Ring {
    if (!RING || p.window == 0u) { return Ring(0u, false); }
    let lo = select(min(j0, q.jhi - 15u), 0u, q.jhi < 15u);
    let b = lo - lo % p.n_ctx;
    return Ring(b, min(j0 + KC - 1u, max(q.jhi, 15u)) - b >= p.n_ctx);
}
fn cvec(j: u32, g: Ring, l: u32, q: Src) -> u32 {
    var r = j - g.b;
    if (RING && g.wrap) { r = select(r, r - p.n_ctx, r >= p.n_ctx); }
    return ((q.kr0 + r) * q.kvw + q.hc) / 4u + l % q.hq;
}
fn gk(r: u32, j0: u32, g: Ring, l: u32, q: Src) -> vec4<f16> { return kc[cvec(crow(r, j0, q), g, l, q)]; }
// values past jhi (while the keys so far are fewer than 16) are zero: such rows may hold anything
fn gv(r: u32, j0: u32, g: Ring, l: u32, q: Src) -> vec4<f16> {
    let c = crow(r, j0, q);
    return select(vc[cvec(c, g, l, q)], vec4<f16>(0.0), c > q.jhi);
}
fn ldk8(u0: u32, j0: u32, l: u32, q: Src) -> X8 {
    let r = l / q.hq + q.rpl * u0;
    let s = q.rpl;
    let g = ring(j0, q);
    return X8(gk(r, j0, g, l, q), gk(r + s, j0, g, l, q), gk(r + 2u * s, j0, g, l, q), gk(r + 3u * s, j0, g, l, q),
              gk(r + 4u * s, j0, g, l, q), gk(r + 5u * s, j0, g, l, q), gk(r + 6u * s, j0, g, l, q), gk(r + 7u * s, j0, g, l, q));
}
fn ldv8(u0: u32, j0: u32, l: u32, q: Src) -> X8 {
    let r = l / q.hq + q.rpl * u0;
    let s = q.rpl;
    let g = ring(j0, q);
    return X8(gv(r, j0, g, l, q), gv(r + s, j0, g, l, q), gv(r + 2u * s, j0, g, l, q), gv(r + 3u * s, j0, g, l, q),
              gv(r + 4u * s, j0, g, l, q), gv(r + 5u * s, j0, g, l, q), gv(r + 6u * s, j0, g, l, q), gv(r + 7u * s, j0, g, l, q));
}

fn stk4(o: u32, v: vec4<f16>) { sK[o] = v.x; sK[o + 1u] = v.y; sK[o + 2u] = v.z; sK[o + 3u] = v.w; }
fn stv4(o: u32, v: vec4<f16>) { sV[o] = v.x; sV[o + 1u] = v.y; sV[o + 2u] = v.z; sV[o + 3u] = v.w; }
fn stk8(u0: u32, x: X8, l: u32, q: Src) {
    let o = (l / q.hq + q.rpl * u0) * KS + 4u * (l % q.hq);
    let s = q.rpl * KS;
    stk4(o, x.v0); stk4(o + s, x.v1); stk4(o + 2u * s, x.v2); stk4(o + 3u * s, x.v3);
    stk4(o + 4u * s, x.v4); stk4(o + 5u * s, x.v5); stk4(o + 6u * s, x.v6); stk4(o + 7u * s, x.v7);
}
fn stv8(u0: u32, x: X8, l: u32, q: Src) {
    let o = (l / q.hq + q.rpl * u0) * KS + 4u * (l % q.hq);
    let s = q.rpl * KS;
    stv4(o, x.v0); stv4(o + s, x.v1); stv4(o + 2u * s, x.v2); stv4(o + 3u * s, x.v3);
    stv4(o + 4u * s, x.v4); stv4(o + 5u * s, x.v5); stv4(o + 6u * s, x.v6); stv4(o + 7u * s, x.v7);
}

// S = Q K^T of key group g of the chunk in sK over head_dim slice jd (K^T slice: key c's 16 values contiguous)
fn mq(s: MC, g: u32, jd: u32) -> MC {
    let k = subgroupMatrixLoad<MR>(&sK, 16u * g * KS + 16u * jd, true, KS);
    return subgroupMatrixMultiplyAccumulate(subgroupMatrixLoad<ML>(&sQ, 16u * jd, false, KS), k, s);
}
// subgroup sg's part of S: its group sg % NKG over its NDS slices of head_dim from (sg / NKG) NDS
fn scores(sg: u32) -> MC {
    let g = sg % NKG;
    let d0 = (sg / NKG) * NDS;
    var s: MC;
    s = mq(s, g, d0); s = mq(s, g, d0 + 1u); s = mq(s, g, d0 + 2u); s = mq(s, g, d0 + 3u);
    if (NDS > 4u) { s = mq(s, g, d0 + 4u); s = mq(s, g, d0 + 5u); s = mq(s, g, d0 + 6u); s = mq(s, g, d0 + 7u); }
    return s;
}
// O block jd += P V + Pl V over the keys 16 i .. +15 of the chunk in sV (P: that group's weights)
fn pv(o: MC, ph: ML, pl: ML, i: u32, jd: u32) -> MC {
    let v = subgroupMatrixLoad<MR>(&sV, 16u * i * KS + 16u * jd, false, KS);
    return subgroupMatrixMultiplyAccumulate(pl, v, subgroupMatrixMultiplyAccumulate(ph, v, o));
}

// Is key j one of query qp's keys (in its window, and not one read again before j0)?
fn inside(j: u32, j0: u32, qp: u32, live: bool) -> bool { return live && j >= j0 && j <= qp && (p.window == 0u || j + p.window > qp); }
// the first row of the 16 keys from js: 16 rows that end at jhi at the latest (from 0 while jhi < 15)
fn chunk_row(js: u32, jhi: u32) -> u32 { return select(min(js, jhi - 15u), 0u, jhi < 15u); }
// the score of query i, key c of group g: its parts' sum (squares g, g + NKG, ...) scaled, softcapped as attn_flash
fn score(g: u32, i: u32, c: u32) -> f32 {
    var a = sS[256u * g + 16u * i + c];
    if (HSP > 1u) { a = a + sS[256u * (g + NKG) + 16u * i + c]; }
    var s = clampn(a * p.scale, F32_MAX);
    if (p.softcap > 0.0) { s = p.softcap * tanh_acc(clampn(s / p.softcap, 15.0)); }
    return s;
}

// Step 2 for invocation ln of a subgroup of group g (query ln / 2, keys h .. h + KPI - 1 of the group's
// 16, rows from jb, the first key js): weights against m into sP / sPl; returns (their sum, 1 if a score
// passed m by more than TAU)
fn weights(g: u32, h: u32, ln: u32, jb: u32, js: u32, qp: u32, live: bool, m: f32) -> vec2<f32> {
    let i = ln / 2u;
    var cs = 0.0;
    var fl = 0.0;
    for (var c = 0u; c < KPI; c = c + 1u) {
        var e = 0.0;                             // weight 0 outside the query's keys; a NaN score stays NaN
        if (inside(jb + h + c, js, qp, live)) {
            let d = score(g, i, h + c) - m;
            if (d > TAU) { fl = 1.0; }           // (this chunk's weights are made again after the rescale)
            e = exp(select(d, TAU, d > TAU)) * WS;   // (min(NaN, TAU) may be TAU)
        }
        // hi: e with its mantissa cut to f16's 10 bits, lo: the f32 remainder (lo = e - f32(f16(e))
        // is not safe: a driver may fold the round trip away, leaving lo = 0, as the H200 did for
        // matmul_cm's weights in session 7)
        let eh = bitcast<f32>(bitcast<u32>(e) & 0xffffe000u);
        cs = cs + e;
        sP[PS * i + 16u * g + h + c] = f16(eh);
        sPl[PS * i + 16u * g + h + c] = f16(e - eh);
    }
    return vec2<f32>(cs, fl);
}

// The rescale: invocation l takes query l / 8, keys KPI (l % 8) .. + KPI - 1 of the chunk; the new
// references and factors into sM / sA
fn new_refs(l: u32, j0: u32, jhi: u32, q0: u32, nq: u32) {
    let i = l / 8u;
    let k0 = KPI * (l % 8u);
    let g = k0 / 16u;
    let js = j0 + 16u * g;
    let jb = chunk_row(js, jhi);
    var mx = -F32_MAX;
    for (var c = k0 % 16u; c < k0 % 16u + KPI; c = c + 1u) { if (inside(jb + c, js, q0 + i, i < nq)) { mx = max(mx, score(g, i, c)); } }
    sR[l] = mx;
    workgroupBarrier();
    if (l < 16u) {
        var m = sM[l];
        for (var k = 0u; k < 8u; k = k + 1u) { m = max(m, sR[8u * l + k]); }
        sA[l] = exp(sM[l] - m);
        sM[l] = m;
    }
    workgroupBarrier();
}
// an output block times its rows' factors, through the subgroup's square of sS
fn rescale(o: MC, sg: u32, ln: u32) -> MC {
    workgroupBarrier();
    subgroupMatrixStore(&sS, 256u * sg, o, false, 16u);
    workgroupBarrier();
    for (var e = ln; e < 256u; e = e + 32u) { sS[256u * sg + e] = sS[256u * sg + e] * sA[e / 16u]; }
    workgroupBarrier();
    return subgroupMatrixLoad<MC>(&sS, 256u * sg, false, 16u);
}

// output block jd (16 queries x 16 values) through the subgroup's square of sS: out = O / l
fn out16(o: MC, sg: u32, ln: u32, jd: u32, tb: u32, h: u32, nq: u32) {
    subgroupMatrixStore(&sS, 256u * sg, o, false, 16u);
    workgroupBarrier();
    let i = ln / 2u;
    if (i < nq) {
        var tot = 0.0;                           // the query's sum: 8 partial sums (4 subgroups x 2 halves)
        for (var s = 0u; s < NSG; s = s + 1u) { tot = tot + sR[32u * s + 2u * i] + sR[32u * s + 2u * i + 1u]; }
        let ok = tot > 0.0 || (bitcast<u32>(tot) & 0x7fffffffu) > 0x7f800000u;    // a NaN sum stays NaN
        let b = ((tb + i) * p.n_head + h) * HD + 16u * jd + 8u * (ln % 2u);
        for (var c = 0u; c < 8u; c = c + 1u) { outf[b + c] = f16(select(0.0, sS[256u * sg + 16u * i + 8u * (ln % 2u) + c] / tot, ok)); }
    }
    workgroupBarrier();
}

// O += the P V of the chunk at j0 (its P in sP / sPl, its V in sV), 16-key groups past jhi skipped
fn pv_chunk(o0: ptr<function, MC>, o1: ptr<function, MC>, o2: ptr<function, MC>, o3: ptr<function, MC>, j0: u32, jhi: u32, sg: u32) {
    for (var i = 0u; i < NKG; i = i + 1u) {
        if (j0 + 16u * i <= jhi) {
            let ph = subgroupMatrixLoad<ML>(&sP, 16u * i, false, PS);
            let pl = subgroupMatrixLoad<ML>(&sPl, 16u * i, false, PS);
            *o0 = pv(*o0, ph, pl, i, sg);
            if (NB > 1u) { *o1 = pv(*o1, ph, pl, i, sg + NSG); }
            if (NB > 2u) { *o2 = pv(*o2, ph, pl, i, sg + 2u * NSG); *o3 = pv(*o3, ph, pl, i, sg + 3u * NSG); }
        }
    }
}

@compute @workgroup_size(128)
fn attn_cm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
           @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) ln: u32) {
    let l = lid.x;
    let h = wid.x;
    let tb = wid.y * QB;                         // queries tb .. tb + nq - 1
    if (l == 0u) { let n = rows_n(); posw[0] = n; posw[1] = row_pos(0u); posw[2] = row_slot(0u) * p.n_ctx; }
    if (l < 16u) { sM[l] = -F32_MAX; }
    if (l < 2u) { sF[l] = 0u; }
    let n_tok = workgroupUniformLoad(&posw[0]);  // a prefill batch: one slot, consecutive positions
    let p0 = workgroupUniformLoad(&posw[1]);
    let kr0 = workgroupUniformLoad(&posw[2]);
    if (tb >= n_tok || h >= p.n_head) { return; }
    let nq = min(QB, n_tok - tb);
    let two = HD > 64u;                          // a chunk's keys are two X8 per invocation (head_dim 64: one)
    let kvw = HD * p.n_head_kv;
    let hc = (h / (p.n_head / p.n_head_kv)) * HD;    // the KV head's first element in a cache row
    for (var e = l; e < QB * HD; e = e + 128u) {
        let i = e / HD;
        var v = f16(0.0);
        if (i < nq) { v = q[((tb + i) * p.n_head + h) * HD + e % HD]; }
        sQ[i * KS + e % HD] = v;
    }
    let live = ln / 2u < nq;
    let qp = p0 + tb + ln / 2u;                  // this invocation's query position (step 2)
    let jhi = p0 + tb + nq - 1u;
    var jst = 0u;                                // the chunk of the first query's first key (its window's)
    if (p.window > 0u && p0 + tb + 1u > p.window) { jst = (p0 + tb + 1u - p.window) / KC * KC; }
    let src = Src(kr0, kvw, hc, jhi, HD / 4u, 512u / HD);
    let g = sg % NKG;                            // this subgroup's 16-key group of a chunk (step 1)
    let kh = 16u / HSP * (sg / NKG) + KPI * (ln % 2u);   // its invocation's first key of the group (step 2)
    var m = -F32_MAX;                            // the reference of this invocation's query
    var sum = 0.0;                               // its part of the query's sum
    var o0: MC; var o1: MC; var o2: MC; var o3: MC;  // output blocks sg, sg + NSG, ...
    // xk*: the next chunk's keys, xv*: this chunk's values (loaded a chunk ahead, stored after the scores)
    var xka = ldk8(0u, jst, l, src); var xkb: X8; var xva: X8; var xvb: X8;
    if (two) { xkb = ldk8(8u, jst, l, src); }
    stk8(0u, xka, l, src); if (two) { stk8(8u, xkb, l, src); }
    if (jst + KC <= jhi) { xka = ldk8(0u, jst + KC, l, src); if (two) { xkb = ldk8(8u, jst + KC, l, src); } }
    xva = ldv8(0u, jst, l, src); if (two) { xvb = ldv8(8u, jst, l, src); }
    workgroupBarrier();
    for (var j0 = jst; j0 <= jhi; j0 = j0 + KC) {
        let ch = (j0 - jst) / KC;
        let js = j0 + 16u * g;                   // this subgroup's first key, its rows from jb
        let jb = chunk_row(js, jhi);
        subgroupMatrixStore(&sS, 256u * sg, scores(sg), false, 16u);
        if (ch > 0u) { pv_chunk(&o0, &o1, &o2, &o3, j0 - KC, jhi, sg); }   // (the chunk before: its P and V)
        workgroupBarrier();
        if (l == 0u) { sF[(ch + 1u) % 2u] = 0u; }    // (last read by the chunk before, which every invocation has left)
        // the next chunk's keys into sK (this one's are multiplied), this chunk's values into sV
        if (j0 + KC <= jhi) { stk8(0u, xka, l, src); if (two) { stk8(8u, xkb, l, src); } }
        stv8(0u, xva, l, src); if (two) { stv8(8u, xvb, l, src); }
        if (j0 + 2u * KC <= jhi) { xka = ldk8(0u, j0 + 2u * KC, l, src); if (two) { xkb = ldk8(8u, j0 + 2u * KC, l, src); } }
        if (j0 + KC <= jhi) { xva = ldv8(0u, j0 + KC, l, src); if (two) { xvb = ldv8(8u, j0 + KC, l, src); } }
        // (the scores of a group are its subgroups' squares: every subgroup has stored its own before the
        // barrier above, and the next chunk's stores come after the flag's uniform load below)
        var w = weights(g, kh, ln, jb, js, qp, live, m);
        if (w.y > 0.0) { sF[ch % 2u] = 1u; }
        if (workgroupUniformLoad(&sF[ch % 2u]) != 0u) {
            new_refs(l, j0, jhi, p0 + tb, nq);
            m = sM[ln / 2u];
            let a = sA[ln / 2u];
            let cs = weights(g, kh, ln, jb, js, qp, live, m).x;
            sum = sum * a + cs;
            if (ch > 0u) {
                o0 = rescale(o0, sg, ln);
                if (NB > 1u) { o1 = rescale(o1, sg, ln); }
                if (NB > 2u) { o2 = rescale(o2, sg, ln); o3 = rescale(o3, sg, ln); }
            }
            workgroupBarrier();
        } else {
            sum = sum + w.x;
        }
    }
    pv_chunk(&o0, &o1, &o2, &o3, (jhi / KC) * KC, jhi, sg);
    workgroupBarrier();
    sR[32u * sg + ln] = sum;
    workgroupBarrier();
    out16(o0, sg, ln, sg, tb, h, nq);
    if (NB > 1u) { out16(o1, sg, ln, sg + NSG, tb, h, nq); }
    if (NB > 2u) { out16(o2, sg, ln, sg + 2u * NSG, tb, h, nq); out16(o3, sg, ln, sg + 3u * NSG, tb, h, nq); }
}
