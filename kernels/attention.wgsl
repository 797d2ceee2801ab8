// attention.wgsl — causal multi-head attention over the KV cache, one workgroup per
// (head, query). Keys j of query t (position qp = pos[0] + t) run over lo..qp with
// lo = qp - window + 1 when window > 0 (else 0), so masked keys are never touched and
// no -inf enters the softmax. Three passes inside the workgroup, with the f32 `scores`
// scratch (n_ctx, n_head, T) in global memory (shared memory stays 2 KiB at any context):
//   1. s_j = (q*scale) . k_j, optional softcap*tanh(s/softcap) (argument clamped), running max
//   2. e_j = exp(s_j - max), sum (every e_j <= 1 and the max term is 1, so sum >= 1)
//   3. out[d] = sum_j e_j v_j[d] / sum, keys split over 256/head_dim invocation groups.
// GQA: head h reads KV head h / (n_head / n_head_kv). head_dim <= 256. f32 accumulation.
// A is the activation dtype of q and out, C the cache dtype.
//! variant attention_f32_f32c attention
//! variant attention_f32_f16c attention alias:C=f16
//! variant attention_f16_f32c attention alias:A=f16
//! variant attention_f16_f16c attention alias:A=f16 alias:C=f16
alias A = f32;
alias C = f32;
struct Params { head_dim: u32, n_head: u32, n_head_kv: u32, t_cap: u32, n_ctx: u32, window: u32, scale: f32, softcap: f32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> q: array<A>;             // (head_dim, n_head, T)
@group(0) @binding(1) var<storage, read> kc: array<C>;            // (head_dim*n_head_kv, n_ctx)
@group(0) @binding(2) var<storage, read> vc: array<C>;            // (head_dim*n_head_kv, n_ctx)
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // [p0, T]
@group(0) @binding(4) var<storage, read_write> scores: array<f32>; // (n_ctx, n_head, T_max)
@group(0) @binding(5) var<storage, read_write> out: array<A>;     // (head_dim, n_head, T)
var<workgroup> qs: array<f32, 256>;
var<workgroup> part: array<f32, 256>;
var<workgroup> posw: array<u32, 2>;

const F32_MAX = 3.4028234e38;

// tanh with small relative error everywhere: an odd series below |z| = 0.3 (the builtin
// loses all relative precision for tiny arguments), (1 - e)/(1 + e) with e = exp(-2|z|) above
// (never overflows). Exactly +-1 from |z| = 9.1 on in f32, so clamping callers lose nothing.
// clamp to +-hi that keeps a NaN (clamp(NaN) is implementation-defined; llvmpipe returns -hi), so a
// fault stays visible to --check-nan and the final logits check instead of turning into a huge finite value
fn clampn(v: f32, hi: f32) -> f32 { return select(clamp(v, -hi, hi), v, (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u); }

fn tanh_acc(z: f32) -> f32 {
    let a = abs(z);
    if (a < 0.3) {
        let z2 = z * z;
        return z * (1.0 + z2 * (-1.0 / 3.0 + z2 * (2.0 / 15.0 + z2 * (-17.0 / 315.0 + z2 * (62.0 / 2835.0 - z2 * (1382.0 / 155925.0))))));
    }
    let e = exp(-2.0 * a);
    return sign(z) * ((1.0 - e) / (1.0 + e));
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
    if (l < 2u) { posw[l] = pos[l]; }
    let n_tok = workgroupUniformLoad(&posw[1]);     // uniform: the early return below is legal
    let p0 = workgroupUniformLoad(&posw[0]);
    if (t >= n_tok || t >= p.t_cap || h >= p.n_head) { return; }
    let d_n = p.head_dim;
    let kvd = d_n * p.n_head_kv;
    let hk = h / (p.n_head / p.n_head_kv);
    let qp = p0 + t;
    let hi = min(qp, p.n_ctx - 1u);
    var lo = 0u;
    if (p.window > 0u && qp + 1u > p.window) { lo = qp + 1u - p.window; }
    let qb = (t * p.n_head + h) * d_n;
    let sb = (t * p.n_head + h) * p.n_ctx;
    if (l < d_n) { qs[l] = f32(q[qb + l]) * p.scale; }
    workgroupBarrier();

    // 1. scores
    var m = -F32_MAX;
    for (var j = lo + l; j <= hi; j = j + 256u) {
        let kb = j * kvd + hk * d_n;
        var s = 0.0;
        for (var d = 0u; d < d_n; d = d + 1u) { s = s + qs[d] * f32(kc[kb + d]); }
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
        for (var j = lo + g; j <= hi; j = j + groups) { acc = acc + scores[sb + j] * f32(vc[j * kvd + vb]); }
    }
    part[l] = acc;
    workgroupBarrier();
    if (l < d_n) {
        var s = 0.0;
        for (var k = 0u; k < groups; k = k + 1u) { s = s + part[k * d_n + l]; }
        out[qb + l] = A(select(0.0, s / sum, sum > 0.0 || (bitcast<u32>(sum) & 0x7fffffffu) > 0x7f800000u));   // a NaN stays NaN
    }
}
