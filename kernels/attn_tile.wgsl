// attn_tile.wgsl — prefill attention without matrix units, in tiles: attention.wgsl's attn_flash (one
// pass, online softmax, no scratch) for f16 activations and an f16 cache, head_dim 64, 128 or 256 (one
// build each: HD), where the device has no cooperative matrices (ops_attn.c op_attention_tile_fits;
// attn_cm runs where it has them, attn_flash where this does not fit). A workgroup of 128 takes BR
// queries of one head (64; 32 for head_dim 256), grid (n_head, ceil(T / BR)); keys go in chunks of BC
// (32; 16 for head_dim 256) from the first query's first key to the last query's position:
//   1. the chunk's keys and values into workgroup memory (sK, sV; zero past the last key), q of the
//      block is there since the start (sQ): every value is read from memory once per workgroup
//   2. scores S = q k * scale, softcapped: invocation l takes keys l % 8 + 8 k (k < SK) of queries
//      l / 8 + 16 i (i < SQ), SQ x SK of them in registers, 8-byte loads shared by SQ + SK products each
//   3. per query (invocation l < BR: query l): its running max m, the chunk's rescale factor
//      exp(m_old - m), the weights e = exp(s - m) (0 outside the query's keys: causal and window ranges
//      as attention.wgsl) and the running sum
//   4. acc = acc * factor + sum e v: invocation l owns vectors l % DG + DG d (d < 4) of queries
//      l / DG + QG2 i (i < PQ), PQ x 4 of them in registers
// attn_flash held 16 queries per workgroup with one score and one output vector per shared load; here
// a loaded vector feeds 4-16 products (H200, EDGE_NO_COOPMAT=1, llama-3.2-1b pp2048: docs/perf-log.md).
// Precision: q, k and v are f16 values already; products, the softmax and acc are f32 as attn_flash's.
// out = acc / sum (a NaN sum stays NaN, as attention). Keys: rows kr0 + j % n_ctx (a sliding layer's
// ring: one modulo per chunk, then a compare per row); a chunk never reads a row past the last query's
// position. Queries past T are zero rows in sQ and never stored. So the robustness transform is off:
//! norobust
//! variant attn_tile_f16_f16c attn_tile HD=128 BC=16
//! variant attn_tile_h64_f16_f16c attn_tile HD=64
//! variant attn_tile_h256_f16_f16c attn_tile HD=256 BR=32 BC=8
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
override BR: u32 = 64u;                          // queries per workgroup (ops_attn.c attn_tile_qb), 16 x SQ
override BC: u32 = 32u;                          // keys per chunk, 8 x SK (with BR: the workgroup memory, within
                                                 // the boards' 32 KiB: 25 KiB for head_dim 64, 29 for 128, 26 for 256)
override SK: u32 = BC / 8u;                      // scores: keys per invocation (8 key groups)
override SQ: u32 = BR / 16u;                     // scores: queries per invocation (16 query groups)
const PD = 4u;                                   // output: vectors per invocation
override DG: u32 = D4 / PD;                      // output: vector groups
override QG2: u32 = 128u / DG;                   // output: query groups
override PQ: u32 = BR / QG2;                     // output: queries per invocation
override RS: u32 = D4 + 1u;                      // row stride of sQ and sK in vectors (one more: the 8 key
                                                 // rows of a score load fall in distinct banks)
override PS: u32 = BC + 1u;                      // row stride of sP (one more: a query per bank in step 3)
var<workgroup> sQ: array<vec4<f16>, BR * RS>;    // the block's queries [query][vector] (zero past T)
var<workgroup> sK: array<vec4<f16>, BC * RS>;    // the chunk's keys [key][vector]
var<workgroup> sV: array<vec4<f16>, BC * D4>;    // the chunk's values [key][vector]
var<workgroup> sP: array<f32, BR * PS>;          // the chunk's scores, then weights [query][key]
var<workgroup> sM: array<f32, BR>;               // running max per query
var<workgroup> sL: array<f32, BR>;               // running sum per query
var<workgroup> sA: array<f32, BR>;               // the chunk's rescale factor per query
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/tanh_acc.wgsl
//! include common/rows.wgsl

// keys lo..hi of the query at position p0 (attention.wgsl key_range)
fn key_range(p0: u32) -> vec2<u32> {
    var lo = 0u;
    if (p.window > 0u && p0 + 1u > p.window) { lo = p0 + 1u - p.window; }
    return vec2<u32>(lo, p0);
}

