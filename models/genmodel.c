/* genmodel.c — implementation of genmodel.h (the command `edge gen-model` is cli/gen.c).

   Random data: one xorshift64 stream per file, seeded by --seed (default 1), drawn in file
   order, so a (config, type, layers, seed) gives the same bytes on every machine. Quantized
   blocks are random bytes (every bit pattern of the quants and of the packed 6-bit Q4_K
   scales/mins, and every int8 Q6_K scale, is a valid block) with the f16 block scales then
   overwritten by finite values chosen so that the weights have a standard deviation of about
   0.02: Q8_0 d ~ 0.02/74 (int8 std 74); Q4_K d ~ 0.02/218 (std of 6-bit scale x 4-bit quant),
   dmin ~ 7.5 d (centres the mean); Q6_K d ~ 0.02/(74*18.5). Each scale is jittered by a
   factor in [0.75, 1.25). F16 weights are uniform with std 0.02; norms 1 +- 0.05 (gemma's
   GGUFs store 1+w already); biases +-0.02; llama3 rope_freqs follow the converter's formula
   (the row's factor: 32 for Llama 3.2, 8 for Llama 3.1; low 1, high 4, original context 8192).
   A gemma3 row with a RoPE factor gets rope.scaling.type linear and rope.scaling.factor, as the
   converter writes Gemma 3 4B's rope_scaling.

   Not written, as the converter does not write them either: llama3 rope scaling keys (the
   converter turns rope_scaling into the rope_freqs tensor), gemma3 rope.freq_base_swa and
   sliding_window_pattern (the loader's defaults are the published values). The tokenizer is a
   minimal SentencePiece-style vocabulary of exactly n_vocab pieces (<unk> <s> </s>, the 256
   byte tokens, then "w<hex id>"), with scores and types, bos 1, eos 2, unk 0: enough for
   vocab-size checks and tokenizing text, not a real model's vocabulary. */
#include <time.h>

bool gen_type_parse(const char *s, u32 *ftype) {
    if (!strcmp(s, "F16") || !strcmp(s, "f16")) *ftype = 1;
    else if (!strcmp(s, "Q8_0") || !strcmp(s, "q8_0")) *ftype = 7;
    else if (!strcmp(s, "Q4_K_M") || !strcmp(s, "q4_k_m")) *ftype = 15;
    else return false;
    return true;
}

const char *gen_ftype_name(u32 ftype) { return ftype == 1 ? "F16" : ftype == 7 ? "Q8_0" : "Q4_K_M"; }

const ModelEntry *gen_find_config(const char *name) {
    for (u32 i = 0; i < MODEL_COUNT; i++) if (!strcmp(model_table[i].name, name)) return &model_table[i];
    return 0;
}

/* Configs without a separate LM head: the table's tied column (tie_word_embeddings). Llama 3 rows: a
   rope_freqs tensor with the row's factor. */
static bool gen_tied(const ModelEntry *t) { return t->tied; }
static bool gen_llama3(const ModelEntry *t) { return t->arch == ARCH_LLAMA && t->rope_factor != 1.0f; }

