// attention.wgsl — causal multi-head attention over the KV cache, one workgroup per
// (head, query). Each query t has its position qp and sequence slot in the rows table (pos:
// common/rows.wgsl); its keys are rows slot * n_ctx + j % n_ctx of the caches (n_ctx rows per slot: a ring
// where a sliding-window layer's cache holds fewer rows than the context), j over lo..qp, with
// lo = qp - window + 1 when window > 0 (else 0), so masked keys are never touched and
// no -inf enters the softmax. Three passes inside the workgroup, with the f32 `scores`
// scratch (n_ctx, n_head, T) in global memory (shared memory stays 2 KiB at any context):
//   1. s_j = (q*scale) . k_j, optional softcap*tanh(s/softcap) (argument clamped), running max
//   2. e_j = exp(s_j - max), sum (every e_j <= 1 and the max term is 1, so sum >= 1)
//   3. out[d] = sum_j e_j v_j[d] / sum, keys split over 256/head_dim invocation groups.
// GQA: head h reads KV head h / (n_head / n_head_kv). head_dim <= 256. f32 accumulation.
// A is the activation dtype of q and out, C the cache dtype: f32, f16, or u32 words for a q8_0 cache
// (CQ8 = 1, the _q8c variants: common/kvq8.wgsl's row layout). Every cache read goes through crow /
// crow4 (a row's first element, vector or word) and kat / vat / kat4 / vat4 (a value, or 4, of a row),
// so the q8_0 variants are these same kernels with the other read.
// Above: the `attention` entry, the portable one. The other entries, and when the forward pass
// (models/transformer.c, through ops_attn.c) runs each:
//   (attn_cm.wgsl)             prefill on cooperative matrices where ops_attn.c op_attention_cm_fits, else
//   (attn_tile.wgsl)           prefill in register tiles (f16, no matrix units) where op_attention_tile_fits, else:
//   attn_flash, attn_flash_w   batches of more than one token (prefill): 16 queries of a head per
//                              workgroup (8 for head_dim 256; 16 in the _w variants where their 18.5 KiB
//                              of shared memory fit), online softmax, one dispatch, no scratch
//   attn_split + attn_merge    decode, and batches where attn_flash does not fit: a workgroup per
//                              (head, chunk of 32 keys, query) leaves a partial row of head_dim + 4
//                              floats (m, sum, 0, 0, acc: 16-byte aligned, so attn_merge reads vectors),
//                              then one merge per (head, query). The attn_split_dec_* variants (key
//                              phase decode) issue their loads before q is shared; with an f16 cache
//                              they are attn_split_h (keys and values as vectors of 8 halves;
//                              head_dim a multiple of 8 with head_dim / 8 dividing 128)
//   attention                  only where the split does not fit (more than 1024 chunks of keys, or a
//                              head_dim the split's vectors do not divide); only then is `scores` allocated
// Bounds: keys run to the position (the host keeps positions inside the context) and are read at
// their row modulo the cache's rows, queries stop at the token count and the grid,
// heads at n_head, chunks at the grid (<= 1024 = wc's length, checked by the host with the
// cache, scratch and part sizes in ops_attn.c). So the robustness transform is off:
//! norobust
// (attn_split_h unpacks f16 pairs: every entry may say f16, and only those whose code uses it need it)
enable f16;
//! variant attention_f32_f32c attention
//! variant attention_f32_f16c attention alias:C=f16
//! variant attention_f16_f32c attention alias:A=f16
//! variant attention_f16_f16c attention alias:A=f16 alias:C=f16
//! variant attn_split_f32_f32c attn_split
//! variant attn_split_f32_f16c attn_split alias:C=f16
//! variant attn_split_f16_f32c attn_split alias:A=f16
//! variant attn_split_f16_f16c attn_split alias:A=f16 alias:C=f16
//! variant attn_split_dec_f32_f32c attn_split PRE=1
//! variant attn_split_dec_f32_f16c attn_split_h alias:C=f16
//! variant attn_split_dec_f16_f32c attn_split PRE=1 alias:A=f16
//! variant attn_split_dec_f16_f16c attn_split_h alias:A=f16 alias:C=f16
//! variant attn_flash_f32_f32c attn_flash
//! variant attn_flash_f32_f16c attn_flash alias:C=f16
//! variant attn_flash_f16_f32c attn_flash alias:A=f16
//! variant attn_flash_f16_f16c attn_flash alias:A=f16 alias:C=f16
//! variant attn_flash_w_f32_f32c attn_flash QFV=1024 QACC=8
//! variant attn_flash_w_f32_f16c attn_flash QFV=1024 QACC=8 alias:C=f16
//! variant attn_flash_w_f16_f32c attn_flash QFV=1024 QACC=8 alias:A=f16
//! variant attn_flash_w_f16_f16c attn_flash QFV=1024 QACC=8 alias:A=f16 alias:C=f16
//! variant attention_f32_q8c attention alias:C=u32 CQ8=1
//! variant attention_f16_q8c attention alias:A=f16 alias:C=u32 CQ8=1
//! variant attn_split_f32_q8c attn_split alias:C=u32 CQ8=1
//! variant attn_split_f16_q8c attn_split alias:A=f16 alias:C=u32 CQ8=1
//! variant attn_split_dec_f32_q8c attn_split PRE=1 alias:C=u32 CQ8=1
//! variant attn_split_dec_f16_q8c attn_split PRE=1 alias:A=f16 alias:C=u32 CQ8=1
//! variant attn_flash_f32_q8c attn_flash alias:C=u32 CQ8=1
//! variant attn_flash_f16_q8c attn_flash alias:A=f16 alias:C=u32 CQ8=1
//! variant attn_flash_w_f32_q8c attn_flash QFV=1024 QACC=8 alias:C=u32 CQ8=1
//! variant attn_flash_w_f16_q8c attn_flash QFV=1024 QACC=8 alias:A=f16 alias:C=u32 CQ8=1
//! variant attn_merge_f32 attn_merge
//! variant attn_merge_f16 attn_merge alias:A=f16
alias A = f32;
alias C = f32;
override PRE: u32 = 0u;                // attn_split: 1 = the decode variant (loads issued early)
override CQ8: u32 = 0u;                // 1: a q8_0 cache (C = u32 words)
struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32,
                q0: u32 }     // attn_split / attn_merge: the first query of this dispatch (queries q0 .. q0 + grid - 1)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<A>;             // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kc: array<C>;            // (head_dim*n_head_kv, n_ctx, n_seq)
