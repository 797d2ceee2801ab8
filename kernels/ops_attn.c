/* ops_attn.c — norms, bias, rope, KV store, attention, GLU, softcap, argmax and top-k
   (see ops.h for the contracts; kernels in rmsnorm, bias, rope, kv_store, attention,
   glu, softcap and argmax .wgsl). Ops whose position depends on the batch read it from
   the u32 `pos` tensor (the rows table, ops.h) inside the kernel; every dispatch size here comes from
   tensor shapes only, so a recorded decode command buffer stays valid for any p0.

   API (ops.h):
     op_rmsnorm_add(vk, o, w, x, eps)              x += rmsnorm(o) * w (Gemma's post-norms)
     op_rmsnorm_add_norm(vk, o, w, x, w2, h, eps)  that, then h = rmsnorm(x) * w2 in one dispatch (the row in
                                                   registers as 16-byte vectors: op_rmsnorm_add_norm_fits)
     op_add_bias / op_rope / op_kv_store           the unfused steps (debug tools, and where a fused form does not fit)
     op_rope_kv(vk, q, k, v, pos, ff, qo, kc, vc, ..., bq, bk, bv)   biases, RoPE of q and k, both cache stores
     op_rope_kv_norm(vk, q, k, v, pos, ff, qo, kc, vc, qn, kn, eps, ...)   per-head q/k RMSNorm, then the same
     op_attention(...)                             one workgroup per (head, query), scores in a global scratch
     op_attention_split(...)                       decode over at most 128 keys: attn_short (512 invocations) or
                                                   attn_short_n (256), one workgroup per (head, query)
                                                   (op_attention_short_fits); else
                                                   a workgroup per (head, 32 keys, query) + attn_merge per
                                                   (head, query); part holds Q queries' partial rows of
                                                   op_attn_part_row = head_dim + 4 floats (m, sum, 0, 0, acc):
                                                   a batch of more goes in groups, a dispatch pair each
     op_attention_flash(...)                       batches: 16 queries of a head per workgroup (attn_flash_w
                                                   where it holds more and fits; attn_cm on cooperative
                                                   matrices where op_attention_cm_fits; attn_tile, 16-64
                                                   queries, where op_attention_tile_fits), one dispatch, no scratch
     op_attention_split_fits / op_attention_flash_fits / op_attention_cm_fits / op_attn_chunks   what the device and shape allow
     op_glu, op_softcap, op_argmax, op_topk        one dispatch each
     op_argmax_check(vk, logits, ids, part)        [id, NaN/Inf flag] per row; with part, the scan split over
                                                   op_argmax_slices (one per 1,024 logits, 2..128) and merged
   Which attention the forward pass runs is models/transformer.c's choice (kernels/attention.wgsl
   lists the entries and when each runs). */

/* Grid for `n` invocations in workgroups of 256 along x, spilling into y past 65535 groups
   (kernels index them as g.x + g.y * nw.x * 256). */
static void flat_grid(const char *op, const Tensor *t, u64 n, u32 *gx, u32 *gy) {
    need(n <= 0xffffffffu, op, t, "more than 2^32 elements");
    u64 groups = (n + 255) / 256;
    *gx = (u32)MIN(MAX(groups, 1), 65535); *gy = (u32)((groups + 65534) / 65535);
    if (*gy == 0) *gy = 1;
}


/* ---- norms and bias ------------------------------------------------------------ */
#define EDGE_RMSNORM_ADD_NORM_MAX 4096u   /* rmsnorm.wgsl rmsnorm_add_norm: 16 elements per invocation in registers */
void op_rmsnorm_add(Vk *vk, const Tensor *o, const Tensor *w, const Tensor *x, f32 eps) { op_norm_rows(vk, OP_RMSNORM_ADD, "rmsnorm_add", o, w, x, eps); }

bool op_rmsnorm_add_norm_fits(const Tensor *o) { return o->ne[0] <= EDGE_RMSNORM_ADD_NORM_MAX && o->ne[0] % 4 == 0; }

void op_rmsnorm_add_norm(Vk *vk, const Tensor *o, const Tensor *w, const Tensor *x, const Tensor *w2, const Tensor *h, f32 eps) {
    const char *n_ = "rmsnorm_add_norm";
    u64 n = o->ne[0], rows = o->nelem / n;
    need(w->nelem == n && w2->nelem == n && w2->dtype == w->dtype, n_, w, "weight lengths differ from the row length");
    need(x->nelem == o->nelem && x->dtype == DT_F32, n_, x, "the residual must be f32 of the input's size");
    need(h->nelem == o->nelem, n_, h, "output size differs from the input");
    need(n <= EDGE_RMSNORM_ADD_NORM_MAX && n % 4 == 0, n_, o, "rows must be a multiple of 4 elements, at most 4096 (rmsnorm.wgsl: 16-byte vectors, RN4 x 256; see op_rmsnorm_add_norm_fits)");
    VkPipe *p = op_pipe(vk, OP_RMSNORM_ADD_NORM, PH_ANY, w->dtype, o->dtype, h->dtype);
    struct { u32 n, rows; f32 eps; } push = { (u32)n, (u32)rows, eps };
    const Tensor *ts[5] = { o, w, x, w2, h };
    u32 gx, gy; rows_grid(rows, &gx, &gy);
    vk_dispatch(vk, p, ts, 5, &push, sizeof push, gx, gy, 1);
}

