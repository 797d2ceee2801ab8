// attn_cm.wgsl — prefill attention on the GPU's matrix units (Tint's subgroup matrices -> SPIR-V
// cooperative matrices, VK_KHR_cooperative_matrix): attention.wgsl's attn_flash, for f16 activations,
// an f16 cache, head_dim 64 or 128, no sliding window and no softcap (ops_attn.c op_attention_cm_fits;
// elsewhere attn_flash runs). A workgroup is 4 subgroups of 32 and takes 16 queries of one head (grid
// (n_head, ceil(T / 16))); keys go in chunks of 64 from key 0 to the last query's position, one pass:
//   1. subgroup s: S = Q K^T of the chunk's keys 16 s .. +15 (head_dim / 16 products; f16 in, f32
//      accumulation), times scale, into its square of sS
//   2. its invocations turn S into weights e = 2^11 exp(S - m) (0 outside a query's keys) against the
//      row's reference m, as f16 hi + lo parts (sP, sPl: e to ~2^-22), and the query's sum l of e
//   3. subgroup s: O += P V + Pl V for its output columns (head_dim / 64 blocks of 16; 2 products per
//      block and 16 keys)
// The reference m is a row's running maximum, moved only when a score passes it by more than TAU (a
// flag, one uniform load per chunk): then the chunk's row maxima make the new m, O and l are scaled by
// exp(m_old - m_new) (O through sS: the matrices' elements are not addressable) and the weights are
// made again. So e <= 2^11 e^TAU < 2^15 (f16's range), and the first chunk always sets it (O is 0 then:
// not scaled). Rescales are rare after the first chunk (the running maximum settles), so a chunk costs
// one barrier after the scores and the flag's uniform load. H100, against the two-pass kernel of
// session 24 (a subgroup per 16 queries, 16-key chunks, S made twice): pp2048 qwen2.5-1.5b +26%,
// llama-3.2-3b +11%, qwen3-4b +8%, llama-3.2-1b +1% (docs/perf-log.md session 25).
// Every workgroup variable is whole 16-byte units (tools/spvgen.c fails the build otherwise): the
// driver may order them as it likes, and an 8-byte flag array once put sP 8 bytes off, so the matrix
// loads of P read rows shifted by 4 values (row 0 took the flag's bits: NaN).
// Precision: q, k and v are f16 values already, products accumulate in f32; e in f16 alone moved each
// weight by up to 2^-11 (8.6e-4 of fat's 1e-3 bound), so e keeps its lo part, a normal f16 for weights
// down to 2^-15 of the row's largest (a driver may flush f16 subnormals: the H200 does).
// Keys: rows kr0 + j of the cache (window 0: no ring wrap). A subgroup's 16 keys are 16 whole rows: the
// last ones end at jhi, the last query's position (first row jhi - 15; keys before the subgroup's first,
// read again, are masked; a subgroup wholly past jhi reads those rows too and masks them all, and its
// products with V are skipped), so every row read holds a key this sequence wrote, except where the
// keys so far are fewer than 16 (jhi < 15: rows 0 .. 15, the host asks n_ctx >= 16). Such rows can hold
// anything (stale rows of an earlier sequence, never-written memory): a key row past jhi only enters
// masked scores, and the values of that one chunk go through sQ (free once its scores are made) with
// zero rows past jhi (NaN bits times a zero weight would be NaN). A masked key gets weight 0; a NaN
// score of one of the query's own keys stays NaN through the sum and the output.
// Queries past T are never read (q goes through sQ, zero rows) nor stored. So the robustness
// transform is off:
//! norobust
//! tintvalidate
//! variant attn_cm_f16_f16c attn_cm
enable f16;
enable chromium_experimental_subgroup_matrix;

struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32,
                q0: u32 }             // attention.wgsl's push constants (ops_attn.c AttnPush)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<f16>;           // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kc: array<f16>;          // (head_dim * n_head_kv, n_ctx, n_seq)
@group(0) @binding(2) var<storage, read> vc: array<f16>;          // (head_dim * n_head_kv, n_ctx, n_seq)
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // the rows table
@group(0) @binding(4) var<storage, read_write> outf: array<f16>;  // (head_dim, n_head, T)