@group(0) @binding(2) var<storage, read> vc: array<C>;            // (head_dim*n_head_kv, n_ctx, n_seq)
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // the rows table
@group(0) @binding(4) var<storage, read_write> scores: array<f32>; // (n_ctx, n_head, T_max)
@group(0) @binding(5) var<storage, read_write> out: array<A>;     // (head_dim, n_head, T)
var<workgroup> qs: array<f32, 256>;
var<workgroup> part: array<f32, 256>;
var<workgroup> posw: array<u32, 4>;

const F32_MAX = 3.4028234e38;

//! include common/clampn.wgsl
//! include common/tanh_acc.wgsl
//! include common/rows.wgsl
//! include common/kvq8.wgsl
//! include common/keys.wgsl
//! include common/chunk.wgsl

// The cache reads. A row's base: its first element (f32 / f16), or word (q8_0); c: the element
// (kat, vat: the scalar entry's kc, vc) or the 4-element vector (kat4, vat4: kc4, vc4) in the row.
fn kvw() -> u32 { return p.head_dim * p.n_head_kv; }
fn crow(r: u32) -> u32 { if (CQ8 != 0u) { return r * q8_row_words(q8_kp(kvw())); } return r * kvw(); }
fn crow4(r: u32) -> u32 { if (CQ8 != 0u) { return r * q8_row_words(q8_kp(kvw())); } return r * (kvw() / 4u); }
fn kat(rb: u32, c: u32) -> f32 {
    if (CQ8 != 0u) { return q8_val(u32(kc[rb + c / 4u]), u32(kc[rb + q8_kp(kvw()) / 4u + c / 64u]), c); }
    return f32(kc[rb + c]);
}
fn vat(rb: u32, c: u32) -> f32 {
    if (CQ8 != 0u) { return q8_val(u32(vc[rb + c / 4u]), u32(vc[rb + q8_kp(kvw()) / 4u + c / 64u]), c); }
    return f32(vc[rb + c]);
}
fn kword4(i: u32) -> u32 { return vec4<u32>(kc4[i / 4u])[i % 4u]; }   // word i of a q8_0 key cache
fn vword4(i: u32) -> u32 { return vec4<u32>(vc4[i / 4u])[i % 4u]; }
fn kat4(rb: u32, c4: u32) -> vec4<f32> {
    if (CQ8 != 0u) { return q8_vec(kword4(rb + c4), kword4(rb + q8_kp(kvw()) / 4u + c4 / 16u), c4); }
    return vec4<f32>(kc4[rb + c4]);
}
fn vat4(rb: u32, c4: u32) -> vec4<f32> {
    if (CQ8 != 0u) { return q8_vec(vword4(rb + c4), vword4(rb + q8_kp(kvw()) / 4u + c4 / 16u), c4); }
    return vec4<f32>(vc4[rb + c4]);
}