void op_add_bias(Vk *vk, const Tensor *b, const Tensor *y) {
    u64 n = b->nelem;
    need(n > 0 && y->ne[0] == n && y->nelem % n == 0, "add_bias", y, "rows differ from the bias length");
    VkPipe *p = op_pipe(vk, OP_ADD_BIAS, PH_ANY, b->dtype, y->dtype, y->dtype);
    struct { u32 n, total; } push = { (u32)n, (u32)y->nelem };
    const Tensor *ts[2] = { b, y };
    u32 gx, gy; flat_grid("add_bias", y, y->nelem, &gx, &gy);
    vk_dispatch(vk, p, ts, 2, &push, sizeof push, gx, gy, 1);
}

/* ---- rope and the KV cache ----------------------------------------------------- */
void op_rope(Vk *vk, const Tensor *x, const Tensor *pos, const Tensor *ff, const Tensor *y, u32 n_rot, f32 base, f32 freq_scale, bool neox) {
    u64 hd = x->ne[0], nh = x->ne[1], T = x->nelem / (hd * nh);
    op_rows_need("rope", pos, T);
    need(hd % 2 == 0 && n_rot % 2 == 0 && n_rot > 0 && n_rot <= hd, "rope", x, "head_dim and n_rot must be even, 0 < n_rot <= head_dim");
    need(y->nelem == x->nelem && y->dtype == x->dtype, "rope", y, "output differs from the input in size or dtype");
    need(base > 0, "rope", x, "frequency base must be positive");
    need(ff->dtype == DT_F32 && ff->nelem == n_rot / 2, "rope", ff, "frequency factors must be f32 (n_rot / 2)");
    VkPipe *p = op_pipe(vk, OP_ROPE, PH_ANY, DT_F32, x->dtype, y->dtype);
    struct { u32 head_dim, n_heads, t_cap, n_rot; f32 log2_base, freq_scale; u32 neox; } push =
        { (u32)hd, (u32)nh, (u32)T, n_rot, (f32)log2((f64)base), freq_scale, neox ? 1u : 0u };
    const Tensor *ts[4] = { x, pos, y, ff };
    u32 gx, gy; flat_grid("rope", x, x->nelem / 2, &gx, &gy);
    vk_dispatch(vk, p, ts, 4, &push, sizeof push, gx, gy, 1);
}

void op_kv_store(Vk *vk, const Tensor *k, const Tensor *pos, const Tensor *cache) {
    u64 kvd = k->ne[0], T = k->nelem / kvd;
    op_rows_need("kv_store", pos, T);
    need(kvd && cache->ne[0] == op_kv_width(cache->dtype, kvd), "kv_store", cache, "cache row length differs from k's (op_kv_width)");
    VkPipe *p = op_pipe(vk, OP_KV_STORE, PH_ANY, cache->dtype, k->dtype, cache->dtype);
    struct { u32 kv_dim, t_cap, n_ctx; } push = { (u32)kvd, (u32)T, (u32)cache->ne[1] };
    const Tensor *ts[3] = { k, pos, cache };
    u64 n = cache->dtype == DT_Q8_0 ? cache->ne[0] / 64 * T : k->nelem;   /* q8_0: one invocation per two blocks */
    u32 gx, gy; flat_grid("kv_store", k, n, &gx, &gy);
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, 1);
}

/* rope_kv.wgsl's push constants (its Params), both entries */
typedef struct RopeKvPush { u32 head_dim, n_head, n_head_kv, t_cap, n_rot; f32 log2_base, freq_scale; u32 neox, n_ctx, bias; f32 eps; u32 sq, sk, sv; } RopeKvPush;

/* The shape checks rope_kv and rope_kv_norm share: q (head_dim, n_head, T), k and v (head_dim,
   n_head_kv, T), qo like q, caches (head_dim * n_head_kv, n_ctx) of one dtype; the push constants. */