// step 1: keys and values j0 .. j0 + nk - 1 (rows kr0 + j % n_ctx) of KV head vector hc into sK, sV
fn load_chunk(l: u32, kr0: u32, hc: u32, j0: u32, nk: u32) {
    let r0 = j0 % p.n_ctx;
    let kvw4 = D4 * p.n_head_kv;
    for (var e = l; e < BC * D4; e = e + 128u) {
        let r = e / D4;
        let c = e % D4;
        var kv = vec4<f16>(0.0);
        var vv = vec4<f16>(0.0);
        if (r < nk) {
            let rr = r0 + r;
            let b = (kr0 + select(rr, rr - p.n_ctx, rr >= p.n_ctx)) * kvw4 + hc + c;
            kv = kc[b];
            vv = vc[b];
        }
        sK[r * RS + c] = kv;
        sV[r * D4 + c] = vv;
    }
}

// step 2: invocation l's SQ x SK scores (scaled, softcapped) into sP
fn chunk_scores(l: u32) {
    let kg = l % 8u;
    let qg = l / 8u;
    var s: array<f32, 16>;                       // [i * SK + k]
    for (var i = 0u; i < SQ * SK; i = i + 1u) { s[i] = 0.0; }
    for (var c = 0u; c < D4; c = c + 1u) {
        var kf: array<vec4<f32>, 4>;
        for (var k = 0u; k < SK; k = k + 1u) { kf[k] = vec4<f32>(sK[(kg + 8u * k) * RS + c]); }
        for (var i = 0u; i < SQ; i = i + 1u) {
            let qv = vec4<f32>(sQ[(qg + 16u * i) * RS + c]);
            for (var k = 0u; k < SK; k = k + 1u) { s[i * SK + k] = s[i * SK + k] + dot(qv, kf[k]); }
        }
    }
    for (var i = 0u; i < SQ; i = i + 1u) {
        for (var k = 0u; k < SK; k = k + 1u) {
            var sc = clampn(s[i * SK + k] * p.scale, F32_MAX);
            if (p.softcap > 0.0) { sc = p.softcap * tanh_acc(clampn(sc / p.softcap, 15.0)); }
            sP[(qg + 16u * i) * PS + kg + 8u * k] = sc;
        }
    }
}

// step 3: query i's (at position qp, one of the block's: i < nq) running max, factor, weights and sum
fn chunk_softmax(i: u32, qp: u32, j0: u32) {
    let kr = key_range(qp);
    let m0 = sM[i];
    var mx = m0;
    for (var k = 0u; k < BC; k = k + 1u) {
        let j = j0 + k;
        if (j >= kr.x && j <= kr.y) { mx = max(mx, sP[i * PS + k]); }
    }
    var sum = 0.0;
    for (var k = 0u; k < BC; k = k + 1u) {
        let j = j0 + k;
        let w = select(0.0, exp(sP[i * PS + k] - mx), j >= kr.x && j <= kr.y);
        sP[i * PS + k] = w;
        sum = sum + w;
    }
    let a = exp(m0 - mx);
    sA[i] = a;
    sM[i] = mx;
    sL[i] = sL[i] * a + sum;
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
    if (l < BR) { sM[l] = -F32_MAX; sL[l] = 0.0; }
    let jlo = key_range(p0 + tb).x;
    let jhi = key_range(p0 + tb + nq - 1u).y;
    let dg = l % DG;
    let og = l / DG;
    var acc: array<vec4<f32>, 16>;               // [i * PD + d]: vector dg + DG d of query og + QG2 i
    for (var i = 0u; i < PQ * PD; i = i + 1u) { acc[i] = vec4<f32>(0.0); }
    for (var j0 = jlo; j0 <= jhi; j0 = j0 + BC) {
        let nk = min(BC, jhi + 1u - j0);
        load_chunk(l, kr0, hc, j0, nk);
        workgroupBarrier();
        chunk_scores(l);
        workgroupBarrier();
        if (l < nq) { chunk_softmax(l, p0 + tb + l, j0); }
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
    }
    for (var i = 0u; i < PQ; i = i + 1u) {
        let qi = og + QG2 * i;
        if (qi < nq) {
            let tot = sL[qi];
            let ok = tot > 0.0 || (bitcast<u32>(tot) & 0x7fffffffu) > 0x7f800000u;
            for (var d = 0u; d < PD; d = d + 1u) {
                outf[((tb + qi) * p.n_head + h) * D4 + dg + DG * d] = vec4<f16>(select(vec4<f32>(0.0), acc[i * PD + d] / tot, ok));
            }
        }
    }
}