// query t's (position, first cache row of its slot), the same for every invocation: t is clamped to
// the batch, so the loads stay inside the table (a workgroup past it returns on its own test)
fn query_at(l: u32, t: u32) -> vec3<u32> {
    if (l == 0u) { let n = rows_n(); let tc = min(t, max(n, 1u) - 1u); posw[0] = n; posw[1] = row_pos(tc); posw[2] = row_slot(tc) * p.n_ctx; }
    return vec3<u32>(workgroupUniformLoad(&posw[0]), workgroupUniformLoad(&posw[1]), workgroupUniformLoad(&posw[2]));
}

// reduce in two levels (16 invocations take 16 values each, then every invocation the 16): two
// barriers instead of nine; ends on a barrier, so part may be written again right after
const MG4 = 8u;                        // attn_merge: partial output vectors held per invocation
var<workgroup> part16: array<f32, 16>;
fn reduce2(l: u32, v: f32, is_max: bool) -> f32 {
    part[l] = v;
    workgroupBarrier();
    if (l < 16u) {
        var a = part[16u * l];
        for (var t = 1u; t < 16u; t = t + 1u) { let b = part[16u * l + t]; a = select(a + b, max(a, b), is_max); }
        part16[l] = a;
    }
    let all = workgroupUniformLoad(&part16);
    var r = all[0];
    for (var t = 1u; t < 16u; t = t + 1u) { r = select(r + all[t], max(r, all[t]), is_max); }
    return r;
}

fn reduce(l: u32, v: f32, is_max: bool) -> f32 {
    part[l] = v;
    workgroupBarrier();
    for (var k = 128u; k > 0u; k = k >> 1u) {
        if (l < k) { part[l] = select(part[l] + part[l + k], max(part[l], part[l + k]), is_max); }
        workgroupBarrier();
    }
    let r = part[0];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(256)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let h = wid.x;
    let t = wid.y;
    let qa = query_at(l, t);                        // uniform: the early return below is legal
    let n_tok = qa.x;
    if (t >= n_tok || t >= p.t_cap || h >= p.n_head) { return; }
    let d_n = p.head_dim;
    let hk = h / (p.n_head / p.n_head_kv);
    let qp = qa.y;
    let kr0 = qa.z;                                 // the slot's first cache row
    let hi = qp;
    let lo = key_range(qp).x;
    let qb = (t * p.n_head + h) * d_n;
    let sb = (t * p.n_head + h) * p.n_ctx - lo;     // (scores of keys lo..hi at 0..hi - lo: at most n_ctx)
    if (l < d_n) { qs[l] = f32(q[qb + l]) * p.scale; }
    workgroupBarrier();

    // 1. scores
    var m = -F32_MAX;
    for (var j = lo + l; j <= hi; j = j + 256u) {
        let kb = crow(kr0 + j % p.n_ctx);
        var s = 0.0;
        for (var d = 0u; d < d_n; d = d + 1u) { s = s + qs[d] * kat(kb, hk * d_n + d); }
        s = clampn(s, F32_MAX);
        if (p.softcap > 0.0) { s = p.softcap * tanh_acc(clampn(s / p.softcap, 15.0)); }
        scores[sb + j] = s;
        m = max(m, s);
    }
    m = reduce(l, m, true);

    // 2. exponentials (each invocation revisits its own keys)
    var sum = 0.0;
    for (var j = lo + l; j <= hi; j = j + 256u) {
        let e = exp(scores[sb + j] - m);
        scores[sb + j] = e;
        sum = sum + e;
    }
    sum = reduce(l, sum, false);
    storageBarrier();

    // 3. values: invocation l takes dim l % head_dim of keys lo + l / head_dim, step 256 / head_dim
    let groups = 256u / d_n;
    let g = l / d_n;
    let d = l % d_n;
    var acc = 0.0;
    if (g < groups) {
        let vb = hk * d_n + d;
        for (var j = lo + g; j <= hi; j = j + groups) { acc = acc + scores[sb + j] * vat(crow(kr0 + j % p.n_ctx), vb); }
    }
    part[l] = acc;
    workgroupBarrier();
    if (l < d_n) {
        var s = 0.0;
        for (var k = 0u; k < groups; k = k + 1u) { s = s + part[k * d_n + l]; }
        out[qb + l] = A(select(0.0, s / sum, sum > 0.0 || (bitcast<u32>(sum) & 0x7fffffffu) > 0x7f800000u));   // a NaN stays NaN
    }
}