static RopeKvPush rope_kv_shapes(const char *n, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *pos, const Tensor *ff,
                                 const Tensor *qo, const Tensor *kc, const Tensor *vc, u32 n_rot, f32 base, f32 freq_scale, bool neox,
                                 u32 sqk, u32 sv) {
    u64 hd = q->ne[0], nh = q->ne[1], T = q->nelem / (hd * nh), nkv = k->ne[1], kvd = hd * nkv;
    op_rows_need(n, pos, T);
    need(hd % 2 == 0 && n_rot % 2 == 0 && n_rot > 0 && n_rot <= hd, n, q, "head_dim and n_rot must be even, 0 < n_rot <= head_dim");
    need(k->ne[0] == hd && k->nelem == kvd * T && v->nelem == k->nelem, n, k, "k and v must be (head_dim, n_head_kv, T)");
    /* rows of q, k (and v) lying in a wider buffer (a batched step's q|k|v rows): the binding must reach the last row */
    u64 eq = dtype_bytes(q->dtype, sqk ? (T - 1) * sqk + hd * nh : q->nelem), ek = dtype_bytes(k->dtype, sqk ? (T - 1) * sqk + kvd : k->nelem),
        ev = dtype_bytes(v->dtype, sv ? (T - 1) * sv + kvd : v->nelem);
    need((!sqk || sqk >= hd * nh) && (!sv || sv >= kvd) && q->nbytes >= eq && k->nbytes >= ek && v->nbytes >= ev, n, q,
         "strided q/k/v rows must not overlap and the bindings must reach the last row");
    need(qo->nelem == q->nelem, n, qo, "output differs from q in size");
    need(kc->ne[0] == kvd && vc->ne[0] == kvd && vc->nelem == kc->nelem && vc->dtype == kc->dtype, n, kc,
         "caches must both be (head_dim * n_head_kv, n_ctx, n_seq) of one dtype");
    need(base > 0, n, q, "frequency base must be positive");
    need(ff->dtype == DT_F32 && ff->nelem == n_rot / 2, n, ff, "frequency factors must be f32 (n_rot / 2)");
    return (RopeKvPush){ (u32)hd, (u32)nh, (u32)nkv, (u32)T, n_rot, (f32)log2((f64)base), freq_scale, neox ? 1u : 0u, (u32)kc->ne[1], 0, 0,
                         sqk ? sqk : (u32)(hd * nh), sqk ? sqk : (u32)kvd, sv ? sv : (u32)kvd };
}

void op_rope_kv(Vk *vk, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *pos, const Tensor *ff,
                const Tensor *qo, const Tensor *kc, const Tensor *vc, u32 n_rot, f32 base, f32 freq_scale, bool neox,
                const Tensor *bq, const Tensor *bk, const Tensor *bv, u32 sqk, u32 sv) {
    const char *n = "rope_kv";
    RopeKvPush push = rope_kv_shapes(n, q, k, v, pos, ff, qo, kc, vc, n_rot, base, freq_scale, neox, sqk, sv);
    u64 hd = push.head_dim, kvd = hd * push.n_head_kv;
    need(k->dtype == q->dtype && v->dtype == q->dtype && qo->dtype == q->dtype, n, k, "q, k, v and the output must share one dtype");
    bool bias = bq != 0;
    need(!bias || (bk && bv && bq->dtype == DT_F32 && bk->dtype == DT_F32 && bv->dtype == DT_F32 && bq->nelem == hd * push.n_head &&
                   bk->nelem == kvd && bv->nelem == kvd), n, bias ? bq : q, "biases must all be f32 (head_dim * heads)");
    push.bias = bias;
    VkPipe *p = op_pipe(vk, OP_ROPE_KV, PH_ANY, kc->dtype, q->dtype, kc->dtype);
    /* without biases their bindings hold ff (never read) */
    const Tensor *ts[11] = { q, k, v, pos, ff, qo, kc, vc, bias ? bq : ff, bias ? bk : ff, bias ? bv : ff };
    u32 gx, gy; flat_grid(n, q, q->nelem / 2 + k->nelem / 2 + v->nelem, &gx, &gy);
    vk_dispatch(vk, p, ts, 11, &push, sizeof push, gx, gy, 1);
}

void op_rope_kv_norm(Vk *vk, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *pos, const Tensor *ff,
                     const Tensor *qo, const Tensor *kc, const Tensor *vc, const Tensor *qn, const Tensor *kn, f32 eps,
                     u32 n_rot, f32 base, f32 freq_scale, bool neox, u32 sqk, u32 sv) {
    const char *n = "rope_kv_norm";
    RopeKvPush push = rope_kv_shapes(n, q, k, v, pos, ff, qo, kc, vc, n_rot, base, freq_scale, neox, sqk, sv);
    need(q->dtype == DT_F32 && k->dtype == DT_F32 && v->dtype == DT_F32, n, q->dtype != DT_F32 ? q : k->dtype != DT_F32 ? k : v,
         "q, k and v must be f32 (the projections' f32 outputs)");
    need(push.head_dim <= 256, n, q, "head_dim must be <= 256 (rope_kv.wgsl: two pairs per invocation of 64)");
    need(qn->dtype == DT_F32 && kn->dtype == DT_F32 && qn->nelem == push.head_dim && kn->nelem == push.head_dim, n, qn,
         "head-norm weights must be f32 (head_dim)");
    push.eps = eps;
    VkPipe *p = op_pipe(vk, OP_ROPE_KV_NORM, PH_ANY, kc->dtype, qo->dtype, kc->dtype);
    const Tensor *ts[10] = { q, k, v, pos, ff, qo, kc, vc, qn, kn };
    u32 gx, gy; rows_grid((u64)(push.n_head + push.n_head_kv) * push.t_cap, &gx, &gy);   /* a workgroup per (token, head) */
    vk_dispatch(vk, p, ts, 10, &push, sizeof push, gx, gy, 1);
}

