/* transformer.c — implementation of transformer.h: the GPU forward pass.

   One batch = one command buffer: embedding, then per layer
     h = norm(x) -> q,k,v = W.h (+bias) -> [q/k norm] -> RoPE -> KV store -> attention
     -> o = Wo.att -> x += o (or x += norm(o) with post norms) -> h = norm(x)
     -> ff = act(Wg.h) * (Wu.h) -> o = Wd.ff -> x += o (or post-norm) ,
   then the final norm, the LM head, the final softcap and argmax. */

static DType dtype_from_ggml(u32 t) {
    switch (t) {
    case GGML_TYPE_F32: return DT_F32;   case GGML_TYPE_F16: return DT_F16;
    case GGML_TYPE_BF16: return DT_BF16; case GGML_TYPE_Q8_0: return DT_Q8_0;
    case GGML_TYPE_Q4_0: return DT_Q4_0; case GGML_TYPE_Q4_K: return DT_Q4_K;
    case GGML_TYPE_Q6_K: return DT_Q6_K;
    default: return DT_COUNT;
    }
}

static Tensor xf_weight(Xf *xf, DevArena *a, const GgufTensor *g) {
    Tensor t; memset(&t, 0, sizeof t);
    if (!g) return t;
    DType dt = dtype_from_ggml(g->type);
    if (dt == DT_COUNT) die(EXIT_MODEL, "tensor '%.*s': type %s has no GPU kernels", (int)g->name.len, g->name.ptr, ggml_type_name(g->type));
    char *name = (char *)arena_push(&xf->names, g->name.len + 1, 1);   /* GGUF names are not NUL-terminated */
    memcpy(name, g->name.ptr, g->name.len);
    return vk_tensor(a, name, dt, g->ndim, g->ne);
}

static Tensor xf_act(DevArena *a, const char *name, DType dt, u64 n0, u64 n1) {
    u64 ne[2] = { n0, n1 };
    return vk_tensor(a, name, dt, 2, ne);
}

/* The allocation sequence, run twice: on planning arenas, then on the real ones. */
static void xf_alloc(Xf *xf) {
    arena_pop_to(&xf->names, 0);
    const ModelConfig *c = xf->cfg;
    const ModelWeights *w = &xf->m->w;
    DevArena *wa = &xf->wa, *sa = &xf->sa;
    xf->attn_flash = op_attention_flash_fits(xf->vk, c->head_dim, xf->kv, xf->act);   /* batches' attention kernel */
    xf->tok_embd = xf_weight(xf, wa, w->tok_embd);
    xf->output_norm = xf_weight(xf, wa, w->output_norm);
    xf->output = c->tied_output ? xf->tok_embd : xf_weight(xf, wa, w->output);
    u64 nff[1] = { c->rope_dim / 2 };
    xf->rope_ff = vk_tensor(wa, "rope_freqs", DT_F32, 1, nff);     /* the model's factors, or ones */
    u32 qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim, T = xf->t_max;
    for (u32 il = 0; il < c->n_layer; il++) {
        const ModelLayer *L = &w->layers[il];
        XfLayer *X = &xf->layers[il];
        X->attn_norm = xf_weight(xf, wa, L->attn_norm);
        X->wq = xf_weight(xf, wa, L->wq); X->wk = xf_weight(xf, wa, L->wk); X->wv = xf_weight(xf, wa, L->wv);
        X->bq = xf_weight(xf, wa, L->bq); X->bk = xf_weight(xf, wa, L->bk); X->bv = xf_weight(xf, wa, L->bv);
        X->q_norm = xf_weight(xf, wa, L->q_norm); X->k_norm = xf_weight(xf, wa, L->k_norm);
        X->wo = xf_weight(xf, wa, L->wo);
        X->post_attn_norm = xf_weight(xf, wa, L->post_attn_norm);
        X->ffn_norm = xf_weight(xf, wa, L->ffn_norm);
        X->w_gate = xf_weight(xf, wa, L->w_gate); X->w_up = xf_weight(xf, wa, L->w_up); X->w_down = xf_weight(xf, wa, L->w_down);
        X->post_ffn_norm = xf_weight(xf, wa, L->post_ffn_norm);
        X->k_cache = xf_act(sa, "k_cache", xf->kv, kvd, xf->n_ctx);
        X->v_cache = xf_act(sa, "v_cache", xf->kv, kvd, xf->n_ctx);
    }
    u64 one[1] = { T }, two[1] = { 2 };
    xf->ids = vk_tensor(sa, "ids", DT_U32, 1, one);
    xf->pos = vk_tensor(sa, "pos", DT_U32, 1, two);
    u64 idf1[2] = { 2, 1 };
    for (u32 i = 0; i < 2; i++)
        for (u32 j = 0; j < EDGE_CHAIN_STEPS; j++) {
            xf->chain_pos[i][j] = vk_tensor(sa, "chain_pos", DT_U32, 1, two);
            xf->chain_out[i][j] = vk_tensor(sa, "chain_out", DT_U32, 2, idf1);
        }
    xf->x = xf_act(sa, "x", DT_F32, c->n_embd, T);
    if (c->post_norms && xf->act == DT_F16) xf->x2 = xf_act(sa, "x2", DT_F32, c->n_embd, 1);   /* see glu_res in xf_record */
    xf->h = xf_act(sa, "h", xf->act, c->n_embd, T);
    /* q/k stay f32 where a per-head f32 norm follows (gemma3); everything fed to a matmul,
       RoPE or attention is in the activation dtype. */
    DType qk = c->qk_norm ? DT_F32 : xf->act;
    xf->q = xf_act(sa, "q", qk, qd, T);
    xf->k = xf_act(sa, "k", qk, kvd, T);
    xf->v = xf_act(sa, "v", xf->act, kvd, T);
    if (!c->qk_norm) xf->qkv = xf_act(sa, "qkv", xf->act, qd + 2 * kvd, 1);
    if (c->qk_norm) { xf->qr = xf_act(sa, "q_normed", xf->act, qd, T); xf->kr = xf_act(sa, "k_normed", xf->act, kvd, T); }
    xf->qp = xf_act(sa, "q_rope", xf->act, qd, T);
    xf->kp = xf_act(sa, "k_rope", xf->act, kvd, T);
    /* the attention output, the split's partials and o start on EDGE_VK_ATTN_ALIGN bytes (the rest on
       the device's offset alignment: the residual rows x and h at 256 bytes made llama's prefill 5% slower) */
    sa->align = EDGE_VK_ATTN_ALIGN;
    xf->att = xf_act(sa, "att", xf->act, qd, T);
    /* attention: batches through attn_flash where it fits (xf->attn_flash: no scratch); otherwise, and
       for decode, split over key chunks where the head size allows,
       with partials for Q queries at a time: as many as fit in the bytes the one-workgroup-per-query
       kernel's scores scratch would take (n_ctx x n_head x T f32), so the split never needs more
       memory; otherwise that kernel and its scratch */
    if (op_attention_split_fits(c->head_dim, xf->n_ctx)) {
        u64 per_q = (u64)op_attn_part_row(c->head_dim) * op_attn_chunks(xf->n_ctx) * c->n_head;
        u64 Q = (u64)xf->n_ctx * c->n_head * T / per_q;
        Q = MAX(1, MIN(Q, T));
        u64 ap[4] = { op_attn_part_row(c->head_dim), op_attn_chunks(xf->n_ctx), c->n_head, Q };
        xf->attn_part = vk_tensor(sa, "attn_part", DT_F32, 4, ap);
    } else {
        u64 sc[3] = { xf->n_ctx, c->n_head, T };
        xf->scores = vk_tensor(sa, "scores", DT_F32, 3, sc);
    }
    xf->o = xf_act(sa, "o", DT_F32, c->n_embd, T);
    sa->align = 0;
    xf->gate = xf_act(sa, "gate", xf->act, c->n_ff, T);
    xf->up = xf_act(sa, "up", xf->act, c->n_ff, T);
    xf->ff = xf_act(sa, "ff", xf->act, c->n_ff, T);
    xf->hn = xf_act(sa, "h_final", xf->act, c->n_embd, T);
    xf->logits = xf_act(sa, "logits", DT_F32, c->n_vocab, T);
    if (c->final_softcap > 0) xf->zl = xf_act(sa, "logits_raw", DT_F32, c->n_vocab, T);
    u64 idf[2] = { 2, T };
    xf->out_ids = vk_tensor(sa, "out_ids", DT_U32, 2, idf);   /* [id, NaN/Inf flag] per row */
    u32 G = op_argmax_slices(c->n_vocab);
    if (G > 1) { u64 np[2] = { 3 * (u64)G, T }; xf->argmax_part = vk_tensor(sa, "argmax_part", DT_U32, 2, np); }
}

