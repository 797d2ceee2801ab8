/* transformer.c — implementation of transformer.h: the GPU forward pass.

   One batch = one command buffer: embedding, then per layer
     h = norm(x) -> q,k,v = W.h (+bias) -> [q/k norm] -> RoPE -> KV store -> attention
     -> o = Wo.att -> x += o (or x += norm(o) with post norms) -> h = norm(x)
     -> ff = act(Wg.h) * (Wu.h) -> o = Wd.ff -> x += o (or post-norm) ,
   then the final norm, the LM head, the final softcap and argmax. */

static DType dtype_from_ggml(u32 t) {
    for (u32 d = 0; d < DT_COUNT; d++)
        if (dtype_info[d].role == DR_WEIGHT && dtype_info[d].ggml == (i32)t) return (DType)d;
    return DT_COUNT;
}

static Tensor xf_weight(Xf *xf, DevArena *a, const GgufTensor *g) {
    Tensor t; memset(&t, 0, sizeof t);
    if (!g) return t;
    DType dt = dtype_from_ggml(g->type);
    if (dt == DT_COUNT) die(EXIT_MODEL, "tensor '%.*s': type %s has no GPU kernels", (int)g->name.len, g->name.ptr, ggml_type_name(g->type));
    char *name = (char *)arena_push(&xf->w.names, g->name.len + 1, 1);   /* GGUF names are not NUL-terminated */
    memcpy(name, g->name.ptr, g->name.len);
    return vk_weight(a, name, dt, g->ndim, g->ne);
}

/* Bytes of a group of weights placed back to back (each rounded to 16 bytes as vk_tensor_at reserves it). */
static u64 xf_group_weight_bytes(const GgufTensor *const *g, u32 n) {
    u64 b = 0;
    for (u32 i = 0; i < n; i++) if (g[i]) b += align_up(g[i]->nbytes, 16);   /* (a regrouped type keeps its bytes) */
    return b;
}

static Tensor xf_act(DevArena *a, const char *name, DType dt, u64 n0, u64 n1) {
    u64 ne[2] = { n0, n1 };
    return vk_tensor(a, name, dt, 2, ne);
}

static void xf_path_decide(Xf *xf);
static void xf_layer_views(Xf *xf);
static bool xf_batch_tiles(const Xf *xf);
static Tensor xf_rows(const Tensor *t, u32 T);

/* Bytes of one product's split partials at N rows with op_matmul_batch_slices' slices (an upper bound:
   op_matmul_split_begin may take fewer), and the offset alignment it may skip before them; 0: no split. */
static u64 xf_part_bytes(const Xf *xf, const Tensor *W, const Tensor *X, u32 s) {
    u64 M = W->nelem / W->ne[0];
    return s >= 2 ? (u64)s * M * (X->nelem / W->ne[0]) * 4 + MAX(xf->vk->caps.min_offset_align, 1) : 0;
}

/* Bytes of n products' partials side by side (xf_products), X's rows each (a view not made, nbytes 0: none). */
static u64 xf_group_bytes(const Xf *xf, const Tensor *const *W, u32 n, const Tensor *X) {
    u64 b = 0;
    for (u32 i = 0; i < n; i++) if (W[i]->nbytes) b += xf_part_bytes(xf, W[i], X, op_matmul_batch_slices(xf->vk, W[i], X));
    return b;
}

/* Bytes of a batched step's split partials (xf_products, with xf->batch_tiles): the most one group of
   a layer's products takes side by side at n_seq rows: q, k and v as each grouping xf_qkv may record
   them (apart, q|k and v, q|k|v: the views of xf_layer_views), gate and up, attn_out, ffn_down. Sized by
   the context's sequences, not a step's rows, so that whether a product splits does not depend on how
   many rows a step has. */
static u64 xf_batch_split_bytes(Xf *xf) {
    if (!xf->batch_tiles) return 0;
    Tensor h = xf_rows(&xf->s.h, xf->n_seq), att = xf_rows(&xf->s.att, xf->n_seq), ff = xf_rows(&xf->s.ff, xf->n_seq);
    u64 most = 0;
    xf_layer_views(xf);
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        const XfLayer *L = &xf->w.layers[il];
        const Tensor *qkv[3] = { &L->wq, &L->wk, &L->wv }, *qk_v[2] = { &L->wqk, &L->wv }, *gu[2] = { &L->w_gate, &L->w_up };
        const Tensor *one[3] = { &L->wqkv, &L->wo, &L->w_down };
        u64 b[6] = { xf_group_bytes(xf, qkv, 3, &h), xf_group_bytes(xf, qk_v, 2, &h), xf_group_bytes(xf, &one[0], 1, &h),
                     xf_group_bytes(xf, gu, 2, &h), xf_group_bytes(xf, &one[1], 1, &att), xf_group_bytes(xf, &one[2], 1, &ff) };
        for (u32 i = 0; i < 6; i++) most = MAX(most, b[i]);
    }
    return most;
}

/* The most k slices a prefill attn_out / ffn_down product takes (op_matmul_split_max, at most one per
   256 elements of the longer row: split_begin's slices are multiples of 256); 1 without batches. */
static u32 xf_split_max(const Xf *xf) {
    const ModelConfig *c = xf->cfg;
    if (xf->t_max < 2) return 1;
    u64 k = MAX((u64)c->n_head * c->head_dim, (u64)c->n_ff);
    return (u32)MIN((u64)op_matmul_split_max(xf->vk), (k + 255) / 256);
}

/* One logits row serves every batch when the last row of x and of the final norm's output can be
   bound on their own at any batch size (xf_output's head_last views): their rows are whole multiples
   of the device's offset alignment. */
static bool xf_one_row(const Xf *xf) {
    u64 al = MAX(xf->vk->caps.min_offset_align, 1), n = xf->cfg->n_embd;
    return xf->t_max == 1 || (dtype_bytes(DT_F32, n) % al == 0 && dtype_bytes(xf->act, n) % al == 0);
}

/* Rows of the logits buffers: a batch's (T), or with one_row the last row of a prefill batch, and
   one per sequence for a batched decode step (xf_decode_rows). */
static u32 xf_logits_rows(const Xf *xf) { return xf->one_row ? xf->n_seq : xf->t_max; }

/* Cache rows per sequence of layer il: the context, or for a sliding-window layer a ring of its window
   plus a batch less one (a prefill batch of T tokens writes its T rows while its first query still
   reads the window before it: window + T - 1 positions, each at row position % rows). */
static u32 xf_kv_rows(const Xf *xf, u32 il) {
    const ModelConfig *c = xf->cfg;
    if (!model_layer_is_swa(c, il) || !c->swa_window) return xf->n_ctx;
    return (u32)MIN((u64)xf->n_ctx, (u64)c->swa_window + xf->t_max - 1);
}

