/* genmodel.c — implementation of genmodel.h (the command `edge gen-model` is cli/gen.c).

   Random data: one xorshift64 stream per file, seeded by --seed (default 1), drawn in file
   order, so a (config, type, layers, seed) gives the same bytes on every machine. Quantized
   blocks are random bytes (every bit pattern of the quants, of the packed scales and of the IQ4
   indices is a valid block) with the f16 block scales then overwritten by finite values chosen
   so that the weights have a standard deviation of about 0.02 (gen_blocks[]: one row per type).
   Each scale is jittered by a factor in [0.75, 1.25). F16 / BF16 weights are uniform with std
   0.02; norms 1 +- 0.05 (gemma's GGUFs store 1+w already); biases +-0.02; llama3 rope_freqs
   follow the converter's formula (factor 32, low 1, high 4, original context 8192: Llama 3.2's
   rope_scaling).

   Not written, as the converter does not write them either: llama3 rope scaling keys (the
   converter turns rope_scaling into the rope_freqs tensor), gemma3 rope.freq_base_swa and
   sliding_window_pattern (the loader's defaults are the published values). The tokenizer is a
   minimal SentencePiece-style vocabulary of exactly n_vocab pieces (<unk> <s> </s>, the 256
   byte tokens, then "w<hex id>"), with scores and types, bos 1, eos 2, unk 0: enough for
   vocab-size checks and tokenizing text, not a real model's vocabulary. */
#include <time.h>

/* ---- presets: llama-quantize's file types (llama.h's LLAMA_FTYPE_*, general.file_type) ---- */
static const struct { const char *name; u32 ftype, type; } gen_presets[] = {
    /* name      ftype  default tensor type  */
    { "F16",       1,  GGML_TYPE_F16    },
    { "BF16",     32,  GGML_TYPE_BF16   },
    { "Q8_0",      7,  GGML_TYPE_Q8_0   },
    { "Q4_0",      2,  GGML_TYPE_Q4_0   },
    { "Q4_1",      3,  GGML_TYPE_Q4_1   },
    { "Q5_0",      8,  GGML_TYPE_Q5_0   },
    { "Q5_1",      9,  GGML_TYPE_Q5_1   },
    { "Q2_K",     10,  GGML_TYPE_Q2_K   },
    { "Q3_K_S",   11,  GGML_TYPE_Q3_K   },
    { "Q3_K_M",   12,  GGML_TYPE_Q3_K   },
    { "Q3_K_L",   13,  GGML_TYPE_Q3_K   },
    { "Q4_K_S",   14,  GGML_TYPE_Q4_K   },
    { "Q4_K_M",   15,  GGML_TYPE_Q4_K   },
    { "Q5_K_S",   16,  GGML_TYPE_Q5_K   },
    { "Q5_K_M",   17,  GGML_TYPE_Q5_K   },
    { "Q6_K",     18,  GGML_TYPE_Q6_K   },
    { "IQ4_NL",   25,  GGML_TYPE_IQ4_NL },
    { "IQ4_XS",   30,  GGML_TYPE_IQ4_XS },
};
enum { FT_Q2_K = 10, FT_Q3_K_M = 12, FT_Q3_K_L = 13, FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_M = 17,
       FT_IQ4_NL = 25, FT_IQ4_XS = 30 };

static i32 gen_preset_of(u32 ftype) {
    for (u32 i = 0; i < ARRAY_COUNT(gen_presets); i++) if (gen_presets[i].ftype == ftype) return (i32)i;
    return -1;
}

bool gen_type_parse(const char *s, GenType *gt) {
    for (u32 i = 0; i < ARRAY_COUNT(gen_presets); i++)
        if (!strcasecmp(s, gen_presets[i].name)) {
            *gt = (GenType){ gen_presets[i].ftype, GGML_TYPE_COUNT, GGML_TYPE_COUNT };
            return true;
        }
    return false;
}

bool gen_tensor_type_parse(const char *s, u32 *type) {
    for (u32 t = 0; t < GGML_TYPE_COUNT; t++)
        if (ggml_type_supported(t) && !strcasecmp(s, ggml_type_name(t))) { *type = t; return true; }
    return false;
}

