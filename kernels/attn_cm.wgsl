// attn_cm.wgsl — prefill attention on the GPU's matrix units (Tint's subgroup matrices -> SPIR-V
// cooperative matrices, VK_KHR_cooperative_matrix): attention.wgsl's attn_flash, for f16 activations,
// an f16 cache, head_dim 64 or 128, no sliding window and no softcap (ops_attn.c op_attention_cm_fits;
// elsewhere attn_flash runs). A workgroup is one subgroup of 32 and takes 16 queries of one head
// (grid (n_head, ceil(T / 16))); keys go in chunks of 16 from key 0 to the last query's position. Two passes over the chunks, so no running rescale of the output is needed:
//   1. S = Q K^T (16 x 16 per chunk, head_dim / 16 products; f16 in, f32 accumulation), times scale:
//      each query's max m over its own keys (causal: key <= the query's position)
//   2. S again, e = exp(S - m) (0 outside the query's keys) as f16 hi + lo parts (P, Pl: e to ~2^-22),
//      the query's sum l of e; O += P V + Pl V (2 x head_dim / 16 products per chunk)
// then out = O / l. A chunk's K slices are loaded while the chunk before is multiplied, its V slices
// at the start of its iteration (H100: pp2048 +2-6% over loading each where it is used, docs/perf-log.md
// session 24; 230 registers). The scores and P go through shared memory (sS, sP, sPl): invocation l owns half a
// row (query l / 2, keys 8 (l % 2) .. +7). Precision: q, k and v are f16 values already, products
// accumulate in f32; e in f16 alone (one product) moved each weight by up to 2^-11 and measured
// 8.6e-4 of fat's 1e-3 bound (with the f16 output's own rounding), so e keeps its lo part. The
// weights are 2^12 exp(s - m) (out = O / l cancels the factor), so a lo part is a normal f16 for
// weights down to 2^-15: a driver may flush f16 subnormals to zero (the H200 does: with weights of
// exp(s - m) the lo parts bought nothing, 8.1e-4). As shipped: 4.9e-4 on the H200, attn_flash's own
// error (the f16 output's rounding).
// Keys: rows kr0 + j of the cache (window 0: no ring wrap). A chunk reads 16 whole rows: the last one
// ends at jhi, the last query's position (first row jhi - 15; keys before j0, read again, are masked),
// so every row read holds a key this sequence wrote, except where the keys so far are fewer than 16
// (jhi < 15: rows 0 .. 15, the host asks n_ctx >= 16). Such rows can hold anything (stale rows of an
// earlier sequence, never-written memory): a key row past jhi only enters masked scores, and the
// values of that one chunk go through sQ (free once its scores are made) with zero rows past jhi
// (NaN bits times a zero weight would be NaN). A masked key inside a chunk gets weight 0; a NaN score
// of one of the query's own keys stays NaN through the sum and the output.
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
var<workgroup> sQ: array<f16, 16 * 128>;         // the 16 queries [query][head_dim] (zero past T)
var<workgroup> sS: array<f32, 256>;              // a chunk's scores [query][key], then an output block
var<workgroup> sP: array<f16, 256>;              // its weights [query][key]: hi parts
var<workgroup> sPl: array<f16, 256>;             // lo parts
var<workgroup> sM: array<f32, 32>;               // per invocation: its half row's max, then its sum
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/rows.wgsl

alias ML = subgroup_matrix_left<f16, 16, 16>;
alias MR = subgroup_matrix_right<f16, 16, 16>;
alias MC = subgroup_matrix_result<f32, 16, 16>;

