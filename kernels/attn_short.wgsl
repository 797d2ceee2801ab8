// attn_short.wgsl — decode attention over a short context in one dispatch: attention.wgsl's attn_split_h
// (an f16 cache read as 16-byte vectors of 8 halves) and attn_merge in one workgroup. Where a decode
// recording's key bound is at most 128 (ops_attn.c op_attention_short_fits: the key levels 64 and 128),
// workgroup (h, 0, t) of 512 invocations takes all the keys lo..hi of query t (at most 128) as 4 groups
// of 128, group g the chunk of 32 keys lo + 32 g .. (attn_split_h's work, its same sums), and merges the
// 4 chunks' (max, sum, acc) in workgroup memory as attn_merge does. So a short step's attention is one
// dispatch instead of two with a barrier between: the merge's dispatch and barrier cost a decode step
// 5-10% (H200, leaving attn_merge out: qwen3-4b +7.5%, llama-3.2-1b +9.8%; docs/perf-log.md session 38).
// A chunk's scores, softmax and weight sum are attn_split_h's (common/chunk.wgsl), at group g's offsets.
// Keys: rows slot * n_ctx + j % n_ctx (a ring: one modulo per chunk, a compare per key). head_dim: a
// multiple of 8 with head_dim / 8 dividing 128, at most 256. A is the activation dtype of q and out.
// A group past the query's keys takes part in every barrier and adds nothing. So the robustness
// transform is off:
//! norobust
// attn_short_n (below) is the same work in 2 groups of 128, each group two chunks one after the other
// (NGW = 2: 256 invocations, 14.3 KiB of workgroup memory), for the f32 cache (devices without 16-bit
// storage, which allow 256 invocations: a chunk's 8 dims are two 16-byte vectors of f32, CF32) and for the
// f16 cache where 512 invocations are not allowed (Mali).
//! variant attn_short_f32_f16c attn_short
//! variant attn_short_f16_f16c attn_short alias:A=f16
//! variant attn_short_n_f32_f32c attn_short_n NGW=2 CF32=1 alias:CV=vec4<f32> alias:H2=f32
//! variant attn_short_n_f32_f16c attn_short_n NGW=2
//! variant attn_short_n_f16_f16c attn_short_n NGW=2 alias:A=f16
enable f16;
alias A = f32;
alias CV = vec4<u32>;                            // the cache's 16-byte vectors: 8 halves, or 4 f32 (CF32)
alias H2 = vec2<f16>;                            // two halves of the f16 cache (the f32 build: f32, so it uses no f16)
struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32,
                q0: u32 }             // attention.wgsl's push constants (ops_attn.c AttnPush)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<A>;             // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kc8: array<CV>;          // the key cache by 16 bytes
@group(0) @binding(2) var<storage, read> vc8: array<CV>;          // the value cache by 16 bytes
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // the rows table
@group(0) @binding(4) var<storage, read_write> out: array<A>;     // (head_dim, n_head, T)

const F32_MAX = 3.4028234e38;
const NG = 4u;                                   // chunks of 32 keys (128 keys at most)
override NGW: u32 = 4u;                          // groups of 128 invocations: chunk c runs on group c % NGW
override CF32: bool = false;                     // an f32 cache (CV = vec4<f32>): 8 dims are two vectors
var<workgroup> qs: array<f32, 256>;              // q of this query and head, scaled
var<workgroup> sp: array<f32, 128 * NGW>;        // per group: its 128 partial scores, then its 32 scores
var<workgroup> es: array<f32, 32 * NGW>;         // per group: the weights of its 32 keys
var<workgroup> acc8: array<vec4<f32>, 256 * NGW>;   // per group: 8 dims per invocation
var<workgroup> gacc: array<f32, 1024>;           // per chunk: its acc[head_dim]
var<workgroup> gms: array<vec2<f32>, 4>;         // per chunk: its (max, sum)
var<workgroup> posw: array<u32, 4>;

//! include common/clampn.wgsl
//! include common/tanh_acc.wgsl
//! include common/rows.wgsl
//! include common/keys.wgsl
//! include common/chunk.wgsl