const F32_MAX = 3.4028234e38;
const QB = 16u;                                  // queries per workgroup (ops_attn.c ATTN_CM_QB)
const NSG = 4u;                                  // subgroups per workgroup
const KC = 64u;                                  // keys per chunk: 16 per subgroup
const TAU = 2.7;                                 // a score may pass its row's reference by this much (e^TAU < 16)
const WS = 2048.0;                               // the weights' factor 2^11 (out = O / l cancels it)
var<workgroup> sQ: array<f16, 16 * 128>;         // the 16 queries [query][head_dim] (zero past T)
var<workgroup> sS: array<f32, 256 * NSG>;        // per subgroup: its 16 x 16 scores [query][key], or an output block
var<workgroup> sP: array<f16, 16 * KC>;          // the chunk's weights [query][key]: hi parts
var<workgroup> sPl: array<f16, 16 * KC>;         // lo parts
var<workgroup> sM: array<f32, 16>;               // each query's reference m
var<workgroup> sA: array<f32, 16>;               // each query's rescale factor exp(m_old - m_new)
var<workgroup> sR: array<f32, 128>;              // partial row maxima, then partial sums
var<workgroup> sF: array<u32, 4>;                // a chunk's rescale flag, by the chunk's parity (2 used)
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/rows.wgsl

alias ML = subgroup_matrix_left<f16, 16, 16>;
alias MR = subgroup_matrix_right<f16, 16, 16>;
alias MC = subgroup_matrix_result<f32, 16, 16>;

// K^T of 16 keys (key c's 16 values contiguous) and V, head_dim slice jd; the product with Q's slice jd
fn ldk(kb: u32, jd: u32, kvw: u32) -> MR { return subgroupMatrixLoad<MR>(&kc, kb + 16u * jd, true, kvw); }
fn ldv(kb: u32, jd: u32, kvw: u32) -> MR { return subgroupMatrixLoad<MR>(&vc, kb + 16u * jd, false, kvw); }
fn mq(s: MC, jd: u32, k: MR) -> MC { return subgroupMatrixMultiplyAccumulate(subgroupMatrixLoad<ML>(&sQ, 16u * jd, false, p.head_dim), k, s); }
// S = Q K^T of 16 keys from their K slices (loaded a chunk ahead by the caller)
fn scores(nd: u32, k0: MR, k1: MR, k2: MR, k3: MR, k4: MR, k5: MR, k6: MR, k7: MR) -> MC {
    var s: MC;
    s = mq(s, 0u, k0); s = mq(s, 1u, k1); s = mq(s, 2u, k2); s = mq(s, 3u, k3);
    if (nd > 4u) { s = mq(s, 4u, k4); s = mq(s, 5u, k5); s = mq(s, 6u, k6); s = mq(s, 7u, k7); }
    return s;
}
// O block += P V + Pl V over the chunk's keys 16 i .. +15
fn pv(o: MC, i: u32, v: MR) -> MC {
    let ph = subgroupMatrixLoad<ML>(&sP, 16u * i, false, KC);
    let pl = subgroupMatrixLoad<ML>(&sPl, 16u * i, false, KC);
    return subgroupMatrixMultiplyAccumulate(pl, v, subgroupMatrixMultiplyAccumulate(ph, v, o));
}
fn ldsv(jd: u32) -> MR { return subgroupMatrixLoad<MR>(&sQ, 16u * jd, false, p.head_dim); }

// Is key j one of query qp's keys (and not one read again before j0)?
fn inside(j: u32, j0: u32, qp: u32, live: bool) -> bool { return live && j >= j0 && j <= qp; }
// the first row of the 16 keys from js: 16 rows that end at jhi at the latest (from 0 while jhi < 15)
fn chunk_row(js: u32, jhi: u32) -> u32 { return select(min(js, jhi - 15u), 0u, jhi < 15u); }
// the scaled score of query i, key c of subgroup s's 16
fn score(s: u32, i: u32, c: u32) -> f32 { return clampn(sS[256u * s + 16u * i + c] * p.scale, F32_MAX); }