// K^T of a chunk (key c's 16 values contiguous) and V, head_dim slice jd; the product with Q's slice jd
fn ldk(kb: u32, jd: u32, kvw: u32) -> MR { return subgroupMatrixLoad<MR>(&kc, kb + 16u * jd, true, kvw); }
fn ldv(kb: u32, jd: u32, kvw: u32) -> MR { return subgroupMatrixLoad<MR>(&vc, kb + 16u * jd, false, kvw); }
fn mq(s: MC, jd: u32, k: MR) -> MC { return subgroupMatrixMultiplyAccumulate(subgroupMatrixLoad<ML>(&sQ, 16u * jd, false, p.head_dim), k, s); }
// S = Q K^T of a chunk from its K slices (loaded a chunk ahead by the caller)
fn scores(nd: u32, k0: MR, k1: MR, k2: MR, k3: MR, k4: MR, k5: MR, k6: MR, k7: MR) -> MC {
    var s: MC;
    s = mq(s, 0u, k0); s = mq(s, 1u, k1); s = mq(s, 2u, k2); s = mq(s, 3u, k3);
    if (nd > 4u) { s = mq(s, 4u, k4); s = mq(s, 5u, k5); s = mq(s, 6u, k6); s = mq(s, 7u, k7); }
    return s;
}

// O block jd += P V + Pl V (v: values jd * 16 .. +15 of the chunk's 16 keys); the staged chunk's
// values from sQ, [key][head_dim]
fn pv(o: MC, ph: ML, pl: ML, v: MR) -> MC {
    return subgroupMatrixMultiplyAccumulate(pl, v, subgroupMatrixMultiplyAccumulate(ph, v, o));
}
fn ldsv(jd: u32) -> MR { return subgroupMatrixLoad<MR>(&sQ, 16u * jd, false, p.head_dim); }

// Is invocation l's key j one of its query's keys (and not one read again before j0)?
fn inside(j: u32, j0: u32, qp: u32, live: bool) -> bool { return live && j >= j0 && j <= qp; }
// its scaled score c (0..7 of its half row)
fn score_at(l: u32, c: u32) -> f32 { return clampn(sS[16u * (l / 2u) + 8u * (l % 2u) + c] * p.scale, F32_MAX); }
// the first row of the chunk at j0: 16 rows that end at jhi at the latest (from 0 while jhi < 15)
fn chunk_row(j0: u32, jhi: u32) -> u32 { return select(min(j0, jhi - 15u), 0u, jhi < 15u); }

// output block jd (16 queries x 16 values) through sS: out = O / l
fn out16(o: MC, l: u32, jd: u32, tb: u32, h: u32, nq: u32, tot: f32) {
    subgroupMatrixStore(&sS, 0u, o, false, 16u);
    workgroupBarrier();
    let i = l / 2u;
    if (i < nq) {
        let ok = tot > 0.0 || (bitcast<u32>(tot) & 0x7fffffffu) > 0x7f800000u;    // a NaN sum stays NaN
        let b = ((tb + i) * p.n_head + h) * p.head_dim + 16u * jd + 8u * (l % 2u);
        for (var c = 0u; c < 8u; c = c + 1u) { outf[b + c] = f16(select(0.0, sS[16u * i + 8u * (l % 2u) + c] / tot, ok)); }
    }
    workgroupBarrier();
}