/* The allocation sequence, run twice: on planning arenas, then on the real ones. */
static void xf_alloc(Xf *xf) {
    arena_pop_to(&xf->w.names, 0);
    const ModelConfig *c = xf->cfg;
    const ModelWeights *w = &xf->m->w;
    DevArena *wa = &xf->w.arena, *sa = &xf->s.arena;
    xf->w.tok_embd = xf_weight(xf, wa, w->tok_embd);
    xf->w.output_norm = xf_weight(xf, wa, w->output_norm);
    xf->w.output = c->tied_output ? xf->w.tok_embd : xf_weight(xf, wa, w->output);
    u64 nff[1] = { c->rope_dim / 2 };
    xf->w.rope_ff = vk_tensor(wa, "rope_freqs", DT_F32, 1, nff);     /* the model's factors, or ones */
    u32 qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim, T = xf->t_max;
    for (u32 il = 0; il < c->n_layer; il++) {
        const ModelLayer *L = &w->layers[il];
        XfLayer *X = &xf->w.layers[il];
        X->attn_norm = xf_weight(xf, wa, L->attn_norm);
        const GgufTensor *qkv[3] = { L->wq, L->wk, L->wv }, *gu[2] = { L->w_gate, L->w_up };
        vk_arena_keep(wa, xf_group_weight_bytes(qkv, 3), 3);   /* q|k|v and gate|up: one view each (xf_layer_views) */
        X->wq = xf_weight(xf, wa, L->wq); X->wk = xf_weight(xf, wa, L->wk); X->wv = xf_weight(xf, wa, L->wv);
        X->bq = xf_weight(xf, wa, L->bq); X->bk = xf_weight(xf, wa, L->bk); X->bv = xf_weight(xf, wa, L->bv);
        X->q_norm = xf_weight(xf, wa, L->q_norm); X->k_norm = xf_weight(xf, wa, L->k_norm);
        X->wo = xf_weight(xf, wa, L->wo);
        X->post_attn_norm = xf_weight(xf, wa, L->post_attn_norm);
        X->ffn_norm = xf_weight(xf, wa, L->ffn_norm);
        vk_arena_keep(wa, xf_group_weight_bytes(gu, 2), 2);
        X->w_gate = xf_weight(xf, wa, L->w_gate); X->w_up = xf_weight(xf, wa, L->w_up); X->w_down = xf_weight(xf, wa, L->w_down);
        X->post_ffn_norm = xf_weight(xf, wa, L->post_ffn_norm);
        bool swa = model_layer_is_swa(c, il);   /* (the names tell edge plan the layer kinds apart) */
        u64 kvs[3] = { op_kv_width(xf->kv, kvd), xf_kv_rows(xf, il), xf->n_seq };   /* n_seq slots (ops.h) */
        xf->s.kv[il].k = vk_tensor(sa, swa ? "k_cache_swa" : "k_cache", xf->kv, 3, kvs);
        xf->s.kv[il].v = vk_tensor(sa, swa ? "v_cache_swa" : "v_cache", xf->kv, 3, kvs);
    }
    u64 one[1] = { T }, rows[1] = { op_rows_words(T) }, two[1] = { op_rows_words(1) };
    xf->s.ids = vk_tensor(sa, "ids", DT_U32, 1, one);
    xf->s.pos = vk_tensor(sa, "pos", DT_U32, 1, rows);
    u64 idf1[2] = { 2, 1 };
    for (u32 i = 0; i < 2; i++)
        for (u32 j = 0; j < EDGE_CHAIN_STEPS; j++) {
            xf->s.chain_pos[i][j] = vk_tensor(sa, "chain_pos", DT_U32, 1, two);
            xf->s.chain_out[i][j] = vk_tensor(sa, "chain_out", DT_U32, 2, idf1);
        }
    xf->s.x = xf_act(sa, "x", DT_F32, c->n_embd, T);
    if (c->post_norms && xf->act == DT_F16) xf->s.x2 = xf_act(sa, "x2", DT_F32, c->n_embd, xf->n_seq);   /* see glu_res in xf_record */
    xf->s.h = xf_act(sa, "h", xf->act, c->n_embd, T);
    /* q/k stay f32 where a per-head f32 norm follows (gemma3, qwen3), and v with them, so that one
       product makes all three (rope_kv_norm reads f32 q, k, v); everything fed to a matmul, RoPE or
       attention is in the activation dtype. */
    DType qk = c->qk_norm ? DT_F32 : xf->act;
    xf->s.q = xf_act(sa, "q", qk, qd, T);
    xf->s.k = xf_act(sa, "k", qk, kvd, T);
    xf->s.v = xf_act(sa, "v", qk, kvd, T);
    /* decode's q, k and v side by side for one product over their weights */
    xf->s.qkv = xf_act(sa, "qkv", qk, qd + 2 * kvd, xf->n_seq);
    if (c->qk_norm) { xf->s.qr = xf_act(sa, "q_normed", xf->act, qd, T); xf->s.kr = xf_act(sa, "k_normed", xf->act, kvd, T); }
    xf->s.qp = xf_act(sa, "q_rope", xf->act, qd, T);
    xf->s.kp = xf_act(sa, "k_rope", xf->act, kvd, T);
    /* the attention output, the split's partials and o start on EDGE_VK_ATTN_ALIGN bytes (the rest on
       the device's offset alignment: the residual rows x and h at 256 bytes made llama's prefill 5% slower) */
    sa->align = EDGE_VK_ATTN_ALIGN;
    xf->s.att = xf_act(sa, "att", xf->act, qd, T);
    /* attention: batches through attn_flash where it fits (XfPath.attn_flash: no scratch); otherwise, and
       for decode, split over key chunks where the head size allows,
       with partials for Q queries at a time: as many as fit in the bytes the one-workgroup-per-query
       kernel's scores scratch would take (n_ctx x n_head x T f32), so the split never needs more
       memory; otherwise that kernel and its scratch */
    if (op_attention_split_fits(c->head_dim, xf->n_ctx)) {
        u64 per_q = (u64)op_attn_part_row(c->head_dim) * op_attn_chunks(xf->n_ctx) * c->n_head;
        u64 Q = (u64)xf->n_ctx * c->n_head * T / per_q;
        Q = MAX(1, MIN(Q, T));
        u64 ap[4] = { op_attn_part_row(c->head_dim), op_attn_chunks(xf->n_ctx), c->n_head, Q };
        xf->s.attn_part = vk_tensor(sa, "attn_part", DT_F32, 4, ap);
    } else {
        u64 sc[3] = { xf->n_ctx, c->n_head, T };
        xf->s.scores = vk_tensor(sa, "scores", DT_F32, 3, sc);
    }
    xf->s.o = xf_act(sa, "o", DT_F32, c->n_embd, T);
    sa->align = 0;
    xf->s.gate = xf_act(sa, "gate", xf->act, c->n_ff, T);
    xf->s.up = xf_act(sa, "up", xf->act, c->n_ff, T);
    xf->s.ff = xf_act(sa, "ff", xf->act, c->n_ff, T);
    xf->s.hn = xf_act(sa, "h_final", xf->act, c->n_embd, T);
    u32 LR = xf_logits_rows(xf);
    xf->s.logits = xf_act(sa, "logits", DT_F32, c->n_vocab, LR);
    if (c->final_softcap > 0) xf->s.zl = xf_act(sa, "logits_raw", DT_F32, c->n_vocab, LR);
    xf->batch_tiles = xf_batch_tiles(xf);
    u32 S = xf_split_max(xf);
    u64 pre = xf->one_row && S >= 2 ? (u64)c->n_embd * S * T : 0, part[1] = { MAX(pre, xf_batch_split_bytes(xf) / 4) };
    if (part[0]) xf->s.split_part = vk_tensor(sa, "splitk_part", DT_F32, 1, part);
    u64 idf[2] = { 2, T };
    xf->s.out_ids = vk_tensor(sa, "out_ids", DT_U32, 2, idf);   /* [id, NaN/Inf flag] per row */
    u32 G = op_argmax_slices(c->n_vocab);
    if (G > 1) { u64 np[2] = { 3 * (u64)G, LR }; xf->s.argmax_part = vk_tensor(sa, "argmax_part", DT_U32, 2, np); }
    xf_path_decide(xf);
}

static void xf_debug_init(Xf *xf);
static void xf_debug_free(Xf *xf);
static void xf_profile_after(Xf *xf, Phase ph, u32 T, f64 wall_s);

static void xf_upload_weight(Vk *vk, const Tensor *t, const GgufTensor *g) { if (g) vk_upload(vk, t, g->data); }

/* The configuration and the host-side tables, then the two planning arenas: the start of xf_plan
   and of describe mode (xf_describe). */
static void xf_setup(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, DType kv, u32 n_seq) {
    memset(xf, 0, sizeof *xf);
    xf->vk = vk; xf->m = m; xf->cfg = &m->cfg; xf->act = act; xf->kv = kv;
    xf->n_ctx = n_ctx; xf->t_max = t_max; xf->n_seq = MAX(n_seq, 1u);
    xf->w.layers = calloc(xf->cfg->n_layer, sizeof *xf->w.layers);
    xf->s.kv = calloc(xf->cfg->n_layer, sizeof *xf->s.kv);
    xf->s.host_ids = calloc(2 * (u64)t_max, sizeof(u32));
    xf->s.host_rows = calloc(op_rows_words(t_max), sizeof(u32));
    xf->r.multi = calloc(xf->n_seq, sizeof *xf->r.multi);
    xf->r.multi_keys = calloc(xf->n_seq, sizeof *xf->r.multi_keys);
    arena_init(&xf->w.names, "tensor names", 64 + (u64)xf->cfg->n_layer * 16 * 64 + 4096);
    vk_arena_plan(vk, &xf->w.arena, "weights");
    vk_arena_plan(vk, &xf->s.arena, "state");
}

/* Validates, then runs the allocation sequence on planning arenas (each placed tensor goes to
   on_tensor when set): plan_w and plan_s are the exact bytes the real arenas need. */
bool xf_plan(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, const XfOpts *o,
             void (*on_tensor)(void *ctx, const Tensor *t), void *ctx, Err *e) {
    memset(xf, 0, sizeof *xf);
    DType kv = o ? o->kv : act;
    if (act != DT_F32 && act != DT_F16) return err_set(e, EXIT_USAGE, "activation dtype must be f32 or f16");
    if (kv != DT_F32 && kv != DT_F16 && kv != DT_Q8_0) return err_set(e, EXIT_USAGE, "KV cache dtype must be f32, f16 or q8_0");
    u32 kvd = m->cfg.n_head_kv * m->cfg.head_dim;
    if (kv == DT_Q8_0 && !op_kv_width(kv, kvd))
        return err_set(e, EXIT_USAGE, "--cache-type q8_0: model '%s' has a KV width (n_head_kv x head_dim) of %u, not a multiple of 32 (q8_0 blocks hold 32 values)",
                       m->cfg.name, kvd);
    if (kv == DT_F16 && !vk->caps.storage16)
        return err_set(e, EXIT_DEVICE, "--cache-type f16 needs storageBuffer16BitAccess, which '%s' lacks (use --cache-type f32)", vk->props.deviceName);
    if (act == DT_F16 && !vk->caps.f16_arith) return err_set(e, EXIT_DEVICE, "--act f16 needs shaderFloat16, which '%s' lacks (use --act f32)", vk->props.deviceName);
    if (m->cfg.rope_dim > EDGE_MAX_HEAD_DIM || m->cfg.head_dim > EDGE_MAX_HEAD_DIM)
        return err_set(e, EXIT_MODEL, "head_dim %u / rope_dim %u: the GPU kernels handle at most %u", m->cfg.head_dim, m->cfg.rope_dim, EDGE_MAX_HEAD_DIM);
    u32 n_seq = o && o->n_seq ? o->n_seq : 1;
    if (n_ctx == 0 || t_max == 0 || (t_max > n_ctx && t_max > n_seq) || n_seq > t_max)
        return err_set(e, EXIT_USAGE, "bad context %u / batch %u / sequences %u", n_ctx, t_max, n_seq);
    xf_setup(xf, vk, m, n_ctx, t_max, act, kv, n_seq);
    xf->one_row = o && o->last_row && xf_one_row(xf);
    /* plan: the allocation sequence on the planning arenas */
    xf->w.arena.on_tensor = xf->s.arena.on_tensor = on_tensor;
    xf->w.arena.on_ctx = xf->s.arena.on_ctx = ctx;
    xf_alloc(xf);
    xf->w.plan = vk_arena_plan_bytes(&xf->w.arena);
    xf->s.plan = vk_arena_plan_bytes(&xf->s.arena);
    return true;
}