/* ---- attention ----------------------------------------------------------------- */
/* The push constants of every attention.wgsl entry (its Params). */
typedef struct AttnPush { u32 head_dim, n_head, n_head_kv, t_cap, n_ctx, window; f32 scale, softcap; u32 q0; } AttnPush;

/* The checks both attention ops share: q (head_dim <= 256, n_head, T), caches (head_dim *
   n_head_kv, n_ctx) of one dtype, GQA ratio. */
static void attn_shapes(const char *n, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos,
                        u32 n_head, u32 n_head_kv, u64 *hd, u64 *T, u64 *n_ctx) {
    need(n_head > 0 && n_head_kv > 0 && n_head % n_head_kv == 0, n, q, "n_head must be a multiple of n_head_kv");
    *hd = q->ne[0];
    need(*hd > 0 && *hd <= 256 && q->ne[1] == n_head && q->nelem % (*hd * n_head) == 0, n, q, "q must be (head_dim <= 256, n_head, T)");
    u64 kvd = *hd * n_head_kv;
    *T = q->nelem / (*hd * n_head); *n_ctx = kc->ne[1];   /* rows per slot */
    op_rows_need(n, pos, *T);
    need(kc->ne[0] == op_kv_width(kc->dtype, kvd) && vc->ne[0] == kc->ne[0] && vc->nelem == kc->nelem && vc->dtype == kc->dtype, n, kc,
         "caches must both be (head_dim * n_head_kv (op_kv_width), n_ctx, n_seq) of one dtype");
}

/* A cache as the attention kernels bind it. They read it as 16-byte vectors (attention.wgsl kc4 / vc4),
   and a binding holds range / 16 whole vectors: a q8_0 cache whose bytes are no multiple of 16 (rows of
   34 words for kv_dim 128, an odd row count) lost its last row's scales (read as zeros on the H200:
   tests gpu_fixture_logits_cache_q8_0, 13 rows). So the binding is rounded up to 16 bytes, inside the
   reservation vk_tensor_at makes for every tensor. */
static Tensor attn_cache(const char *n, const Tensor *c) {
    Tensor v = *c;
    v.nbytes = align_up(c->nbytes, 16);
    need(!c->arena || c->arena->planning || c->offset + v.nbytes <= c->arena->blocks[c->block].size, n, c,
         "the cache's binding rounded up to 16 bytes passes its arena block");
    return v;
}

void op_attention(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos, const Tensor *scores,
                  const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window) {
    const char *n = "attention";
    u64 hd, T, n_ctx;
    attn_shapes(n, q, kc, vc, pos, n_head, n_head_kv, &hd, &T, &n_ctx);
    need(scores->dtype == DT_F32 && scores->ne[0] >= n_ctx && scores->nelem >= n_ctx * n_head * T, n, scores,
         "scores must be f32 (n_ctx, n_head, T_max) with T_max >= T (n_ctx: at least the cache's rows)");
    need(out->nelem == q->nelem && out->ne[0] == hd, n, out, "out must have q's shape");
    need(T <= 65535 && n_head <= 65535, n, q, "more than 65535 queries or heads");
    VkPipe *p = op_pipe(vk, OP_ATTENTION, PH_ANY, kc->dtype, q->dtype, out->dtype);
    AttnPush push =
        { (u32)hd, n_head, n_head_kv, (u32)T, (u32)n_ctx, window, scale, softcap, 0 };
    Tensor k4 = attn_cache(n, kc), v4 = attn_cache(n, vc);
    const Tensor *ts[6] = { q, &k4, &v4, pos, scores, out };
    vk_dispatch(vk, p, ts, 6, &push, sizeof push, n_head, (u32)T, 1);
}

u32 op_attn_chunks(u64 n_ctx) { return (u32)((n_ctx + 31) / 32); }
u32 op_attn_part_row(u32 head_dim) { return head_dim + 4; }

bool op_attention_split_fits(u32 head_dim, u64 n_ctx) {
    return head_dim >= 8 && head_dim <= 256 && head_dim % 8 == 0 && 128 % (head_dim / 8) == 0 && op_attn_chunks(n_ctx) <= 1024;   /* (attn_split_h: 8 dims per load) */
}