@compute @workgroup_size(32)
fn attn_cm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let h = wid.x;
    let tb = wid.y * QB;                         // queries tb .. tb + nq - 1
    if (l == 0u) { let n = rows_n(); posw[0] = n; posw[1] = row_pos(0u); posw[2] = row_slot(0u) * p.n_ctx; }
    let n_tok = workgroupUniformLoad(&posw[0]);  // a prefill batch: one slot, consecutive positions
    let p0 = workgroupUniformLoad(&posw[1]);
    let kr0 = workgroupUniformLoad(&posw[2]);
    if (tb >= n_tok || h >= p.n_head) { return; }
    let nq = min(QB, n_tok - tb);
    let d_n = p.head_dim;
    let nd = d_n / 16u;
    let kvw = d_n * p.n_head_kv;
    let hc = (h / (p.n_head / p.n_head_kv)) * d_n;   // the KV head's first element in a cache row
    for (var e = l; e < QB * d_n; e = e + 32u) {
        let i = e / d_n;
        var v = f16(0.0);
        if (i < nq) { v = q[((tb + i) * p.n_head + h) * d_n + e % d_n]; }
        sQ[e] = v;
    }
    workgroupBarrier();
    let live = l / 2u < nq;
    let qp = p0 + tb + l / 2u;                   // this invocation's query position
    let jhi = p0 + tb + nq - 1u;
    var m = -F32_MAX;
    // k<d>: the chunk's K slices, loaded while the chunk before is multiplied (named matrices, not an
    // array: an array of matrices can be kept in local memory)
    var k0: MR; var k1: MR; var k2: MR; var k3: MR; var k4: MR; var k5: MR; var k6: MR; var k7: MR;
    var kb = (kr0 + chunk_row(0u, jhi)) * kvw + hc;
    k0 = ldk(kb, 0u, kvw); k1 = ldk(kb, 1u, kvw); k2 = ldk(kb, 2u, kvw); k3 = ldk(kb, 3u, kvw);
    if (nd > 4u) { k4 = ldk(kb, 4u, kvw); k5 = ldk(kb, 5u, kvw); k6 = ldk(kb, 6u, kvw); k7 = ldk(kb, 7u, kvw); }
    for (var j0 = 0u; j0 <= jhi; j0 = j0 + 16u) {
        let jb = chunk_row(j0, jhi);
        var n0: MR; var n1: MR; var n2: MR; var n3: MR; var n4: MR; var n5: MR; var n6: MR; var n7: MR;
        let kn = (kr0 + chunk_row(j0 + 16u, jhi)) * kvw + hc;
        if (j0 + 16u <= jhi) {
            n0 = ldk(kn, 0u, kvw); n1 = ldk(kn, 1u, kvw); n2 = ldk(kn, 2u, kvw); n3 = ldk(kn, 3u, kvw);
            if (nd > 4u) { n4 = ldk(kn, 4u, kvw); n5 = ldk(kn, 5u, kvw); n6 = ldk(kn, 6u, kvw); n7 = ldk(kn, 7u, kvw); }
        }
        subgroupMatrixStore(&sS, 0u, scores(nd, k0, k1, k2, k3, k4, k5, k6, k7), false, 16u);
        k0 = n0; k1 = n1; k2 = n2; k3 = n3; k4 = n4; k5 = n5; k6 = n6; k7 = n7;
        workgroupBarrier();
        for (var c = 0u; c < 8u; c = c + 1u) { if (inside(jb + 8u * (l % 2u) + c, j0, qp, live)) { m = max(m, score_at(l, c)); } }
        workgroupBarrier();
    }
    sM[l] = m;
    workgroupBarrier();
    m = max(sM[l & ~1u], sM[l | 1u]);
    var o0: MC; var o1: MC; var o2: MC; var o3: MC; var o4: MC; var o5: MC; var o6: MC; var o7: MC;
    var sum = 0.0;
    kb = (kr0 + chunk_row(0u, jhi)) * kvw + hc;
    k0 = ldk(kb, 0u, kvw); k1 = ldk(kb, 1u, kvw); k2 = ldk(kb, 2u, kvw); k3 = ldk(kb, 3u, kvw);
    if (nd > 4u) { k4 = ldk(kb, 4u, kvw); k5 = ldk(kb, 5u, kvw); k6 = ldk(kb, 6u, kvw); k7 = ldk(kb, 7u, kvw); }
    let staged = jhi < 15u;                      // (the one chunk: its values into sQ, zero past jhi)
    for (var j0 = 0u; j0 <= jhi; j0 = j0 + 16u) {
        let jb = chunk_row(j0, jhi);
        kb = (kr0 + jb) * kvw + hc;
        // this chunk's V slices at its start (the staged chunk's: below), the next chunk's K
        var v0: MR; var v1: MR; var v2: MR; var v3: MR; var v4: MR; var v5: MR; var v6: MR; var v7: MR;
        if (!staged) {
            v0 = ldv(kb, 0u, kvw); v1 = ldv(kb, 1u, kvw); v2 = ldv(kb, 2u, kvw); v3 = ldv(kb, 3u, kvw);
            if (nd > 4u) { v4 = ldv(kb, 4u, kvw); v5 = ldv(kb, 5u, kvw); v6 = ldv(kb, 6u, kvw); v7 = ldv(kb, 7u, kvw); }
        }
        var n0: MR; var n1: MR; var n2: MR; var n3: MR; var n4: MR; var n5: MR; var n6: MR; var n7: MR;
        let kn = (kr0 + chunk_row(j0 + 16u, jhi)) * kvw + hc;
        if (j0 + 16u <= jhi) {
            n0 = ldk(kn, 0u, kvw); n1 = ldk(kn, 1u, kvw); n2 = ldk(kn, 2u, kvw); n3 = ldk(kn, 3u, kvw);
            if (nd > 4u) { n4 = ldk(kn, 4u, kvw); n5 = ldk(kn, 5u, kvw); n6 = ldk(kn, 6u, kvw); n7 = ldk(kn, 7u, kvw); }
        }
        subgroupMatrixStore(&sS, 0u, scores(nd, k0, k1, k2, k3, k4, k5, k6, k7), false, 16u);
        k0 = n0; k1 = n1; k2 = n2; k3 = n3; k4 = n4; k5 = n5; k6 = n6; k7 = n7;
        workgroupBarrier();
        if (staged) {
            for (var e = l; e < QB * d_n; e = e + 32u) { var v = f16(0.0); if (e / d_n <= jhi) { v = vc[kb + (e / d_n) * kvw + e % d_n]; } sQ[e] = v; }
        }
        for (var c = 0u; c < 8u; c = c + 1u) {
            var e = 0.0;                         // weight 0 outside the query's keys; a NaN score stays NaN
            if (inside(jb + 8u * (l % 2u) + c, j0, qp, live)) { e = exp(score_at(l, c) - m) * 4096.0; }
            // hi: e with its mantissa cut to f16's 10 bits, lo: the f32 remainder (lo = e - f32(f16(e))
            // is not safe: a driver may fold the round trip away, leaving lo = 0, as the H200 did for
            // matmul_cm's weights in session 7)
            let eh = bitcast<f32>(bitcast<u32>(e) & 0xffffe000u);
            sum = sum + e;
            sP[16u * (l / 2u) + 8u * (l % 2u) + c] = f16(eh);
            sPl[16u * (l / 2u) + 8u * (l % 2u) + c] = f16(e - eh);
        }
        workgroupBarrier();
        let ph = subgroupMatrixLoad<ML>(&sP, 0u, false, 16u);
        let pl = subgroupMatrixLoad<ML>(&sPl, 0u, false, 16u);
        if (staged) {
            v0 = ldsv(0u); v1 = ldsv(1u); v2 = ldsv(2u); v3 = ldsv(3u);
            if (nd > 4u) { v4 = ldsv(4u); v5 = ldsv(5u); v6 = ldsv(6u); v7 = ldsv(7u); }
        }
        o0 = pv(o0, ph, pl, v0); o1 = pv(o1, ph, pl, v1); o2 = pv(o2, ph, pl, v2); o3 = pv(o3, ph, pl, v3);
        if (nd > 4u) { o4 = pv(o4, ph, pl, v4); o5 = pv(o5, ph, pl, v5); o6 = pv(o6, ph, pl, v6); o7 = pv(o7, ph, pl, v7); }
    }
    workgroupBarrier();
    sM[l] = sum;
    workgroupBarrier();
    let tot = sM[l & ~1u] + sM[l | 1u];
    out16(o0, l, 0u, tb, h, nq, tot); out16(o1, l, 1u, tb, h, nq, tot); out16(o2, l, 2u, tb, h, nq, tot); out16(o3, l, 3u, tb, h, nq, tot);
    if (nd > 4u) { out16(o4, l, 4u, tb, h, nq, tot); out16(o5, l, 5u, tb, h, nq, tot); out16(o6, l, 6u, tb, h, nq, tot); out16(o7, l, 7u, tb, h, nq, tot); }
}