const char *gen_ftype_name(u32 ftype) { i32 i = gen_preset_of(ftype); return i < 0 ? "?" : gen_presets[i].name; }

const char *gen_preset_list(char *buf, int n) {
    int k = 0;
    buf[0] = 0;
    for (u32 i = 0; i < ARRAY_COUNT(gen_presets) && k < n; i++) k += fmt_buf(buf + k, n - k, "%s%s", i ? " " : "", gen_presets[i].name);
    return buf;
}

const ModelEntry *gen_find_config(const char *name) {
    for (u32 i = 0; i < MODEL_COUNT; i++) if (!strcmp(model_table[i].name, name)) return &model_table[i];
    return 0;
}

/* Configs without a separate LM head: every listed model except the two llama2-style ones
   (Gemma 2/3, Qwen2.5 0.5B/1.5B/3B and their Coder variants, Llama 3.2 1B/3B tie their embeddings). */
static bool gen_tied(const ModelEntry *t) { return strcmp(t->name, "stories260K") && strcmp(t->name, "tiny-llama"); }
static bool gen_llama3(const ModelEntry *t) { return t->arch == ARCH_LLAMA && !strncmp(t->name, "llama-3", 7); }

/* ---- llama-quantize's type rules (src/llama-quant.cpp: llama_tensor_get_type, its _impl and
   tensor_type_fallback), for what the listed configs have: dense layers (no experts), no Falcon,
   no 70B, no imatrix. Layers are visited in number order, so the attn_v and ffn_down counters
   equal the layer index and their totals n_layer. ---------------------------------------------- */
typedef enum GenCat { GC_OTHER, GC_TOKEN_EMBD, GC_OUTPUT, GC_ATTN_Q, GC_ATTN_K, GC_ATTN_V, GC_ATTN_OUT,
                      GC_FFN_GATE, GC_FFN_UP, GC_FFN_DOWN } GenCat;

static GenCat gen_category(const char *name) {
    static const struct { const char *part; GenCat cat; } m[] = {   /* llama.cpp's tensor_get_category, in its order */
        { "attn_v.weight", GC_ATTN_V }, { "attn_k.weight", GC_ATTN_K }, { "attn_q.weight", GC_ATTN_Q },
        { "attn_output.weight", GC_ATTN_OUT }, { "ffn_up", GC_FFN_UP }, { "ffn_gate", GC_FFN_GATE }, { "ffn_down", GC_FFN_DOWN },
    };
    if (!strcmp(name, "output.weight")) return GC_OUTPUT;
    if (!strcmp(name, "token_embd.weight")) return GC_TOKEN_EMBD;
    for (u32 i = 0; i < ARRAY_COUNT(m); i++) if (strstr(name, m[i].part)) return m[i].cat;
    return GC_OTHER;
}

/* llama.cpp's use_more_bits (llama-quant.cpp). */
static bool gen_more_bits(u32 i, u32 n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

/* The mix's choice for a tensor of category c in layer il (llama_tensor_get_type_impl), before
   the fallback; ty is the preset's default type, ncols the row length, gqa n_head / n_head_kv. */
static u32 gen_mix_type(u32 ft, u32 ty, GenCat c, u32 il, u32 nl, u64 ncols, u32 gqa, bool tied, u32 out_type) {
    if (c == GC_OUTPUT || (tied && c == GC_TOKEN_EMBD)) {
        if (out_type != GGML_TYPE_COUNT) return out_type;
        if (ncols % ggml_block_elems(ty)) return GGML_TYPE_Q8_0;
        return ty == GGML_TYPE_Q8_0 ? ty : GGML_TYPE_Q6_K;
    }
    switch (c) {
    case GC_ATTN_V:
        if (ft == FT_Q2_K) return gqa >= 4 ? GGML_TYPE_Q4_K : GGML_TYPE_Q3_K;
        if (ft == FT_Q3_K_M) return il < 2 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
        if (ft == FT_Q3_K_L) return GGML_TYPE_Q5_K;
        if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS) && gqa >= 4) return GGML_TYPE_Q5_K;
        if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && gen_more_bits(il, nl)) return GGML_TYPE_Q6_K;
        if (ft == FT_Q4_K_S && il < 4) return GGML_TYPE_Q5_K;
        return ty;
    case GC_FFN_DOWN:
        if (ft == FT_Q2_K) return GGML_TYPE_Q3_K;
        if (ft == FT_Q3_K_M) return il < nl / 16 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
        if (ft == FT_Q3_K_L) return GGML_TYPE_Q5_K;
        if (ft == FT_Q4_K_M) return gen_more_bits(il, nl) ? GGML_TYPE_Q6_K : ty;
        if (il < nl / 8 && (ft == FT_IQ4_NL || ft == FT_IQ4_XS)) return GGML_TYPE_Q5_K;
        if (ft == FT_Q5_K_M && gen_more_bits(il, nl)) return GGML_TYPE_Q6_K;
        if (ft == FT_Q4_K_S && il < nl / 8) return GGML_TYPE_Q5_K;
        return ty;
    case GC_ATTN_OUT:
        if (ft == FT_Q2_K) return GGML_TYPE_Q3_K;
        if (ft == FT_Q3_K_M) return GGML_TYPE_Q4_K;
        if (ft == FT_Q3_K_L) return GGML_TYPE_Q5_K;
        return ty;
    default: return ty;     /* token_embd (untied), q, k, gate, up: the preset's type for these mixes */
    }
}