/* llama.cpp's use_more_bits (llama-quant.cpp). */
static bool gen_more_bits(u32 i, u32 n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

typedef struct GenList { GenTensor *t; u32 n, cap; } GenList;

static void gen_add(GenList *l, GenKind kind, u64 ne0, u64 ne1, const char *fmt, u32 il) {
    GenTensor *t = &l->t[l->n++];
    memset(t, 0, sizeof *t);
    fmt_buf(t->name, sizeof t->name, fmt, il);
    t->kind = kind; t->ne[0] = ne0; t->ne[1] = ne1; t->ndim = ne1 > 1 || kind == GEN_WEIGHT ? 2 : 1;
}

/* The llama-quantize order: layer number (-1 for non-layer tensors), then name. */
static i64 gen_layer_of(const char *name) {
    if (strncmp(name, "blk.", 4)) return -1;
    return strtoll(name + 4, 0, 10);
}
static int gen_cmp_quant(const void *a, const void *b) {
    const GenTensor *x = a, *y = b;
    i64 lx = gen_layer_of(x->name), ly = gen_layer_of(y->name);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One 2-D tensor's type under the file type, with llama.cpp's fallbacks for rows that are not
   whole K-quant blocks. */
static bool gen_pick(GenTensor *g, u32 ftype, u32 il, u32 n_layer, bool lm_head, u32 *n_fallback, Err *e) {
    if (g->ndim == 1) { g->type = GGML_TYPE_F32; return true; }
    u32 ty = ftype == 1 ? GGML_TYPE_F16 : ftype == 7 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q4_K;
    if (ftype == 15) {
        bool more = (strstr(g->name, ".attn_v.") || strstr(g->name, ".ffn_down.")) && gen_more_bits(il, n_layer);
        if (lm_head || more) ty = GGML_TYPE_Q6_K;
        if (g->ne[0] % 256) {
            if (ty == GGML_TYPE_Q4_K) (*n_fallback)++;
            ty = GGML_TYPE_Q8_0;    /* llama.cpp's own fallback for Q6_K */
        }
    }
    u64 rb;
    if (!ggml_row_bytes(ty, g->ne[0], &rb))
        return err_set(e, EXIT_USAGE, "tensor '%s': rows of %llu elements are not whole %s blocks of %u (no fallback type)",
                       g->name, (unsigned long long)g->ne[0], ggml_type_name(ty), ggml_block_elems(ty));
    g->type = ty;
    return true;
}

bool gen_tensors(const ModelEntry *t, u32 n_layer, u32 ftype, Arena *a, GenTensor **list, u32 *n, bool notes, Err *e) {
    bool qwen = t->arch == ARCH_QWEN2, gemma3 = t->arch == ARCH_GEMMA3, qk_norm = gemma3 || t->arch == ARCH_QWEN3;
    bool post = t->arch == ARCH_GEMMA2 || gemma3, tied = gen_tied(t);
    u64 E = t->n_embd, Q = (u64)t->n_head * t->head_dim, KV = (u64)t->n_head_kv * t->head_dim, F = t->n_ff;
    GenList l = { 0, 0, 4 + n_layer * 18 };
    l.t = push_array(a, GenTensor, l.cap);
    if (gen_llama3(t)) gen_add(&l, GEN_ROPE_FREQS, t->rope_dim / 2, 1, "rope_freqs.weight", 0);
    gen_add(&l, GEN_WEIGHT, E, t->n_vocab, "token_embd.weight", 0);
    for (u32 il = 0; il < n_layer; il++) {
        gen_add(&l, GEN_NORM, E, 1, "blk.%u.attn_norm.weight", il);
        gen_add(&l, GEN_WEIGHT, E, Q, "blk.%u.attn_q.weight", il);
        gen_add(&l, GEN_WEIGHT, E, KV, "blk.%u.attn_k.weight", il);
        gen_add(&l, GEN_WEIGHT, E, KV, "blk.%u.attn_v.weight", il);
        if (qwen) {
            gen_add(&l, GEN_BIAS, Q, 1, "blk.%u.attn_q.bias", il);
            gen_add(&l, GEN_BIAS, KV, 1, "blk.%u.attn_k.bias", il);
            gen_add(&l, GEN_BIAS, KV, 1, "blk.%u.attn_v.bias", il);
        }
        if (qk_norm) {
            gen_add(&l, GEN_NORM, t->head_dim, 1, "blk.%u.attn_q_norm.weight", il);
            gen_add(&l, GEN_NORM, t->head_dim, 1, "blk.%u.attn_k_norm.weight", il);
        }
        gen_add(&l, GEN_WEIGHT, Q, E, "blk.%u.attn_output.weight", il);
        if (post) gen_add(&l, GEN_NORM, E, 1, "blk.%u.post_attention_norm.weight", il);
        gen_add(&l, GEN_NORM, E, 1, "blk.%u.ffn_norm.weight", il);
        gen_add(&l, GEN_WEIGHT, E, F, "blk.%u.ffn_gate.weight", il);
        gen_add(&l, GEN_WEIGHT, E, F, "blk.%u.ffn_up.weight", il);
        gen_add(&l, GEN_WEIGHT, F, E, "blk.%u.ffn_down.weight", il);
        if (post) gen_add(&l, GEN_NORM, E, 1, "blk.%u.post_ffw_norm.weight", il);
    }
    gen_add(&l, GEN_NORM, E, 1, "output_norm.weight", 0);
    if (!tied) gen_add(&l, GEN_WEIGHT, E, t->n_vocab, "output.weight", 0);
    u32 n_fallback = 0;
    const char *first_fallback = 0;
    for (u32 i = 0; i < l.n; i++) {
        GenTensor *g = &l.t[i];
        i64 il = gen_layer_of(g->name);
        bool head = !strcmp(g->name, "output.weight") || (tied && !strcmp(g->name, "token_embd.weight"));
        u32 before = n_fallback;
        if (!gen_pick(g, ftype, il < 0 ? 0 : (u32)il, n_layer, head, &n_fallback, e)) return false;
        if (n_fallback > before && !first_fallback) first_fallback = g->name;
        u64 rb;
        ggml_row_bytes(g->type, g->ne[0], &rb);
        if (!mul_u64(rb, g->ne[1], &g->nbytes)) return err_set(e, EXIT_USAGE, "tensor '%s': size overflows", g->name);
    }
    if (notes && n_fallback)
        errf("edge gen-model: note: %u tensors (the first: '%s') have rows that are not a multiple of 256: Q8_0 "
             "instead of Q4_K (llama.cpp writes Q5_0 there, which edge does not run)\n", n_fallback, first_fallback);
    if (ftype != 1) qsort(l.t, l.n, sizeof *l.t, gen_cmp_quant);
    *list = l.t; *n = l.n;
    return true;
}

static void gen_metadata(GgufWriter *w, const ModelEntry *t, u32 n_layer, u32 ftype) {
    const char *a = model_arch_name(t->arch);
    char k[96];
#define GK(s) (fmt_buf(k, sizeof k, "%s." s, a), k)
    gguf_w_str(w, "general.architecture", a);
    gguf_w_str(w, "general.type", "model");
    gguf_w_str(w, "general.name", t->name);
    gguf_w_u32(w, GK("block_count"), n_layer);
    gguf_w_u32(w, GK("context_length"), t->ctx);
    gguf_w_u32(w, GK("embedding_length"), t->n_embd);
    gguf_w_u32(w, GK("feed_forward_length"), t->n_ff);
    gguf_w_u32(w, GK("attention.head_count"), t->n_head);
    gguf_w_u32(w, GK("attention.head_count_kv"), t->n_head_kv);
    if (t->arch != ARCH_GEMMA2) gguf_w_f32(w, GK("rope.freq_base"), t->rope_base);
    gguf_w_f32(w, GK("attention.layer_norm_rms_epsilon"), t->eps);
    gguf_w_u32(w, GK("attention.key_length"), t->head_dim);
    gguf_w_u32(w, GK("attention.value_length"), t->head_dim);
    gguf_w_u32(w, "general.file_type", ftype);
    if (t->arch == ARCH_LLAMA) {
        gguf_w_u32(w, GK("vocab_size"), t->n_vocab);
        gguf_w_u32(w, GK("rope.dimension_count"), t->rope_dim);
    }
    if (t->arch == ARCH_GEMMA2) {
        gguf_w_f32(w, GK("attn_logit_softcapping"), t->attn_softcap);
        gguf_w_f32(w, GK("final_logit_softcapping"), t->final_softcap);
    }
    if (t->swa_window) gguf_w_u32(w, GK("attention.sliding_window"), t->swa_window);
    if (t->arch == ARCH_GEMMA3 && t->rope_factor != 1.0f) {
        gguf_w_str(w, GK("rope.scaling.type"), "linear");
        gguf_w_f32(w, GK("rope.scaling.factor"), t->rope_factor);
    }
#undef GK
    /* the minimal tokenizer */
    u32 V = t->n_vocab;
    gguf_w_str(w, "tokenizer.ggml.model", "llama");
    gguf_w_str(w, "tokenizer.ggml.pre", "default");
    gguf_w_arr(w, "tokenizer.ggml.tokens", GGUF_STRING, V);
    for (u32 i = 0; i < V; i++) {
        char s[24];
        int n = i == 0 ? fmt_buf(s, sizeof s, "<unk>") : i == 1 ? fmt_buf(s, sizeof s, "<s>") : i == 2 ? fmt_buf(s, sizeof s, "</s>")
              : i < 259 ? fmt_buf(s, sizeof s, "<0x%02X>", i - 3) : fmt_buf(s, sizeof s, "w%x", i);
        gguf_w_raw_str(w, s, (u64)n);
    }
    gguf_w_arr(w, "tokenizer.ggml.scores", GGUF_F32, V);
    for (u32 i = 0; i < V; i++) { f32 s = i < 259 ? 0.0f : -(f32)(i - 259); gguf_w_raw(w, &s, 4); }
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_I32, V);
    for (u32 i = 0; i < V; i++) { i32 ty = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1; gguf_w_raw(w, &ty, 4); }
    gguf_w_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", true);
    gguf_w_u32(w, "general.quantization_version", 2);
}

bool gen_header(GgufWriter *w, const ModelEntry *t, u32 n_layer, u32 ftype, const GenTensor *list, u32 n, Err *e) {
    gguf_w_init(w);
    gen_metadata(w, t, n_layer, ftype);
    for (u32 i = 0; i < n; i++) {
        u64 nb;
        if (!gguf_w_tensor(w, list[i].name, list[i].ndim, list[i].ne, list[i].type, &nb) || nb != list[i].nbytes) {
            gguf_w_free(w);
            return err_set(e, EXIT_USAGE, "tensor '%s': size overflows", list[i].name);
        }
    }
    gguf_w_finish(w);
    return true;
}

/* ---- random data ------------------------------------------------------------------------- */
static inline u64 gen_rand(u64 *s) { u64 x = *s; x ^= x << 13; x ^= x >> 7; x ^= x << 17; return *s = x; }
static inline f32 gen_unif(u64 *s) { return (f32)(gen_rand(s) >> 40) * (2.0f / 16777216.0f) - 1.0f; }   /* [-1, 1) */

static void gen_fill_bytes(u64 *s, u8 *p, u64 n) {
    u64 i = 0;
    for (; i + 8 <= n; i += 8) { u64 r = gen_rand(s); memcpy(p + i, &r, 8); }
    if (i < n) { u64 r = gen_rand(s); memcpy(p + i, &r, n - i); }
}

/* A block scale: base x a jitter in [0.75, 1.25), as a finite f16. */
static inline u16 gen_scale(u64 *s, f32 base) { return f16_from_f32(base * (1.0f + 0.25f * gen_unif(s))); }

/* Fills n elements (whole blocks) of tensor g starting at element `first` into p. */
static void gen_fill(u64 *s, const GenTensor *g, u64 first, u64 n, u8 *p, f32 rope_base, u32 rope_dim, f32 rope_factor) {
    const f32 sd = 0.02f;
    switch (g->type) {
    case GGML_TYPE_F32: {
        f32 *x = (f32 *)p;
        for (u64 i = 0; i < n; i++) {
            if (g->kind == GEN_NORM) x[i] = 1.0f + 0.05f * gen_unif(s);
            else if (g->kind == GEN_BIAS) x[i] = sd * gen_unif(s);
            else if (g->kind == GEN_ROPE_FREQS) {
                /* convert_hf_to_gguf's llama3 factors: 1 for high frequencies, factor for low ones, smooth between */
                const f64 factor = rope_factor, lo = 1, hi = 4, old_ctx = 8192, pi = 3.14159265358979323846;
                f64 freq = 1.0 / pow((f64)rope_base, (f64)(2 * (first + i)) / rope_dim), wl = 2 * pi / freq;
                f64 v = wl < old_ctx / hi ? 1 : wl > old_ctx / lo ? factor
                      : 1 / ((1 - (old_ctx / wl - lo) / (hi - lo)) / factor + (old_ctx / wl - lo) / (hi - lo));
                x[i] = (f32)v;
            } else x[i] = sd * 1.7320508f * gen_unif(s);
        }
        break;
    }
    case GGML_TYPE_F16: {
        u16 *x = (u16 *)p;
        for (u64 i = 0; i < n; i++) x[i] = f16_from_f32(sd * 1.7320508f * gen_unif(s));
        break;
    }
    case GGML_TYPE_Q8_0:
        gen_fill_bytes(s, p, n / 32 * 34);
        for (u64 b = 0; b < n / 32; b++) { u16 d = gen_scale(s, sd / 74.0f); memcpy(p + b * 34, &d, 2); }
        break;
    case GGML_TYPE_Q4_K:
        gen_fill_bytes(s, p, n / 256 * 144);
        for (u64 b = 0; b < n / 256; b++) {
            f32 d = sd / 218.0f;
            u16 dd = gen_scale(s, d), dm = gen_scale(s, 7.5f * d);
            memcpy(p + b * 144, &dd, 2); memcpy(p + b * 144 + 2, &dm, 2);
        }
        break;
    case GGML_TYPE_Q6_K:
        gen_fill_bytes(s, p, n / 256 * 210);
        for (u64 b = 0; b < n / 256; b++) { u16 d = gen_scale(s, sd / (74.0f * 18.5f)); memcpy(p + b * 210 + 208, &d, 2); }
        break;
    default: break;
    }
}


bool gen_model_write(const char *path, const ModelEntry *t, u32 n_layer, u32 ftype, u64 seed, Err *e) {
    Arena a;
    arena_init(&a, "gen-model", 4096 + (u64)(4 + n_layer * 18) * sizeof(GenTensor));
    GenTensor *list; u32 n;
    GgufWriter w;
    if (!gen_tensors(t, n_layer, ftype, &a, &list, &n, true, e) || !gen_header(&w, t, n_layer, ftype, list, n, e)) {
        arena_free(&a);
        return false;
    }
    FILE *f = fopen(path, "wb");
    if (!f) { gguf_w_free(&w); arena_free(&a); return err_set(e, EXIT_USAGE, "cannot create '%s'", path); }
    u8 *buf = malloc(GEN_CHUNK_BYTES);
    bool ok = buf && fwrite(w.p, 1, w.n, f) == w.n;
    u64 total = w.data_bytes, done = 0, s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!s) s = 1;
    bool tty = isatty(2);
    f64 last = now_sec();
    for (u32 i = 0; ok && i < n; i++) {
        const GenTensor *g = &list[i];
        u64 per = ggml_block_elems(g->type), bb = ggml_block_bytes(g->type);
        u64 nelem = g->ne[0] * g->ne[1], blocks = nelem / per, step = GEN_CHUNK_BYTES / bb;
        for (u64 b = 0; ok && b < blocks; b += step) {
            u64 nb = MIN(step, blocks - b);
            gen_fill(&s, g, b * per, nb * per, buf, t->rope_base, t->rope_dim, t->rope_factor);
            ok = fwrite(buf, 1, nb * bb, f) == nb * bb;
            done += nb * bb;
            if (tty && now_sec() - last > 0.2) {
                last = now_sec();
                errf("\redge gen-model: %llu / %llu MiB (%u%%)", (unsigned long long)(done >> 20),
                     (unsigned long long)(total >> 20), (u32)(done * 100 / (total ? total : 1)));
            }
        }
        u64 pad = align_up(g->nbytes, w.align) - g->nbytes;
        memset(buf, 0, pad);
        if (ok && pad) ok = fwrite(buf, 1, pad, f) == pad;
        done += pad;
    }
    if (tty) errf("\r%60s\r", "");
    if (fclose(f) != 0) ok = false;
    free(buf);
    gguf_w_free(&w);
    arena_free(&a);
    if (!ok) return err_set(e, EXIT_USAGE, "writing '%s' failed (disk full?)", path);
    return true;
}

