// attn_tile.wgsl — prefill attention without matrix units, in tiles: attention.wgsl's attn_flash (one
// pass, online softmax, no scratch) for f16 activations and an f16 cache, head_dim 64, 128 or 256 (one
// build each: HD, with its tile BR x BC), where the device has no cooperative matrices (ops_attn.c
// op_attention_tile_fits; attn_cm runs where it has them, attn_flash where this does not fit). A
// workgroup of 128 takes BR queries of one head, grid (n_head, ceil(T / BR)); keys go in chunks of BC
// from the first query's first key to the last query's position:
//   1. the chunk's keys and values into workgroup memory (sK, sV; zero past the last key), loaded into
//      registers a chunk ahead; q of the block is there since the start (sQ)
//   2. scores S = q k * scale, softcapped: invocation l takes keys l % 8 + 8 k (k < SK) of queries
//      l / 8 + 16 i (i < SQ), SQ x SK of them in registers, each 8-byte load feeding SQ or SK products
//   3. each query's max over the chunk from its 8 key groups' partial maxima (sR), its running max m,
//      the rescale factor exp(m_old - m) (sA), the weights e = exp(s - m) (0 outside the query's keys:
//      causal and window ranges as attention.wgsl) into sP, and each key group's running sum (summed
//      over the 8 groups at the end)
//   4. acc = acc * factor + sum e v: invocation l owns vectors l % DG + DG d (d < 4) of queries
//      l / DG + QG2 i (i < PQ), PQ x 4 of them in registers
// attn_flash held 16 queries per workgroup and made one product per shared-memory load. H200,
// EDGE_NO_COOPMAT=1, pp2048 against attn_flash: llama-3.2-1b 13,300 -> 18,760 tok/s (attention 1,035 ->
// 329 us per layer and 512-token batch), qwen2.5-3b 5,735 -> 7,086, gemma-2-2b 7,636 -> 9,450. The tiles
// per build are the fastest of those measured there that fit the boards' 32 KiB: more workgroups
// (BR 16) won for head_dim 128 and 256 (qwen2.5-3b 16 heads, gemma-2-2b 8), larger tiles for 64
// (docs/perf-log.md, session 40).
// Precision: q, k and v are f16 values already; products, the softmax and acc are f32 as attn_flash's.
// out = acc / sum (a NaN sum stays NaN, as attention). Keys: rows kr0 + j % n_ctx (a sliding layer's
// ring: one modulo per chunk, then a compare per row); a chunk never reads a row past the last query's
// position. Queries past T are zero rows in sQ and never stored. So the robustness transform is off:
//! norobust
//! variant attn_tile_f16_f16c attn_tile HD=128 BR=16 BC=32
//! variant attn_tile_h64_f16_f16c attn_tile HD=64 BR=64 BC=32
//! variant attn_tile_h256_f16_f16c attn_tile HD=256 BR=16 BC=16
enable f16;

struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32,
                q0: u32 }             // attention.wgsl's push constants (ops_attn.c AttnPush)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<vec4<f16>>;         // (head_dim, n_head, T) by 4
@group(0) @binding(1) var<storage, read> kc: array<vec4<f16>>;        // (head_dim * n_head_kv, n_ctx, n_seq) by 4
@group(0) @binding(2) var<storage, read> vc: array<vec4<f16>>;        // (head_dim * n_head_kv, n_ctx, n_seq) by 4
@group(0) @binding(3) var<storage, read> pos: array<u32>;             // the rows table
@group(0) @binding(4) var<storage, read_write> outf: array<vec4<f16>>; // (head_dim, n_head, T) by 4

const F32_MAX = 3.4028234e38;
// head_dim, fixed per build (ops_attn.c op_attention_tile_op: the host asks p.head_dim == HD), so every
// loop below has a constant count and the register arrays stay registers
override HD: u32 = 128u;
override D4: u32 = HD / 4u;                      // a row's 4-value vectors
override BR: u32 = 64u;                          // queries per workgroup, 16 SQ, at least QG2 (ops_attn.c
                                                 // attn_tile_qb reads it from the variant line)
override BC: u32 = 32u;                          // keys per chunk, 8 SK (SK <= 8, SQ SK <= 16, BC D4 / 128 <= 8;
                                                 // workgroup memory: 28 KiB for head_dim 64, 23 for 128, 26 for 256)
override SK: u32 = BC / 8u;                      // scores: keys per invocation (8 key groups)
override SQ: u32 = BR / 16u;                     // scores: queries per invocation (16 query groups)
const PD = 4u;                                   // output: vectors per invocation
override DG: u32 = D4 / PD;                      // output: vector groups
override QG2: u32 = 128u / DG;                   // output: query groups
override PQ: u32 = BR / QG2;                     // output: queries per invocation
override RS: u32 = D4 + 1u;                      // row stride of sQ and sK in vectors (one more: the 8 key
                                                 // rows of a score load fall in distinct banks)