/* attn_short (kernels/attn_short.wgsl): decode over at most 128 keys in one dispatch, attn_split_h's
   work and attn_merge's in one workgroup: of 512 (OP_ATTN_SHORT, an f16 cache) where the device allows
   it, else of 256 (OP_ATTN_SHORT_N: also the f32 cache). OP_COUNT: neither fits. */
bool op_attn_short_off;      /* tests, edge fat: the split and merge even where attn_short would run */
bool op_attn_short_narrow;   /* edge fat: OP_ATTN_SHORT_N even where OP_ATTN_SHORT fits */
static Op attn_short_op(Vk *vk, DType cache, DType act) {
    static const Op ops[2] = { OP_ATTN_SHORT, OP_ATTN_SHORT_N };
    for (u32 i = op_attn_short_narrow ? 1 : 0; i < 2; i++) {
        i32 d = kdef_find(ops[i], PH_DECODE, cache, act, act);
        i32 k = d < 0 ? -1 : vk_kernel_find(kdefs[d].kernel);
        Err e;
        if (k >= 0 && vk_kernel_check(&vk->caps, &kernel_table[k], &e)) return ops[i];
    }
    return OP_COUNT;
}
bool op_attention_short_fits(Vk *vk, u32 head_dim, DType cache, DType act, u64 keys) {
    return !op_attn_short_off && keys <= 128 && op_attention_split_fits(head_dim, keys) && attn_short_op(vk, cache, act) != OP_COUNT;
}

bool op_kernel_optional(const char *kernel) {
    for (u32 d = 0; d < KDEF_COUNT; d++) if (!strcmp(kdefs[d].kernel, kernel)) return kdefs[d].op == OP_ATTN_SHORT;
    return false;
}

static void op_attention_short(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos, const Tensor *out,
                               u64 hd, u64 T, u64 n_ctx, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window) {
    const char *n = "attention_short";
    need(out->nelem == q->nelem && out->dtype == q->dtype, n, out, "out must have q's shape and dtype");
    need(n_head <= 65535 && T <= 65535, n, q, "more than 65535 heads or queries");
    VkPipe *p = op_pipe(vk, attn_short_op(vk, kc->dtype, q->dtype), PH_DECODE, kc->dtype, q->dtype, out->dtype);
    AttnPush push = { (u32)hd, n_head, n_head_kv, (u32)T, (u32)n_ctx, window, scale, softcap, 0 };
    Tensor k4 = attn_cache(n, kc), v4 = attn_cache(n, vc);
    const Tensor *ts[5] = { q, &k4, &v4, pos, out };
    vk_dispatch(vk, p, ts, 5, &push, sizeof push, n_head, 1, (u32)T);
}

void op_attention_split(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos, const Tensor *part,
                        const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window, bool decode, u32 keys) {
    const char *n = "attention_split";
    u64 hd, T, n_ctx;
    attn_shapes(n, q, kc, vc, pos, n_head, n_head_kv, &hd, &T, &n_ctx);
    need(op_attention_split_fits((u32)hd, n_ctx), n, q, "head_dim must be a multiple of 8 with head_dim / 8 dividing 128, and n_ctx be at most 32768");
    u64 span = keys ? MIN(keys, n_ctx) : n_ctx;  /* (keys any query may have) */
    if (decode && op_attention_short_fits(vk, (u32)hd, kc->dtype, q->dtype, span)) {
        op_attention_short(vk, q, kc, vc, pos, out, hd, T, n_ctx, n_head, n_head_kv, scale, softcap, window);
        return;
    }
    u32 nc = op_attn_chunks(span);   /* (the grid: chunks of the keys any query may have) */
    u64 per_q = (u64)op_attn_part_row((u32)hd) * nc * n_head, Q = part->nelem / per_q;     /* queries part holds: one dispatch pair each */
    need(part->dtype == DT_F32 && Q >= 1, n, part, "part must be f32 (head_dim + 4, n_ctx / 32, n_head, >= 1 query)");
    need(out->nelem == q->nelem, n, out, "out must have q's shape");
    need(n_head <= 65535 && nc <= 65535 && T <= 65535, n, q, "more than 65535 heads, key chunks or queries");
    VkPipe *ps = op_pipe(vk, OP_ATTN_SPLIT, decode ? PH_DECODE : PH_PREFILL, kc->dtype, q->dtype, part->dtype);
    VkPipe *pm = op_pipe(vk, OP_ATTN_MERGE, PH_ANY, DT_F32, part->dtype, out->dtype);
    Tensor k4 = attn_cache(n, kc), v4 = attn_cache(n, vc);
    const Tensor *t1[5] = { q, &k4, &v4, pos, part }, *t2[3] = { part, pos, out };
    for (u64 q0 = 0; q0 < T; q0 += Q) {      /* queries q0 .. q0 + n - 1 */
        u32 nq = (u32)MIN(Q, T - q0);
        AttnPush push =
            { (u32)hd, n_head, n_head_kv, nc, (u32)n_ctx, window, scale, softcap, (u32)q0 };
        if (q0) vk_barrier(vk);              /* part is reused */
        vk_dispatch(vk, ps, t1, 5, &push, sizeof push, n_head, nc, nq);
        vk_barrier(vk);
        vk_dispatch(vk, pm, t2, 3, &push, sizeof push, n_head, nq, 1);
    }
}

