/* reference.c — the scalar CPU forward pass (see reference.h). Each step of the fixtures README's
   rules is one function below, in the order the README lists them; ref_step strings them together.
   Nothing here is fast; everything here is meant to be checked by reading. */

/* ---- state ------------------------------------------------------------------------------- */
static u32 ref_max_row(const ModelConfig *c) {
    u32 n = MAX(c->n_embd, c->n_ff);
    n = MAX(n, c->n_head * c->head_dim);
    return MAX(n, c->head_dim);
}

bool ref_state_bytes(const ModelConfig *c, u32 n_ctx, u64 *bytes) {
    /* 64-bit and overflow-checked: the KV cache of a big model at a long context exceeds 4 GiB. */
    u64 kv, f32s, t;
    if (!mul_u64((u64)c->n_layer * n_ctx, (u64)c->n_head_kv * c->head_dim, &kv)) return false;
    if (!mul_u64(kv, 2, &kv)) return false;
    f32s = (u64)c->n_embd * 3 + (u64)c->n_head * c->head_dim * 2 + (u64)c->n_head_kv * c->head_dim * 2
         + (u64)c->n_ff * 2 + c->n_vocab + (u64)ref_max_row(c) * 2 + c->rope_dim;
    if (!add_u64(kv, f32s, &t) || !mul_u64(t, sizeof(f32), &t)) return false;
    if (!add_u64(t, (u64)n_ctx * sizeof(f64), &t) || !add_u64(t, 20 * 64, &t)) return false;   /* + alignment */
    *bytes = t;
    return true;
}

bool ref_init(RefState *s, const Model *m, u32 n_ctx, Arena *a, Err *e) {
    const ModelConfig *c = &m->cfg;
    u64 need;
    memset(s, 0, sizeof *s);
    if (n_ctx == 0) return err_set(e, EXIT_USAGE, "reference: a context of 0 positions");
    if (!ref_state_bytes(c, n_ctx, &need) || need > a->cap - a->pos)
        return err_set(e, EXIT_USAGE, "reference: the state for %u positions does not fit in arena '%s' (%llu bytes free)",
                       n_ctx, a->name, (unsigned long long)(a->cap - a->pos));
    u64 kv = (u64)c->n_layer * n_ctx * c->n_head_kv * c->head_dim;
    s->m = m;
    s->n_ctx = n_ctx;
    s->x      = push_array(a, f32, c->n_embd);
    s->h      = push_array(a, f32, c->n_embd);
    s->o      = push_array(a, f32, c->n_embd);
    s->q      = push_array(a, f32, (u64)c->n_head * c->head_dim);
    s->att    = push_array(a, f32, (u64)c->n_head * c->head_dim);
    s->k      = push_array(a, f32, (u64)c->n_head_kv * c->head_dim);
    s->v      = push_array(a, f32, (u64)c->n_head_kv * c->head_dim);
    s->gate   = push_array(a, f32, c->n_ff);
    s->up     = push_array(a, f32, c->n_ff);
    s->logits = push_array(a, f32, c->n_vocab);
    s->scores = push_array(a, f64, n_ctx);
    s->row    = push_array(a, f32, ref_max_row(c));
    s->vec    = push_array(a, f32, ref_max_row(c));
    s->rope_ff = push_array(a, f32, c->rope_dim / 2);
    s->k_cache = push_array(a, f32, kv);
    s->v_cache = push_array(a, f32, kv);
    for (u32 i = 0; i < c->rope_dim / 2; i++) s->rope_ff[i] = 1.0f;
    if (m->w.rope_freqs) dequant_row(m->w.rope_freqs->type, m->w.rope_freqs->data, s->rope_ff, c->rope_dim / 2);
    return true;
}

void ref_reset(RefState *s) { s->n_past = 0; }

