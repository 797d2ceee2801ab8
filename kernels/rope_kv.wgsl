// rope_kv.wgsl — what a layer does between the Q/K/V projections and attention, in one dispatch:
// RoPE of q (head_dim, n_head, T) into qo, RoPE of k (head_dim, n_head_kv, T) straight into the
// key cache (kv_dim, n_ctx, n_seq) at row t's slot and position (the rows table: common/rows.wgsl),
// and v into the same row of the value cache. The same
// rotation as rope.wgsl (NORM pairs (2i, 2i+1), NEOX (i, i + n_rot/2), theta_i = p * freq_scale
// * base^(-2i/n_rot) / ff[i], dims >= n_rot pass through) and the same store as kv_store.wgsl
// (rows t >= T are left alone; position p goes to cache row p % n_ctx of its slot: a ring where a
// sliding-window layer's cache holds fewer rows than the context). A: activations, C: the caches.
// rope_kv: with bias != 0 (Qwen2), the projections' biases bq, bk, bv are added first, rounded to
// A as the separate add_bias kernel (bias.wgsl) would. One invocation per q pair, then per k pair,
// then per v element.
// rope_kv_norm (Qwen3, Gemma 3): the per-head RMSNorm of q and k first, from f32 q, k and v (the
// projections' f32 outputs, one product for all three): each head x (head_dim values) becomes
// x / sqrt(mean(x^2) + eps) * w, w the head-norm weight qn or kn (head_dim), the sum of squares in
// f32 as rmsnorm.wgsl's (with its pre-scaled pass when the squares could overflow); the normalized
// values go on to RoPE unrounded; no biases. One workgroup of 64 per (token, head): q heads, then
// k heads, whose workgroup also stores that head's v (head_dim <= 256). It replaces q_norm, k_norm (rmsnorm.wgsl)
// and rope_kv: three dispatches and a barrier per layer.
//! variant rope_kv_f32_f32c rope_kv
//! variant rope_kv_f32_f16c rope_kv alias:C=f16 CMAX=65504
//! variant rope_kv_f16_f32c rope_kv alias:A=f16 QMAX=65504
//! variant rope_kv_f16_f16c rope_kv alias:A=f16 alias:C=f16 QMAX=65504 CMAX=65504
//! variant rope_kv_norm_f32_f32c rope_kv_norm
//! variant rope_kv_norm_f32_f16c rope_kv_norm alias:C=f16 CMAX=65504
//! variant rope_kv_norm_f16_f32c rope_kv_norm alias:A=f16 QMAX=65504
//! variant rope_kv_norm_f16_f16c rope_kv_norm alias:A=f16 alias:C=f16 QMAX=65504 CMAX=65504
alias A = f32;
alias C = f32;
override QMAX: f32 = 3.4028234e38;   // q outputs are clamped to +-QMAX, cache values to +-CMAX
override CMAX: f32 = 3.4028234e38;   // (65504 in f16: a too-large value saturates instead of becoming inf)
struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_rot: u32, log2_base: f32, freq_scale: f32, neox: u32, n_ctx: u32, bias: u32, eps: f32,   // eps: rope_kv_norm
                sq: u32, sk: u32, sv: u32 }   // elements from a row of q / k / v to the next (their widths when contiguous)
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<A>;             // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> k: array<A>;             // (head_dim, n_head_kv, T)
@group(0) @binding(2) var<storage, read> v: array<A>;             // (head_dim * n_head_kv, T)
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // the rows table
@group(0) @binding(4) var<storage, read> ff: array<f32>;          // (n_rot / 2) frequency factors
@group(0) @binding(5) var<storage, read_write> qo: array<A>;      // (head_dim, n_head, T)
@group(0) @binding(6) var<storage, read_write> kc: array<C>;      // (head_dim * n_head_kv, n_ctx, n_seq)
@group(0) @binding(7) var<storage, read_write> vc: array<C>;      // (head_dim * n_head_kv, n_ctx, n_seq)
@group(0) @binding(8) var<storage, read> bq: array<f32>;          // (head_dim * n_head) q bias, when bias != 0
@group(0) @binding(9) var<storage, read> bk: array<f32>;          // (head_dim * n_head_kv)
@group(0) @binding(10) var<storage, read> bv: array<f32>;         // (head_dim * n_head_kv)
@group(0) @binding(0) var<storage, read> qf: array<f32>;          // rope_kv_norm: q in f32 (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kf: array<f32>;          // rope_kv_norm: k in f32 (head_dim, n_head_kv, T)
@group(0) @binding(2) var<storage, read> vf: array<f32>;          // rope_kv_norm: v in f32 (head_dim * n_head_kv, T)
@group(0) @binding(8) var<storage, read> qn: array<f32>;          // rope_kv_norm: (head_dim) q head-norm weight
@group(0) @binding(9) var<storage, read> kn: array<f32>;          // rope_kv_norm: (head_dim) k head-norm weight

// x + b rounded to the activation dtype (add_bias), or x when there is no bias
fn qb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bq[i], QMAX))); }
fn kb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bk[i], QMAX))); }
fn vb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bv[i], QMAX))); }