override PS: u32 = BC + 1u;                      // row stride of sP (one more: step 4's queries at one key fall
                                                 // in distinct banks)
var<workgroup> sQ: array<vec4<f16>, BR * RS>;    // the block's queries [query][vector] (zero past T)
var<workgroup> sK: array<vec4<f16>, BC * RS>;    // the chunk's keys [key][vector]
var<workgroup> sV: array<vec4<f16>, BC * D4>;    // the chunk's values [key][vector]
var<workgroup> sP: array<f32, BR * PS>;          // the chunk's weights [query][key]
var<workgroup> sR: array<f32, BR * 8u>;          // per query, the 8 key groups' partial maxima (at the end: sums)
var<workgroup> sA: array<f32, BR>;               // the chunk's rescale factor per query
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/tanh_acc.wgsl
//! include common/rows.wgsl
//! include common/keys.wgsl


// step 1, a chunk ahead: keys and values j0 .. j0 + nk - 1 (rows kr0 + j % n_ctx) of KV head vector hc
// into registers (LPI 4-value vectors of each per invocation, at most 8; zero past the chunk's keys),
// then into sK, sV once the chunk before is done with them
override LPI: u32 = BC * D4 / 128u;
var<private> kpre: array<vec4<f16>, 8>;
var<private> vpre: array<vec4<f16>, 8>;
fn fetch_chunk(l: u32, kr0: u32, hc: u32, j0: u32, nk: u32) {
    let r0 = j0 % p.n_ctx;
    let kvw4 = D4 * p.n_head_kv;
    for (var u = 0u; u < LPI; u = u + 1u) {
        let e = l + 128u * u;
        let r = e / D4;
        kpre[u] = vec4<f16>(0.0);
        vpre[u] = vec4<f16>(0.0);
        if (r < nk) {
            let rr = r0 + r;
            let b = (kr0 + select(rr, rr - p.n_ctx, rr >= p.n_ctx)) * kvw4 + hc + e % D4;
            kpre[u] = kc[b];
            vpre[u] = vc[b];
        }
    }
}
fn store_chunk(l: u32) {
    for (var u = 0u; u < LPI; u = u + 1u) {
        let e = l + 128u * u;
        sK[(e / D4) * RS + e % D4] = kpre[u];
        sV[e] = vpre[u];
    }
}

// A query's running max m (the same in each of its 8 key groups' invocations) and its key group's
// running sum of weights
var<private> mrun: array<f32, 4>;
var<private> lrun: array<f32, 4>;

// steps 2 and 3 for invocation l: keys kg + 8 k (k < SK) of the chunk at j0 against queries qg + 16 i
// (i < SQ) of the block's nq at positions p0 + tb + ..: the scores (scaled, softcapped; outside a query's
// keys none), each query's max over the chunk from its 8 key groups' partial maxima (sR), the rescale
// factor exp(m_old - m) (sA), the weights e = exp(s - m) (0 outside the query's keys) into sP, the sums
fn chunk_softmax(l: u32, j0: u32, qp0: u32, nq: u32) {
    let kg = l % 8u;
    let qg = l / 8u;
    var s: array<f32, 16>;                       // [i * SK + k]
    for (var i = 0u; i < SQ * SK; i = i + 1u) { s[i] = 0.0; }
    for (var c = 0u; c < D4; c = c + 1u) {
        var kf: array<vec4<f32>, 8>;
        for (var k = 0u; k < SK; k = k + 1u) { kf[k] = vec4<f32>(sK[(kg + 8u * k) * RS + c]); }
        for (var i = 0u; i < SQ; i = i + 1u) {
            let qv = vec4<f32>(sQ[(qg + 16u * i) * RS + c]);
            for (var k = 0u; k < SK; k = k + 1u) { s[i * SK + k] = s[i * SK + k] + dot(qv, kf[k]); }
        }
    }
    var ok: array<u32, 4>;                       // bit k: key kg + 8 k is one of query i's
    for (var i = 0u; i < SQ; i = i + 1u) {
        let qi = qg + 16u * i;
        let kr = key_range(qp0 + qi);
        var pm = -F32_MAX;
        ok[i] = 0u;
        for (var k = 0u; k < SK; k = k + 1u) {
            let j = j0 + kg + 8u * k;
            var sc = clampn(s[i * SK + k] * p.scale, F32_MAX);
            if (p.softcap > 0.0) { sc = p.softcap * tanh_acc(clampn(sc / p.softcap, 15.0)); }
            s[i * SK + k] = sc;
            if (qi < nq && j >= kr.x && j <= kr.y) { ok[i] = ok[i] | (1u << k); pm = max(pm, sc); }
        }
        sR[qi * 8u + kg] = pm;
    }
    workgroupBarrier();
    for (var i = 0u; i < SQ; i = i + 1u) {
        let qi = qg + 16u * i;
        var mx = mrun[i];
        for (var t = 0u; t < 8u; t = t + 1u) { mx = max(mx, sR[qi * 8u + t]); }
        let a = exp(mrun[i] - mx);
        mrun[i] = mx;
        var sum = 0.0;
        for (var k = 0u; k < SK; k = k + 1u) {
            let w = select(0.0, exp(s[i * SK + k] - mx), (ok[i] & (1u << k)) != 0u);
            sP[qi * PS + kg + 8u * k] = w;
            sum = sum + w;
        }
        lrun[i] = lrun[i] * a + sum;
        if (kg == 0u) { sA[qi] = a; }
    }
}