// ---- attention split over the keys: attn_split + attn_merge ----------------------------------
// attn_split: grid (n_head, ceil(n_ctx / 32), T); workgroup (h, c, t) takes keys lo + 32c .. +31 of
// query t (keys lo..hi as for attention)
// (workgroups past hi return at once). Scores: 4 invocations per key, each a quarter of the
// dot product with 16-byte loads. The chunk's max m and the sum of e_j = exp(s_j - m) are
// reduced in shared memory; acc = sum_j e_j v_j with head_dim/4 invocations per key (16-byte
// loads), 128/(head_dim/4) keys at a time. The chunk leaves (m, sum, acc[head_dim]) in part at
// (((t' * n_head + h) * n_chunks) + c) * (head_dim + 4) as (m, sum, 0, 0, acc), t' = t - q0 (a dispatch takes queries q0 ..,
// so part holds only as many queries as one dispatch). head_dim: a multiple of 4 with head_dim/4
// dividing 128. attn_merge: grid (n_head, T'); with M the largest m_c and w_c = exp(m_c - M):
// out = sum_c w_c acc_c / sum_c w_c sum_c. Same scores, softcap and window as attention. Decode
// with an f16 cache runs attn_split_h (below) instead of attn_split.
@group(0) @binding(1) var<storage, read> kc4: array<vec4<C>>;      // attn_split: the key cache by 4
@group(0) @binding(2) var<storage, read> vc4: array<vec4<C>>;      // attn_split: the value cache by 4
@group(0) @binding(4) var<storage, read_write> partw: array<f32>;  // attn_split: (head_dim + 4, n_chunks, n_head)
@group(0) @binding(0) var<storage, read> partr4: array<vec4<f32>>; // attn_merge: the same, read by 4
var<workgroup> partv: array<vec4<f32>, 256>;                       // attn_merge: each invocation's 4 dims
@group(0) @binding(1) var<storage, read> posm: array<u32>;         // attn_merge: the rows table
@group(0) @binding(2) var<storage, read_write> outm: array<A>;     // attn_merge: (head_dim, n_head)
var<workgroup> sp: array<f32, 128>;
var<workgroup> es: array<f32, 32>;
var<workgroup> accs: array<vec4<f32>, 128>;
var<workgroup> wc: array<f32, 1024>;


// attn_split / attn_split_h: the chunk of workgroup (h, c, t) as (its first key j0, its key count nk);
// nk = 0 when it has nothing to do (past the query's keys, the token count or the heads). The slot's
// first cache row goes to sbase and j0 % n_ctx to sring: key j0 + i of the chunk is row key_row(i). A
// query's keys lo..hi span at most n_ctx rows (the host keeps positions inside the context; a sliding
// window's ring holds the window), so sring + i < 2 n_ctx and one compare takes the place of a modulo
// per key (the modulo per key cost the H200's decode attention ~0.5 us a layer).
var<private> sbase: u32;
var<private> sring: u32;
fn key_row(i: u32) -> u32 { let r = sring + i; return sbase + select(r, r - p.n_ctx, r >= p.n_ctx); }
fn split_chunk(l: u32, wid: vec3<u32>) -> vec2<u32> {
    let t = wid.z + p.q0;
    let qa = query_at(l, t);
    sbase = qa.z;
    let kr = key_range(qa.y);
    let j0 = kr.x + 32u * wid.y;
    sring = j0 % p.n_ctx;
    if (t >= qa.x || j0 > kr.y || wid.x >= p.n_head) { return vec2<u32>(j0, 0u); }
    return vec2<u32>(j0, min(32u, kr.y + 1u - j0));
}

// The chunk's softmax (common/chunk.wgsl chunk_softmax): the workgroup is one chunk.
fn split_softmax(l: u32, a: f32, nk: u32) -> f32 { return chunk_softmax(l, 0u, 0u, a, nk); }

// the chunk's m and the sum of its 32 weights (es is complete since split_softmax's barrier) at
// the start of its row pb in part, with the row's two zeros
fn split_store_ms(l: u32, pb: u32, m: f32) {
    if (l == 0u) { partw[pb] = m; partw[pb + 1u] = chunk_wsum(0u); partw[pb + 2u] = 0.0; partw[pb + 3u] = 0.0; }
}

// attn_split / attn_split_h: an invocation's share of chunk ck = (j0, nk) of workgroup (h, c, wid.z) (query t), for
// cache vectors of vd dims (4: attn_split, 8: attn_split_h). Scores: key kk = l / 4, vectors qd = l % 4
// + 4i < dq of it (kb: the key's first vector); values: group g = l / dq of ng = 128 / dq takes keys
// g, g + ng, ..., vector dv = l % dq of each. qh: this query and head; pb: the chunk's row in part.
// (attn_split reads through crow4 / kat4 / vat4: kb is the key's row base, hc = hk dq its head's first vector.)
struct SplitGeo { j0: u32, nk: u32, dn: u32, dq: u32, hc: u32, hk: u32, qh: u32, kk: u32, qd: u32, kb: u32,
                  ng: u32, g: u32, dv: u32, pb: u32 }