// The cache's 8 dims at 8-dim index i (row * head_dim / 8 * n_head_kv + ..) into r[j] (f16: one vector;
// f32: r[2j], r[2j + 1]) and their values as two vec4<f32> (lo8, hi8)
fn ld8(kv: bool, i: u32, r: ptr<function, array<vec4<u32>, 16>>, j: u32) {
    if (CF32) {
        if (kv) { (*r)[2u * j] = bitcast<vec4<u32>>(vc8[2u * i]); (*r)[2u * j + 1u] = bitcast<vec4<u32>>(vc8[2u * i + 1u]); }
        else { (*r)[2u * j] = bitcast<vec4<u32>>(kc8[2u * i]); (*r)[2u * j + 1u] = bitcast<vec4<u32>>(kc8[2u * i + 1u]); }
    } else if (kv) { (*r)[j] = bitcast<vec4<u32>>(vc8[i]); } else { (*r)[j] = bitcast<vec4<u32>>(kc8[i]); }
}
// (chunk.wgsl's h8lo / h8hi through H2, so that the f32 build's dead branch holds no f16)
fn lo8(r: ptr<function, array<vec4<u32>, 16>>, j: u32) -> vec4<f32> {
    if (CF32) { return bitcast<vec4<f32>>((*r)[2u * j]); }
    return vec4<f32>(vec2<f32>(bitcast<H2>((*r)[j].x)), vec2<f32>(bitcast<H2>((*r)[j].y)));
}
fn hi8(r: ptr<function, array<vec4<u32>, 16>>, j: u32) -> vec4<f32> {
    if (CF32) { return bitcast<vec4<f32>>((*r)[2u * j + 1u]); }
    return vec4<f32>(vec2<f32>(bitcast<H2>((*r)[j].z)), vec2<f32>(bitcast<H2>((*r)[j].w)));
}

// Both entries' shared steps. The step's query count, query t's position and its slot's first cache
// row, read from the rows table by invocation 0 (called by every invocation: uniform loads).
fn step_rows(i: u32, t: u32) -> vec3<u32> {
    if (i == 0u) { let n = rows_n(); let tc = min(t, max(n, 1u) - 1u); posw[0] = n; posw[1] = row_pos(tc); posw[2] = row_slot(tc) * p.n_ctx; }
    return vec3<u32>(workgroupUniformLoad(&posw[0]), workgroupUniformLoad(&posw[1]), workgroupUniformLoad(&posw[2]));
}
// Group g's sums of chunk c, after the barrier that follows its acc8 stores: each 8-dim vector's sum
// over the group's value lanes into gacc (chunk c's acc[head_dim]), and the chunk's (max, weight sum)
fn chunk_out(l: u32, g: u32, c: u32, dq: u32, m: f32, nk: u32) {
    if (l < dq) {
        var tlo = vec4<f32>(0.0);
        var thi = vec4<f32>(0.0);
        for (var k = 0u; k < 128u / dq; k = k + 1u) { tlo = tlo + acc8[256u * g + 2u * (k * dq + l)]; thi = thi + acc8[256u * g + 2u * (k * dq + l) + 1u]; }
        let o = 256u * c + 8u * l;
        gacc[o] = tlo.x; gacc[o + 1u] = tlo.y; gacc[o + 2u] = tlo.z; gacc[o + 3u] = tlo.w;
        gacc[o + 4u] = thi.x; gacc[o + 5u] = thi.y; gacc[o + 6u] = thi.z; gacc[o + 7u] = thi.w;
    }
    if (l == 0u) { gms[c] = vec2<f32>(select(-F32_MAX, m, nk > 0u), chunk_wsum(32u * g)); }
}
// The merge (attn_merge), after the barrier that follows every chunk_out: M the largest chunk max,
// w_c = exp(m_c - M), out = sum w_c acc_c / sum w_c sum_c; invocation i < head_dim writes dim i.
fn merge_out(i: u32, t: u32, h: u32, d_n: u32) {
    if (i >= d_n) { return; }
    var big = -F32_MAX;
    for (var c = 0u; c < NG; c = c + 1u) { big = max(big, gms[c].x); }
    var num = 0.0;
    var den = 0.0;
    for (var c = 0u; c < NG; c = c + 1u) {
        let w = exp(gms[c].x - big);
        num = num + w * gacc[256u * c + i];
        den = den + w * gms[c].y;
    }
    let ok = den > 0.0 || (bitcast<u32>(den) & 0x7fffffffu) > 0x7f800000u;
    out[(t * p.n_head + h) * d_n + i] = A(select(0.0, num / den, ok));
}