/* ---- primitives ---------------------------------------------------------------------------- */
f64 ref_gelu_tanh(f64 x) {
    if (isinf(x)) return x > 0 ? x : 0.0;           /* the limit; -inf * 0 would be NaN */
    const f64 k = 0.79788456080286535588;          /* sqrt(2/pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

static f64 ref_silu(f64 x) { return x / (1.0 + exp(-x)); }

f64 ref_softcap(f64 x, f64 cap) { return cap * tanh(x / cap); }

/* A 1-D weight (norm, bias) as f32, in s->vec (valid until the next call). */
static const f32 *ref_vector(RefState *s, const GgufTensor *t) {
    dequant_row(t->type, t->data, s->vec, t->ne[0]);
    return s->vec;
}

/* y = W·x for W with ne[1] rows of ne[0] values; each row is dequantized as it is used. */
static void ref_matvec(RefState *s, const GgufTensor *w, const f32 *x, f32 *y) {
    u64 n = w->ne[0], rb = 0;
    ggml_row_bytes(w->type, n, &rb);                /* checked in model_weights_load */
    for (u64 r = 0; r < w->ne[1]; r++) {
        dequant_row(w->type, w->data + r * rb, s->row, n);
        f64 acc = 0;
        for (u64 j = 0; j < n; j++) acc += (f64)s->row[j] * (f64)x[j];
        y[r] = (f32)acc;
    }
}

/* out = x / sqrt(mean(x²) + eps) ⊙ w (the stored weight as is; gemma's is already 1+w). out may be x. */
static void ref_rmsnorm(RefState *s, f32 *out, const f32 *x, const GgufTensor *w, u32 n) {
    f64 ss = 0;
    for (u32 i = 0; i < n; i++) ss += (f64)x[i] * (f64)x[i];
    f64 inv = 1.0 / sqrt(ss / n + (f64)s->m->cfg.eps);
    const f32 *wv = ref_vector(s, w);
    for (u32 i = 0; i < n; i++) out[i] = (f32)((f64)x[i] * inv * (f64)wv[i]);
}

static void ref_add_bias(RefState *s, f32 *x, const GgufTensor *b) {
    const f32 *bv = ref_vector(s, b);
    for (u64 i = 0; i < b->ne[0]; i++) x[i] = (f32)((f64)x[i] + (f64)bv[i]);
}

/* RoPE on n_heads heads of head_dim at position pos: θ_i = pos·freq_scale·base^(−2i/rope_dim) / ff_i.
   NORM rotates (x[2i], x[2i+1]); NEOX rotates (x[i], x[i+rope_dim/2]). Dims past rope_dim stay. */
static void ref_rope(RefState *s, f32 *x, u32 n_heads, u32 il, u32 pos) {
    const ModelConfig *c = &s->m->cfg;
    f32 base, fscale;
    model_layer_rope(c, il, &base, &fscale);
    u32 half = c->rope_dim / 2;
    for (u32 h = 0; h < n_heads; h++) {
        f32 *v = x + (u64)h * c->head_dim;
        for (u32 i = 0; i < half; i++) {
            f64 theta = (f64)pos * (f64)fscale * pow((f64)base, -2.0 * i / c->rope_dim) / (f64)s->rope_ff[i];
            f64 cs = cos(theta), sn = sin(theta);
            u32 a = c->rope_neox ? i : 2 * i, b = c->rope_neox ? i + half : 2 * i + 1;
            f64 xa = v[a], xb = v[b];
            v[a] = (f32)(xa * cs - xb * sn);
            v[b] = (f32)(xa * sn + xb * cs);
        }
    }
}

/* ---- the blocks -------------------------------------------------------------------------------- */
/* x = E[tok] · embd_scale */
static void ref_embed(RefState *s, i32 tok) {
    const ModelConfig *c = &s->m->cfg;
    const GgufTensor *E = s->m->w.tok_embd;
    u64 rb = 0;
    ggml_row_bytes(E->type, c->n_embd, &rb);
    dequant_row(E->type, E->data + (u64)tok * rb, s->x, c->n_embd);
    if (c->embd_scale != 1.0f)
        for (u32 i = 0; i < c->n_embd; i++) s->x[i] *= c->embd_scale;   /* f32 product, like llama.cpp */
}

/* One head's attention at position pos over the cache of layer il: scores = scale·K·q, optional
   softcap, causal (+ sliding window) mask, softmax, then the weighted sum of V into out. */
static void ref_attend_head(RefState *s, u32 il, u32 h, u32 pos, f32 *out) {
    const ModelConfig *c = &s->m->cfg;
    u32 hd = c->head_dim, kvd = c->n_head_kv * hd, kvh = h / (c->n_head / c->n_head_kv);
    const f32 *q = s->q + (u64)h * hd;
    const f32 *K = s->k_cache + (u64)il * s->n_ctx * kvd + (u64)kvh * hd;
    const f32 *V = s->v_cache + (u64)il * s->n_ctx * kvd + (u64)kvh * hd;
    bool swa = model_layer_is_swa(c, il);
    u32 t0 = swa && pos + 1 > c->swa_window ? pos + 1 - c->swa_window : 0;   /* sees 0 <= pos-t < window */
    f64 mx = -INFINITY;
    for (u32 t = t0; t <= pos; t++) {
        f64 d = 0;
        for (u32 i = 0; i < hd; i++) d += (f64)q[i] * (f64)K[(u64)t * kvd + i];
        d *= (f64)c->attn_scale;
        if (c->attn_softcap > 0) d = ref_softcap(d, c->attn_softcap);
        s->scores[t] = d;
        if (d > mx) mx = d;
    }
    f64 sum = 0;
    for (u32 t = t0; t <= pos; t++) { s->scores[t] = exp(s->scores[t] - mx); sum += s->scores[t]; }
    for (u32 i = 0; i < hd; i++) {
        f64 acc = 0;
        for (u32 t = t0; t <= pos; t++) acc += s->scores[t] * (f64)V[(u64)t * kvd + i];
        out[i] = (f32)(acc / sum);
    }
}

static void ref_attention_block(RefState *s, u32 il, u32 pos) {
    const ModelConfig *c = &s->m->cfg;
    const ModelLayer *L = &s->m->w.layers[il];
    u32 hd = c->head_dim, kvd = c->n_head_kv * hd;
    ref_rmsnorm(s, s->h, s->x, L->attn_norm, c->n_embd);
    ref_matvec(s, L->wq, s->h, s->q);
    ref_matvec(s, L->wk, s->h, s->k);
    ref_matvec(s, L->wv, s->h, s->v);
    if (c->qkv_bias) {                                  /* qwen2 */
        ref_add_bias(s, s->q, L->bq);
        ref_add_bias(s, s->k, L->bk);
        ref_add_bias(s, s->v, L->bv);
    }
    if (c->qk_norm) {                                   /* gemma3, qwen3: RMSNorm of each head over head_dim, before RoPE */
        for (u32 h = 0; h < c->n_head; h++) ref_rmsnorm(s, s->q + (u64)h * hd, s->q + (u64)h * hd, L->q_norm, hd);
        for (u32 h = 0; h < c->n_head_kv; h++) ref_rmsnorm(s, s->k + (u64)h * hd, s->k + (u64)h * hd, L->k_norm, hd);
    }
    ref_rope(s, s->q, c->n_head, il, pos);
    ref_rope(s, s->k, c->n_head_kv, il, pos);
    memcpy(s->k_cache + ((u64)il * s->n_ctx + pos) * kvd, s->k, kvd * sizeof(f32));
    memcpy(s->v_cache + ((u64)il * s->n_ctx + pos) * kvd, s->v, kvd * sizeof(f32));
    for (u32 h = 0; h < c->n_head; h++) ref_attend_head(s, il, h, pos, s->att + (u64)h * hd);
    ref_matvec(s, L->wo, s->att, s->o);
    if (c->post_norms) ref_rmsnorm(s, s->o, s->o, L->post_attn_norm, c->n_embd);
    for (u32 i = 0; i < c->n_embd; i++) s->x[i] = (f32)((f64)s->x[i] + (f64)s->o[i]);
}

/* x += Wdown·(act(Wgate·h) ⊙ Wup·h), act = SiLU or GELU(tanh); gemma: RMSNorm(post_ffw_norm) first. */
static void ref_ffn_block(RefState *s, u32 il) {
    const ModelConfig *c = &s->m->cfg;
    const ModelLayer *L = &s->m->w.layers[il];
    ref_rmsnorm(s, s->h, s->x, L->ffn_norm, c->n_embd);
    ref_matvec(s, L->w_gate, s->h, s->gate);
    ref_matvec(s, L->w_up, s->h, s->up);
    for (u32 i = 0; i < c->n_ff; i++) {
        f64 g = c->gelu ? ref_gelu_tanh(s->gate[i]) : ref_silu(s->gate[i]);
        s->gate[i] = (f32)(g * (f64)s->up[i]);
    }
    ref_matvec(s, L->w_down, s->gate, s->o);
    if (c->post_norms) ref_rmsnorm(s, s->o, s->o, L->post_ffn_norm, c->n_embd);
    for (u32 i = 0; i < c->n_embd; i++) s->x[i] = (f32)((f64)s->x[i] + (f64)s->o[i]);
}

/* logits = Woutput · RMSNorm(x, output_norm), then the final softcap when the model has one. */
static void ref_output(RefState *s) {
    const ModelConfig *c = &s->m->cfg;
    ref_rmsnorm(s, s->h, s->x, s->m->w.output_norm, c->n_embd);
    ref_matvec(s, s->m->w.output, s->h, s->logits);
    if (c->final_softcap > 0)
        for (u32 i = 0; i < c->n_vocab; i++) s->logits[i] = (f32)ref_softcap(s->logits[i], c->final_softcap);
}

bool ref_step(RefState *s, i32 token, Err *e) {
    const ModelConfig *c = &s->m->cfg;
    if (token < 0 || (u32)token >= c->n_vocab)
        return err_set(e, EXIT_USAGE, "token id %d is out of range (n_vocab %u)", token, c->n_vocab);
    if (s->n_past >= s->n_ctx)
        return err_set(e, EXIT_USAGE, "the context is full (%u positions)", s->n_ctx);
    u32 pos = s->n_past;
    ref_embed(s, token);
    for (u32 il = 0; il < c->n_layer; il++) {
        ref_attention_block(s, il, pos);
        ref_ffn_block(s, il);
    }
    ref_output(s);
    s->n_past++;
    return true;
}

u32 ref_argmax(const f32 *logits, u32 n) {
    u32 best = 0;
    for (u32 i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;   /* strict: the lowest id wins ties */
    return best;
}