fn split_geo(l: u32, wid: vec3<u32>, nw: vec3<u32>, t: u32, ck: vec2<u32>, vd: u32) -> SplitGeo {
    let h = wid.x;
    let d_n = p.head_dim;
    let dq = d_n / vd;
    let kvd = dq * p.n_head_kv;
    let hk = h / (p.n_head / p.n_head_kv);
    let kk = l / 4u;
    let ng = 128u / dq;
    let kb = select(key_row(min(kk, ck.y - 1u)) * kvd + hk * dq, crow4(key_row(min(kk, ck.y - 1u))), vd == 4u);
    return SplitGeo(ck.x, ck.y, d_n, dq, hk * dq, hk, t * p.n_head + h, kk, l % 4u, kb,
                    ng, l / dq, l % dq, ((wid.z * p.n_head + h) * nw.y + wid.y) * (d_n + 4u));
}
// q of this query and head, scaled, into qs (every invocation; a barrier follows)
fn split_load_q(l: u32, s: SplitGeo) { for (var d = l; d < s.dn; d = d + 128u) { qs[d] = f32(q[s.qh * s.dn + d]) * p.scale; } }

@compute @workgroup_size(128)
fn attn_split(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
              @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let t = wid.z + p.q0;                        // query t, its slot wid.z in part
    let ck = split_chunk(l, wid);
    if (ck.y == 0u) { return; }
    let s = split_geo(l, wid, nw, t, ck, 4u);
    // PRE (decode): the first 8 key and value vectors of this invocation are loaded before q is
    // in shared memory, so they wait for memory together with q (head_dim <= 128: all of them);
    // more registers, so the prefill variant loads them where they are used.
    var kr4: array<vec4<f32>, 8>;
    var vr4: array<vec4<f32>, 8>;
    if (PRE != 0u) {
        for (var i = 0u; i < 8u; i = i + 1u) { if (s.qd + 4u * i < s.dq) { kr4[i] = kat4(s.kb, s.hc + s.qd + 4u * i); } }
        for (var i = 0u; i < 8u; i = i + 1u) { let key = s.g + s.ng * i; if (key < s.nk) { vr4[i] = vat4(crow4(key_row(key)), s.hc + s.dv); } }
    }
    split_load_q(l, s);
    workgroupBarrier();
    var a = 0.0;
    if (s.kk < s.nk && PRE != 0u) {
        for (var i = 0u; i < 16u; i = i + 1u) {  // head_dim 256: vectors 8..15 loaded here
            let e = s.qd + 4u * i;
            if (e < s.dq) {
                var kv = kr4[i % 8u];
                if (i >= 8u) { kv = kat4(s.kb, s.hc + e); }
                a = a + dot(vec4<f32>(qs[4u * e], qs[4u * e + 1u], qs[4u * e + 2u], qs[4u * e + 3u]), kv);
            }
        }
    } else if (s.kk < s.nk) {
        for (var e = s.qd; e < s.dq; e = e + 4u) {
            a = a + dot(vec4<f32>(qs[4u * e], qs[4u * e + 1u], qs[4u * e + 2u], qs[4u * e + 3u]), kat4(s.kb, s.hc + e));
        }
    }
    let m = split_softmax(l, a, s.nk);
    var acc = vec4<f32>(0.0);
    if (PRE != 0u) {
        for (var i = 0u; i < 16u; i = i + 1u) {  // head_dim 256: keys 8..15 of this group loaded here
            let key = s.g + s.ng * i;
            if (key < s.nk) {
                var vv = vr4[i % 8u];
                if (i >= 8u) { vv = vat4(crow4(key_row(key)), s.hc + s.dv); }
                acc = acc + es[key] * vv;
            }
        }
    } else {
        for (var i = s.g; i < s.nk; i = i + s.ng) { acc = acc + es[i] * vat4(crow4(key_row(i)), s.hc + s.dv); }
    }
    accs[l] = acc;
    workgroupBarrier();
    let pb = s.pb;
    if (l < s.dq) {
        var tv = vec4<f32>(0.0);
        for (var k = 0u; k < s.ng; k = k + 1u) { tv = tv + accs[k * s.dq + l]; }
        partw[pb + 4u + 4u * l] = tv.x; partw[pb + 5u + 4u * l] = tv.y; partw[pb + 6u + 4u * l] = tv.z; partw[pb + 7u + 4u * l] = tv.w;
    }
    split_store_ms(l, pb, m);
}