// Step 2 for invocation ln of subgroup sg (query ln / 2, keys 8 (ln % 2) .. +7 of the subgroup's 16,
// rows from jb, the first key js): weights against m into sP / sPl; returns (their sum, 1 if a score
// passed m by more than TAU)
fn weights(sg: u32, ln: u32, jb: u32, js: u32, qp: u32, live: bool, m: f32) -> vec2<f32> {
    let i = ln / 2u;
    let h = 8u * (ln % 2u);
    var cs = 0.0;
    var fl = 0.0;
    for (var c = 0u; c < 8u; c = c + 1u) {
        var e = 0.0;                             // weight 0 outside the query's keys; a NaN score stays NaN
        if (inside(jb + h + c, js, qp, live)) {
            let d = score(sg, i, h + c) - m;
            if (d > TAU) { fl = 1.0; }           // (this chunk's weights are made again after the rescale)
            e = exp(select(d, TAU, d > TAU)) * WS;   // (min(NaN, TAU) may be TAU)
        }
        // hi: e with its mantissa cut to f16's 10 bits, lo: the f32 remainder (lo = e - f32(f16(e))
        // is not safe: a driver may fold the round trip away, leaving lo = 0, as the H200 did for
        // matmul_cm's weights in session 7)
        let eh = bitcast<f32>(bitcast<u32>(e) & 0xffffe000u);
        cs = cs + e;
        sP[KC * i + 16u * sg + h + c] = f16(eh);
        sPl[KC * i + 16u * sg + h + c] = f16(e - eh);
    }
    return vec2<f32>(cs, fl);
}