/* queries per attn_flash workgroup (attention.wgsl qb: q of 16 queries, or of 8 for head_dim 256, in 512 vec4s;
   attn_flash_w: 1024 vec4s, 16 queries of head_dim 256) */
static u64 attn_flash_qb(u64 hd, bool wide) { return MIN(16, (wide ? 1024 : 512) / (hd / 4)); }

static bool attn_flash_kernel_fits(Vk *vk, Op op, DType cache, DType act) {
    i32 d = kdef_find(op, PH_PREFILL, cache, act, act);
    i32 k = d < 0 ? -1 : vk_kernel_find(kdefs[d].kernel);
    Err e;
    return k >= 0 && vk_kernel_check(&vk->caps, &kernel_table[k], &e);   /* e.g. its ~10.5 KiB (wide: 18.5) of shared memory */
}

bool op_attention_flash_fits(Vk *vk, u32 head_dim, DType cache, DType act) {
    if (head_dim < 4 || head_dim > 256 || head_dim % 4 || 128 % (head_dim / 4)) return false;
    return attn_flash_kernel_fits(vk, OP_ATTN_FLASH, cache, act);
}

/* attn_cm (kernels/attn_cm.wgsl): on devices with cooperative matrices (caps.coopmat), f16 activations
   and cache, head_dim 64, 128 or 256, at least 80 cache rows (a chunk's keys within a ring); softcaps as
   attn_flash, and windows (a sliding layer's ring: key j in row j % n_ctx) with head_dim 256, the only
   head_dim of the table's sliding-window models (its attn_cm_h256w build: the ring's address code, 6%
   of attention, stays out of the others). */
#define ATTN_CM_QB 16u    /* queries per attn_cm workgroup (attn_cm.wgsl QB) */
/* attn_cm is built once per head_dim (override HD), its shape constant for the driver's compiler (H100,
   attention at 2,048 tokens per layer: llama-3.2-1b 277 -> 178 us, llama-3.2-3b 345 -> 177 us) */
Op op_attention_cm_op(u32 head_dim, u32 window) {
    return head_dim == 64 ? OP_ATTN_CM_H64 : head_dim != 256 ? OP_ATTN_CM : window ? OP_ATTN_CM_H256W : OP_ATTN_CM_H256;
}
bool op_is_attn_cm(Op op) { return op == OP_ATTN_CM || op == OP_ATTN_CM_H64 || op == OP_ATTN_CM_H256 || op == OP_ATTN_CM_H256W; }
bool op_attention_cm_fits(Vk *vk, u32 head_dim, DType cache, DType act, u32 window, u64 n_ctx) {
    return vk->caps.coopmat && cache == DT_F16 && act == DT_F16 && (head_dim == 64 || head_dim == 128 || head_dim == 256) &&
           (!window || head_dim == 256) && n_ctx >= OP_ATTN_CM_ROWS && attn_flash_kernel_fits(vk, op_attention_cm_op(head_dim, window), cache, act);
}

/* attn_tile (kernels/attn_tile.wgsl): attn_flash in register tiles, for devices without cooperative
   matrices, f16 activations and cache, head_dim 64, 128 or 256 (one build each, as attn_cm), where its
   workgroup memory fits the device (23-28 KiB: the boards' 32 KiB). */
Op op_attention_tile_op(u32 head_dim) { return head_dim == 64 ? OP_ATTN_TILE_H64 : head_dim == 256 ? OP_ATTN_TILE_H256 : OP_ATTN_TILE; }
bool op_is_attn_tile(Op op) { return op == OP_ATTN_TILE || op == OP_ATTN_TILE_H64 || op == OP_ATTN_TILE_H256; }
/* queries per workgroup: the build's BR (attn_tile.wgsl, its variant line's override, else the default
   64), read from the compiled-in kernel table once per build (index: head_dim 64, 128, 256) */