bool xf_init(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, const XfOpts *o, Err *e) {
    if (!xf_plan(xf, vk, m, n_ctx, t_max, act, o, 0, 0, e)) return false;
    if (!vk_arena_init(vk, &xf->w.arena, "weights", xf->w.plan, e)) { xf_free(xf); return false; }
    if (!vk_arena_init(vk, &xf->s.arena, "state", xf->s.plan, e)) { xf_free(xf); return false; }
    xf_alloc(xf);
    const ModelWeights *w = &m->w;
    xf_upload_weight(vk, &xf->w.tok_embd, w->tok_embd);
    xf_upload_weight(vk, &xf->w.output_norm, w->output_norm);
    if (!xf->cfg->tied_output) xf_upload_weight(vk, &xf->w.output, w->output);
    f32 ff[EDGE_MAX_HEAD_DIM / 2];
    for (u32 i = 0; i < xf->cfg->rope_dim / 2; i++) ff[i] = 1.0f;
    if (w->rope_freqs) dequant_row(w->rope_freqs->type, w->rope_freqs->data, ff, xf->cfg->rope_dim / 2);
    vk_upload(vk, &xf->w.rope_ff, ff);
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        const ModelLayer *L = &w->layers[il]; XfLayer *X = &xf->w.layers[il];
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
    for (u32 lv = 0; lv < XF_KEY_LEVELS; lv++) {
        if (xf->r.dec[lv].cmd) vk_rec_free(xf->vk, &xf->r.dec[lv]);
        for (int i = 0; i < 2; i++) if (xf->r.chain[i][lv].cmd) vk_rec_free(xf->vk, &xf->r.chain[i][lv]);
    }
    if (xf->r.dec_ts) vk_ts_pool_free(xf->vk, xf->r.dec_ts);
    if (xf->r.pre.cmd) vk_rec_free(xf->vk, &xf->r.pre);
    if (xf->w.arena.vk) vk_arena_free(&xf->w.arena);
    if (xf->s.arena.vk) vk_arena_free(&xf->s.arena);
    xf_debug_free(xf);
    for (u32 i = 0; xf->r.multi && i < xf->n_seq; i++) if (xf->r.multi[i].cmd) vk_rec_free(xf->vk, &xf->r.multi[i]);
    free(xf->w.layers); free(xf->s.kv); free(xf->s.host_ids); free(xf->s.host_rows); free(xf->r.multi); free(xf->r.multi_keys);
    for (int ph = 0; ph < PH_COUNT; ph++) free(xf->path[ph].layer);
    free(xf->batch.layer);
    if (xf->w.names.base) arena_free(&xf->w.names);
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

/* Rows r0 .. r0+n-1 of a (kv_dim, n_ctx) cache: what the debug tools read, never more (a ring's rows
   0 .. n-1 when the positions run past its rows). */
static Tensor xf_cache_rows(const Tensor *c, u32 r0, u32 n) {
    Tensor v = *c;
    u32 rows = (u32)c->ne[1];
    if ((u64)r0 + n > rows) { r0 = 0; n = MIN(n, rows); }
    u64 rb = dtype_bytes(c->dtype, c->ne[0]);
    v.ne[1] = n; v.nelem = c->ne[0] * n; v.nbytes = rb * n; v.offset = c->offset + rb * r0;
    return v;
}

/* q, k and v of T tokens as views of xf->qkv (side by side in each row of m elements: a batched
   step's rows, m = the width of the product that made them), when their offsets can be bound. Each
   view's binding reaches its last row; ops that read them take m as their row stride. */
static bool xf_qkv_views(const Xf *xf, u32 T, u64 m, Tensor *q, Tensor *k, Tensor *v) {
    const ModelConfig *c = xf->cfg;
    DType dt = xf->s.qkv.dtype;
    u64 qd = (u64)c->n_head * c->head_dim, kvd = (u64)c->n_head_kv * c->head_dim, al = xf->vk->caps.min_offset_align;
    u64 ok = dtype_bytes(dt, qd), ov = dtype_bytes(dt, qd + kvd);
    if (ok % al || ov % al || q->dtype != dt || k->dtype != dt) return false;
    Tensor t[3];
    u64 off[3] = { 0, ok, ov }, n[3] = { qd, kvd, kvd };
    for (int i = 0; i < 3; i++) {
        t[i] = xf->s.qkv;
        t[i].ne[0] = n[i]; t[i].ne[1] = T; t[i].nelem = n[i] * T; t[i].nbytes = dtype_bytes(dt, (T - 1) * m + n[i]); t[i].offset += off[i];
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
static void xf_rec_start(Xf *xf, Phase ph, u32 T, u32 p0);

/* Fused kernels (rope_kv ...) run unless a debug tool inspects or poisons each op's output
   (--check-nan, --trace of values, EDGE_INJECT_NAN): those see the unfused ops, one output each. */
static bool xf_fused(const Xf *xf) { return !xf->d.step && !xf_debug.inject; }

/* ---- the kernel-path plan ---------------------------------------------------------------- */
/* Views of each layer's weights that lie back to back: wq+wk(+wv) and w_gate+w_up (nbytes 0: not). */
static void xf_layer_views(Xf *xf) {
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        XfLayer *L = &xf->w.layers[il];
        memset(&L->wqk, 0, sizeof L->wqk); memset(&L->wqkv, 0, sizeof L->wqkv); memset(&L->gu, 0, sizeof L->gu);
        if (op_concat_rows(xf->vk, &L->wq, &L->wk, &L->wqk) && !op_concat_rows(xf->vk, &L->wqk, &L->wv, &L->wqkv))
            memset(&L->wqkv, 0, sizeof L->wqkv);
        if (!op_gate_up_view(xf->vk, &L->w_gate, &L->w_up, &L->gu)) memset(&L->gu, 0, sizeof L->gu);
    }
}

/* Decode's q/k/v products of one layer: one over q, k, v where its three weights lie back to back and
   the three outputs can be bound side by side in xf->s.qkv; q+k and v; or three. With k-quants, the
   RoPE/KV-store epilogue where the products take it, and the attention norm in their prologue. */
static void xf_path_qkv(const Xf *xf, const XfLayer *L, XfBlockPath *b) {
    Tensor q = xf->s.q, k = xf->s.k, v = xf->s.v, x1 = xf_rows(&xf->s.x, 1), h1 = xf_rows(&xf->s.h, 1);
    bool rows = xf->s.qkv.nbytes && xf_qkv_views(xf, 1, 0, &q, &k, &v);
    b->qkv = !rows || !L->wqk.nbytes || xf->kv == DT_Q8_0 ? XQ_SEPARATE : L->wqkv.nbytes ? XQ_QKV : XQ_QK;   /* (q8_0: the plain ops read contiguous rows) */
    if (b->qkv == XQ_SEPARATE) return;
    const Tensor *w = b->qkv == XQ_QKV ? &L->wqkv : &L->wqk;
    if (xf->cfg->qk_norm) {   /* RoPE after the per-head norms (rope_kv_norm): the norm prologue alone */
        b->qkv_norm = op_matmul_norm_fits(w, &x1, xf->act) && (b->qkv == XQ_QKV || op_matmul_norm_fits(&L->wv, &x1, xf->act));
        return;
    }
    b->qkv_rope = op_matmul_rope_fits(w, &h1) && (b->qkv == XQ_QKV || op_matmul_rope_fits(&L->wv, &h1));
    b->qkv_norm = b->qkv_rope && op_matmul_norm_fits(w, &x1, xf->act) && (b->qkv == XQ_QKV || op_matmul_norm_fits(&L->wv, &x1, xf->act));
}

/* Decode's FFN entry of one layer: gate/up in one pass where its weights lie back to back, with the
   FFN norm (and for post-norm models with f16 activations, the attention residual too) in its
   prologue where the row fits; and whether the attention residual add makes the FFN norm itself. */
static void xf_path_ffn(const Xf *xf, const XfLayer *L, bool res_norm, XfBlockPath *b) {
    Tensor x1 = xf_rows(&xf->s.x, 1);
    bool gu = L->gu.nbytes, gu_norm = gu && op_matmul_norm_fits(&L->gu, &x1, xf->act);
    if (gu_norm && xf->cfg->post_norms && xf->act == DT_F16 && xf->s.x2.nbytes) { b->ffn = XF_GLU_RES_NORM; b->attn_res_norm = false; }
    else { b->attn_res_norm = res_norm; b->ffn = !gu ? XF_GATE_UP : gu_norm && !res_norm ? XF_GLU_NORM : XF_GLU; }
}

/* Do batched steps (xf_decode_rows) run the prefill products, each weight read once for all rows? From
   EDGE_BATCH_TILES_MIN sequences where they run on cooperative matrices (env EDGE_BATCH_TILES=N: from N
   sequences on any device; 0: never). A lone decode step's lanes cost each row its own arithmetic, ~0.4 ms
   per row of llama-3.2-1b on an H100 (docs/perf-log.md, session 22). Decided by the context's sequences,
   not by a step's rows, so that a prompt's arithmetic does not depend on what else is in the batch (and
   the split over k by the weight's shape alone: op_matmul_batch_slices); below it each row is computed
   as a lone decode step (docs/usage.md, "Many prompts at once"). */
static bool xf_batch_tiles(const Xf *xf) {
    i64 from = edge_opt.batch_tiles.set ? edge_opt.batch_tiles.v : EDGE_BATCH_TILES_MIN;
    if (from < 1 || xf->n_seq < 2 || xf->n_seq < from) return false;
    Tensor h = xf_rows(&xf->s.h, xf->n_seq);
    return edge_opt.batch_tiles.set || op_matmul_cm_fits(xf->vk, PH_PREFILL, &xf->w.layers[0].w_gate, &h);
}

/* The batched steps' path on the prefill products: decode's q/k/v grouping (one product's rows side by
   side in xf->s.qkv, rope_kv reading them with their stride) and RoPE/KV-store choices without the decode
   entries' prologues and epilogues, prefill's FFN (gate, up, glu), the norms and the LM head as ops of
   their own, and attention split over key chunks per row (no attn_flash). */
static void xf_path_batch(Xf *xf) {
    const XfPath *d = &xf->path[PH_DECODE], *pre = &xf->path[PH_PREFILL];
    XfBlockPath *layer = xf->batch.layer ? xf->batch.layer : calloc(xf->cfg->n_layer, sizeof *layer);
    xf->batch = *d;
    xf->batch.layer = layer; xf->batch.head_norm = false; xf->batch.attn_flash = false;
    for (u32 il = 0; il < xf->cfg->n_layer; il++)
        layer[il] = (XfBlockPath){ .qkv = d->layer[il].qkv, .attn_res_norm = pre->layer[il].attn_res_norm, .ffn = XF_GATE_UP };
}

/* Both phases' paths, from the config, the device and where the tensors were placed. */
static void xf_path_decide(Xf *xf) {
    const ModelConfig *c = xf->cfg;
    xf_layer_views(xf);
    Tensor x1 = xf_rows(&xf->s.x, 1), o1 = xf_rows(&xf->s.o, 1);
    bool res_norm = c->post_norms && op_rmsnorm_add_norm_fits(&o1);
    for (int ph = PH_PREFILL; ph <= PH_DECODE; ph++) {
        XfPath *p = &xf->path[ph];
        XfBlockPath *layer = p->layer ? p->layer : calloc(c->n_layer, sizeof *layer);
        bool rk = xf->kv != DT_Q8_0;   /* a q8_0 cache: RoPE, then kv_store quantizes whole blocks (no rope_kv, no epilogue) */
        *p = (XfPath){ .fused = true, .rope_kv = rk, .bias_in_rope = rk && c->qkv_bias && !c->qk_norm, .norm_in_rope = rk && c->qk_norm,
                       .ffn_res_norm = res_norm,
                       .head_norm = op_matmul_norm_q8_fits(xf->vk, &xf->w.output, &x1, xf->act), .layer = layer,
                       .attn_flash = ph == PH_PREFILL && op_attention_flash_fits(xf->vk, c->head_dim, xf->kv, xf->act) };
        for (u32 il = 0; il < c->n_layer; il++) {
            XfBlockPath *b = &layer[il];
            *b = (XfBlockPath){ .attn_res_norm = res_norm };
            if (ph == PH_DECODE) { xf_path_qkv(xf, &xf->w.layers[il], b); xf_path_ffn(xf, &xf->w.layers[il], res_norm, b); }
        }
    }
    if (xf->batch_tiles) xf_path_batch(xf);     /* (xf->batch_tiles: xf_alloc, which sizes its split partials) */
}

/* The same path with every fused kernel off: what the debug tools that read each op's output record. */
static XfPath xf_path_unfused(const XfPath *p) {
    XfPath u = { .attn_flash = p->attn_flash };
    return u;
}

/* One layer's choices (a path without layers: all plain). */
static XfBlockPath xf_block_path(const XfPath *p, u32 il) {
    XfBlockPath none = { .qkv = XQ_SEPARATE };
    return p->layer ? p->layer[il] : none;
}

static bool xf_block_path_eq(XfBlockPath a, XfBlockPath b) {
    return a.qkv == b.qkv && a.qkv_rope == b.qkv_rope && a.qkv_norm == b.qkv_norm && a.attn_res_norm == b.attn_res_norm && a.ffn == b.ffn;
}

static void xf_block_path_print(const XfPath *p, u32 il, u32 n_layer) {
    static const char *const qkv[] = { "q, k, v", "q+k, v", "q+k+v" };
    static const char *const ffn[] = { "gate, up, glu", "gate+up+act", "norm+gate+up+act", "residual+norm+gate+up+act" };
    XfBlockPath b = xf_block_path(p, il);
    char list[256]; int w = fmt_buf(list, sizeof list, "%u", il);
    for (u32 j = il + 1; j < n_layer; j++) {
        XfBlockPath o = xf_block_path(p, j);
        if (xf_block_path_eq(o, b) && w < (int)sizeof list) w += fmt_buf(list + w, sizeof list - w, ",%u", j);
    }
    out("    layers %s: products %s%s%s; %s%s\n", list, qkv[b.qkv], b.qkv_rope ? " with the RoPE/KV-store epilogue" : "",
        b.qkv_norm ? " and the norm prologue" : "", ffn[b.ffn], b.attn_res_norm ? "; the attention residual makes the FFN norm" : "");
}

/* The layers whose batches' attention runs on attn_cm: where the plan takes flash attention,
   op_attention_flash picks attn_cm per layer where op_attention_cm_fits (cooperative matrices, f16
   cache, head_dim 64, 128 or 256, windows at 256, 80 cache rows), as xf_attention calls it. */
static u32 xf_attn_cm_layers(const Xf *xf) {
    const ModelConfig *c = xf->cfg;
    u32 n = 0;
    for (u32 il = 0; xf->path[PH_PREFILL].attn_flash && il < c->n_layer; il++)
        n += op_attention_cm_fits(xf->vk, c->head_dim, xf->kv, xf->act, model_layer_is_swa(c, il) ? c->swa_window : 0, xf->s.kv[il].k.ne[1]);
    return n;
}

/* The attention of a phase's plan line: flash in batches (attn_cm in the layers where it fits, else
   attn_tile where it fits), else split over key chunks or one pass. */
static const char *xf_attn_plan_str(const Xf *xf, Phase ph, char *buf, int n) {
    if (ph != PH_PREFILL || !xf->path[ph].attn_flash) return xf->s.attn_part.nbytes ? "split over key chunks" : "one pass";
    u32 cm = xf_attn_cm_layers(xf);
    if (!cm) return op_attention_tile_fits(xf->vk, xf->cfg->head_dim, xf->kv, xf->act) ? "flash in register tiles (attn_tile)" : "flash";
    if (cm == xf->cfg->n_layer) return "flash on cooperative matrices (attn_cm)";
    fmt_buf(buf, n, "flash, on cooperative matrices (attn_cm) in %u of %u layers", cm, xf->cfg->n_layer);
    return buf;
}

void xf_path_print(const Xf *xf) {
    u32 n = xf->cfg->n_layer;
    for (int ph = PH_PREFILL; ph <= PH_DECODE; ph++) {
        const XfPath *p = &xf->path[ph];
        char attn[128];
        out("  %s plan: %s; attention %s; %s; LM head %s\n", ph == PH_DECODE ? "decode" : "prefill",
            !p->rope_kv ? "RoPE and KV stores apart" : p->norm_in_rope ? "q/k norms+RoPE+KV stores in one dispatch"
            : p->bias_in_rope ? "biases+RoPE+KV stores in one dispatch" : "RoPE+KV stores in one dispatch",
            xf_attn_plan_str(xf, (Phase)ph, attn, sizeof attn),
            p->ffn_res_norm ? "the FFN residual makes the next attention norm" : "plain FFN residual",
            p->head_norm ? "with the output norm in its prologue" : "after the output norm");
        bool *shown = calloc(n, 1);
        for (u32 il = 0; il < n; il++) {
            if (shown[il]) continue;
            XfBlockPath b = xf_block_path(p, il);
            for (u32 j = il; j < n; j++) shown[j] = shown[j] || xf_block_path_eq(xf_block_path(p, j), b);
            xf_block_path_print(p, il, n);
        }
        free(shown);
    }
}

/* ---- the forward pass, block by block --------------------------------------------------------- */
/* One recording: T rows at positions p0.., its inputs and outputs, and the views of the state
   tensors for T rows. The residual row x lives in xf->s.x, or for XF_GLU_RES_NORM alternately in
   xf->s.x and xf->x2 (the product that takes the attention residual writes the updated row into the
   other buffer, since its other workgroups still read x). */
typedef struct XfRec {
    const XfPath *P;
    Phase  ph;                  /* of the products: PH_DECODE for one row and a batched step's lanes, else PH_PREFILL */
    u32    T, p0;
    bool   multi;               /* one row per sequence (xf_decode_rows): the decode path over T rows, or the batch path */
    u32    sqk, sv;             /* row strides of q and k / of v where a batched step's q|k|v rows lie side by side (0: contiguous) */
    Tensor ids, pos, out_ids;   /* u32: input ids, the rows table, [id, flag] per row (a chained step brings its own) */
    Tensor x, x_alt;            /* f32 the residual rows; the other buffer (XF_GLU_RES_NORM) */
    Tensor h;                   /* act the normed block input */
    bool   h_ready;             /* h holds this block's normed input already (made by the residual op before) */
    Tensor q, k, v, qr, kr, qp, kp, att, o, gate, up, ff, hn;   /* see Xf */
    Tensor qh, kh, qrh, krh, qph, kph, atth;                    /* (head_dim, n_heads, T) views */
} XfRec;

static XfRec xf_rec_views(Xf *xf, const XfPath *P, Phase ph, const Tensor *ids, const Tensor *pos, const Tensor *out_ids, u32 T, u32 p0, bool multi) {
    const ModelConfig *c = xf->cfg;
    u32 hd = c->head_dim;
    XfRec R = { .P = P, .ph = ph, .T = T, .p0 = p0, .multi = multi, .pos = *pos };
    R.ids = xf_rows(ids, T); R.out_ids = xf_rows(out_ids, T);
    R.x = xf_rows(&xf->s.x, T); R.x_alt = xf->s.x2.nbytes ? xf_rows(&xf->s.x2, T) : xf->s.x2; R.h = xf_rows(&xf->s.h, T);
    R.q = xf_rows(&xf->s.q, T); R.k = xf_rows(&xf->s.k, T); R.v = xf_rows(&xf->s.v, T);
    if (T == 1 && R.ph == PH_DECODE && P->fused && xf->s.qkv.nbytes) xf_qkv_views(xf, 1, 0, &R.q, &R.k, &R.v);   /* decode: q, k, v side by side (a batched step: per layer, xf_qkv_rows) */
    R.qr = c->qk_norm ? xf_rows(&xf->s.qr, T) : R.q; R.kr = c->qk_norm ? xf_rows(&xf->s.kr, T) : R.k;
    R.qp = xf_rows(&xf->s.qp, T); R.kp = xf_rows(&xf->s.kp, T);
    R.att = xf_rows(&xf->s.att, T); R.o = xf_rows(&xf->s.o, T);
    R.gate = xf_rows(&xf->s.gate, T); R.up = xf_rows(&xf->s.up, T); R.ff = xf_rows(&xf->s.ff, T); R.hn = xf_rows(&xf->s.hn, T);
    R.qh = xf_heads(&R.q, hd, T); R.kh = xf_heads(&R.k, hd, T); R.qrh = xf_heads(&R.qr, hd, T); R.krh = xf_heads(&R.kr, hd, T);
    R.qph = xf_heads(&R.qp, hd, T); R.kph = xf_heads(&R.kp, hd, T); R.atth = xf_heads(&R.att, hd, T);
    return R;
}

/* x = E[ids] * embd_scale */
static void xf_embed(Xf *xf, XfRec *R) {
    xf_op(xf, "embed", XT_EMBED, "embed", -1, &R->x, &R->ids, 0, 0);
    op_get_rows(xf->vk, &xf->w.tok_embd, &R->ids, &R->x, xf->cfg->embd_scale);
    xf_done(xf);
    vk_barrier(xf->vk);
}

/* h = RMSNorm(x, w), unless the op before made it already or the next product takes it in its prologue */
static void xf_norm(Xf *xf, XfRec *R, const char *site, i32 l, const Tensor *w, bool in_prologue) {
    if (!R->h_ready && !in_prologue) {
        xf_op(xf, site, XT_NORM, "norm", l, &R->h, &R->x, 0, 0); op_rmsnorm(xf->vk, &R->x, w, &R->h, xf->cfg->eps); xf_done(xf);
        vk_barrier(xf->vk);
    }
    R->h_ready = false;
}

/* One weight product of a step: its name for the debug hooks (xf_op), W and Y. */
typedef struct XfProd { const char *name; const Tensor *W, *Y; } XfProd;

/* Y[i] (+)= W[i] . X for n independent products of a step (q, k, v; gate, up; attn_out or ffn_down
   alone, split: the prefill batch's k split where op_matmul_split_slices asks). A batched step on the
   prefill products (op_matmul_rows' kernels) splits every product (op_matmul_batch_slices): their f32 partials side by side in
   xf->s.split_part (sized for n_seq rows: xf_batch_split_bytes), one barrier, then the sums; a prefill
   batch's there too with one logits row, else in the logits buffer (free until the LM head writes it). With a
   debug tool on, each product is whole at its xf_done. */
static void xf_products(Xf *xf, XfRec *R, u32 cat, const char *cls, i32 l, const Tensor *X, const XfProd *p, u32 n, bool acc, bool split) {
    Vk *vk = xf->vk;
    const Tensor *part = xf->s.split_part.nbytes && (R->multi || xf->one_row) ? &xf->s.split_part : &xf->s.logits;
    OpSplit sp[3];
    u32 ns = 0;
    u64 used = 0;
    for (u32 i = 0; i < n; i++) {
        u32 s = R->ph != PH_PREFILL ? 1 : R->multi ? op_matmul_batch_slices(vk, p[i].W, X) : split ? op_matmul_split_slices(vk, p[i].W, X) : 1;
        xf_op(xf, p[i].name, cat, cls, l, p[i].Y, X, 0, 0);
        bool rows = R->multi && R->ph == PH_PREFILL;
        if (s >= 2 && op_matmul_split_begin(vk, p[i].W, X, p[i].Y, acc, part, &used, s, rows, &sp[ns])) {
            if (xf->d.on) { vk_barrier(vk); op_matmul_split_end(vk, &sp[ns]); } else ns++;
        } else if (rows) op_matmul_rows(vk, p[i].W, X, p[i].Y, acc);
        else if (acc) op_matmul_acc(vk, R->ph, p[i].W, X, p[i].Y);
        else op_matmul(vk, R->ph, p[i].W, X, p[i].Y);
        xf_done(xf);
    }
    if (!ns) return;
    vk_barrier(vk);
    for (u32 i = 0; i < ns; i++) op_matmul_split_end(vk, &sp[i]);
}

/* A batched step's q, k, v for this layer's products (decode's layout, row by row): side by side in
   rows of xf->qkv as wide as the product that makes them (q|k|v, or q|k with v on its own), or each
   in its own buffer; the strides rope_kv reads them with, and the head views. */
static void xf_qkv_rows(Xf *xf, XfRec *R, XfQkv kind) {
    const ModelConfig *c = xf->cfg;
    u32 T = R->T, hd = c->head_dim, qd = c->n_head * hd, kvd = c->n_head_kv * hd;
    u32 m = kind == XQ_QKV ? qd + 2 * kvd : qd + kvd;
    R->q = xf_rows(&xf->s.q, T); R->k = xf_rows(&xf->s.k, T); R->v = xf_rows(&xf->s.v, T); R->sqk = R->sv = 0;
    Tensor v = R->v;
    if (kind != XQ_SEPARATE && xf_qkv_views(xf, T, m, &R->q, &R->k, &R->v)) {
        R->sqk = m;
        if (kind == XQ_QKV) R->sv = m; else R->v = v;
    }
    if (!c->qk_norm) { R->qr = R->q; R->kr = R->k; }
    R->qh = xf_heads(&R->q, hd, T); R->kh = xf_heads(&R->k, hd, T); R->qrh = xf_heads(&R->qr, hd, T); R->krh = xf_heads(&R->kr, hd, T);
}

/* The q|k rows of the q|k product (XQ_QK): (qd + kvd, T) at the start of the q|k|v scratch. */
static Tensor xf_qk_rows(const Xf *xf, u32 T) {
    const ModelConfig *c = xf->cfg;
    Tensor qk = xf->s.qkv;
    qk.ne[0] = (u64)(c->n_head + c->n_head_kv) * c->head_dim; qk.ne[1] = T;
    qk.nelem = qk.ne[0] * T; qk.nbytes = dtype_bytes(qk.dtype, qk.nelem);
    return qk;
}

/* q, k, v = W . h: with the RoPE/KV-store epilogue (and the norm prologue) one product does the
   rest of the attention input; otherwise plain products into q, k, v. */
static void xf_qkv(Xf *xf, XfRec *R, u32 il, bool norm_in) {
    const ModelConfig *c = xf->cfg; const XfBlockPath P = xf_block_path(R->P, il); Vk *vk = xf->vk;
    XfLayer *L = &xf->w.layers[il]; XfKv *C = &xf->s.kv[il]; i32 l = (i32)il;
    u32 qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim;
    if (R->multi && !P.qkv_rope) xf_qkv_rows(xf, R, P.qkv);
    if (P.qkv_rope) {
        f32 base, fscale; model_layer_rope(c, il, &base, &fscale);
        const Tensor *bq = c->qkv_bias ? &L->bq : 0, *bk = c->qkv_bias ? &L->bk : 0, *bv = c->qkv_bias ? &L->bv : 0;
        const Tensor *in = norm_in ? &R->x : &R->h, *nw = norm_in ? &L->attn_norm : 0;
        xf_op(xf, norm_in ? "attn_norm_qkv_rope" : "attn_qkv_rope", XT_ATTN, "matmul", l, &R->qp, in, 0, 0);
        op_matmul_rope(vk, P.qkv == XQ_QKV ? &L->wqkv : &L->wqk, in, nw, c->eps, &R->pos, &xf->w.rope_ff, &R->qph, &C->k, &C->v,
                       c->n_head, c->n_head_kv, c->rope_dim, base, fscale, c->rope_neox, bq, bk, bv, 0);
        if (P.qkv != XQ_QKV)
            op_matmul_rope(vk, &L->wv, in, nw, c->eps, &R->pos, &xf->w.rope_ff, &R->qph, &C->k, &C->v, c->n_head, c->n_head_kv,
                           c->rope_dim, base, fscale, c->rope_neox, bq, bk, bv, qd + kvd);
        xf_done(xf);
    } else if (norm_in) {   /* (the q/k-norm models: q|k|v or q|k and v, from the residual rows) */
        Tensor qk = P.qkv == XQ_QK ? xf_qk_rows(xf, R->T) : xf_rows(&xf->s.qkv, R->T);
        xf_op(xf, P.qkv == XQ_QKV ? "attn_norm_qkv" : "attn_norm_qk", XT_ATTN, "matmul", l, &qk, &R->x, 0, 0);
        op_matmul_normed(vk, P.qkv == XQ_QKV ? &L->wqkv : &L->wqk, &R->x, &L->attn_norm, c->eps, xf->act, &qk); xf_done(xf);
        if (P.qkv == XQ_QK) {
            xf_op(xf, "attn_norm_v", XT_ATTN, "matmul", l, &R->v, &R->x, 0, 0);
            op_matmul_normed(vk, &L->wv, &R->x, &L->attn_norm, c->eps, xf->act, &R->v); xf_done(xf);
        }
    } else {
        Tensor qkv = P.qkv == XQ_QKV ? xf_rows(&xf->s.qkv, R->T) : P.qkv == XQ_QK ? xf_qk_rows(xf, R->T) : R->q;   /* (q|k|v, q|k: batched steps) */
        XfProd p[3];
        u32 n = 0;
        if (P.qkv == XQ_QKV) p[n++] = (XfProd){ "attn_qkv", &L->wqkv, &qkv };
        else if (P.qkv == XQ_QK) p[n++] = (XfProd){ "attn_qk", &L->wqk, &qkv };
        else { p[n++] = (XfProd){ "attn_q", &L->wq, &R->q }; p[n++] = (XfProd){ "attn_k", &L->wk, &R->k }; }
        if (P.qkv != XQ_QKV) p[n++] = (XfProd){ "attn_v", &L->wv, &R->v };
        xf_products(xf, R, XT_ATTN, "matmul", l, &R->h, p, n, false, false);
    }
    vk_barrier(vk);
}

/* q, k += biases; q, k = RMSNorm per head (q/k norm); RoPE of q and k; K and V into the cache at p0.. */
static void xf_rope_kv(Xf *xf, XfRec *R, u32 il) {
    const ModelConfig *c = xf->cfg; const XfPath *P = R->P; Vk *vk = xf->vk;
    XfLayer *L = &xf->w.layers[il]; XfKv *C = &xf->s.kv[il]; i32 l = (i32)il;
    if (c->qkv_bias && !P->bias_in_rope) {
        xf_op(xf, "bias_q", XT_ATTN, "bias", l, &R->q, &R->q, 0, 0); op_add_bias(vk, &L->bq, &R->q); xf_done(xf);
        xf_op(xf, "bias_k", XT_ATTN, "bias", l, &R->k, &R->k, 0, 0); op_add_bias(vk, &L->bk, &R->k); xf_done(xf);
        xf_op(xf, "bias_v", XT_ATTN, "bias", l, &R->v, &R->v, 0, 0); op_add_bias(vk, &L->bv, &R->v); xf_done(xf);
        vk_barrier(vk);
    }
    if (c->qk_norm && !P->norm_in_rope) {
        xf_op(xf, "q_norm", XT_NORM, "norm", l, &R->qr, &R->q, 0, 0); op_rmsnorm(vk, &R->qh, &L->q_norm, &R->qrh, c->eps); xf_done(xf);
        xf_op(xf, "k_norm", XT_NORM, "norm", l, &R->kr, &R->k, 0, 0); op_rmsnorm(vk, &R->kh, &L->k_norm, &R->krh, c->eps); xf_done(xf);
        vk_barrier(vk);
    }
    f32 base, fscale; model_layer_rope(c, il, &base, &fscale);
    u32 nr = MIN(R->T, xf->n_ctx - R->p0);     /* (the debug tools' view of the new rows: slot 0's for a batched step) */
    Tensor kc_new = xf_cache_rows(&C->k, R->p0, nr), vc_new = xf_cache_rows(&C->v, R->p0, nr);
    if (P->norm_in_rope) {  /* the q/k norms, RoPE of q and k, and the K/V cache stores, in one dispatch */
        xf_op(xf, "qk_norm_rope_kv", XT_ATTN, "rope", l, &R->qp, &R->q, &R->k, &R->v);
        op_rope_kv_norm(vk, &R->qh, &R->kh, &R->v, &R->pos, &xf->w.rope_ff, &R->qph, &C->k, &C->v, &L->q_norm, &L->k_norm, c->eps,
                        c->rope_dim, base, fscale, c->rope_neox, R->sqk, R->sv);
        xf_done(xf);
    } else if (P->rope_kv) {   /* RoPE of q and k, and the K/V cache stores, in one dispatch */
        bool b = P->bias_in_rope;
        xf_op(xf, "rope_kv", XT_ATTN, "rope", l, &R->qp, &R->qr, &R->kr, &R->v);
        op_rope_kv(vk, &R->qrh, &R->krh, &R->v, &R->pos, &xf->w.rope_ff, &R->qph, &C->k, &C->v, c->rope_dim, base, fscale,
                   c->rope_neox, b ? &L->bq : 0, b ? &L->bk : 0, b ? &L->bv : 0, R->sqk, R->sv);
        xf_done(xf);
    } else {
        xf_op(xf, "rope_q", XT_ATTN, "rope", l, &R->qp, &R->qr, &R->pos, 0);
        op_rope(vk, &R->qrh, &R->pos, &xf->w.rope_ff, &R->qph, c->rope_dim, base, fscale, c->rope_neox); xf_done(xf);
        xf_op(xf, "rope_k", XT_ATTN, "rope", l, &R->kp, &R->kr, &R->pos, 0);
        op_rope(vk, &R->krh, &R->pos, &xf->w.rope_ff, &R->kph, c->rope_dim, base, fscale, c->rope_neox); xf_done(xf);
        /* v is ready since the projections: its store needs no barrier after RoPE */
        xf_op(xf, "kv_store_v", XT_ATTN, "kv", l, &vc_new, &R->v, 0, 0); op_kv_store(vk, &R->v, &R->pos, &C->v); xf_done(xf);
        vk_barrier(vk);
        xf_op(xf, "kv_store_k", XT_ATTN, "kv", l, &kc_new, &R->kp, 0, 0); op_kv_store(vk, &R->kp, &R->pos, &C->k); xf_done(xf);
    }
    vk_barrier(vk);
}

/* att = softmax(q K^T * scale (softcap), causal and window mask) V over the cache up to p0 + T */
static void xf_attention(Xf *xf, XfRec *R, u32 il) {
    const ModelConfig *c = xf->cfg; Vk *vk = xf->vk;
    XfKv *C = &xf->s.kv[il];
    u32 window = model_layer_is_swa(c, il) ? c->swa_window : 0;
    u32 seen = MIN(R->p0 + R->T, xf->n_ctx);
    Tensor kc_seen = xf_cache_rows(&C->k, 0, seen), vc_seen = xf_cache_rows(&C->v, 0, seen);
    xf_op(xf, "attention", XT_ATTN, "attn", (i32)il, &R->att, &R->qp, &kc_seen, &vc_seen);
    if (R->ph == PH_PREFILL && R->P->attn_flash)
        op_attention_flash(vk, &R->qph, &C->k, &C->v, &R->pos, &R->atth, c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window);
    else if (xf->s.attn_part.nbytes)
        op_attention_split(vk, &R->qph, &C->k, &C->v, &R->pos, &xf->s.attn_part, &R->atth,
                           c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window, R->ph == PH_DECODE || R->multi,
                           R->ph == PH_DECODE || R->multi ? xf->r.keys : 0);
    else
        op_attention(vk, &R->qph, &C->k, &C->v, &R->pos, &xf->s.scores, &R->atth,
                     c->n_head, c->n_head_kv, c->attn_scale, c->attn_softcap, window);
    xf_done(xf);
    vk_barrier(vk);
}

/* x += post_norm(o) for post-norm models (then h = norm(x) with next_norm along where the path says);
   the op that writes o first. */
static void xf_post_norm_residual(Xf *xf, XfRec *R, const char *site, i32 l, const Tensor *post, const Tensor *next_norm) {
    const ModelConfig *c = xf->cfg;
    if (next_norm) {
        xf_op(xf, site, XT_NORM, "norm", l, &R->h, &R->x, &R->o, 0);
        op_rmsnorm_add_norm(xf->vk, &R->o, post, &R->x, next_norm, &R->h, c->eps);
        R->h_ready = true;
    } else {
        xf_op(xf, site + 0, XT_NORM, "add", l, &R->x, &R->x, &R->o, 0);
        op_rmsnorm_add(xf->vk, &R->o, post, &R->x, c->eps);
    }
    xf_done(xf);
}

/* The attention block: x += [post_norm](Wo . attention(RoPE(norm(x) . Wq,k,v))) */
static void xf_attn_block(Xf *xf, XfRec *R, u32 il) {
    const ModelConfig *c = xf->cfg; const XfBlockPath P = xf_block_path(R->P, il);
    XfLayer *L = &xf->w.layers[il]; i32 l = (i32)il;
    bool norm_in = P.qkv_norm && !R->h_ready;           /* the attention norm in the q/k/v product's prologue */
    xf_norm(xf, R, "attn_norm", l, &L->attn_norm, norm_in);
    xf_qkv(xf, R, il, norm_in);
    if (!P.qkv_rope) xf_rope_kv(xf, R, il);
    xf_attention(xf, R, il);
    if (!c->post_norms) {   /* x += Wo . att: the residual add fused into the product's store */
        XfProd p = { "attn_out", &L->wo, &R->x };
        xf_products(xf, R, XT_ATTN, "matmul", l, &R->att, &p, 1, true, true);
    } else {
        XfProd p = { "attn_out", &L->wo, &R->o };
        xf_products(xf, R, XT_ATTN, "matmul", l, &R->att, &p, 1, false, true);
        if (P.ffn != XF_GLU_RES_NORM) {                 /* (else the FFN's product takes the residual add) */
            vk_barrier(xf->vk);
            xf_post_norm_residual(xf, R, P.attn_res_norm ? "attn_residual_norm" : "attn_residual", l, &L->post_attn_norm,
                                  P.attn_res_norm ? &L->ffn_norm : 0);
        }
    }
    vk_barrier(xf->vk);
}

/* ff = act(Wgate . h) * (Wup . h), h = norm(x) (in the product's prologue where the path says) */
static void xf_gate_up(Xf *xf, XfRec *R, u32 il) {
    const ModelConfig *c = xf->cfg; const XfBlockPath P = xf_block_path(R->P, il); Vk *vk = xf->vk;
    XfLayer *L = &xf->w.layers[il]; i32 l = (i32)il;
    if (P.ffn == XF_GLU_RES_NORM) {     /* the attention residual, the FFN norm, gate, up and the activation in one dispatch */
        Tensor xn = R->x.offset == xf->s.x.offset && R->x.block == xf->s.x.block ? R->x_alt : xf_rows(&xf->s.x, R->T);
        xf_op(xf, "attn_residual_ffn_norm_gate_up", XT_FFN, "glu", l, &R->ff, &R->x, &R->o, 0);
        op_matmul_glu_res_norm(vk, &L->gu, &R->x, &R->o, &L->post_attn_norm, &xn, &L->ffn_norm, c->eps, &R->ff, c->gelu); xf_done(xf);
        R->x = xn;          /* the residual row lives in the other buffer from here */
        R->h_ready = false;
    } else if (P.ffn == XF_GLU_NORM && !R->h_ready) {  /* the FFN norm, gate, up and the activation in one dispatch */
        xf_op(xf, "ffn_norm_gate_up", XT_FFN, "glu", l, &R->ff, &R->x, 0, 0);
        op_matmul_glu_norm(vk, &L->gu, &R->x, &L->ffn_norm, c->eps, &R->ff, c->gelu); xf_done(xf);
    } else {
        xf_norm(xf, R, "ffn_norm", l, &L->ffn_norm, false);
        if (P.ffn != XF_GATE_UP) {      /* act(gate) * up in one pass over both weights */
            xf_op(xf, "ffn_gate_up", XT_FFN, "glu", l, &R->ff, &R->h, 0, 0); op_matmul_glu(vk, &L->gu, &R->h, &R->ff, c->gelu); xf_done(xf);
        } else {
            XfProd p[2] = { { "ffn_gate", &L->w_gate, &R->gate }, { "ffn_up", &L->w_up, &R->up } };
            xf_products(xf, R, XT_FFN, "matmul", l, &R->h, p, 2, false, false);
            vk_barrier(vk);
            xf_op(xf, "glu", XT_FFN, "glu", l, &R->ff, &R->gate, &R->up, 0); op_glu(vk, &R->gate, &R->up, &R->ff, c->gelu); xf_done(xf);
        }
    }
    R->h_ready = false;
    vk_barrier(vk);
}

/* The FFN block: x += [post_norm](Wdown . ff) */
static void xf_ffn_block(Xf *xf, XfRec *R, u32 il) {
    const ModelConfig *c = xf->cfg;
    XfLayer *L = &xf->w.layers[il]; i32 l = (i32)il;
    xf_gate_up(xf, R, il);
    if (!c->post_norms) {   /* x += Wd . ff */
        XfProd p = { "ffn_down", &L->w_down, &R->x };
        xf_products(xf, R, XT_FFN, "ffn", l, &R->ff, &p, 1, true, true);
    } else {
        XfProd p = { "ffn_down", &L->w_down, &R->o };
        xf_products(xf, R, XT_FFN, "ffn", l, &R->ff, &p, 1, false, true);
        vk_barrier(xf->vk);
        bool next = R->P->ffn_res_norm && il + 1 < c->n_layer;
        xf_post_norm_residual(xf, R, next ? "ffn_residual_norm" : "ffn_residual", l, &L->post_ffn_norm,
                              next ? &xf->w.layers[il + 1].attn_norm : 0);
    }
    vk_barrier(xf->vk);
}

/* logits = [softcap](Woutput . norm(x)) and their argmax (with a NaN/Inf flag) per row; last_only:
   the last row alone, when its offset keeps the binding aligned (xf->r.head_last) */
static void xf_output(Xf *xf, XfRec *R, bool last_only) {
    const ModelConfig *c = xf->cfg; Vk *vk = xf->vk;
    u32 T = R->T;
    Tensor x = R->x, hn = R->hn, logits = xf_rows(&xf->s.logits, xf->one_row && !R->multi ? 1 : T), out_ids = R->out_ids;
    Phase hph = R->ph;
    xf->r.head_last = false;
    if (last_only && T > 1) {
        u64 xrow = dtype_bytes(x.dtype, c->n_embd), hrow = dtype_bytes(hn.dtype, c->n_embd), al = vk->caps.min_offset_align;
        if (((u64)(T - 1) * xrow) % al == 0 && ((u64)(T - 1) * hrow) % al == 0) {
            x.offset += (u64)(T - 1) * xrow; x.ne[1] = 1; x.nelem = c->n_embd; x.nbytes = xrow;
            hn = xf_rows(&xf->s.hn, 1); logits = xf_rows(&xf->s.logits, 1); out_ids = xf_rows(&R->out_ids, 1);
            hph = PH_DECODE; xf->r.head_last = true;
        }
    }
    u32 rows = xf->r.head_last ? 1 : T;
    Tensor zl = c->final_softcap > 0 ? xf_rows(&xf->s.zl, rows) : logits, *head = &zl;   /* the LM head's output */
    if (R->P->head_norm && (rows == 1 || R->multi)) {
        xf_op(xf, "output_norm_lm_head", XT_LOGITS, "logits", -1, head, &x, 0, 0); op_matmul_norm(vk, &xf->w.output, &x, &xf->w.output_norm, c->eps, head); xf_done(xf);
    } else {
        xf_op(xf, "output_norm", XT_NORM, "norm", -1, &hn, &x, 0, 0); op_rmsnorm(vk, &x, &xf->w.output_norm, &hn, c->eps); xf_done(xf);
        vk_barrier(vk);
        xf_op(xf, "lm_head", XT_LOGITS, "logits", -1, head, &hn, 0, 0);
        if (R->multi && hph == PH_PREFILL) op_matmul_rows(vk, &xf->w.output, &hn, head, false); else op_matmul(vk, hph, &xf->w.output, &hn, head);
        xf_done(xf);
    }
    if (c->final_softcap > 0) {
        vk_barrier(vk);
        xf_op(xf, "softcap", XT_LOGITS, "softcap", -1, &logits, &zl, 0, 0); op_softcap(vk, &zl, &logits, c->final_softcap); xf_done(xf);
    }
    vk_barrier(vk);
    Tensor part = xf->s.argmax_part.nbytes ? xf_rows(&xf->s.argmax_part, rows) : xf->s.argmax_part;
    xf_op(xf, "argmax", XT_SAMPLE, "sample", -1, &out_ids, &logits, 0, 0);
    op_argmax_check(vk, &logits, &out_ids, part.nbytes ? &part : 0); xf_done(xf);
}

/* The forward pass for T tokens at positions p0..p0+T-1 into the open command buffer: the ids from
   `ids`, the positions from `pos`, the argmax rows into `out_ids`. Each op is bracketed by xf_op
   (site name, trace category, injection class, layer, output, activation inputs) and xf_done. */
static void xf_record(Xf *xf, const Tensor *ids, const Tensor *pos, const Tensor *out_ids, u32 T, u32 p0, bool last_only, bool multi) {
    bool tiles = multi && xf->batch_tiles;
    Phase ph = (T == 1 || multi) && !tiles ? PH_DECODE : PH_PREFILL;
    XfPath path = tiles ? xf->batch : xf->path[ph];
    XfPath unfused = xf_path_unfused(&path);
    XfRec R = xf_rec_views(xf, xf_fused(xf) ? &path : &unfused, ph, ids, pos, out_ids, T, p0, multi);
    xf_rec_start(xf, multi ? PH_DECODE : ph, T, p0);
    xf_embed(xf, &R);
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        xf_attn_block(xf, &R, il);
        xf_ffn_block(xf, &R, il);
    }
    xf_output(xf, &R, last_only);
}

/* The last evaluated position's logits into dst (n_vocab floats), checked for NaN/Inf. */
bool xf_last_logits(Xf *xf, u32 T, u32 p0, f32 *dst, Err *e) {
    Tensor l = xf_rows(&xf->s.logits, xf->r.head_last ? 1 : T);
    u64 nv = xf->cfg->n_vocab;
    l.offset += (xf->r.head_last ? 0 : (u64)(T - 1)) * nv * 4;
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

/* The ids of T rows and their rows table (ops.h) into the device. */
static void xf_upload_rows(Xf *xf, const i32 *tokens, u32 T, const u32 *pos, const u32 *slot, u32 p0, u32 slot0) {
    Tensor idv = xf_rows(&xf->s.ids, T);
    vk_upload(xf->vk, &idv, tokens);
    u32 *rt = xf->s.host_rows;
    op_rows_fill(rt, T, p0, slot0);
    for (u32 t = 0; pos && t < T; t++) { rt[2 + 2 * t] = pos[t]; rt[3 + 2 * t] = slot[t]; }
    Tensor pv = xf->s.pos;
    pv.ne[0] = pv.nelem = op_rows_words(T); pv.nbytes = 4 * pv.nelem;
    vk_upload(xf->vk, &pv, rt);
}

/* The key bound of a step whose rows are at positions below far: 64, 128, ... (at most n_ctx), and its level. */
static u32 xf_key_bound(const Xf *xf, u32 far, u32 *lv) {
    u32 keys = 64, l = 0;
    while (keys < far && keys < xf->n_ctx && l + 1 < XF_KEY_LEVELS) { keys *= 2; l++; }
    if (lv) *lv = l;
    return MIN(keys, xf->n_ctx);
}

bool xf_key_levels_off;      /* tests: one-row decode recordings cover the whole context (one level) */

/* A ready recording among n rows of XF_KEY_LEVELS levels, or 0. Another level's recording holds the same
   dispatches but the attention: up to 128 keys one (attn_short), past them two (attn_split and attn_merge,
   3 bindings), so a pool sized from it takes n_layer sets and 3 n_layer buffers more per step. */
static const VkRec *xf_rec_like(const VkRec (*recs)[XF_KEY_LEVELS], u32 n) {
    for (u32 i = 0; i < n; i++)
        for (u32 lv = 0; lv < XF_KEY_LEVELS; lv++) if (recs[i][lv].ready) return &recs[i][lv];
    return 0;
}

/* xf_key_bound for a one-row decode recording (a lone step, a chained one) */
static u32 xf_dec_bound(const Xf *xf, u32 far, u32 *lv) {
    if (!xf_key_levels_off) return xf_key_bound(xf, far, lv);
    *lv = 0;
    return xf->n_ctx;
}

/* Records (or replays) and submits T rows: decode (T = 1, one sequence) recorded once per key level
   (xf_key_bound of its position), a prefill batch kept while its size and last_only stay, a batched
   step kept per row count (xf->r.multi[T - 1]) while its attention grid's key bound (keys) stays;
   with a debug tool that steps op by op, recorded anew each time. Within those, the recordings do not
   depend on positions or slots (the rows table holds them). */
static void xf_submit(Xf *xf, u32 T, u32 p0, bool last_only, bool multi, u32 keys) {
    xf->r.keys = keys;
    if (xf->d.step) {
        vk_begin(xf->vk);
        xf_record(xf, &xf->s.ids, &xf->s.pos, &xf->s.out_ids, T, p0, last_only, multi);
        xf->r.n_dispatch_last = xf->d.rec_dispatch;
        vk_submit_wait(xf->vk);
        return;
    }
    u32 lv = 0;
    if (T == 1 && !multi) { xf->r.keys = xf_dec_bound(xf, p0 + 1, &lv); xf->r.dec_lv = lv; }
    VkRec *rec = multi ? &xf->r.multi[T - 1] : T == 1 ? &xf->r.dec[lv] : &xf->r.pre;
    bool keep = rec->ready && (multi ? xf->r.multi_keys[T - 1] == keys : T == 1 || (xf->r.pre_t == T && xf->r.pre_last == last_only));
    if (!rec->cmd) vk_rec_init_like(xf->vk, rec, T == 1 && !multi ? xf_rec_like(&xf->r.dec, 1) : 0, xf->cfg->n_layer, 3 * xf->cfg->n_layer);
    if (!keep) {
        bool ts = T == 1 && !multi && xf->r.time_decode && xf->vk->caps.timestamps && !xf->d.on;
        if (ts && !xf->r.dec_ts) xf->r.dec_ts = vk_ts_pool(xf->vk, 2);
        vk_rec_begin(xf->vk, rec);
        if (ts) { vk_ts_reset(xf->vk, xf->r.dec_ts, 2); vk_ts_write(xf->vk, xf->r.dec_ts, 0); }
        xf_record(xf, &xf->s.ids, &xf->s.pos, &xf->s.out_ids, T, p0, last_only, multi);
        if (ts) vk_ts_write(xf->vk, xf->r.dec_ts, 1);
        vk_rec_end(xf->vk, rec);
        if (rec == &xf->r.pre) { xf->r.pre_t = T; xf->r.pre_last = last_only; xf->r.pre_head_last = xf->r.head_last; }
        if (multi) xf->r.multi_keys[T - 1] = keys;
    } else if (rec == &xf->r.pre) {
        xf_prefill_replays++;
        xf->r.head_last = xf->r.pre_head_last;   /* which logits rows this recording computes (a decode recording since may have changed it) */
    }
    if (multi || T == 1) xf->r.head_last = false;
    xf->r.n_dispatch_last = rec->n_dispatch;
    vk_rec_submit(xf->vk, rec);
}

/* The T rows' logits (when wanted) and argmax ids, checked for NaN/Inf; what names a row in an
   error: its position (one sequence from p0) or, for a batched step, its row. */
static bool xf_read_out(Xf *xf, u32 T, u32 p0, bool multi, f32 *logits, u32 *ids, Err *e) {
    const char *what = multi ? "row" : "position";
    u32 at = multi ? 0 : p0;
    if (logits) {
        Tensor l = xf_rows(&xf->s.logits, T);
        vk_download(xf->vk, &l, logits);
        u64 nv = xf->cfg->n_vocab;
        for (u64 i = 0; i < nv * T; i++)
            if (!isfinite(logits[i]))
                return err_set(e, EXIT_NUMERIC, "non-finite logit (%s) at %s %llu, token %llu: a numeric fault; "
                               "run again with --check-nan to find the first op that produced it",
                               isnan(logits[i]) ? "NaN" : "Inf", what, (unsigned long long)(at + i / nv), (unsigned long long)(i % nv));
    }
    if (ids) {
        Tensor oi = xf_rows(&xf->s.out_ids, T);
        vk_download(xf->vk, &oi, xf->s.host_ids);
        for (u32 t = 0; t < T; t++) {
            ids[t] = xf->s.host_ids[2 * t];
            if (xf->s.host_ids[2 * t + 1])
                return err_set(e, EXIT_NUMERIC, "the logits at %s %u hold a NaN or an Inf (flagged by the argmax kernel): "
                               "a numeric fault; run again with --check-nan to find the first op that produced it", what, at + t);
        }
    }
    return true;
}

static bool xf_check_tokens(const Xf *xf, const i32 *tokens, u32 T, Err *e) {
    for (u32 i = 0; i < T; i++)
        if (tokens[i] < 0 || (u32)tokens[i] >= xf->cfg->n_vocab)
            return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", tokens[i], xf->cfg->n_vocab);
    return true;
}

bool xf_forward(Xf *xf, const i32 *tokens, u32 T, u32 p0, u32 slot, bool last_only, f32 *logits, u32 *ids, Err *e) {
    if (T == 0 || T > xf->t_max) return err_set(e, EXIT_USAGE, "batch of %u tokens (1..%u)", T, xf->t_max);
    if (xf->one_row && T > 1 && (!last_only || logits))
        return err_set(e, EXIT_USAGE, "every logits row of a %u-token batch wanted, but this context keeps one row "
                       "(opened for generation: XfOpts.last_row)", T);
    if ((u64)p0 + T > xf->n_ctx) return err_set(e, EXIT_USAGE, "positions %u..%u exceed the context of %u tokens", p0, p0 + T - 1, xf->n_ctx);
    if (slot >= xf->n_seq) return err_set(e, EXIT_USAGE, "sequence slot %u of %u", slot, xf->n_seq);
    if (!xf_check_tokens(xf, tokens, T, e)) return false;
    xf_chain_stop(xf);                  /* (a chained step still in flight would read ids and pos after this) */
    xf_upload_rows(xf, tokens, T, 0, 0, p0, slot);
    f64 t0 = xf_debug.profile ? now_sec() : 0;
    xf_submit(xf, T, p0, last_only, false, 0);
    if (xf_debug.profile) xf_profile_after(xf, T == 1 ? PH_DECODE : PH_PREFILL, T, now_sec() - t0);
    return xf_read_out(xf, T, p0, false, logits, ids, e);
}

bool xf_decode_rows(Xf *xf, const i32 *tokens, u32 n, const u32 *pos, const u32 *slot, f32 *logits, u32 *ids, Err *e) {
    if (n == 0 || n > xf->n_seq) return err_set(e, EXIT_USAGE, "batched step of %u rows (1..%u sequences)", n, xf->n_seq);
    for (u32 t = 0; t < n; t++) {
        if (pos[t] >= xf->n_ctx) return err_set(e, EXIT_USAGE, "row %u: position %u is past the context of %u tokens", t, pos[t], xf->n_ctx);
        if (slot[t] >= xf->n_seq) return err_set(e, EXIT_USAGE, "row %u: sequence slot %u of %u", t, slot[t], xf->n_seq);
    }
    if (!xf_check_tokens(xf, tokens, n, e)) return false;
    xf_chain_stop(xf);
    xf_upload_rows(xf, tokens, n, pos, slot, 0, 0);
    /* the attention grid covers the keys of the furthest row, in powers of two from 64 (a recording each) */
    u32 far = 0;
    for (u32 t = 0; t < n; t++) far = MAX(far, pos[t] + 1);
    f64 t0 = xf_debug.profile ? now_sec() : 0;
    xf_submit(xf, n, 0, false, true, xf_key_bound(xf, far, 0));
    if (xf_debug.profile) xf_profile_after(xf, PH_DECODE, n, now_sec() - t0);
    return xf_read_out(xf, n, 0, true, logits, ids, e);
}

/* Copies the cache rows of positions 0 .. n-1 of sequence slot src into slot dst, every layer's keys
   and values (a ring's rows: all of them once n reaches its length): a shared prefix computed once. */
bool xf_kv_copy(Xf *xf, u32 src, u32 dst, u32 n, Err *e) {
    if (src >= xf->n_seq || dst >= xf->n_seq || src == dst || n > xf->n_ctx)
        return err_set(e, EXIT_USAGE, "KV copy of %u positions from slot %u to %u (%u slots, context %u)", n, src, dst, xf->n_seq, xf->n_ctx);
    xf_chain_stop(xf);
    vk_begin(xf->vk);
    for (u32 il = 0; il < xf->cfg->n_layer; il++) {
        const Tensor *c[2] = { &xf->s.kv[il].k, &xf->s.kv[il].v };
        for (int i = 0; i < 2; i++) {
            u64 rows = c[i]->ne[1], rb = dtype_bytes(c[i]->dtype, c[i]->ne[0]);
            Tensor a = xf_cache_rows(c[i], 0, (u32)rows), b = a;      /* slot 0's rows, moved to each slot */
            a.offset += src * rows * rb; b.offset += dst * rows * rb;
            vk_copy_bytes(xf->vk, &a, &b, MIN((u64)n, rows) * rb);
        }
    }
    vk_submit_wait(xf->vk);
    return true;
}

/* ---- greedy decode with steps in flight ---- */
bool xf_chain_ok(const Xf *xf) {
    return !xf->d.step && !xf->d.on && !xf_debug.trace && !xf_debug.check_nan && !xf_debug.profile && !xf_debug.inject;
}

/* the id word of chained step j's [id, flag] in recording i (the next step's embedding input) */
static Tensor xf_chain_id(const Xf *xf, u32 i, u32 j) {
    Tensor v = xf->s.chain_out[i][j];
    v.ndim = 1; v.ne[0] = 1; v.ne[1] = 1; v.nelem = 1; v.nbytes = 4;
    return v;
}

/* queues recording chain_next: the steps at chain_p .. chain_p + K - 1 (those past the context at its last position) */
static void xf_chain_submit(Xf *xf) {
    const u32 K = EDGE_CHAIN_STEPS;
    u32 i = xf->r.chain_next, lv;
    u32 keys = xf_dec_bound(xf, MIN(xf->r.chain_p + K, xf->n_ctx), &lv);
    VkRec *r = &xf->r.chain[i][lv];
    xf->r.chain_lv[i] = lv;
    if (!r->cmd) vk_rec_init_like(xf->vk, r, xf_rec_like(xf->r.chain, 2), K * xf->cfg->n_layer, 3 * K * xf->cfg->n_layer);
    if (!r->ready) {                    /* step j: its id from step j - 1's chain_out (j = 0: the other recording's last), its position from chain_pos[i][j], its argmax into chain_out[i][j] */
        xf->r.keys = keys;
        vk_rec_begin(xf->vk, r);
        for (u32 j = 0; j < K; j++) {
            if (j) vk_barrier(xf->vk);
            Tensor id = j ? xf_chain_id(xf, i, j - 1) : xf_chain_id(xf, i ^ 1, K - 1);
            xf_record(xf, &id, &xf->s.chain_pos[i][j], &xf->s.chain_out[i][j], 1, xf->r.chain_p + j, false, false);
        }
        vk_rec_end(xf->vk, r);
    }
    for (u32 j = 0; j < K; j++) {
        u32 rt[4];
        op_rows_fill(rt, 1, MIN(xf->r.chain_p + j, xf->n_ctx - 1), xf->r.chain_slot);
        vk_upload(xf->vk, &xf->s.chain_pos[i][j], rt);
    }
    vk_rec_submit_async(xf->vk, r);
    xf->r.n_dispatch_last = r->n_dispatch / K;
    xf->r.chain_p += K;
    xf->r.chain_n += K;
    xf->r.chain_next ^= 1;
}

bool xf_chain_start(Xf *xf, i32 token, u32 p0, u32 slot, Err *e) {
    if (!xf_chain_ok(xf)) return err_set(e, EXIT_USAGE, "chained decode with a debug tool active");
    if (token < 0 || (u32)token >= xf->cfg->n_vocab) return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", token, xf->cfg->n_vocab);
    if (p0 >= xf->n_ctx) return err_set(e, EXIT_USAGE, "position %u is past the context of %u tokens", p0, xf->n_ctx);
    if (slot >= xf->n_seq) return err_set(e, EXIT_USAGE, "sequence slot %u of %u", slot, xf->n_seq);
    xf_chain_stop(xf);
    xf->r.chain_slot = slot;
    Tensor id = xf_chain_id(xf, xf->r.chain_next ^ 1, EDGE_CHAIN_STEPS - 1);   /* the first step's input */
    u32 t = (u32)token;
    vk_upload(xf->vk, &id, &t);
    xf->r.chain_p = p0;
    xf_chain_submit(xf);
    return true;
}

bool xf_chain_next(Xf *xf, bool more, u32 *id, Err *e) {
    const u32 K = EDGE_CHAIN_STEPS;
    if (!xf->r.chain_n) return err_set(e, EXIT_USAGE, "xf_chain_next without a step in flight");
    u32 i = xf->r.chain_next ^ ((xf->r.chain_n + xf->r.chain_ret) / K == 2 ? 0 : 1);   /* the oldest recording (of one or two) */
    if (!xf->r.chain_read) {              /* its steps not yet read back: queue the next recording, then wait */
        if (more && xf->r.chain_n <= K && xf->r.chain_p < xf->n_ctx) { xf_chain_submit(xf); i = xf->r.chain_next; }
        vk_rec_wait(xf->vk, &xf->r.chain[i][xf->r.chain_lv[i]]);
        for (u32 j = 0; j < K; j++) vk_download(xf->vk, &xf->s.chain_out[i][j], xf->r.chain_ids[j]);
        xf->r.chain_read = true; xf->r.chain_ret = 0;
    }
    u32 j = xf->r.chain_ret, p = xf->r.chain_p - xf->r.chain_n;
    xf->r.chain_n--;
    if (++xf->r.chain_ret == K) { xf->r.chain_read = false; xf->r.chain_ret = 0; }
    if (xf->r.chain_ids[j][1])
        return err_set(e, EXIT_NUMERIC, "the logits at position %u hold a NaN or an Inf (flagged by the argmax kernel): "
                       "a numeric fault; run again with --check-nan to find the first op that produced it", p);
    *id = xf->r.chain_ids[j][0];
    return true;
}

void xf_chain_stop(Xf *xf) {
    for (int i = 0; i < 2; i++) vk_rec_wait(xf->vk, &xf->r.chain[i][xf->r.chain_lv[i]]);
    xf->r.chain_n = xf->r.chain_ret = 0;
    xf->r.chain_read = false;
}

/* GPU time of the last replayed decode step in ns (edge bench, time_decode), or 0 */
f64 xf_decode_gpu_ns(Xf *xf) {
    if (!xf->r.dec_ts || !xf->r.dec[xf->r.dec_lv].ready) return 0;
    u64 t[2];
    vk_ts_read(xf->vk, xf->r.dec_ts, 2, t);
    return (f64)((t[1] - t[0]) & xf->vk->caps.timestamp_mask) * xf->vk->caps.timestamp_period_ns;
}