static void xf_debug_init(Xf *xf);
static void xf_debug_free(Xf *xf);
static void xf_profile_after(Xf *xf, u32 T, f64 wall_s);

static void xf_upload_weight(Vk *vk, const Tensor *t, const GgufTensor *g) { if (g) vk_upload(vk, t, g->data); }

/* Validates, then runs the allocation sequence on planning arenas (each placed tensor goes to
   on_tensor when set): plan_w and plan_s are the exact bytes the real arenas need. */
bool xf_plan(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act,
             void (*on_tensor)(void *ctx, const Tensor *t), void *ctx, Err *e) {
    memset(xf, 0, sizeof *xf);
    xf->vk = vk; xf->m = m; xf->cfg = &m->cfg; xf->act = act; xf->kv = act;
    xf->n_ctx = n_ctx; xf->t_max = t_max;
    if (act != DT_F32 && act != DT_F16) return err_set(e, EXIT_USAGE, "activation dtype must be f32 or f16");
    if (act == DT_F16 && !vk->caps.f16_arith) return err_set(e, EXIT_DEVICE, "--act f16 needs shaderFloat16, which '%s' lacks (use --act f32)", vk->props.deviceName);
    if (m->cfg.rope_dim > EDGE_MAX_HEAD_DIM || m->cfg.head_dim > EDGE_MAX_HEAD_DIM)
        return err_set(e, EXIT_MODEL, "head_dim %u / rope_dim %u: the GPU kernels handle at most %u", m->cfg.head_dim, m->cfg.rope_dim, EDGE_MAX_HEAD_DIM);
    if (n_ctx == 0 || t_max == 0 || t_max > n_ctx) return err_set(e, EXIT_USAGE, "bad context %u / batch %u", n_ctx, t_max);
    xf->layers = calloc(xf->cfg->n_layer, sizeof *xf->layers);
    xf->host_ids = calloc(2 * (u64)t_max, sizeof(u32));
    arena_init(&xf->names, "tensor names", 64 + (u64)xf->cfg->n_layer * 16 * 64 + 4096);
    /* plan: the same allocation sequence on planning arenas */
    vk_arena_plan(vk, &xf->wa, "weights");
    vk_arena_plan(vk, &xf->sa, "state");
    xf->wa.on_tensor = xf->sa.on_tensor = on_tensor;
    xf->wa.on_ctx = xf->sa.on_ctx = ctx;
    xf_alloc(xf);
    xf->plan_w = vk_arena_plan_bytes(&xf->wa);
    xf->plan_s = vk_arena_plan_bytes(&xf->sa);
    return true;
}