/* llama.cpp's tensor_type_fallback: a row that is not whole blocks of ty takes a type of 32-element
   blocks, and F16 when even that does not divide it; types without a fallback are an error. */
static bool gen_fallback(const char *name, u64 ncols, u32 *ty, u32 *n_fallback, Err *e) {
    if (ncols % ggml_block_elems(*ty) == 0) return true;
    u32 to;
    switch (*ty) {
    case GGML_TYPE_IQ4_XS: to = GGML_TYPE_IQ4_NL; break;
    case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: to = GGML_TYPE_Q4_0; break;
    case GGML_TYPE_Q4_K: to = GGML_TYPE_Q5_0; break;
    case GGML_TYPE_Q5_K: to = GGML_TYPE_Q5_1; break;
    case GGML_TYPE_Q6_K: to = GGML_TYPE_Q8_0; break;
    default:
        return err_set(e, EXIT_USAGE, "tensor '%s': rows of %llu elements are not whole %s blocks of %u (llama-quantize has no fallback for %s)",
                       name, (unsigned long long)ncols, ggml_type_name(*ty), ggml_block_elems(*ty), ggml_type_name(*ty));
    }
    (*n_fallback)++;
    *ty = ncols % ggml_block_elems(to) ? GGML_TYPE_F16 : to;
    return true;
}

/* One tensor's type (llama_tensor_get_type): 1-D F32; the overrides; F16/BF16 presets as is;
   the mix and its fallback for the quantized ones. */
static bool gen_pick(GenTensor *g, const GenType *gt, const ModelEntry *t, u32 il, u32 nl, u32 *n_fallback, Err *e) {
    if (g->ndim == 1) { g->type = GGML_TYPE_F32; return true; }
    i32 p = gen_preset_of(gt->ftype);
    if (p < 0) return err_set(e, EXIT_USAGE, "file type %u is not a gen-model preset", gt->ftype);
    GenCat c = gen_category(g->name);
    u32 ty = gen_presets[p].type;
    bool quantized = ggml_block_elems(ty) > 1, tied = gen_tied(t);
    if (gt->tok_embd != GGML_TYPE_COUNT && c == GC_TOKEN_EMBD) ty = gt->tok_embd;
    else if (gt->output != GGML_TYPE_COUNT && c == GC_OUTPUT) ty = gt->output;
    else if (quantized) {
        ty = gen_mix_type(gt->ftype, ty, c, il, nl, g->ne[0], t->n_head / t->n_head_kv, tied, gt->output);
        if (!gen_fallback(g->name, g->ne[0], &ty, n_fallback, e)) return false;
    }
    u64 rb;
    if (!ggml_row_bytes(ty, g->ne[0], &rb))
        return err_set(e, EXIT_USAGE, "tensor '%s': rows of %llu elements are not whole %s blocks of %u",
                       g->name, (unsigned long long)g->ne[0], ggml_type_name(ty), ggml_block_elems(ty));
    g->type = ty;
    return true;
}

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