//! include common/clampn.wgsl
//! include common/rows.wgsl

// Where row t of q, k or v starts past where it would if the rows were contiguous (a batched step's
// q|k|v rows lie side by side in one buffer: ops.h op_rope_kv's sqk, sv).
fn q_skip(t: u32) -> u32 { return t * (p.sq - p.head_dim * p.n_head); }
fn k_skip(t: u32) -> u32 { return t * (p.sk - p.head_dim * p.n_head_kv); }
fn v_skip(t: u32) -> u32 { return t * (p.sv - p.head_dim * p.n_head_kv); }

// Element offsets (a, b) of pair i of a head starting at rb, and the rotated values of (xa, xb)
// at position qp (identity past n_rot); the first element of cache row (slot, position) of a token.
fn pair_at(rb: u32, i: u32) -> vec2<u32> {
    if (2u * i >= p.n_rot) { return vec2<u32>(rb + 2u * i, rb + 2u * i + 1u); }
    if (p.neox != 0u) { return vec2<u32>(rb + i, rb + i + p.n_rot / 2u); }
    return vec2<u32>(rb + 2u * i, rb + 2u * i + 1u);
}
fn cache_base(t: u32) -> u32 { return (row_slot(t) * p.n_ctx + row_pos(t) % p.n_ctx) * p.head_dim * p.n_head_kv; }
fn rotate(xa: f32, xb: f32, i: u32, qp: u32) -> vec2<f32> { return rotate_ff(xa, xb, i, qp, ff_at(i)); }
fn ff_at(i: u32) -> f32 { if (2u * i >= p.n_rot) { return 1.0; } return ff[i]; }   // pair i's frequency factor
fn rotate_ff(xa: f32, xb: f32, i: u32, qp: u32, f: f32) -> vec2<f32> {
    if (2u * i >= p.n_rot) { return vec2<f32>(xa, xb); }
    let inv_freq = exp2(-f32(2u * i) / f32(p.n_rot) * p.log2_base);
    let theta = f32(qp) * p.freq_scale * inv_freq / f;
    let c = cos(theta);
    let s = sin(theta);
    return vec2<f32>(xa * c - xb * s, xa * s + xb * c);
}

@compute @workgroup_size(256)
fn rope_kv(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let half_d = p.head_dim / 2u;
    let nq = half_d * p.n_head * p.t_cap;
    let nk = half_d * p.n_head_kv * p.t_cap;
    let kvd = p.head_dim * p.n_head_kv;
    var idx = g.x + g.y * nw.x * 256u;
    if (idx < nq) {                               // q pair
        let i = idx % half_d;
        let row = idx / half_d;                   // t * n_head + head
        let t = row / p.n_head;
        if (t >= rows_n()) { return; }
        let ab = pair_at(row * p.head_dim, i);
        let qd = p.head_dim * p.n_head;
        let qs = q_skip(t);
        let r = rotate(qb(f32(q[qs + ab.x]), ab.x % qd), qb(f32(q[qs + ab.y]), ab.y % qd), i, row_pos(t));
        qo[ab.x] = A(clampn(r.x, QMAX));
        qo[ab.y] = A(clampn(r.y, QMAX));
        return;
    }
    idx = idx - nq;
    if (idx < nk) {                               // k pair -> its key cache row
        let i = idx % half_d;
        let row = idx / half_d;                   // t * n_head_kv + head
        let t = row / p.n_head_kv;
        if (t >= rows_n()) { return; }
        let ab = pair_at(row * p.head_dim, i);
        let ks = k_skip(t);
        let r = rotate(kb(f32(k[ks + ab.x]), ab.x % kvd), kb(f32(k[ks + ab.y]), ab.y % kvd), i, row_pos(t));
        let cb = cache_base(t) - t * kvd;          // k's row t (offset t * kvd) goes to its cache row
        kc[cb + ab.x] = C(clampn(r.x, CMAX));
        kc[cb + ab.y] = C(clampn(r.y, CMAX));
        return;
    }
    idx = idx - nk;
    if (idx < kvd * p.t_cap) {                    // v element -> the same value cache row
        let t = idx / kvd;
        if (t >= rows_n()) { return; }
        vc[cache_base(t) + idx % kvd] = C(clampn(vb(f32(v[v_skip(t) + idx]), idx % kvd), CMAX));
    }
}

// ---- rope_kv_norm ----
// Invocation l holds pairs l + NW j of its head (j < NP: head_dim <= 2 NW NP = 256) in registers:
// every input (both values of each pair, their norm weights and frequency factors, the rows table's
// entries, a k head's v values) is loaded up front, so the workgroup waits for memory once; the
// pairs cover the head once (the dims past n_rot pair as (2i, 2i + 1)), so their squares sum the
// head. Rows of tokens past the rows table compute and store nothing (no early return: the
// reductions' barriers stay in uniform control flow).
const NW = 64u;                                   // invocations per (token, head) workgroup
const NP = 2u;                                    // pairs per invocation
var<workgroup> red: array<vec2<f32>, NW>;
var<workgroup> red8: array<vec2<f32>, 8>;