bool xf_init(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, Err *e) {
    if (!xf_plan(xf, vk, m, n_ctx, t_max, act, 0, 0, e)) return false;
    if (!vk_arena_init(vk, &xf->wa, "weights", xf->plan_w, e)) { xf_free(xf); return false; }
    if (!vk_arena_init(vk, &xf->sa, "state", xf->plan_s, e)) { xf_free(xf); return false; }
    xf_alloc(xf);
    const ModelWeights *w = &m->w;
    xf_upload_weight(vk, &xf->tok_embd, w->tok_embd);
    xf_upload_weight(vk, &xf->output_norm, w->output_norm);
    if (!xf->cfg->tied_output) xf_upload_weight(vk, &xf->output, w->output);
    f32 ff[EDGE_MAX_HEAD_DIM / 2];
    for (u32 i = 0; i < xf->cfg->rope_dim / 2; i++) ff[i] = 1.0f;
    if (w->rope_freqs) dequant_row(w->rope_freqs->type, w->rope_freqs->data, ff, xf->cfg->rope_dim / 2);
    vk_upload(vk, &xf->rope_ff, ff);
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        const ModelLayer *L = &w->layers[il]; XfLayer *X = &xf->layers[il];
        xf_upload_weight(vk, &X->attn_norm, L->attn_norm);
        xf_upload_weight(vk, &X->wq, L->wq); xf_upload_weight(vk, &X->wk, L->wk); xf_upload_weight(vk, &X->wv, L->wv);
        xf_upload_weight(vk, &X->bq, L->bq); xf_upload_weight(vk, &X->bk, L->bk); xf_upload_weight(vk, &X->bv, L->bv);
        xf_upload_weight(vk, &X->q_norm, L->q_norm); xf_upload_weight(vk, &X->k_norm, L->k_norm);
        xf_upload_weight(vk, &X->wo, L->wo);
        xf_upload_weight(vk, &X->post_attn_norm, L->post_attn_norm);
        xf_upload_weight(vk, &X->ffn_norm, L->ffn_norm);
        xf_upload_weight(vk, &X->w_gate, L->w_gate); xf_upload_weight(vk, &X->w_up, L->w_up); xf_upload_weight(vk, &X->w_down, L->w_down);
        xf_upload_weight(vk, &X->post_ffn_norm, L->post_ffn_norm);
    }
    xf_debug_init(xf);
    return true;
}

void xf_free(Xf *xf) {
    if (xf->dec.cmd) vk_rec_free(xf->vk, &xf->dec);
    if (xf->dec_ts) vk_ts_pool_free(xf->vk, xf->dec_ts);
    for (int i = 0; i < 2; i++) if (xf->chain[i].cmd) vk_rec_free(xf->vk, &xf->chain[i]);
    if (xf->pre.cmd) vk_rec_free(xf->vk, &xf->pre);
    if (xf->wa.vk) vk_arena_free(&xf->wa);
    if (xf->sa.vk) vk_arena_free(&xf->sa);
    xf_debug_free(xf);
    free(xf->layers); free(xf->host_ids);
    if (xf->names.base) arena_free(&xf->names);
    memset(xf, 0, sizeof *xf);
}

/* A view of the first T rows of a (n, t_max) tensor: same offset, exact bytes. */
static Tensor xf_rows(const Tensor *t, u32 T) {
    Tensor v = *t;
    u64 rows = t->ndim >= 2 ? t->ne[t->ndim - 1] : t->ne[0];
    u64 per = t->nelem / rows;
    v.ne[v.ndim - 1] = T;
    v.nelem = per * T;
    v.nbytes = dtype_bytes(v.dtype, v.nelem);
    return v;
}

/* A (head_dim, n_heads, T) view of a (n_heads*head_dim, T) tensor. */
static Tensor xf_heads(const Tensor *t, u32 hd, u32 T) {
    Tensor v = *t;
    v.ndim = 3; v.ne[0] = hd; v.ne[1] = t->nelem / ((u64)hd * T); v.ne[2] = T; v.ne[3] = 1;
    return v;
}

/* Rows r0 .. r0+n-1 of a (kv_dim, n_ctx) cache: what the debug tools read, never more. */
static Tensor xf_cache_rows(const Tensor *c, u32 r0, u32 n) {
    Tensor v = *c;
    u64 rb = dtype_bytes(c->dtype, c->ne[0]);
    v.ne[1] = n; v.nelem = c->ne[0] * n; v.nbytes = rb * n; v.offset = c->offset + rb * r0;
    return v;
}

/* q, k, v of one token as views of xf->qkv (side by side), when their offsets can be bound. */
static bool xf_qkv_views(const Xf *xf, Tensor *q, Tensor *k, Tensor *v) {
    const ModelConfig *c = xf->cfg;
    u64 qd = (u64)c->n_head * c->head_dim, kvd = (u64)c->n_head_kv * c->head_dim, al = xf->vk->caps.min_offset_align;
    u64 ok = dtype_bytes(xf->act, qd), ov = dtype_bytes(xf->act, qd + kvd);
    if (ok % al || ov % al || q->dtype != xf->act || k->dtype != xf->act) return false;
    Tensor t[3];
    u64 off[3] = { 0, ok, ov }, n[3] = { qd, kvd, kvd };
    for (int i = 0; i < 3; i++) {
        t[i] = xf->qkv;
        t[i].ne[0] = n[i]; t[i].ne[1] = 1; t[i].nelem = n[i]; t[i].nbytes = dtype_bytes(xf->act, n[i]); t[i].offset += off[i];
    }
    t[0].name = "q"; t[1].name = "k"; t[2].name = "v";
    *q = t[0]; *k = t[1]; *v = t[2];
    return true;
}

/* Debug hooks around every op (models/xf_debug.c): they return at once unless a debug tool
   (--trace, --check-nan, --profile, EDGE_INJECT_NAN, describe) is on. */
static void xf_op(Xf *xf, const char *name, u32 cat, const char *cls, i32 layer, const Tensor *out,
                  const Tensor *in0, const Tensor *in1, const Tensor *in2);
static void xf_done(Xf *xf);
static void xf_rec_start(Xf *xf, u32 T, u32 p0);

/* Fused kernels (rope_kv ...) run unless a debug tool inspects or poisons each op's output
   (--check-nan, --trace of values, EDGE_INJECT_NAN): those see the unfused ops, one output each. */
static bool xf_fused(const Xf *xf) { return !xf->step && !xf_debug.inject; }

/* Prefill: Y (+)= W . X split over k when the product has few row tiles (op_matmul_split), its
   f32 partials in the logits buffer (n_vocab x batch f32, written only by the LM head at the end
   of the pass, so free while the layers run). */
static void xf_matmul_prefill(Xf *xf, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc) {
    u32 s = op_matmul_split_slices(xf->vk, W, X);
    if (s >= 2 && op_matmul_split(xf->vk, W, X, Y, acc, &xf->logits, s)) return;
    if (acc) op_matmul_acc(xf->vk, PH_PREFILL, W, X, Y); else op_matmul(xf->vk, PH_PREFILL, W, X, Y);
}

/* The forward pass for T tokens at positions p0..p0+T-1: records one command buffer.
   Each op is bracketed by xf_op (site name, trace category, injection class, layer, output,
   activation inputs) and xf_done. */