// The rescale: invocation l takes query l / 8, keys 8 (l % 8) .. +7 of the chunk; the new references
// and factors into sM / sA
fn new_refs(l: u32, j0: u32, jhi: u32, q0: u32, nq: u32) {
    let i = l / 8u;
    let s = (l % 8u) / 2u;
    let h = 8u * (l % 2u);
    let js = j0 + 16u * s;
    let jb = chunk_row(js, jhi);
    var mx = -F32_MAX;
    for (var c = 0u; c < 8u; c = c + 1u) { if (inside(jb + h + c, js, q0 + i, i < nq)) { mx = max(mx, score(s, i, h + c)); } }
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
        let b = ((tb + i) * p.n_head + h) * p.head_dim + 16u * jd + 8u * (ln % 2u);
        for (var c = 0u; c < 8u; c = c + 1u) { outf[b + c] = f16(select(0.0, sS[256u * sg + 16u * i + 8u * (ln % 2u) + c] / tot, ok)); }
    }
    workgroupBarrier();
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
    let d_n = p.head_dim;
    let nd = d_n / 16u;
    let nb = nd / NSG;                           // output blocks per subgroup: sg, sg + NSG
    let kvw = d_n * p.n_head_kv;
    let hc = (h / (p.n_head / p.n_head_kv)) * d_n;   // the KV head's first element in a cache row
    for (var e = l; e < QB * d_n; e = e + 128u) {
        let i = e / d_n;
        var v = f16(0.0);
        if (i < nq) { v = q[((tb + i) * p.n_head + h) * d_n + e % d_n]; }
        sQ[e] = v;
    }
    workgroupBarrier();
    let live = ln / 2u < nq;
    let qp = p0 + tb + ln / 2u;                  // this invocation's query position (step 2)
    let jhi = p0 + tb + nq - 1u;
    let staged = jhi < 15u;                      // (the one chunk: its values into sQ, zero past jhi)
    var m = -F32_MAX;                            // the reference of this invocation's query
    var sum = 0.0;                               // its part of the query's sum
    var o0: MC; var o1: MC;                      // output blocks sg and sg + NSG
    // k<d>: the subgroup's K slices, loaded while the chunk before is multiplied (named matrices, not
    // an array: an array of matrices can be kept in local memory)
    var k0: MR; var k1: MR; var k2: MR; var k3: MR; var k4: MR; var k5: MR; var k6: MR; var k7: MR;
    var kb = (kr0 + chunk_row(16u * sg, jhi)) * kvw + hc;
    k0 = ldk(kb, 0u, kvw); k1 = ldk(kb, 1u, kvw); k2 = ldk(kb, 2u, kvw); k3 = ldk(kb, 3u, kvw);
    if (nd > 4u) { k4 = ldk(kb, 4u, kvw); k5 = ldk(kb, 5u, kvw); k6 = ldk(kb, 6u, kvw); k7 = ldk(kb, 7u, kvw); }
    for (var j0 = 0u; j0 <= jhi; j0 = j0 + KC) {
        let ch = j0 / KC;
        let js = j0 + 16u * sg;                  // this subgroup's first key, its rows from jb
        let jb = chunk_row(js, jhi);
        // the chunk's V slices for this subgroup's output blocks (key group i, block b: v<b><i>). (A var
        // without an initializer declared in a loop is not zeroed per iteration by this Tint: each is
        // loaded before it is used.)
        var va0: MR; var va1: MR; var va2: MR; var va3: MR; var vb0: MR; var vb1: MR; var vb2: MR; var vb3: MR;
        if (!staged) {
            var r = (kr0 + chunk_row(j0, jhi)) * kvw + hc;
            va0 = ldv(r, sg, kvw); if (nb > 1u) { vb0 = ldv(r, sg + NSG, kvw); }
            if (j0 + 16u <= jhi) { r = (kr0 + chunk_row(j0 + 16u, jhi)) * kvw + hc; va1 = ldv(r, sg, kvw); if (nb > 1u) { vb1 = ldv(r, sg + NSG, kvw); } }
            if (j0 + 32u <= jhi) { r = (kr0 + chunk_row(j0 + 32u, jhi)) * kvw + hc; va2 = ldv(r, sg, kvw); if (nb > 1u) { vb2 = ldv(r, sg + NSG, kvw); } }
            if (j0 + 48u <= jhi) { r = (kr0 + chunk_row(j0 + 48u, jhi)) * kvw + hc; va3 = ldv(r, sg, kvw); if (nb > 1u) { vb3 = ldv(r, sg + NSG, kvw); } }
        }
        var n0: MR; var n1: MR; var n2: MR; var n3: MR; var n4: MR; var n5: MR; var n6: MR; var n7: MR;
        if (j0 + KC <= jhi) {
            let kn = (kr0 + chunk_row(js + KC, jhi)) * kvw + hc;
            n0 = ldk(kn, 0u, kvw); n1 = ldk(kn, 1u, kvw); n2 = ldk(kn, 2u, kvw); n3 = ldk(kn, 3u, kvw);
            if (nd > 4u) { n4 = ldk(kn, 4u, kvw); n5 = ldk(kn, 5u, kvw); n6 = ldk(kn, 6u, kvw); n7 = ldk(kn, 7u, kvw); }
        }
        subgroupMatrixStore(&sS, 256u * sg, scores(nd, k0, k1, k2, k3, k4, k5, k6, k7), false, 16u);
        k0 = n0; k1 = n1; k2 = n2; k3 = n3; k4 = n4; k5 = n5; k6 = n6; k7 = n7;
        workgroupBarrier();
        if (l == 0u) { sF[(ch + 1u) % 2u] = 0u; }    // (last read by the chunk before, which every invocation has left)
        if (staged) {
            for (var e = l; e < QB * d_n; e = e + 128u) { var v = f16(0.0); if (e / d_n <= jhi) { v = vc[(kr0 + e / d_n) * kvw + hc + e % d_n]; } sQ[e] = v; }
        }
        var w = weights(sg, ln, jb, js, qp, live, m);
        if (w.y > 0.0) { sF[ch % 2u] = 1u; }
        if (workgroupUniformLoad(&sF[ch % 2u]) != 0u) {
            new_refs(l, j0, jhi, p0 + tb, nq);
            m = sM[ln / 2u];
            let a = sA[ln / 2u];
            let cs = weights(sg, ln, jb, js, qp, live, m).x;
            sum = sum * a + cs;
            if (ch > 0u) { o0 = rescale(o0, sg, ln); if (nb > 1u) { o1 = rescale(o1, sg, ln); } }
            workgroupBarrier();
        } else {
            sum = sum + w.x;
        }
        if (staged) {
            va0 = ldsv(sg); if (nb > 1u) { vb0 = ldsv(sg + NSG); }
        }
        o0 = pv(o0, 0u, va0); if (nb > 1u) { o1 = pv(o1, 0u, vb0); }
        if (j0 + 16u <= jhi) { o0 = pv(o0, 1u, va1); if (nb > 1u) { o1 = pv(o1, 1u, vb1); } }
        if (j0 + 32u <= jhi) { o0 = pv(o0, 2u, va2); if (nb > 1u) { o1 = pv(o1, 2u, vb2); } }
        if (j0 + 48u <= jhi) { o0 = pv(o0, 3u, va3); if (nb > 1u) { o1 = pv(o1, 3u, vb3); } }
    }
    workgroupBarrier();
    sR[32u * sg + ln] = sum;
    workgroupBarrier();
    out16(o0, sg, ln, sg, tb, h, nq);
    if (nb > 1u) { out16(o1, sg, ln, sg + NSG, tb, h, nq); }
}