static u64 attn_tile_qb(Op op) {
    static u64 qb[3];
    u32 i = op == OP_ATTN_TILE_H64 ? 0 : op == OP_ATTN_TILE ? 1 : 2;
    if (!qb[i]) {
        i32 d = kdef_find(op, PH_PREFILL, DT_F16, DT_F16, DT_F16);
        i32 k = d < 0 ? -1 : vk_kernel_find(kdefs[d].kernel);
        const char *o = k < 0 ? 0 : strstr(kernel_table[k].overrides, "BR=");
        qb[i] = o ? strtoull(o + 3, 0, 10) : 64;
    }
    return qb[i];
}
bool op_attention_tile_fits(Vk *vk, u32 head_dim, DType cache, DType act) {
    return !edge_opt.no_attn_tile && !vk->caps.coopmat && cache == DT_F16 && act == DT_F16 && (head_dim == 64 || head_dim == 128 || head_dim == 256) &&
           attn_flash_kernel_fits(vk, op_attention_tile_op(head_dim), cache, act);
}

/* The attn_flash kernel for head_dim: the wide one (twice the queries per workgroup, so keys and
   values are read half as often) where it holds more queries than the plain one and its shared
   memory fits. Measured on the H200 (gemma-2-2b, head_dim 256, pp512): attention 316 -> 255 us per
   layer, pp 5,439 -> 5,535 (fewer queries per workgroup were slower: 4 instead of 8, -4%). */
Op op_attention_flash_kernel(Vk *vk, u32 head_dim, DType cache, DType act) {
    if (head_dim >= 4 && attn_flash_qb(head_dim, true) > attn_flash_qb(head_dim, false) && attn_flash_kernel_fits(vk, OP_ATTN_FLASH_W, cache, act))
        return OP_ATTN_FLASH_W;
    return OP_ATTN_FLASH;
}

void op_attention_flash(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos,
                        const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window) {
    u32 hd = (u32)q->ne[0];
    Op kop = op_attention_cm_fits(vk, hd, kc->dtype, q->dtype, window, kc->ne[1]) ? op_attention_cm_op(hd, window)
           : op_attention_tile_fits(vk, hd, kc->dtype, q->dtype) ? op_attention_tile_op(hd) : op_attention_flash_kernel(vk, hd, kc->dtype, q->dtype);
    op_attention_flash_with(vk, kop, q, kc, vc, pos, out, n_head, n_head_kv, scale, softcap, window);
}

void op_attention_flash_with(Vk *vk, Op kop, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos,
                             const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window) {
    const char *n = "attention_flash";
    u64 hd, T, n_ctx;
    attn_shapes(n, q, kc, vc, pos, n_head, n_head_kv, &hd, &T, &n_ctx);
    need(hd % 4 == 0 && 128 % (hd / 4) == 0, n, q, "head_dim / 4 must divide 128");
    need(out->nelem == q->nelem && out->dtype == q->dtype, n, out, "out must have q's shape and dtype");
    bool cm = op_is_attn_cm(kop), tile = op_is_attn_tile(kop);
    need(kop == OP_ATTN_FLASH || kop == OP_ATTN_FLASH_W || cm || tile, n, q, "not an attn_flash kernel");
    need(!cm || (kop == op_attention_cm_op((u32)hd, window) && op_attention_cm_fits(vk, (u32)hd, kc->dtype, q->dtype, window, n_ctx)), n, q,
         "attn_cm needs cooperative matrices, f16 q and cache, its build's head_dim (64, 128, 256; a window: 256w), n_ctx >= 80");
    need(!tile || (kop == op_attention_tile_op((u32)hd) && op_attention_tile_fits(vk, (u32)hd, kc->dtype, q->dtype)), n, q,
         "attn_tile needs no cooperative matrices, f16 q and cache, its build's head_dim (64, 128, 256)");
    u64 qb = cm ? ATTN_CM_QB : tile ? attn_tile_qb(kop) : attn_flash_qb(hd, kop == OP_ATTN_FLASH_W);
    need(n_head <= 65535 && (T + qb - 1) / qb <= 65535, n, q, "more than 65535 heads or query blocks");
    VkPipe *p = op_pipe(vk, kop, PH_PREFILL, kc->dtype, q->dtype, out->dtype);
    AttnPush push =
        { (u32)hd, n_head, n_head_kv, (u32)T, (u32)n_ctx, window, scale, softcap, 0 };
    Tensor k4 = attn_cache(n, kc), v4 = attn_cache(n, vc);
    const Tensor *ts[5] = { q, &k4, &v4, pos, out };
    vk_dispatch(vk, p, ts, 5, &push, sizeof push, n_head, (u32)((T + qb - 1) / qb), 1);
}

/* ---- activations, softcap, sampling -------------------------------------------- */
void op_glu(Vk *vk, const Tensor *gate, const Tensor *up, const Tensor *y, bool gelu) {
    need(gate->nelem == up->nelem && gate->nelem == y->nelem, "glu", y, "element counts differ");
    need(gate->dtype == up->dtype, "glu", up, "gate and up dtypes differ");
    VkPipe *p = op_pipe(vk, OP_GLU, PH_ANY, DT_F32, gate->dtype, y->dtype);
    struct { u32 n, gelu; } push = { (u32)y->nelem, gelu ? 1u : 0u };
    const Tensor *ts[3] = { gate, up, y };
    u32 gx, gy; flat_grid("glu", y, y->nelem, &gx, &gy);
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, 1);
}