/* Every tensor's type and size; a note on stderr (notes) when some fell back, as llama-quantize warns. */
static bool gen_types(GenTensor *l, u32 n, const ModelEntry *t, u32 n_layer, const GenType *gt, bool notes, Err *e) {
    u32 n_fallback = 0;
    const char *first = 0;
    for (u32 i = 0; i < n; i++) {
        GenTensor *g = &l[i];
        i64 il = gen_layer_of(g->name);
        u32 before = n_fallback;
        if (!gen_pick(g, gt, t, il < 0 ? 0 : (u32)il, n_layer, &n_fallback, e)) return false;
        if (n_fallback > before && !first) first = g->name;
        u64 rb;
        ggml_row_bytes(g->type, g->ne[0], &rb);
        if (!mul_u64(rb, g->ne[1], &g->nbytes)) return err_set(e, EXIT_USAGE, "tensor '%s': size overflows", g->name);
    }
    if (notes && n_fallback)
        errf("edge gen-model: note: %u of %u tensors (the first: '%s') required fallback quantization: their rows are "
             "not whole blocks of the mix's type (llama-quantize falls back the same way)\n", n_fallback, n, first);
    return true;
}

bool gen_tensors(const ModelEntry *t, u32 n_layer, const GenType *gt, Arena *a, GenTensor **list, u32 *n, bool notes, Err *e) {
    bool qwen = t->arch == ARCH_QWEN2, gemma3 = t->arch == ARCH_GEMMA3;
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
        if (gemma3) {
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
    if (!gen_types(l.t, l.n, t, n_layer, gt, notes, e)) return false;
    if (gt->ftype != 1) qsort(l.t, l.n, sizeof *l.t, gen_cmp_quant);   /* F16: the converter's order */
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

bool gen_header(GgufWriter *w, const ModelEntry *t, u32 n_layer, const GenType *gt, const GenTensor *list, u32 n, Err *e) {
    gguf_w_init(w);
    gen_metadata(w, t, n_layer, gt->ftype);
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

/* Quantized blocks: random bytes (every bit pattern of quants, packed scales and IQ4 indices is a
   valid block), then the f16 super-scale d at d_at overwritten with about 0.02 / div (div: the std
   of the block's integer values, for weights of std ~0.02), and where the type has one, its f16
   min at m_at with m_mul x d (centring the mean: + for the K-quants' subtracted dmin, - for the
   Q4_1 / Q5_1 min that is added). */
static const struct { u32 type; u16 d_at; f32 div; i16 m_at; f32 m_mul; } gen_blocks[] = {
    /* type               d_at  div      m_at  m_mul   integer values                          */
    { GGML_TYPE_Q8_0,       0,   74.0f,   -1,   0     },  /* i8, std 74                          */
    { GGML_TYPE_Q4_0,       0,   4.61f,   -1,   0     },  /* q - 8, q in 0..15                   */
    { GGML_TYPE_Q4_1,       0,   4.61f,    2,  -7.5f  },  /* q in 0..15, + m                     */
    { GGML_TYPE_Q5_0,       0,   9.23f,   -1,   0     },  /* q - 16, q in 0..31                  */
    { GGML_TYPE_Q5_1,       0,   9.23f,    2, -15.5f  },  /* q in 0..31, + m                     */
    { GGML_TYPE_Q2_K,      80,   13.9f,   82,   1.5f  },  /* 4-bit sc x 2-bit q - 4-bit m x dmin */
    { GGML_TYPE_Q3_K,     108,   43.3f,   -1,   0     },  /* (6-bit sc - 32) x (q in -4..3)      */
    { GGML_TYPE_Q4_K,       0,  218.0f,    2,   7.5f  },  /* 6-bit sc x 4-bit q - 6-bit m x dmin */
    { GGML_TYPE_Q5_K,       0,  527.0f,    2,  15.5f  },  /* 6-bit sc x 5-bit q - 6-bit m x dmin */
    { GGML_TYPE_Q6_K,     208, 1369.0f,   -1,   0     },  /* i8 sc (std 74) x (q - 32) (std 18.5)*/
    { GGML_TYPE_IQ4_NL,     0,   67.4f,   -1,   0     },  /* the IQ4 grid, rms 67.4              */
    { GGML_TYPE_IQ4_XS,     0, 1246.0f,   -1,   0     },  /* (6-bit ls - 32) x the IQ4 grid      */
};

static void gen_fill_blocks(u64 *s, u32 type, u64 nb, u8 *p) {
    u32 bb = ggml_block_bytes(type), k = 0;
    while (k < ARRAY_COUNT(gen_blocks) && gen_blocks[k].type != type) k++;
    gen_fill_bytes(s, p, nb * bb);
    if (k == ARRAY_COUNT(gen_blocks)) return;
    f32 d = 0.02f / gen_blocks[k].div;
    for (u64 b = 0; b < nb; b++) {
        u16 dd = gen_scale(s, d);
        memcpy(p + b * bb + gen_blocks[k].d_at, &dd, 2);
        if (gen_blocks[k].m_at < 0) continue;
        u16 dm = gen_scale(s, gen_blocks[k].m_mul * d);
        memcpy(p + b * bb + gen_blocks[k].m_at, &dm, 2);
    }
}

/* n F32 values of a 1-D tensor (norms, biases, llama3 rope_freqs from element `first`) or a matrix. */
static void gen_fill_f32(u64 *s, const GenTensor *g, u64 first, u64 n, f32 *x, f32 rope_base, u32 rope_dim) {
    const f32 sd = 0.02f;
    for (u64 i = 0; i < n; i++) {
        if (g->kind == GEN_NORM) x[i] = 1.0f + 0.05f * gen_unif(s);
        else if (g->kind == GEN_BIAS) x[i] = sd * gen_unif(s);
        else if (g->kind == GEN_ROPE_FREQS) {
            /* convert_hf_to_gguf's llama3 factors: 1 for high frequencies, factor for low ones, smooth between */
            const f64 factor = 32, lo = 1, hi = 4, old_ctx = 8192, pi = 3.14159265358979323846;
            f64 freq = 1.0 / pow((f64)rope_base, (f64)(2 * (first + i)) / rope_dim), wl = 2 * pi / freq;
            f64 v = wl < old_ctx / hi ? 1 : wl > old_ctx / lo ? factor
                  : 1 / ((1 - (old_ctx / wl - lo) / (hi - lo)) / factor + (old_ctx / wl - lo) / (hi - lo));
            x[i] = (f32)v;
        } else x[i] = sd * 1.7320508f * gen_unif(s);
    }
}

/* Fills n elements (whole blocks) of tensor g starting at element `first` into p. */
static void gen_fill(u64 *s, const GenTensor *g, u64 first, u64 n, u8 *p, f32 rope_base, u32 rope_dim) {
    u16 *h = (u16 *)p;
    switch (g->type) {
    case GGML_TYPE_F32:  gen_fill_f32(s, g, first, n, (f32 *)p, rope_base, rope_dim); break;
    case GGML_TYPE_F16:  for (u64 i = 0; i < n; i++) h[i] = f16_from_f32(0.02f * 1.7320508f * gen_unif(s)); break;
    case GGML_TYPE_BF16: for (u64 i = 0; i < n; i++) h[i] = bf16_from_f32(0.02f * 1.7320508f * gen_unif(s)); break;
    default:             gen_fill_blocks(s, g->type, n / ggml_block_elems(g->type), p); break;
    }
}

bool gen_model_write(const char *path, const ModelEntry *t, u32 n_layer, const GenType *gt, u64 seed, Err *e) {
    Arena a;
    arena_init(&a, "gen-model", 4096 + (u64)(4 + n_layer * 18) * sizeof(GenTensor));
    GenTensor *list; u32 n;
    GgufWriter w;
    if (!gen_tensors(t, n_layer, gt, &a, &list, &n, true, e) || !gen_header(&w, t, n_layer, gt, list, n, e)) {
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
            gen_fill(&s, g, b * per, nb * per, buf, t->rope_base, t->rope_dim);
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

bool gen_model_dir(Model *m, const ModelEntry *t, u32 n_layer, const GenType *gt, Arena *a, Err *e) {
    memset(m, 0, sizeof *m);
    GenTensor *list; u32 n;
    if (!gen_tensors(t, n_layer, gt, a, &list, &n, false, e)) return false;
    GgufWriter w;
    gguf_w_init(&w);
    gen_metadata(&w, t, n_layer, gt->ftype);
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