static void xf_record(Xf *xf, u32 T, u32 p0) {
    Vk *vk = xf->vk; const ModelConfig *c = xf->cfg;
    Phase ph = T == 1 ? PH_DECODE : PH_PREFILL;
    xf_rec_start(xf, T, p0);
    Tensor ids = xf_rows(&xf->ids, T), x = xf_rows(&xf->x, T), h = xf_rows(&xf->h, T);
    Tensor q = xf_rows(&xf->q, T), k = xf_rows(&xf->k, T), v = xf_rows(&xf->v, T);
    bool qkv_rows = T == 1 && xf->qkv.nbytes && xf_fused(xf) && xf_qkv_views(xf, &q, &k, &v);
    u32 hd = c->head_dim;
    /* per-head views (head_dim, n_heads, T) for norms, RoPE and attention */
    Tensor qh = xf_heads(&q, hd, T), kh = xf_heads(&k, hd, T);
    Tensor qr = c->qk_norm ? xf_rows(&xf->qr, T) : q, kr = c->qk_norm ? xf_rows(&xf->kr, T) : k;
    Tensor qrh = xf_heads(&qr, hd, T), krh = xf_heads(&kr, hd, T);
    Tensor qp = xf_rows(&xf->qp, T), kp = xf_rows(&xf->kp, T);
    Tensor qph = xf_heads(&qp, hd, T), kph = xf_heads(&kp, hd, T);
    Tensor att = xf_rows(&xf->att, T), o = xf_rows(&xf->o, T);
    Tensor atth = xf_heads(&att, hd, T);
    Tensor gate = xf_rows(&xf->gate, T), up = xf_rows(&xf->up, T), ff = xf_rows(&xf->ff, T);
    Tensor hn = xf_rows(&xf->hn, T), logits = xf_rows(&xf->logits, T), out_ids = xf_rows(&xf->out_ids, T);

    xf_op(xf, "embed", XT_EMBED, "embed", -1, &x, &ids, 0, 0);
    op_get_rows(vk, &xf->tok_embd, &ids, &x, c->embd_scale);
    xf_done(xf);
    vk_barrier(vk);
    /* Gemma's post-norm residual adds take the next pre-norm along (rmsnorm_add_norm) when fused */
    bool norm_ready = false;
    for (u32 il = 0; il < c->n_layer; il++) {
        XfLayer *L = &xf->layers[il];
        i32 l = (i32)il;
        /* decode: q, k, v side by side in qkv, and one matvec over the weights that lie back to back */
        Tensor wqk, wqkv;
        bool fuse_qk = qkv_rows && op_concat_rows(vk, &L->wq, &L->wk, &wqk);
        bool fuse_qkv = fuse_qk && op_concat_rows(vk, &wqk, &L->wv, &wqkv);
        f32 base, fscale;
        model_layer_rope(c, il, &base, &fscale);
        /* decode with k-quant q/k/v: RoPE, the biases and the KV stores in the projection's epilogue,
           and the attention norm in its prologue (unless a fused residual norm made h already) */
        bool rope_mm = fuse_qk && !c->qk_norm && op_matmul_rope_fits(&wqk, &h) && (fuse_qkv || op_matmul_rope_fits(&L->wv, &h));
        bool norm_mm = rope_mm && !norm_ready && op_matmul_norm_fits(&wqk, &x) && (fuse_qkv || op_matmul_norm_fits(&L->wv, &x));
        if (!norm_ready && !norm_mm) {
            xf_op(xf, "attn_norm", XT_NORM, "norm", l, &h, &x, 0, 0); op_rmsnorm(vk, &x, &L->attn_norm, &h, c->eps); xf_done(xf);
            vk_barrier(vk);
        }
        norm_ready = false;
        const Tensor *bq = c->qkv_bias ? &L->bq : 0, *bk = c->qkv_bias ? &L->bk : 0, *bv = c->qkv_bias ? &L->bv : 0;
        if (rope_mm) {
            const Tensor *in = norm_mm ? &x : &h, *nw = norm_mm ? &L->attn_norm : 0;
            xf_op(xf, norm_mm ? "attn_norm_qkv_rope" : "attn_qkv_rope", XT_ATTN, "matmul", l, &qp, in, 0, 0);
            if (fuse_qkv)
                op_matmul_rope(vk, &wqkv, in, nw, c->eps, &xf->pos, &xf->rope_ff, &qph, &L->k_cache, &L->v_cache, c->n_head, c->n_head_kv,
                               c->rope_dim, base, fscale, c->rope_neox, bq, bk, bv, 0);
            else {
                op_matmul_rope(vk, &wqk, in, nw, c->eps, &xf->pos, &xf->rope_ff, &qph, &L->k_cache, &L->v_cache, c->n_head, c->n_head_kv,
                               c->rope_dim, base, fscale, c->rope_neox, bq, bk, bv, 0);
                op_matmul_rope(vk, &L->wv, in, nw, c->eps, &xf->pos, &xf->rope_ff, &qph, &L->k_cache, &L->v_cache, c->n_head, c->n_head_kv,
                               c->rope_dim, base, fscale, c->rope_neox, bq, bk, bv, (u32)(q.nelem + k.nelem));
            }
            xf_done(xf);
        } else if (fuse_qkv) {
            Tensor qkv = xf->qkv;
            xf_op(xf, "attn_qkv", XT_ATTN, "matmul", l, &qkv, &h, 0, 0); op_matmul(vk, ph, &wqkv, &h, &qkv); xf_done(xf);
        } else {
            if (fuse_qk) {
                Tensor qk = xf->qkv; qk.ne[0] = q.nelem + k.nelem; qk.nelem = qk.ne[0]; qk.nbytes = dtype_bytes(qk.dtype, qk.nelem);
                xf_op(xf, "attn_qk", XT_ATTN, "matmul", l, &qk, &h, 0, 0); op_matmul(vk, ph, &wqk, &h, &qk); xf_done(xf);
            } else {
                xf_op(xf, "attn_q", XT_ATTN, "matmul", l, &q, &h, 0, 0); op_matmul(vk, ph, &L->wq, &h, &q); xf_done(xf);
                xf_op(xf, "attn_k", XT_ATTN, "matmul", l, &k, &h, 0, 0); op_matmul(vk, ph, &L->wk, &h, &k); xf_done(xf);
            }
            xf_op(xf, "attn_v", XT_ATTN, "matmul", l, &v, &h, 0, 0); op_matmul(vk, ph, &L->wv, &h, &v); xf_done(xf);
        }
        vk_barrier(vk);
        bool bias_in_rope = c->qkv_bias && !c->qk_norm && xf_fused(xf);   /* rope_kv adds the biases */
        if (!rope_mm) {
            if (c->qkv_bias && !bias_in_rope) {
                xf_op(xf, "bias_q", XT_ATTN, "bias", l, &q, &q, 0, 0); op_add_bias(vk, &L->bq, &q); xf_done(xf);
                xf_op(xf, "bias_k", XT_ATTN, "bias", l, &k, &k, 0, 0); op_add_bias(vk, &L->bk, &k); xf_done(xf);
                xf_op(xf, "bias_v", XT_ATTN, "bias", l, &v, &v, 0, 0); op_add_bias(vk, &L->bv, &v); xf_done(xf);
                vk_barrier(vk);
            }
            if (c->qk_norm) {
                xf_op(xf, "q_norm", XT_NORM, "norm", l, &qr, &q, 0, 0); op_rmsnorm(vk, &qh, &L->q_norm, &qrh, c->eps); xf_done(xf);
                xf_op(xf, "k_norm", XT_NORM, "norm", l, &kr, &k, 0, 0); op_rmsnorm(vk, &kh, &L->k_norm, &krh, c->eps); xf_done(xf);
                vk_barrier(vk);
            }
            Tensor kc_new = xf_cache_rows(&L->k_cache, p0, T), vc_new = xf_cache_rows(&L->v_cache, p0, T);
            if (xf_fused(xf)) {     /* RoPE of q and k, and the K/V cache stores, in one dispatch */
                xf_op(xf, "rope_kv", XT_ATTN, "rope", l, &qp, &qr, &kr, &v);
                op_rope_kv(vk, &qrh, &krh, &v, &xf->pos, &xf->rope_ff, &qph, &L->k_cache, &L->v_cache, c->rope_dim, base, fscale, c->rope_neox,
                           bias_in_rope ? bq : 0, bias_in_rope ? bk : 0, bias_in_rope ? bv : 0);
                xf_done(xf);
            } else {
                xf_op(xf, "rope_q", XT_ATTN, "rope", l, &qp, &qr, &xf->pos, 0);
                op_rope(vk, &qrh, &xf->pos, &xf->rope_ff, &qph, c->rope_dim, base, fscale, c->rope_neox); xf_done(xf);
                xf_op(xf, "rope_k", XT_ATTN, "rope", l, &kp, &kr, &xf->pos, 0);
                op_rope(vk, &krh, &xf->pos, &xf->rope_ff, &kph, c->rope_dim, base, fscale, c->rope_neox); xf_done(xf);
                /* v is ready since the projections: its store needs no barrier after RoPE */
                xf_op(xf, "kv_store_v", XT_ATTN, "kv", l, &vc_new, &v, 0, 0); op_kv_store(vk, &v, &xf->pos, &L->v_cache); xf_done(xf);
                vk_barrier(vk);
                xf_op(xf, "kv_store_k", XT_ATTN, "kv", l, &kc_new, &kp, 0, 0); op_kv_store(vk, &kp, &xf->pos, &L->k_cache); xf_done(xf);
            }
            vk_barrier(vk);
        }
        u32 window = model_layer_is_swa(c, il) ? c->swa_window : 0;
        Tensor kc_seen = xf_cache_rows(&L->k_cache, 0, p0 + T), vc_seen = xf_cache_rows(&L->v_cache, 0, p0 + T);
        xf_op(xf, "attention", XT_ATTN, "attn", l, &att, &qp, &kc_seen, &vc_seen);
        if (T > 1 && xf->attn_flash)
            op_attention_flash(vk, &qph, &L->k_cache, &L->v_cache, &xf->pos, &atth, c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window);
        else if (xf->attn_part.nbytes)
            op_attention_split(vk, &qph, &L->k_cache, &L->v_cache, &xf->pos, &xf->attn_part, &atth,
                                c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window);
        else
            op_attention(vk, &qph, &L->k_cache, &L->v_cache, &xf->pos, &xf->scores, &atth,
                         c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window);
        xf_done(xf);
        vk_barrier(vk);
        bool glu_res = false;
        Tensor gu;          /* decode: gate and up lying back to back, one product */
        bool glu_mm = ph == PH_DECODE && xf_fused(xf) && op_gate_up_view(vk, &L->w_gate, &L->w_up, &gu);
        if (c->post_norms) {
            xf_op(xf, "attn_out", XT_ATTN, "matmul", l, &o, &att, 0, 0);
            if (ph == PH_PREFILL) xf_matmul_prefill(xf, &L->wo, &att, &o, false); else op_matmul(vk, ph, &L->wo, &att, &o);
            xf_done(xf);
            /* decode with f16 activations: when the gate/up product can take the FFN norm in its
               prologue, only the residual add runs here (the same number of dispatches), and the
               product's f16-pair lanes read the normalized row from shared memory instead of building
               their pairs from h per row (H200 gemma-2-2b: gate/up 26.4 -> 21.6 us, tg +2.5%, #83;
               with f32 activations level, so not there) */
            bool glu_norm_next = glu_mm && T == 1 && xf->act == DT_F16 && op_matmul_norm_fits(&gu, &x);
            /* and the residual add moves into that product's prologue as well, which writes the
               updated row into the other residual buffer (x2, or x again a layer later): one
               dispatch fewer per layer. H200 gemma-2-2b: tg128 427.0 -> 435.9; the prologue costs
               6.3 us of the 9.2 us the residual op took (docs/performance.md #99) */
            glu_res = glu_norm_next && xf->x2.nbytes;
            if (!glu_res) {
                vk_barrier(vk);
                if (xf_fused(xf) && !glu_norm_next && op_rmsnorm_add_norm_fits(&o)) {
                    xf_op(xf, "attn_residual_norm", XT_NORM, "norm", l, &h, &x, &o, 0);
                    op_rmsnorm_add_norm(vk, &o, &L->post_attn_norm, &x, &L->ffn_norm, &h, c->eps);
                    norm_ready = true;
                } else {
                    xf_op(xf, "attn_residual", XT_NORM, "add", l, &x, &x, &o, 0);
                    op_rmsnorm_add(vk, &o, &L->post_attn_norm, &x, c->eps);
                }
                xf_done(xf);
            }
        } else {            /* x += Wo . att: the residual add fused into the product's store */
            xf_op(xf, "attn_out", XT_ATTN, "matmul", l, &x, &att, 0, 0);
            if (ph == PH_PREFILL) xf_matmul_prefill(xf, &L->wo, &att, &x, true); else op_matmul_acc(vk, ph, &L->wo, &att, &x);
            xf_done(xf);
        }
        vk_barrier(vk);
        bool glu_norm = !glu_res && glu_mm && !norm_ready && T == 1 && op_matmul_norm_fits(&gu, &x);
        if (!norm_ready && !glu_norm && !glu_res) {
            xf_op(xf, "ffn_norm", XT_NORM, "norm", l, &h, &x, 0, 0); op_rmsnorm(vk, &x, &L->ffn_norm, &h, c->eps); xf_done(xf);
            vk_barrier(vk);
        }
        norm_ready = false;
        if (glu_res) {      /* the attention residual, the FFN norm, gate, up and the activation in one dispatch */
            Tensor xn = x.offset == xf->x.offset && x.block == xf->x.block ? xf->x2 : xf_rows(&xf->x, 1);
            xf_op(xf, "attn_residual_ffn_norm_gate_up", XT_FFN, "glu", l, &ff, &x, &o, 0);
            op_matmul_glu_res_norm(vk, &gu, &x, &o, &L->post_attn_norm, &xn, &L->ffn_norm, c->eps, &ff, c->gelu); xf_done(xf);
            x = xn;         /* the residual row lives in the other buffer from here */
        } else if (glu_norm) {     /* the FFN norm, gate, up and the activation in one dispatch */
            xf_op(xf, "ffn_norm_gate_up", XT_FFN, "glu", l, &ff, &x, 0, 0); op_matmul_glu_norm(vk, &gu, &x, &L->ffn_norm, c->eps, &ff, c->gelu); xf_done(xf);
        } else if (glu_mm) {
            /* act(gate) * up in one pass over both weights */
            xf_op(xf, "ffn_gate_up", XT_FFN, "glu", l, &ff, &h, 0, 0); op_matmul_glu(vk, &gu, &h, &ff, c->gelu); xf_done(xf);
        } else {
            xf_op(xf, "ffn_gate", XT_FFN, "matmul", l, &gate, &h, 0, 0); op_matmul(vk, ph, &L->w_gate, &h, &gate); xf_done(xf);
            xf_op(xf, "ffn_up", XT_FFN, "matmul", l, &up, &h, 0, 0); op_matmul(vk, ph, &L->w_up, &h, &up); xf_done(xf);
            vk_barrier(vk);
            xf_op(xf, "glu", XT_FFN, "glu", l, &ff, &gate, &up, 0); op_glu(vk, &gate, &up, &ff, c->gelu); xf_done(xf);
        }
        vk_barrier(vk);
        if (c->post_norms) {
            xf_op(xf, "ffn_down", XT_FFN, "ffn", l, &o, &ff, 0, 0);
            if (ph == PH_PREFILL) xf_matmul_prefill(xf, &L->w_down, &ff, &o, false); else op_matmul(vk, ph, &L->w_down, &ff, &o);
            xf_done(xf);
            vk_barrier(vk);
            if (xf_fused(xf) && il + 1 < c->n_layer && op_rmsnorm_add_norm_fits(&o)) {
                xf_op(xf, "ffn_residual_norm", XT_NORM, "norm", l, &h, &x, &o, 0);
                op_rmsnorm_add_norm(vk, &o, &L->post_ffn_norm, &x, &xf->layers[il + 1].attn_norm, &h, c->eps);
                norm_ready = true;
            } else {
                xf_op(xf, "ffn_residual", XT_NORM, "add", l, &x, &x, &o, 0);
                op_rmsnorm_add(vk, &o, &L->post_ffn_norm, &x, c->eps);
            }
            xf_done(xf);
        } else {            /* x += Wd . ff */
            xf_op(xf, "ffn_down", XT_FFN, "ffn", l, &x, &ff, 0, 0);
            if (ph == PH_PREFILL) xf_matmul_prefill(xf, &L->w_down, &ff, &x, true); else op_matmul_acc(vk, ph, &L->w_down, &ff, &x);
            xf_done(xf);
        }
        vk_barrier(vk);
    }
    /* Only the last position's logits are wanted (generation): norm and LM head on that row alone,
       when its offset keeps the binding aligned. */
    Phase hph = ph;
    xf->head_last = false;
    if (xf->want_last && T > 1) {
        u64 xrow = dtype_bytes(x.dtype, c->n_embd), hrow = dtype_bytes(hn.dtype, c->n_embd), al = vk->caps.min_offset_align;
        if (((u64)(T - 1) * xrow) % al == 0 && ((u64)(T - 1) * hrow) % al == 0) {
            x.offset += (u64)(T - 1) * xrow; x.ne[1] = 1; x.nelem = c->n_embd; x.nbytes = xrow;
            hn = xf_rows(&xf->hn, 1); logits = xf_rows(&xf->logits, 1); out_ids = xf_rows(&xf->out_ids, 1);
            hph = PH_DECODE; xf->head_last = true;
        }
    }
    /* one row (decode, or the last of a prefill): the output norm in the LM head's prologue where
       the int8 lanes run (op_matmul_norm_q8_fits) */
    bool head_norm = (T == 1 || xf->head_last) && xf_fused(xf) && op_matmul_norm_q8_fits(vk, &xf->output, &x, xf->act);
    Tensor zl = c->final_softcap > 0 ? xf_rows(&xf->zl, xf->head_last ? 1 : T) : logits, *head = &zl;   /* the LM head's output */
    if (head_norm) {
        xf_op(xf, "output_norm_lm_head", XT_LOGITS, "logits", -1, head, &x, 0, 0); op_matmul_norm(vk, &xf->output, &x, &xf->output_norm, c->eps, head); xf_done(xf);
    } else {
        xf_op(xf, "output_norm", XT_NORM, "norm", -1, &hn, &x, 0, 0); op_rmsnorm(vk, &x, &xf->output_norm, &hn, c->eps); xf_done(xf);
        vk_barrier(vk);
        xf_op(xf, "lm_head", XT_LOGITS, "logits", -1, head, &hn, 0, 0); op_matmul(vk, hph, &xf->output, &hn, head); xf_done(xf);
    }
    if (c->final_softcap > 0) {
        vk_barrier(vk);
        xf_op(xf, "softcap", XT_LOGITS, "softcap", -1, &logits, &zl, 0, 0); op_softcap(vk, &zl, &logits, c->final_softcap); xf_done(xf);
    }
    vk_barrier(vk);
    Tensor part = xf->argmax_part.nbytes ? xf_rows(&xf->argmax_part, xf->head_last ? 1 : T) : xf->argmax_part;
    xf_op(xf, "argmax", XT_SAMPLE, "sample", -1, &out_ids, &logits, 0, 0);
    op_argmax_check(vk, &logits, &out_ids, part.nbytes ? &part : 0); xf_done(xf);
}