@compute @workgroup_size(512)
fn attn_short(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let g = lid.x / 128u;                        // key group
    let l = lid.x % 128u;                        // invocation in the group
    let h = wid.x;
    let t = wid.z;
    let st = step_rows(lid.x, t);
    let n_tok = st.x;
    let qp = st.y;
    let sbase = st.z;                            // the slot's first cache row
    if (t >= n_tok || h >= p.n_head) { return; }
    let j0 = key_range(qp).x + 32u * g;
    let nk = select(0u, min(32u, qp + 1u - j0), j0 <= qp);
    let sring = j0 % p.n_ctx;
    let d_n = p.head_dim;
    let dq = d_n / 8u;
    let hk = h / (p.n_head / p.n_head_kv);
    let rw = dq * p.n_head_kv;                   // a cache row in 8-half vectors
    let hc = hk * dq;
    // scores: key kk = l / 4, its 8-dim chunks qd + 4 i; values: group vg = l / dq of 128 / dq, keys
    // vg, vg + 128 / dq, .., vector dv = l % dq of each (attn_split_h's layout)
    let kk = l / 4u;
    let qd = l % 4u;
    let ngv = 128u / dq;
    let vg = l / dq;
    let dv = l % dq;
    var kr8: array<vec4<u32>, 8>;
    var vr8: array<vec4<u32>, 8>;
    if (nk > 0u) {
        let r = sring + min(kk, nk - 1u);
        let kb = (sbase + select(r, r - p.n_ctx, r >= p.n_ctx)) * rw + hc;
        for (var i = 0u; i < 8u; i = i + 1u) { if (qd + 4u * i < dq) { kr8[i] = bitcast<vec4<u32>>(kc8[kb + qd + 4u * i]); } }
        for (var i = 0u; i < 8u; i = i + 1u) {
            let key = vg + ngv * i;
            if (key < nk) { let rv = sring + key; vr8[i] = bitcast<vec4<u32>>(vc8[(sbase + select(rv, rv - p.n_ctx, rv >= p.n_ctx)) * rw + hc + dv]); }
        }
    }
    if (lid.x < d_n) { qs[lid.x] = f32(q[(t * p.n_head + h) * d_n + lid.x]) * p.scale; }
    workgroupBarrier();
    var a = 0.0;
    if (kk < nk) {
        for (var i = 0u; i < 8u; i = i + 1u) {
            let f = qd + 4u * i;
            if (f < dq) {
                let b = 8u * f;
                a = a + dot(vec4<f32>(qs[b], qs[b + 1u], qs[b + 2u], qs[b + 3u]), h8lo(kr8[i]))
                      + dot(vec4<f32>(qs[b + 4u], qs[b + 5u], qs[b + 6u], qs[b + 7u]), h8hi(kr8[i]));
            }
        }
    }
    let m = chunk_softmax(l, 128u * g, 32u * g, a, nk);     // group g: its 128 partial scores, its 32 weights
    var alo = vec4<f32>(0.0);
    var ahi = vec4<f32>(0.0);
    for (var i = 0u; i < 8u; i = i + 1u) {
        let key = vg + ngv * i;
        if (key < nk) { let e = es[32u * g + key]; alo = alo + e * h8lo(vr8[i]); ahi = ahi + e * h8hi(vr8[i]); }
    }
    acc8[256u * g + 2u * l] = alo;
    acc8[256u * g + 2u * l + 1u] = ahi;
    workgroupBarrier();
    chunk_out(l, g, g, dq, m, nk);
    workgroupBarrier();
    merge_out(lid.x, t, h, d_n);
}