@compute @workgroup_size(128)
fn attn_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let h = wid.x;
    let tb = wid.y * BR;                         // queries tb .. tb + nq - 1
    if (l == 0u) { posw[0] = rows_n(); posw[1] = row_pos(0u); posw[2] = row_slot(0u) * p.n_ctx; }
    let n_tok = workgroupUniformLoad(&posw[0]);
    let p0 = workgroupUniformLoad(&posw[1]);     // query t at position p0 + t (a prefill batch)
    let kr0 = workgroupUniformLoad(&posw[2]);    // the slot's first cache row
    if (tb >= n_tok || h >= p.n_head) { return; }
    let nq = min(BR, n_tok - tb);
    let hc = (h / (p.n_head / p.n_head_kv)) * D4;
    for (var e = l; e < BR * D4; e = e + 128u) {
        let i = e / D4;
        var v = vec4<f16>(0.0);
        if (i < nq) { v = q[((tb + i) * p.n_head + h) * D4 + e % D4]; }
        sQ[i * RS + e % D4] = v;
    }
    for (var i = 0u; i < SQ; i = i + 1u) { mrun[i] = -F32_MAX; lrun[i] = 0.0; }
    let jlo = key_range(p0 + tb).x;
    let jhi = key_range(p0 + tb + nq - 1u).y;
    fetch_chunk(l, kr0, hc, jlo, min(BC, jhi + 1u - jlo));
    store_chunk(l);
    workgroupBarrier();
    let dg = l % DG;
    let og = l / DG;
    var acc: array<vec4<f32>, 16>;               // [i * PD + d]: vector dg + DG d of query og + QG2 i
    for (var i = 0u; i < PQ * PD; i = i + 1u) { acc[i] = vec4<f32>(0.0); }
    for (var j0 = jlo; j0 <= jhi; j0 = j0 + BC) {
        let nk = min(BC, jhi + 1u - j0);
        let more = jhi - j0 >= BC;               // a next chunk: its loads in flight during this one
        if (more) { fetch_chunk(l, kr0, hc, j0 + BC, min(BC, jhi + 1u - j0 - BC)); }
        chunk_softmax(l, j0, p0 + tb, nq);
        workgroupBarrier();
        for (var i = 0u; i < PQ; i = i + 1u) {
            let a = sA[og + QG2 * i];
            for (var d = 0u; d < PD; d = d + 1u) { acc[i * PD + d] = acc[i * PD + d] * a; }
        }
        for (var k = 0u; k < nk; k = k + 1u) {
            var vf: array<vec4<f32>, 4>;
            for (var d = 0u; d < PD; d = d + 1u) { vf[d] = vec4<f32>(sV[k * D4 + dg + DG * d]); }
            for (var i = 0u; i < PQ; i = i + 1u) {
                let w = sP[(og + QG2 * i) * PS + k];
                for (var d = 0u; d < PD; d = d + 1u) { acc[i * PD + d] = acc[i * PD + d] + w * vf[d]; }
            }
        }
        workgroupBarrier();
        if (more) { store_chunk(l); }
        workgroupBarrier();
    }
    for (var i = 0u; i < SQ; i = i + 1u) { sR[(l / 8u + 16u * i) * 8u + l % 8u] = lrun[i]; }
    workgroupBarrier();
    for (var i = 0u; i < PQ; i = i + 1u) {
        let qi = og + QG2 * i;
        if (qi < nq) {
            var tot = 0.0;
            for (var t = 0u; t < 8u; t = t + 1u) { tot = tot + sR[qi * 8u + t]; }
            let ok = tot > 0.0 || (bitcast<u32>(tot) & 0x7fffffffu) > 0x7f800000u;
            for (var d = 0u; d < PD; d = d + 1u) {
                outf[((tb + qi) * p.n_head + h) * D4 + dg + DG * d] = vec4<f16>(select(vec4<f32>(0.0), acc[i * PD + d] / tot, ok));
            }
        }
    }
}