/* The last evaluated position's logits into dst (n_vocab floats), checked for NaN/Inf. */
bool xf_last_logits(Xf *xf, u32 T, u32 p0, f32 *dst, Err *e) {
    Tensor l = xf_rows(&xf->logits, xf->head_last ? 1 : T);
    u64 nv = xf->cfg->n_vocab;
    l.offset += (xf->head_last ? 0 : (u64)(T - 1)) * nv * 4;
    l.ne[1] = 1; l.nelem = nv; l.nbytes = nv * 4;
    vk_download(xf->vk, &l, dst);
    for (u64 i = 0; i < nv; i++)
        if (!isfinite(dst[i]))
            return err_set(e, EXIT_NUMERIC, "non-finite logit (%s) at position %u, token %llu: a numeric fault; "
                           "run again with --check-nan to find the first op that produced it",
                           isnan(dst[i]) ? "NaN" : "Inf", p0 + T - 1, (unsigned long long)i);
    return true;
}

u64 xf_prefill_replays;

bool xf_forward(Xf *xf, const i32 *tokens, u32 T, u32 p0, f32 *logits, u32 *ids, Err *e) {
    if (T == 0 || T > xf->t_max) return err_set(e, EXIT_USAGE, "batch of %u tokens (1..%u)", T, xf->t_max);
    if ((u64)p0 + T > xf->n_ctx) return err_set(e, EXIT_USAGE, "positions %u..%u exceed the context of %u tokens", p0, p0 + T - 1, xf->n_ctx);
    for (u32 i = 0; i < T; i++)
        if (tokens[i] < 0 || (u32)tokens[i] >= xf->cfg->n_vocab)
            return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", tokens[i], xf->cfg->n_vocab);
    xf_chain_stop(xf);                  /* (a chained step still in flight would read ids and pos after this) */
    Tensor idv = xf_rows(&xf->ids, T);
    vk_upload(xf->vk, &idv, tokens);
    u32 pos[2] = { p0, T };
    vk_upload(xf->vk, &xf->pos, pos);
    f64 t0 = xf_debug.profile ? now_sec() : 0;
    if (T == 1 && !xf->step) {
        /* decode: recorded once per context, replayed per token (only ids and pos change) */
        if (!xf->dec.cmd) vk_rec_init(xf->vk, &xf->dec);
        if (!xf->dec.ready) {
            bool ts = xf->time_decode && xf->vk->caps.timestamps && !xf->dbg;
            if (ts && !xf->dec_ts) xf->dec_ts = vk_ts_pool(xf->vk, 2);
            vk_rec_begin(xf->vk, &xf->dec);
            if (ts) { vk_ts_reset(xf->vk, xf->dec_ts, 2); vk_ts_write(xf->vk, xf->dec_ts, 0); }
            xf_record(xf, 1, p0);
            if (ts) vk_ts_write(xf->vk, xf->dec_ts, 1);
            vk_rec_end(xf->vk, &xf->dec);
        }
        xf->n_dispatch_last = xf->dec.n_dispatch;
        vk_rec_submit(xf->vk, &xf->dec);
    } else if (!xf->step) {
        /* prefill: as decode, the recording does not depend on p0 (positions come from pos), so a
           batch of the last batch's size replays it (a prompt's full batches, bench repetitions) */
        if (!xf->pre.cmd) vk_rec_init(xf->vk, &xf->pre);
        if (!xf->pre.ready || xf->pre_t != T || xf->pre_last != xf->want_last) {
            vk_rec_begin(xf->vk, &xf->pre);
            xf_record(xf, T, p0);
            vk_rec_end(xf->vk, &xf->pre);
            xf->pre_t = T; xf->pre_last = xf->want_last; xf->pre_head_last = xf->head_last;
        } else {
            xf_prefill_replays++;
            xf->head_last = xf->pre_head_last;   /* which logits rows this recording computes (a decode recording since may have changed it) */
        }
        xf->n_dispatch_last = xf->pre.n_dispatch;
        vk_rec_submit(xf->vk, &xf->pre);
    } else {
        vk_begin(xf->vk);
        xf_record(xf, T, p0);
        xf->n_dispatch_last = xf->rec_dispatch;
        vk_submit_wait(xf->vk);
    }
    if (xf_debug.profile) xf_profile_after(xf, T, now_sec() - t0);
    if (logits) {
        Tensor l = xf_rows(&xf->logits, T);
        vk_download(xf->vk, &l, logits);
        u64 nv = xf->cfg->n_vocab;
        for (u64 i = 0; i < nv * T; i++)
            if (!isfinite(logits[i]))
                return err_set(e, EXIT_NUMERIC, "non-finite logit (%s) at position %llu, token %llu: a numeric fault; "
                               "run again with --check-nan to find the first op that produced it",
                               isnan(logits[i]) ? "NaN" : "Inf", (unsigned long long)(p0 + i / nv), (unsigned long long)(i % nv));
    }
    if (ids) {
        Tensor oi = xf_rows(&xf->out_ids, T);
        vk_download(xf->vk, &oi, xf->host_ids);
        for (u32 t = 0; t < T; t++) {
            ids[t] = xf->host_ids[2 * t];
            if (xf->host_ids[2 * t + 1])
                return err_set(e, EXIT_NUMERIC, "the logits at position %u hold a NaN or an Inf (flagged by the argmax kernel): "
                               "a numeric fault; run again with --check-nan to find the first op that produced it", p0 + t);
        }
    }
    return true;
}

