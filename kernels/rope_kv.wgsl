// rope_kv.wgsl — what a layer does between the Q/K/V projections and attention, in one dispatch:
// RoPE of q (head_dim, n_head, T) into qo, RoPE of k (head_dim, n_head_kv, T) straight into
// rows pos[0] + t of the key cache, and v into the same rows of the value cache. The same
// rotation as rope.wgsl (NORM pairs (2i, 2i+1), NEOX (i, i + n_rot/2), theta_i = p * freq_scale
// * base^(-2i/n_rot) / ff[i], dims >= n_rot pass through) and the same store as kv_store.wgsl
// (rows t >= pos[1] and rows past n_ctx are left alone). A: activations, C: the caches.
// With bias != 0 (Qwen2), the projections' biases bq, bk, bv are added first, rounded to A as
// the separate add_bias kernel (bias.wgsl) would.
// One invocation per q pair, then per k pair, then per v element.
//! variant rope_kv_f32_f32c rope_kv
//! variant rope_kv_f32_f16c rope_kv alias:C=f16 CMAX=65504
//! variant rope_kv_f16_f32c rope_kv alias:A=f16 QMAX=65504
//! variant rope_kv_f16_f16c rope_kv alias:A=f16 alias:C=f16 QMAX=65504 CMAX=65504
alias A = f32;
alias C = f32;
override QMAX: f32 = 3.4028234e38;   // q outputs are clamped to +-QMAX, cache values to +-CMAX
override CMAX: f32 = 3.4028234e38;   // (65504 in f16: a too-large value saturates instead of becoming inf)
struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_rot: u32, log2_base: f32, freq_scale: f32, neox: u32, n_ctx: u32, bias: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<A>;             // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> k: array<A>;             // (head_dim, n_head_kv, T)
@group(0) @binding(2) var<storage, read> v: array<A>;             // (head_dim * n_head_kv, T)
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // [p0, T]
@group(0) @binding(4) var<storage, read> ff: array<f32>;          // (n_rot / 2) frequency factors
@group(0) @binding(5) var<storage, read_write> qo: array<A>;      // (head_dim, n_head, T)
@group(0) @binding(6) var<storage, read_write> kc: array<C>;      // (head_dim * n_head_kv, n_ctx)
@group(0) @binding(7) var<storage, read_write> vc: array<C>;      // (head_dim * n_head_kv, n_ctx)
@group(0) @binding(8) var<storage, read> bq: array<f32>;          // (head_dim * n_head) q bias, when bias != 0
@group(0) @binding(9) var<storage, read> bk: array<f32>;          // (head_dim * n_head_kv)
@group(0) @binding(10) var<storage, read> bv: array<f32>;         // (head_dim * n_head_kv)

// x + b rounded to the activation dtype (add_bias), or x when there is no bias
fn qb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bq[i], QMAX))); }
fn kb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bk[i], QMAX))); }
fn vb(x: f32, i: u32) -> f32 { if (p.bias == 0u) { return x; } return f32(A(clampn(x + bv[i], QMAX))); }

//! include common/clampn.wgsl

// Element offsets (a, b) of pair i of a head starting at rb, and the rotated values of (xa, xb)
// for token t (identity past n_rot).
fn pair_at(rb: u32, i: u32) -> vec2<u32> {
    if (2u * i >= p.n_rot) { return vec2<u32>(rb + 2u * i, rb + 2u * i + 1u); }
    if (p.neox != 0u) { return vec2<u32>(rb + i, rb + i + p.n_rot / 2u); }
    return vec2<u32>(rb + 2u * i, rb + 2u * i + 1u);
}
fn rotate(xa: f32, xb: f32, i: u32, t: u32, p0: u32) -> vec2<f32> {
    if (2u * i >= p.n_rot) { return vec2<f32>(xa, xb); }
    let inv_freq = exp2(-f32(2u * i) / f32(p.n_rot) * p.log2_base);
    let theta = f32(p0 + t) * p.freq_scale * inv_freq / ff[i];
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
    let p0 = pos[0];
    if (idx < nq) {                               // q pair
        let i = idx % half_d;
        let row = idx / half_d;                   // t * n_head + head
        let t = row / p.n_head;
        if (t >= pos[1]) { return; }
        let ab = pair_at(row * p.head_dim, i);
        let qd = p.head_dim * p.n_head;
        let r = rotate(qb(f32(q[ab.x]), ab.x % qd), qb(f32(q[ab.y]), ab.y % qd), i, t, p0);
        qo[ab.x] = A(clampn(r.x, QMAX));
        qo[ab.y] = A(clampn(r.y, QMAX));
        return;
    }
    idx = idx - nq;
    if (idx < nk) {                               // k pair -> key cache row p0 + t
        let i = idx % half_d;
        let row = idx / half_d;                   // t * n_head_kv + head
        let t = row / p.n_head_kv;
        if (t >= pos[1] || p0 + t >= p.n_ctx) { return; }
        let ab = pair_at(row * p.head_dim, i);
        let r = rotate(kb(f32(k[ab.x]), ab.x % kvd), kb(f32(k[ab.y]), ab.y % kvd), i, t, p0);
        kc[p0 * kvd + ab.x] = C(clampn(r.x, CMAX));   // k's row t (offset t * kvd) goes to cache row p0 + t
        kc[p0 * kvd + ab.y] = C(clampn(r.y, CMAX));
        return;
    }
    idx = idx - nk;
    if (idx < kvd * p.t_cap) {                    // v element -> value cache row p0 + t
        let t = idx / kvd;
        if (t >= pos[1] || p0 + t >= p.n_ctx) { return; }
        vc[(p0 + t) * kvd + idx % kvd] = C(clampn(vb(f32(v[idx]), idx % kvd), CMAX));
    }
}