void op_softcap(Vk *vk, const Tensor *x, const Tensor *y, f32 cap) {
    need(x->nelem == y->nelem, "softcap", y, "element counts differ");
    need(cap > 0, "softcap", x, "cap must be positive");
    VkPipe *p = op_pipe(vk, OP_SOFTCAP, PH_ANY, DT_F32, x->dtype, y->dtype);
    struct { u32 n; f32 cap; } push = { (u32)x->nelem, cap };
    const Tensor *ts[2] = { x, y };
    u32 gx, gy; flat_grid("softcap", x, x->nelem, &gx, &gy);
    vk_dispatch(vk, p, ts, 2, &push, sizeof push, gx, gy, 1);
}

void op_argmax(Vk *vk, const Tensor *logits, const Tensor *ids) {
    u64 nv = logits->ne[0], rows = logits->nelem / nv;
    need(ids->nelem == rows, "argmax", ids, "needs one id per row of logits");
    need(rows <= 65535, "argmax", logits, "more than 65535 rows");
    VkPipe *p = op_pipe(vk, OP_ARGMAX, PH_ANY, DT_F32, logits->dtype, ids->dtype);
    struct { u32 n, rows, k; } push = { (u32)nv, (u32)rows, 1 };
    const Tensor *ts[2] = { logits, ids };
    vk_dispatch(vk, p, ts, 2, &push, sizeof push, (u32)rows, 1, 1);
}

u32 op_argmax_slices(u64 n) { u64 g = (n + 1023) / 1024; return (u32)(g < 2 ? 1 : g > 128 ? 128 : g); }

void op_argmax_check(Vk *vk, const Tensor *logits, const Tensor *ids, const Tensor *part) {
    u64 nv = logits->ne[0], rows = logits->nelem / nv;
    need(ids->nelem == 2 * rows, "argmax_check", ids, "needs two words (id, flag) per row of logits");
    need(rows <= 65535, "argmax_check", logits, "more than 65535 rows");
    u32 G = part ? (u32)(part->ne[0] / 3) : 1;
    if (G > 1) {
        need(part->dtype == DT_U32 && part->ne[0] == 3 * (u64)G && G <= 256 && part->nelem >= part->ne[0] * rows, "argmax_part", part,
             "scratch must be u32 (3 G, >= rows) with G <= 256");
        VkPipe *pp = op_pipe(vk, OP_ARGMAX_PART, PH_ANY, DT_F32, logits->dtype, part->dtype);
        VkPipe *pm = op_pipe(vk, OP_ARGMAX_MERGE, PH_ANY, DT_F32, part->dtype, ids->dtype);
        struct { u32 n, rows, k; } push = { (u32)nv, (u32)rows, G };
        const Tensor *t1[2] = { logits, part }, *t2[2] = { part, ids };
        vk_dispatch(vk, pp, t1, 2, &push, sizeof push, G, (u32)rows, 1);
        vk_barrier(vk);
        vk_dispatch(vk, pm, t2, 2, &push, sizeof push, (u32)rows, 1, 1);
        return;
    }
    VkPipe *p = op_pipe(vk, OP_ARGMAX_CHECK, PH_ANY, DT_F32, logits->dtype, ids->dtype);
    struct { u32 n, rows, k; } push = { (u32)nv, (u32)rows, 1 };
    const Tensor *ts[2] = { logits, ids };
    vk_dispatch(vk, p, ts, 2, &push, sizeof push, (u32)rows, 1, 1);
}

void op_topk(Vk *vk, const Tensor *logits, const Tensor *ids, const Tensor *vals, u32 k) {
    u64 nv = logits->ne[0], rows = logits->nelem / nv;
    need(k >= 1 && k <= EDGE_TOPK_MAX, "topk", ids, "k must be 1..EDGE_TOPK_MAX (64)");
    need(ids->dtype == DT_U32 && ids->nelem == (u64)k * rows, "topk", ids, "ids must be u32 (k, rows)");
    need(vals->nelem == (u64)k * rows, "topk", vals, "vals must be (k, rows)");
    need(rows <= 65535, "topk", logits, "more than 65535 rows");
    VkPipe *p = op_pipe(vk, OP_TOPK, PH_ANY, DT_F32, logits->dtype, vals->dtype);
    struct { u32 n, rows, k; } push = { (u32)nv, (u32)rows, k };
    const Tensor *ts[3] = { logits, ids, vals };
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, (u32)rows, 1, 1);
}