/* ---- greedy decode with steps in flight ---- */
bool xf_chain_ok(const Xf *xf) {
    return !xf->step && !xf->dbg && !xf_debug.trace && !xf_debug.check_nan && !xf_debug.profile && !xf_debug.inject;
}

/* the id word of chained step j's [id, flag] in recording i (the next step's embedding input) */
static Tensor xf_chain_id(const Xf *xf, u32 i, u32 j) {
    Tensor v = xf->chain_out[i][j];
    v.ndim = 1; v.ne[0] = 1; v.ne[1] = 1; v.nelem = 1; v.nbytes = 4;
    return v;
}

/* queues recording chain_next: the steps at chain_p .. chain_p + K - 1 (those past the context at its last position) */
static void xf_chain_submit(Xf *xf) {
    const u32 K = EDGE_CHAIN_STEPS;
    u32 i = xf->chain_next;
    VkRec *r = &xf->chain[i];
    if (!r->cmd) vk_rec_init(xf->vk, r);
    if (!r->ready) {                    /* step j: its id from step j - 1's chain_out (j = 0: the other recording's last), its position from chain_pos[i][j], its argmax into chain_out[i][j] */
        Tensor ids = xf->ids, pos = xf->pos, oi = xf->out_ids;
        vk_rec_begin(xf->vk, r);
        for (u32 j = 0; j < K; j++) {
            if (j) vk_barrier(xf->vk);
            xf->ids = j ? xf_chain_id(xf, i, j - 1) : xf_chain_id(xf, i ^ 1, K - 1);
            xf->pos = xf->chain_pos[i][j]; xf->out_ids = xf->chain_out[i][j];
            xf_record(xf, 1, xf->chain_p + j);
        }
        vk_rec_end(xf->vk, r);
        xf->ids = ids; xf->pos = pos; xf->out_ids = oi;
    }
    for (u32 j = 0; j < K; j++) {
        u32 pos[2] = { MIN(xf->chain_p + j, xf->n_ctx - 1), 1 };
        vk_upload(xf->vk, &xf->chain_pos[i][j], pos);
    }
    vk_rec_submit_async(xf->vk, r);
    xf->n_dispatch_last = r->n_dispatch / K;
    xf->chain_p += K;
    xf->chain_n += K;
    xf->chain_next ^= 1;
}