fn ms_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(max(a.x, b.x), a.y + b.y); }
// (max, sum) of the invocations' (m, s), the same for every invocation: 8 invocations add 8 each,
// then every invocation adds those 8
fn reduce_ms(l: u32, v: vec2<f32>) -> vec2<f32> {
    red[l] = v;
    workgroupBarrier();
    if (l < 8u) { var a = red[8u * l]; for (var t = 1u; t < 8u; t = t + 1u) { a = ms_add(a, red[8u * l + t]); } red8[l] = a; }
    let all = workgroupUniformLoad(&red8);
    var r = all[0];
    for (var t = 1u; t < 8u; t = t + 1u) { r = ms_add(r, all[t]); }
    return r;
}

// element i of the head input (k's when isk, else q's; i as in contiguous rows, row t), and of its norm weight
fn xin(isk: bool, i: u32, t: u32) -> f32 { if (isk) { return kf[k_skip(t) + i]; } return qf[q_skip(t) + i]; }
fn wnorm(isk: bool, d: u32) -> f32 { if (isk) { return kn[d]; } return qn[d]; }

// 1 / rms of the head from this invocation's pair values xs (zero past the head): max|x| and the
// sum of squares reduced together; a second reduction with the head pre-scaled by 1/max|x| only
// when the squares could overflow (rmsnorm.wgsl's rule)
fn head_inv_rms(l: u32, xs: array<vec2<f32>, NP>) -> f32 {
    var ms = vec2<f32>(0.0, 0.0);
    for (var j = 0u; j < NP; j = j + 1u) { let a = abs(xs[j]); ms = vec2<f32>(max(ms.x, max(a.x, a.y)), ms.y + dot(xs[j], xs[j])); }
    let r = reduce_ms(l, ms);
    if (r.x < 1e15) { return 1.0 / sqrt(r.y / f32(p.head_dim) + p.eps); }
    let sc = 1.0 / r.x;
    var s2 = 0.0;
    for (var j = 0u; j < NP; j = j + 1u) { let u = xs[j] * sc; s2 = s2 + dot(u, u); }
    return sc / sqrt(reduce_ms(l, vec2<f32>(0.0, s2)).y / f32(p.head_dim) + p.eps * sc * sc);
}

@compute @workgroup_size(64)
fn rope_kv_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                @builtin(local_invocation_id) lid: vec3<u32>) {
    let l = lid.x;
    let nqr = p.n_head * p.t_cap;
    let row = wid.x + wid.y * nw.x;                // q rows t * n_head + h, then k rows t * n_head_kv + h
    if (row >= nqr + p.n_head_kv * p.t_cap) { return; }
    let isk = row >= nqr;
    let r = select(row, row - nqr, isk);
    let t = r / select(p.n_head, p.n_head_kv, isk);
    let rb = r * p.head_dim;                       // the head's first element in q or k (and v)
    let half_d = p.head_dim / 2u;
    let live = t < rows_n();
    let qp = row_pos(t);
    let cb = cache_base(t) - t * p.head_dim * p.n_head_kv;   // k's row t (offset t * kvd) goes to its cache row
    var xs: array<vec2<f32>, NP>; var ws: array<vec2<f32>, NP>; var fs: array<f32, NP>; var vs: array<f32, 2u * NP>;
    for (var j = 0u; j < NP; j = j + 1u) {
        let i = l + NW * j;
        xs[j] = vec2<f32>(0.0); ws[j] = vec2<f32>(0.0); fs[j] = 1.0;
        if (i < half_d) {
            fs[j] = ff_at(i);
            let ab = pair_at(rb, i);
            xs[j] = vec2<f32>(xin(isk, ab.x, t), xin(isk, ab.y, t));
            ws[j] = vec2<f32>(wnorm(isk, ab.x - rb), wnorm(isk, ab.y - rb));
        }
    }
    for (var j = 0u; j < 2u * NP; j = j + 1u) {
        let d = l + NW * j;
        vs[j] = 0.0;
        if (isk && d < p.head_dim) { vs[j] = vf[v_skip(t) + rb + d]; }
    }
    let inv = head_inv_rms(l, xs);
    if (!live) { return; }
    for (var j = 0u; j < NP; j = j + 1u) {
        let i = l + NW * j;
        if (i >= half_d) { break; }
        let ab = pair_at(rb, i);
        let o = rotate_ff(xs[j].x * inv * ws[j].x, xs[j].y * inv * ws[j].y, i, qp, fs[j]);
        if (isk) {
            kc[cb + ab.x] = C(clampn(o.x, CMAX));
            kc[cb + ab.y] = C(clampn(o.y, CMAX));
        } else {
            qo[ab.x] = A(clampn(o.x, QMAX));
            qo[ab.y] = A(clampn(o.y, QMAX));
        }
    }
    for (var j = 0u; j < 2u * NP; j = j + 1u) {
        let d = l + NW * j;
        if (isk && d < p.head_dim) { vc[cb + rb + d] = C(clampn(vs[j], CMAX)); }
    }
}