// attn_split_h: attn_split's decode variant for an f16 cache, reading keys and values as 16-byte
// vectors of 8 halves (kc8, vc8): half the load instructions of vec4<f16>. Scores: invocation l
// takes key l / 4 and its 8-dim chunks f = l % 4 + 4i; values: head_dim / 8 invocations per key,
// 8 dims each, 128 / (head_dim / 8) keys at a time. Every load of the chunk (at most 8 key and 8
// value vectors per invocation) is issued before q is shared. head_dim: a multiple of 8 with
// head_dim / 8 dividing 128. The same sums as attn_split, in another order of the dims.
@group(0) @binding(1) var<storage, read> kc8: array<vec4<u32>>;    // attn_split_h: the f16 key cache by 8
@group(0) @binding(2) var<storage, read> vc8: array<vec4<u32>>;    // attn_split_h: the f16 value cache by 8
var<workgroup> acc8: array<vec4<f32>, 256>;                        // attn_split_h: 8 dims per invocation

// (h8lo, h8hi: common/chunk.wgsl)

@compute @workgroup_size(128)
fn attn_split_h(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let t = wid.z + p.q0;
    let ck = split_chunk(l, wid);
    if (ck.y == 0u) { return; }
    let s = split_geo(l, wid, nw, t, ck, 8u);
    var kr8: array<vec4<u32>, 8>;
    var vr8: array<vec4<u32>, 8>;
    for (var i = 0u; i < 8u; i = i + 1u) { if (s.qd + 4u * i < s.dq) { kr8[i] = kc8[s.kb + s.qd + 4u * i]; } }
    for (var i = 0u; i < 8u; i = i + 1u) { let key = s.g + s.ng * i; if (key < s.nk) { vr8[i] = vc8[key_row(key) * s.dq * p.n_head_kv + s.hc + s.dv]; } }
    split_load_q(l, s);
    workgroupBarrier();
    var a = 0.0;
    if (s.kk < s.nk) {
        for (var i = 0u; i < 8u; i = i + 1u) {
            let f = s.qd + 4u * i;
            if (f < s.dq) {
                let b = 8u * f;
                a = a + dot(vec4<f32>(qs[b], qs[b + 1u], qs[b + 2u], qs[b + 3u]), h8lo(kr8[i]))
                      + dot(vec4<f32>(qs[b + 4u], qs[b + 5u], qs[b + 6u], qs[b + 7u]), h8hi(kr8[i]));
            }
        }
    }
    let m = split_softmax(l, a, s.nk);
    var alo = vec4<f32>(0.0);
    var ahi = vec4<f32>(0.0);
    for (var i = 0u; i < 8u; i = i + 1u) {
        let key = s.g + s.ng * i;
        if (key < s.nk) { alo = alo + es[key] * h8lo(vr8[i]); ahi = ahi + es[key] * h8hi(vr8[i]); }
    }
    acc8[2u * l] = alo;
    acc8[2u * l + 1u] = ahi;
    workgroupBarrier();
    let pb = s.pb;
    if (l < s.dq) {
        var tlo = vec4<f32>(0.0);
        var thi = vec4<f32>(0.0);
        for (var k = 0u; k < s.ng; k = k + 1u) { tlo = tlo + acc8[2u * (k * s.dq + l)]; thi = thi + acc8[2u * (k * s.dq + l) + 1u]; }
        let o = pb + 4u + 8u * l;
        partw[o] = tlo.x; partw[o + 1u] = tlo.y; partw[o + 2u] = tlo.z; partw[o + 3u] = tlo.w;
        partw[o + 4u] = thi.x; partw[o + 5u] = thi.y; partw[o + 6u] = thi.z; partw[o + 7u] = thi.w;
    }
    split_store_ms(l, pb, m);
}