bool xf_chain_start(Xf *xf, i32 token, u32 p0, Err *e) {
    if (!xf_chain_ok(xf)) return err_set(e, EXIT_USAGE, "chained decode with a debug tool active");
    if (token < 0 || (u32)token >= xf->cfg->n_vocab) return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", token, xf->cfg->n_vocab);
    if (p0 >= xf->n_ctx) return err_set(e, EXIT_USAGE, "position %u is past the context of %u tokens", p0, xf->n_ctx);
    xf_chain_stop(xf);
    Tensor id = xf_chain_id(xf, xf->chain_next ^ 1, EDGE_CHAIN_STEPS - 1);   /* the first step's input */
    u32 t = (u32)token;
    vk_upload(xf->vk, &id, &t);
    xf->chain_p = p0;
    xf_chain_submit(xf);
    return true;
}

bool xf_chain_next(Xf *xf, bool more, u32 *id, Err *e) {
    const u32 K = EDGE_CHAIN_STEPS;
    if (!xf->chain_n) return err_set(e, EXIT_USAGE, "xf_chain_next without a step in flight");
    u32 i = xf->chain_next ^ ((xf->chain_n + xf->chain_ret) / K == 2 ? 0 : 1);   /* the oldest recording (of one or two) */
    if (!xf->chain_read) {              /* its steps not yet read back: queue the next recording, then wait */
        if (more && xf->chain_n <= K && xf->chain_p < xf->n_ctx) { xf_chain_submit(xf); i = xf->chain_next; }
        vk_rec_wait(xf->vk, &xf->chain[i]);
        for (u32 j = 0; j < K; j++) vk_download(xf->vk, &xf->chain_out[i][j], xf->chain_ids[j]);
        xf->chain_read = true; xf->chain_ret = 0;
    }
    u32 j = xf->chain_ret, p = xf->chain_p - xf->chain_n;
    xf->chain_n--;
    if (++xf->chain_ret == K) { xf->chain_read = false; xf->chain_ret = 0; }
    if (xf->chain_ids[j][1])
        return err_set(e, EXIT_NUMERIC, "the logits at position %u hold a NaN or an Inf (flagged by the argmax kernel): "
                       "a numeric fault; run again with --check-nan to find the first op that produced it", p);
    *id = xf->chain_ids[j][0];
    return true;
}