// attn_short_n: the same work for a workgroup of 128 NGW invocations (the f32 cache: NGW = 2, each group
// takes chunks g and g + 2 one after the other) and either cache (ld8, lo8, hi8). It is not the f16 cache's
// kernel because this generic form made the 512-invocation f16 decode ~5% slower on the H200 (tg128,
// llama-3.2-1b 1,283 -> 1,220; docs/perf-log.md #135), so attn_short keeps its own straight-line body.
@compute @workgroup_size(128 * NGW)
fn attn_short_n(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let g = lid.x / 128u;                        // group
    let l = lid.x % 128u;                        // invocation in the group
    let h = wid.x;
    let t = wid.z;
    let st = step_rows(lid.x, t);
    let n_tok = st.x;
    let qp = st.y;
    let sbase = st.z;                            // the slot's first cache row
    if (t >= n_tok || h >= p.n_head) { return; }
    let d_n = p.head_dim;
    let dq = d_n / 8u;
    let hk = h / (p.n_head / p.n_head_kv);
    let rw = dq * p.n_head_kv;                   // a cache row in 8-dim vectors
    let hc = hk * dq;
    // scores: key kk = l / 4, its 8-dim chunks qd + 4 i; values: group vg = l / dq of 128 / dq, keys
    // vg, vg + 128 / dq, .., vector dv = l % dq of each (attn_split_h's layout)
    let kk = l / 4u;
    let qd = l % 4u;
    let ngv = 128u / dq;
    let vg = l / dq;
    let dv = l % dq;
    for (var it = 0u; it < NG / NGW; it = it + 1u) {
        let c = g + NGW * it;                    // chunk c: keys lo + 32 c ..
        let j0 = key_range(qp).x + 32u * c;
        let nk = select(0u, min(32u, qp + 1u - j0), j0 <= qp);
        let sring = j0 % p.n_ctx;
        var kr8: array<vec4<u32>, 16>;
        var vr8: array<vec4<u32>, 16>;
        if (nk > 0u) {
            let r = sring + min(kk, nk - 1u);
            let kb = (sbase + select(r, r - p.n_ctx, r >= p.n_ctx)) * rw + hc;
            for (var i = 0u; i < 8u; i = i + 1u) { if (qd + 4u * i < dq) { ld8(false, kb + qd + 4u * i, &kr8, i); } }
            for (var i = 0u; i < 8u; i = i + 1u) {
                let key = vg + ngv * i;
                if (key < nk) { let rv = sring + key; ld8(true, (sbase + select(rv, rv - p.n_ctx, rv >= p.n_ctx)) * rw + hc + dv, &vr8, i); }
            }
        }
        if (it == 0u && lid.x < d_n) { qs[lid.x] = f32(q[(t * p.n_head + h) * d_n + lid.x]) * p.scale; }
        workgroupBarrier();                      // (qs; the previous chunk's reads of acc8 and es)
        var a = 0.0;
        if (kk < nk) {
            for (var i = 0u; i < 8u; i = i + 1u) {
                let f = qd + 4u * i;
                if (f < dq) {
                    let b = 8u * f;
                    a = a + dot(vec4<f32>(qs[b], qs[b + 1u], qs[b + 2u], qs[b + 3u]), lo8(&kr8, i))
                          + dot(vec4<f32>(qs[b + 4u], qs[b + 5u], qs[b + 6u], qs[b + 7u]), hi8(&kr8, i));
                }
            }
        }
        let m = chunk_softmax(l, 128u * g, 32u * g, a, nk);     // group g: its 128 partial scores, its 32 weights
        var alo = vec4<f32>(0.0);
        var ahi = vec4<f32>(0.0);
        for (var i = 0u; i < 8u; i = i + 1u) {
            let key = vg + ngv * i;
            if (key < nk) { let e = es[32u * g + key]; alo = alo + e * lo8(&vr8, i); ahi = ahi + e * hi8(&vr8, i); }
        }
        acc8[256u * g + 2u * l] = alo;
        acc8[256u * g + 2u * l + 1u] = ahi;
        workgroupBarrier();
        chunk_out(l, g, c, dq, m, nk);
    }
    workgroupBarrier();
    merge_out(lid.x, t, h, d_n);
}