bool gen_model_dir(Model *m, const ModelEntry *t, u32 n_layer, u32 ftype, Arena *a, Err *e) {
    memset(m, 0, sizeof *m);
    GenTensor *list; u32 n;
    if (!gen_tensors(t, n_layer, ftype, a, &list, &n, false, e)) return false;
    GgufWriter w;
    gguf_w_init(&w);
    gen_metadata(&w, t, n_layer, ftype);
    gguf_w_finish(&w);
    u8 *hdr = push_array(a, u8, w.n);
    memcpy(hdr, w.p, w.n);
    u64 hn = w.n;
    gguf_w_free(&w);
    Gguf *g = &m->gguf;
    if (!gguf_parse(g, hdr, hn, t->name, a, e)) return false;
    /* the directory, without data: offsets as the file would have them */
    g->tensors = push_array(a, GgufTensor, n);
    g->n_tensors = n;
    u64 off = 0;
    for (u32 i = 0; i < n; i++) {
        GgufTensor *x = &g->tensors[i];
        u64 len = strlen(list[i].name);
        char *nm = push_array(a, char, len + 1);
        memcpy(nm, list[i].name, len + 1);
        x->name = (GgufStr){ nm, len };
        x->ndim = list[i].ndim;
        x->ne[0] = list[i].ne[0]; x->ne[1] = list[i].ndim > 1 ? list[i].ne[1] : 1; x->ne[2] = x->ne[3] = 1;
        x->type = list[i].type;
        x->nelem = x->ne[0] * x->ne[1];
        x->nbytes = list[i].nbytes;
        x->offset = off;
        x->data = 0;
        off += align_up(x->nbytes, 32);
    }
    if (!model_config_from_gguf(g, n_layer != t->n_layer, &m->cfg, e)) return false;
    return model_weights_load(&m->w, &m->cfg, g, a, e);
}