void xf_chain_stop(Xf *xf) {
    for (int i = 0; i < 2; i++) vk_rec_wait(xf->vk, &xf->chain[i]);
    xf->chain_n = xf->chain_ret = 0;
    xf->chain_read = false;
}

/* GPU time of the last replayed decode step in ns (edge bench, time_decode), or 0 */
f64 xf_decode_gpu_ns(Xf *xf) {
    if (!xf->dec_ts || !xf->dec.ready) return 0;
    u64 t[2];
    vk_ts_read(xf->vk, xf->dec_ts, 2, t);
    return (f64)((t[1] - t[0]) & xf->vk->caps.timestamp_mask) * xf->vk->caps.timestamp_period_ns;
}

void xf_plan_print(const Xf *xf) {
    out("device memory plan for %s (context %u, batch %u, activations %s, KV %s):\n",
        xf->cfg->name, xf->n_ctx, xf->t_max, dtype_name[xf->act], dtype_name[xf->kv]);
    out("  weights arena: %llu bytes (tensor bytes %llu)\n", (unsigned long long)xf->plan_w, (unsigned long long)xf->wa.used);
    out("  state arena:   %llu bytes (tensor bytes %llu)\n", (unsigned long long)xf->plan_s, (unsigned long long)xf->sa.used);
}