// p.t_cap = n_chunks (<= 1024) here.
@compute @workgroup_size(256)
fn attn_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let h = wid.x;
    let t = wid.y + p.q0;
    let tl = wid.y;
    if (l == 0u) { let n = posm[0]; posw[0] = n; posw[1] = posm[2u + 2u * min(t, max(n, 1u) - 1u)]; }   // (the rows table)
    let n_tok = workgroupUniformLoad(&posw[0]);
    let qp = workgroupUniformLoad(&posw[1]);
    if (t >= n_tok || h >= p.n_head) { return; }
    let kr = key_range(qp);
    let nc = (kr.y - kr.x) / 32u + 1u;
    let d_n = p.head_dim;
    let qh = t * p.n_head + h;
    let pr = d_n + 4u;                           // a chunk's row in part: m, sum, 2 zeros, acc (16-byte aligned)
    let hb = (tl * p.n_head + h) * p.t_cap * pr / 4u;   // (vectors of partr4)
    // group l / d4 takes chunks g, g + 256/d4, ...; dims 4 (l % d4) .. +3
    let d4 = d_n / 4u;
    let ng = 256u / d4;
    let g = l / d4;
    let dq = l % d4;
    // every load is issued before the first reduction where the chunks fit: this invocation's
    // chunk's (max, sum) when nc <= 256, and its group's MG4 partial outputs when nc <= MG4 ng
    let few = nc <= MG4 * ng;
    var pv: array<vec4<f32>, 8>;
    if (few) { for (var i = 0u; i < MG4; i = i + 1u) { let c = g + ng * i; if (c < nc) { pv[i] = partr4[hb + c * pr / 4u + 1u + dq]; } } }
    var mc = -F32_MAX; var lc = 0.0;
    if (nc <= 256u && l < nc) { let ml = partr4[hb + l * pr / 4u]; mc = ml.x; lc = ml.y; }
    var mx = mc;
    for (var c = l + 256u; c < nc; c = c + 256u) { mx = max(mx, partr4[hb + c * pr / 4u].x); }
    let big = reduce2(l, mx, true);
    var den = 0.0;
    if (nc <= 256u) {
        if (l < nc) { let w = exp(mc - big); wc[l] = w; den = w * lc; }
    } else {
        for (var c = l; c < nc; c = c + 256u) { let ml = partr4[hb + c * pr / 4u]; let w = exp(ml.x - big); wc[c] = w; den = den + w * ml.y; }
    }
    let total = reduce2(l, den, false);        // (its barriers also make wc complete)
    var acc = vec4<f32>(0.0);
    if (few) { for (var i = 0u; i < MG4; i = i + 1u) { let c = g + ng * i; if (c < nc) { acc = acc + wc[c] * pv[i]; } } }
    else { for (var c = g; c < nc; c = c + ng) { acc = acc + wc[c] * partr4[hb + c * pr / 4u + 1u + dq]; } }
    partv[l] = acc;
    workgroupBarrier();
    if (l < d4) {
        var num = vec4<f32>(0.0);
        for (var k = 0u; k < ng; k = k + 1u) { num = num + partv[k * d4 + l]; }
        let ok = total > 0.0 || (bitcast<u32>(total) & 0x7fffffffu) > 0x7f800000u;
        for (var e = 0u; e < 4u; e = e + 1u) { outm[qh * d_n + 4u * l + e] = A(select(0.0, num[e] / total, ok)); }
    }
}

// ---- attn_flash (prefill): qb queries of one head per workgroup (16; 8 for head_dim 256, 16 in the
// attn_flash_w_* variants, which take twice the shared memory for q: 18.5 KiB), every key
// of the block in one pass with a running max (online softmax), no scratch and no merge dispatch.
// Grid (n_head, ceil(T / qb)). Per chunk of 32 keys: scores (invocation l: key l % 32 against
// queries l / 32 + 4m, 16-byte key loads shared by them; q pre-scaled in shared memory). The loops are
// plain: unrolled 4 / 8 loads in flight cost lavapipe ~0.5 s more of cold start (LLVM compiles it
// at first use) for a few % of gemma's attention on the H200. Then the per-query max m
// and rescale factor exp(m_old - m), the weights e = exp(s - m) (0 outside the query's own keys:
// causal and window ranges as attention), the running sum, and acc = acc * factor + sum e v with
// invocation l owning vector l % (head_dim / 4) of queries l / (head_dim / 4) + 128 / (head_dim / 4) x i.
// Keys run from the block's first query's lo to its last query's hi. The batch is one sequence at
// consecutive positions (a prefill batch: the rows table's first row gives the rest). head_dim: a multiple of 4
// with head_dim / 4 dividing 128, <= 256. out = acc / sum (a NaN sum stays NaN, as attention).
const QBM = 16u;                       // queries per workgroup: qb = min(16, QFV / (head_dim / 4)): 16, or 8 for
override QFV: u32 = 512u;              // head_dim 256 (q's 8 KiB of shared memory fit the 16 KiB boards); the
override QACC: u32 = 4u;               // attn_flash_w_* variants hold 16 of head_dim 256 (16 KiB) and 8 output vectors
@group(0) @binding(4) var<storage, read_write> outf: array<A>;     // attn_flash: (head_dim, n_head, T)
var<workgroup> qf: array<vec4<f32>, QFV>;        // [qb][head_dim / 4], scaled
var<workgroup> sf: array<f32, 512>;              // [qb][32]: the chunk's scores, then weights
var<workgroup> mf: array<f32, QBM>;              // running max per query
var<workgroup> af: array<f32, QBM>;              // this chunk's rescale factor per query
var<workgroup> lf: array<f32, QBM>;              // running sum per query

@compute @workgroup_size(128)
fn attn_flash(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let h = wid.x;
    let qb = min(QBM, QFV / (p.head_dim / 4u));
    let tb = wid.y * qb;                         // queries tb .. tb + nq - 1
    let qa = query_at(l, 0u);
    let n_tok = qa.x;
    let p0 = qa.y;                               // query t at position p0 + t
    let kr0 = qa.z;                              // the slot's first cache row
    if (tb >= n_tok || h >= p.n_head) { return; }
    let nq = min(qb, n_tok - tb);
    let d_n = p.head_dim;
    let d4 = d_n / 4u;
    let hk = h / (p.n_head / p.n_head_kv);
    for (var e = l; e < qb * d4; e = e + 128u) {
        let i = e / d4;
        var qv = vec4<f32>(0.0);
        if (i < nq) {
            let b = ((tb + i) * p.n_head + h) * d_n + 4u * (e % d4);
            qv = vec4<f32>(f32(q[b]) * p.scale, f32(q[b + 1u]) * p.scale, f32(q[b + 2u]) * p.scale, f32(q[b + 3u]) * p.scale);
        }
        qf[e] = qv;
    }
    if (l < qb) { mf[l] = -F32_MAX; lf[l] = 0.0; }
    let jlo = key_range(p0 + tb).x;
    let jhi = key_range(p0 + tb + nq - 1u).y;
    let qg = 128u / d4;                          // output: vector ov of queries oq + qg i
    let ov = l % d4;
    let oq = l / d4;
    var acc: array<vec4<f32>, 8>;               // queries oq + qg i (qb / qg <= QACC)
    for (var i = 0u; i < QACC; i = i + 1u) { acc[i] = vec4<f32>(0.0); }
    workgroupBarrier();
    for (var j0 = jlo; j0 <= jhi; j0 = j0 + 32u) {
        let kj = j0 + l % 32u;
        let q4 = l / 32u;
        var a = vec4<f32>(0.0);                  // key kj . queries q4, q4 + 4 (and q4 + 8, q4 + 12 when qb = 16)
        if (kj <= jhi) {
            let kb = crow4(kr0 + kj % p.n_ctx);
            for (var e = 0u; e < d4; e = e + 1u) {
                let kv = kat4(kb, hk * d4 + e);
                a.x = a.x + dot(qf[q4 * d4 + e], kv);
                a.y = a.y + dot(qf[(q4 + 4u) * d4 + e], kv);
                if (qb > 8u) { a.z = a.z + dot(qf[(q4 + 8u) * d4 + e], kv); a.w = a.w + dot(qf[(q4 + 12u) * d4 + e], kv); }
            }
        }
        for (var m = 0u; m < qb / 4u; m = m + 1u) {
            let i = q4 + 4u * m;
            let kr = key_range(p0 + tb + i);
            var s = -F32_MAX;                    // outside the query's keys: never the max, weight 0
            if (i < nq && kj >= kr.x && kj <= kr.y) {
                s = clampn(a[m], F32_MAX);
                if (p.softcap > 0.0) { s = p.softcap * tanh_acc(clampn(s / p.softcap, 15.0)); }
            }
            sf[i * 32u + l % 32u] = s;
        }
        workgroupBarrier();
        if (l < qb) {
            var mx = mf[l];
            for (var j = 0u; j < 32u; j = j + 1u) { mx = max(mx, sf[l * 32u + j]); }
            af[l] = exp(mf[l] - mx);
            mf[l] = mx;
        }
        workgroupBarrier();
        for (var e = l; e < qb * 32u; e = e + 128u) {
            let i = e / 32u;
            let kr = key_range(p0 + tb + i);
            let j = j0 + e % 32u;
            sf[e] = select(0.0, exp(sf[e] - mf[i]), i < nq && j >= kr.x && j <= kr.y);
        }
        workgroupBarrier();
        if (l < qb) {
            var sm = 0.0;
            for (var j = 0u; j < 32u; j = j + 1u) { sm = sm + sf[l * 32u + j]; }
            lf[l] = lf[l] * af[l] + sm;
        }
        for (var i = 0u; i < QACC; i = i + 1u) { let qi = oq + qg * i; if (qi < qb) { acc[i] = acc[i] * af[qi]; } }
        let nk = min(32u, jhi + 1u - j0);
        for (var j = 0u; j < nk; j = j + 1u) {
            let vv = vat4(crow4(kr0 + (j0 + j) % p.n_ctx), hk * d4 + ov);
            for (var i = 0u; i < QACC; i = i + 1u) { let qi = oq + qg * i; if (qi < qb) { acc[i] = acc[i] + sf[qi * 32u + j] * vv; } }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < QACC; i = i + 1u) {
        let qi = oq + qg * i;
        if (qi < nq) {
            let tot = lf[qi];
            let o = select(vec4<f32>(0.0), acc[i] / tot, tot > 0.0 || (bitcast<u32>(tot) & 0x7fffffffu) > 0x7f800000u);
            let b = ((tb + qi) * p.n_head + h) * d_n + 4u * ov;
            outf[b] = A(o.x); outf[b + 1u] = A(o.y); outf[b + 2u] = A(o.z); outf[b + 3u] = A(o.w);
        }
    }
}
