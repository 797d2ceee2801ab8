/* model.c — the config table, matching a GGUF against it, the weight directory, and the embedded
   default model (`edge models` prints the table: cli/models.c).

   Matching: the hyperparameters are read from the file with the defaults of the fixtures README
   (llama.cpp's) when a key is absent, then compared with every table row of the same
   architecture. No row equal in every column: an error (EXIT_MODEL) naming the closest row, the
   key, the value found and the value expected; with --allow-unlisted the file's values are used.
   Everything derived from the architecture (RoPE layout, norms, softcaps, attention scale, SWA
   pattern) is set here once, so the forward passes only read ModelConfig. */

const ModelEntry model_table[MODEL_COUNT] = {
#define MODEL_ROW(id, name, arch, vocab, embd, layer, head, kv, hd, ff, base, swab, rdim, eps, swa, acap, fcap, tok, chat, kern, ctx, tied, rfac) \
    { name, arch, vocab, embd, layer, head, kv, hd, ff, base, swab, rdim, eps, swa, acap, fcap, tok, chat, kern, ctx, tied, rfac },
#include "config/models.def"
};
_Static_assert(ARRAY_COUNT(model_table) == MODEL_COUNT, "models.def rows and MODEL_COUNT disagree");

static const char *const model_arch_names[ARCH_COUNT] = { "llama", "qwen2", "gemma2", "gemma3", "qwen3" };
_Static_assert(ARRAY_COUNT(model_arch_names) == ARCH_COUNT, "one name per ModelArch");

const char *model_arch_name(ModelArch a) { return (u32)a < ARCH_COUNT ? model_arch_names[a] : "?"; }

/* ---- the embedded default model ------------------------------------------------ */
/* models/stories260K.gguf (TinyStories 260K, MIT) linked in by the assembler; the path is relative
   to the repository root, where build.sh runs the compiler. */
__asm__(".section .rodata\n"
        ".balign 64\n"
        ".global model_embedded_start\n"
        ".hidden model_embedded_start\n"
        "model_embedded_start:\n"
        ".incbin \"models/stories260K.gguf\"\n"
        ".global model_embedded_end\n"
        ".hidden model_embedded_end\n"
        "model_embedded_end:\n"
        ".previous\n");
extern const u8 model_embedded_start[], model_embedded_end[];

void model_embedded(const u8 **data, u64 *size) {
    *data = model_embedded_start;
    *size = (u64)(model_embedded_end - model_embedded_start);
}

/* ---- reading hyperparameters ------------------------------------------------------ */
typedef struct KeyReader {
    const Gguf *g;
    const char *arch;
    char key[128];      /* the last key asked for, for messages */
    Err *e;
    bool ok;
} KeyReader;

static const char *kr_key(KeyReader *r, const char *suffix) {
    fmt_buf(r->key, sizeof r->key, "%s.%s", r->arch, suffix);
    return r->key;
}

/* present: *out = value; absent: *out = def. A present key of the wrong type is an error. */
static u32 kr_u32(KeyReader *r, const char *suffix, u32 def, bool *present) {
    const char *k = kr_key(r, suffix);
    u32 v = def;
    if (present) *present = false;
    if (!gguf_find_kv(r->g, k)) return def;
    if (!gguf_get_u32(r->g, k, &v)) {
        if (r->ok) err_set(r->e, EXIT_MODEL, "%s: key %s is not an unsigned 32-bit integer", r->g->path, k);
        r->ok = false;
        return def;
    }
    if (present) *present = true;
    return v;
}

static f32 kr_f32(KeyReader *r, const char *suffix, f32 def, bool *present) {
    const char *k = kr_key(r, suffix);
    f32 v = def;
    if (present) *present = false;
    if (!gguf_find_kv(r->g, k)) return def;
    if (!gguf_get_f32(r->g, k, &v)) {
        if (r->ok) err_set(r->e, EXIT_MODEL, "%s: key %s is not a number", r->g->path, k);
        r->ok = false;
        return def;
    }
    if (present) *present = true;
    return v;
}

static bool model_required(KeyReader *r, const char *suffix, u32 *out) {
    bool present;
    *out = kr_u32(r, suffix, 0, &present);
    if (r->ok && !present) {
        err_set(r->e, EXIT_MODEL, "%s: required key %s.%s is missing", r->g->path, r->arch, suffix);
        r->ok = false;
    }
    return r->ok;
}

/* ---- comparing with the table --------------------------------------------------------- */
typedef struct Field {
    const char *key;    /* GGUF key suffix (after "<arch>.") or a description */
    bool  is_float;
    f64   found, expected;
} Field;

static bool field_equal(const Field *f) {
    if (!f->is_float) return f->found == f->expected;
    f64 d = f->found - f->expected, m = fabs(f->expected) * 1e-6;
    return fabs(d) <= m;
}

/* The comparable columns of a config, in table order. Returns the count. */
static u32 model_fields(const ModelConfig *c, const ModelEntry *t, Field *f) {
    u32 n = 0;
#define FI(k, a, b) f[n++] = (Field){ k, false, (f64)(a), (f64)(b) }
#define FF(k, a, b) f[n++] = (Field){ k, true,  (f64)(a), (f64)(b) }
    FI("vocab_size (n_vocab)", c->n_vocab, t->n_vocab);
    FI("embedding_length", c->n_embd, t->n_embd);
    FI("block_count", c->n_layer, t->n_layer);
    FI("attention.head_count", c->n_head, t->n_head);
    FI("attention.head_count_kv", c->n_head_kv, t->n_head_kv);
    FI("attention.key_length (head_dim)", c->head_dim, t->head_dim);
    FI("feed_forward_length", c->n_ff, t->n_ff);
    FF("rope.freq_base", c->rope_base, t->rope_base);
    if (c->rope_swa_own_base) FF("rope.freq_base_swa", c->rope_base_swa, t->rope_base_swa);
    FI("rope.dimension_count", c->rope_dim, t->rope_dim);
    FF("attention.layer_norm_rms_epsilon", c->eps, t->eps);
    FI("attention.sliding_window", c->swa_window, t->swa_window);
    FF("attn_logit_softcapping", c->attn_softcap, t->attn_softcap);
    FF("final_logit_softcapping", c->final_softcap, t->final_softcap);
    /* linear RoPE scaling (gemma-3-4b: factor 8 on the global layers); a llama row's factor lives in the rope_freqs tensor */
    if (c->arch != ARCH_LLAMA) FF("rope.scaling.factor (linear)", 1.0f / c->freq_scale, t->rope_factor);
#undef FI
#undef FF
    return n;
}

static void field_str(const Field *f, f64 v, char *buf, int n) {
    if (f->is_float) fmt_buf(buf, n, "%g", v);
    else fmt_buf(buf, n, "%llu", (unsigned long long)v);
}

static bool gguf_str_contains(GgufStr s, const char *needle) {
    u64 n = strlen(needle);
    for (u64 i = 0; i + n <= s.len; i++) {
        u64 j = 0;
        while (j < n && (s.ptr[i + j] | 0x20) == (needle[j] | 0x20)) j++;
        if (j == n) return true;
    }
    return false;
}

/* The shape: required and defaulted hyperparameters, their consistency, and n_vocab. */
static bool model_read_shape(KeyReader *r, ModelConfig *c) {
    const Gguf *g = r->g;
    Err *e = r->e;
    if (!model_required(r, "embedding_length", &c->n_embd)) return false;
    if (!model_required(r, "block_count", &c->n_layer)) return false;
    if (!model_required(r, "attention.head_count", &c->n_head)) return false;
    if (!model_required(r, "feed_forward_length", &c->n_ff)) return false;
    if (c->n_embd == 0 || c->n_layer == 0 || c->n_head == 0 || c->n_ff == 0)
        return err_set(e, EXIT_MODEL, "%s: a zero hyperparameter (embedding_length %u, block_count %u, head_count %u, "
                       "feed_forward_length %u)", g->path, c->n_embd, c->n_layer, c->n_head, c->n_ff);
    c->n_head_kv = kr_u32(r, "attention.head_count_kv", c->n_head, 0);
    c->head_dim  = kr_u32(r, "attention.key_length", c->n_embd / c->n_head, 0);
    u32 vdim     = kr_u32(r, "attention.value_length", c->head_dim, 0);
    c->rope_dim  = kr_u32(r, "rope.dimension_count", c->head_dim, 0);
    c->eps       = kr_f32(r, "attention.layer_norm_rms_epsilon", 1e-5f, 0);
    c->rope_base = kr_f32(r, "rope.freq_base", 10000.0f, 0);
    if (!r->ok) return false;
    if (vdim != c->head_dim)
        return err_set(e, EXIT_MODEL, "%s: %s.attention.value_length %u differs from key_length %u (not supported)",
                       g->path, r->arch, vdim, c->head_dim);
    if (c->n_head_kv == 0 || c->n_head % c->n_head_kv)
        return err_set(e, EXIT_MODEL, "%s: %s.attention.head_count %u is not a multiple of head_count_kv %u",
                       g->path, r->arch, c->n_head, c->n_head_kv);
    if (c->head_dim == 0 || c->head_dim % 2 || c->rope_dim == 0 || c->rope_dim % 2 || c->rope_dim > c->head_dim)
        return err_set(e, EXIT_MODEL, "%s: head_dim %u and rope.dimension_count %u must be even, nonzero, rope <= head",
                       g->path, c->head_dim, c->rope_dim);

    /* n_vocab: <arch>.vocab_size, else the tokenizer's token count, else token_embd's rows. */
    bool has_vocab;
    c->n_vocab = kr_u32(r, "vocab_size", 0, &has_vocab);
    if (!r->ok) return false;
    if (!has_vocab) {
        const GgufKV *kv = gguf_find_kv(g, "tokenizer.ggml.tokens");
        const GgufTensor *te = gguf_find_tensor(g, "token_embd.weight");
        if (kv && kv->type == GGUF_ARRAY && kv->arr_n <= 0xffffffffu) c->n_vocab = (u32)kv->arr_n;
        else if (te && te->ne[1] <= 0xffffffffu) c->n_vocab = (u32)te->ne[1];
    }
    if (c->n_vocab == 0) return err_set(e, EXIT_MODEL, "%s: cannot tell n_vocab (no %s.vocab_size, tokenizer.ggml.tokens "
                                        "or token_embd.weight)", g->path, r->arch);
    return true;
}

/* Architecture rules (fixtures README, "Forward-pass rules"): RoPE layout, norms, scales,
   sliding window and softcaps, RoPE scaling; *file_ctx = the file's context_length. */
static bool model_read_arch_rules(KeyReader *r, ModelConfig *c, u32 *file_ctx) {
    const Gguf *g = r->g;
    ModelArch arch = c->arch;
    bool gemma = arch == ARCH_GEMMA2 || arch == ARCH_GEMMA3;
    c->rope_neox   = arch != ARCH_LLAMA;
    c->qkv_bias    = arch == ARCH_QWEN2;
    c->qk_norm     = arch == ARCH_GEMMA3 || arch == ARCH_QWEN3;   /* qwen3: qwen2 without biases, with q/k norms */
    c->post_norms  = gemma;
    c->gelu        = gemma;
    c->tied_output = gguf_find_tensor(g, "output.weight") == NULL;
    c->embd_scale  = gemma ? sqrtf((f32)c->n_embd) : 1.0f;
    c->attn_scale  = 1.0f / sqrtf((f32)c->head_dim);
    if ((arch == ARCH_GEMMA2 && c->n_layer == 46) || (arch == ARCH_GEMMA3 && c->n_layer == 62))
        c->attn_scale = 1.0f / sqrtf((f32)(c->n_embd / c->n_head));   /* the "27B" rule of llama.cpp */
    c->rope_base_swa = c->rope_base;
    if (arch == ARCH_GEMMA2) {
        c->swa_window    = kr_u32(r, "attention.sliding_window", 4096, 0);
        c->swa_period    = kr_u32(r, "attention.sliding_window_pattern", 2, 0);
        c->attn_softcap  = kr_f32(r, "attn_logit_softcapping", 50.0f, 0);
        c->final_softcap = kr_f32(r, "final_logit_softcapping", 30.0f, 0);
    } else if (arch == ARCH_GEMMA3) {
        c->swa_window    = kr_u32(r, "attention.sliding_window", 0, 0);
        c->swa_period    = c->swa_window ? kr_u32(r, "attention.sliding_window_pattern", 6, 0) : 0;
        c->final_softcap = kr_f32(r, "final_logit_softcapping", 0.0f, 0);
        c->rope_swa_own_base = true;
        c->rope_base_swa = kr_f32(r, "rope.freq_base_swa", 10000.0f, 0);
    }
    if (!c->swa_window) c->swa_period = 0;
    /* RoPE scaling as llama.cpp reads it: the type defaults to linear; the factor is rope.scaling.factor, else the
       old rope.scale_linear; absent or 0: none. gemma3 applies it to its global layers only (model_layer_rope). */
    c->freq_scale = 1.0f;
    GgufStr st;
    if (gguf_get_str(g, kr_key(r, "rope.scaling.type"), &st) && !gguf_str_eq(st, "none") && !gguf_str_eq(st, "linear"))
        return err_set(r->e, EXIT_MODEL, "%s: %s.rope.scaling.type '%.*s' is not supported (supported: none linear)",
                       g->path, r->arch, (int)MIN(st.len, 32), st.ptr);
    bool has_factor;
    f32 factor = kr_f32(r, "rope.scaling.factor", 0.0f, &has_factor);
    if (!has_factor) factor = kr_f32(r, "rope.scale_linear", 0.0f, 0);
    if (factor < 0 || isnan(factor) || isinf(factor))
        return err_set(r->e, EXIT_MODEL, "%s: %s.rope.scaling.factor %g is not a positive number", g->path, r->arch, (f64)factor);
    if (factor > 0) c->freq_scale = 1.0f / factor;
    *file_ctx = kr_u32(r, "context_length", 2048, 0);
    if (!r->ok) return false;
    if (*file_ctx == 0) *file_ctx = 2048;
    return true;
}

/* The table row of c's architecture with the fewest differing fields (general.name decides
   between rows of identical shape); *bad = their count, *first = the first that differs.
   NULL when no row has the architecture. */
static const ModelEntry *model_closest_row(const Gguf *g, const ModelConfig *c, u32 *bad_out, Field *first_out) {
    const ModelEntry *best = 0;
    u32 best_bad = ~0u;
    bool best_fits = false;
    Field best_f = {0};
    GgufStr gname = {0};
    bool has_name = gguf_get_str(g, "general.name", &gname);
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *t = &model_table[i];
        if (t->arch != c->arch) continue;
        Field f[16];
        u32 n = model_fields(c, t, f), bad = 0, first = 0;
        for (u32 j = 0; j < n; j++) if (!field_equal(&f[j])) { if (!bad) first = j; bad++; }
        /* Rows of identical shape (qwen2.5 and qwen2.5-coder): general.name decides, also between
           equally close rows of an unlisted file (a coder file with fewer layers names the coder row). */
        bool coder_row = strstr(t->name, "coder") != 0;
        bool name_fits = !has_name || coder_row == gguf_str_contains(gname, "coder");
        if (bad < best_bad || (bad == best_bad && name_fits && !best_fits)) {
            best = t; best_bad = bad; best_f = f[first]; best_fits = name_fits;
        }
    }
    *bad_out = best_bad;
    *first_out = best_f;
    return best;
}

/* No listed row matches: an error naming the closest row, or with --allow-unlisted a warning
   and the file's own values (tokenizer, chat template and kernel from the architecture). */
static bool model_config_unlisted(const Gguf *g, const KeyReader *r, const ModelEntry *best, const Field *best_f,
                                  bool allow_unlisted, u32 file_ctx, ModelConfig *c, Err *e) {
    char fs[48] = "", es[48] = "";
    if (best) { field_str(best_f, best_f->found, fs, sizeof fs); field_str(best_f, best_f->expected, es, sizeof es); }
    if (!allow_unlisted) {
        if (!best) return err_set(e, EXIT_MODEL, "%s: no supported config has architecture %s", g->path, r->arch);
        return err_set(e, EXIT_MODEL, "%s: not a supported config: %s.%s is %s, expected %s (closest listed config: '%s'; "
                       "`edge models` lists them; --allow-unlisted loads the file anyway)",
                       g->path, r->arch, best_f->key, fs, es, best->name);
    }
    if (best) errf("edge: warning: --allow-unlisted: %s is not a listed config (closest '%s': %s.%s is %s, expected %s); "
                   "using the file's hyperparameters\n", g->path, best->name, r->arch, best_f->key, fs, es);
    else errf("edge: warning: --allow-unlisted: %s is not a listed config; using the file's hyperparameters\n", g->path);
    ModelArch arch = c->arch;
    bool gemma = arch == ARCH_GEMMA2 || arch == ARCH_GEMMA3;
    GgufStr st;
    c->id = MODEL_UNLISTED;
    c->name = "unlisted";
    c->tok = gguf_get_str(g, "tokenizer.ggml.model", &st) && gguf_str_eq(st, "gpt2") ? TOK_BPE : TOK_SPM;
    c->chat = arch == ARCH_QWEN2 || arch == ARCH_QWEN3 ? CHAT_CHATML : gemma ? CHAT_GEMMA : CHAT_NONE;
    c->kernel = model_arch_names[arch];
    c->n_ctx = file_ctx;
    return true;
}

/* Architecture, shape, architecture rules, then the table: a listed row gives the name,
   tokenizer, chat template, kernel and context limit. */
bool model_config_from_gguf(const Gguf *g, bool allow_unlisted, ModelConfig *cfg, Err *e) {
    memset(cfg, 0, sizeof *cfg);
    GgufStr archs;
    if (!gguf_get_str(g, "general.architecture", &archs))
        return err_set(e, EXIT_MODEL, "%s: key general.architecture is missing (is this a model GGUF?)", g->path);
    ModelArch arch = ARCH_COUNT;
    for (u32 a = 0; a < ARCH_COUNT; a++) if (gguf_str_eq(archs, model_arch_names[a])) arch = (ModelArch)a;
    if (arch == ARCH_COUNT)
        return err_set(e, EXIT_MODEL, "%s: general.architecture '%.*s' is not supported (supported: llama qwen2 gemma2 gemma3 qwen3)",
                       g->path, (int)MIN(archs.len, 64), archs.ptr);

    KeyReader r = { .g = g, .arch = model_arch_names[arch], .e = e, .ok = true };
    ModelConfig *c = cfg;
    c->arch = arch;
    u32 file_ctx = 0;           /* set by model_read_arch_rules */
    if (!model_read_shape(&r, c) || !model_read_arch_rules(&r, c, &file_ctx)) return false;

    u32 best_bad;
    Field best_f;
    const ModelEntry *best = model_closest_row(g, c, &best_bad, &best_f);
    if (!best || best_bad != 0) return model_config_unlisted(g, &r, best, &best_f, allow_unlisted, file_ctx, c, e);
    c->id = (ModelId)(best - model_table);
    c->name = best->name;
    c->tok = best->tok; c->chat = best->chat; c->kernel = best->kernel;
    c->n_ctx = MIN(best->ctx, file_ctx);
    if (allow_unlisted)
        errf("edge: warning: --allow-unlisted is a developer option; %s matches the listed config '%s' anyway\n",
             g->path, best->name);
    return true;
}

bool model_layer_is_swa(const ModelConfig *cfg, u32 il) {
    return cfg->swa_period && cfg->swa_window && il % cfg->swa_period < cfg->swa_period - 1;
}

void model_layer_rope(const ModelConfig *cfg, u32 il, f32 *base, f32 *freq_scale) {
    bool swa = model_layer_is_swa(cfg, il);
    *base = swa && cfg->rope_swa_own_base ? cfg->rope_base_swa : cfg->rope_base;
    *freq_scale = swa && cfg->rope_swa_own_base ? 1.0f : cfg->freq_scale;   /* gemma3 local layers: scale 1 */
}

/* ---- weights ------------------------------------------------------------------------ */
/* The weight types each kind of tensor may have. Matrices: every type with a CPU decoder
   (models/quant.c's table; the GPU forward pass refuses at upload a type it has no kernels for).
   Vectors (norms, biases, rope_freqs): F32 only, as llama.cpp writes them; the rmsnorm and
   add_bias kernels read f32. */
#define MT(t) (1ull << GGML_TYPE_##t)
typedef enum ModelWeightKind { WK_MATRIX, WK_VECTOR, WK_COUNT } ModelWeightKind;
static const struct { const char *what; u64 types; } model_weight_kinds[WK_COUNT] = {
    [WK_MATRIX] = { "a weight matrix",                     ~0ull },   /* cut to the supported types */
    [WK_VECTOR] = { "a norm, bias or rope_freqs vector",   MT(F32) },
};
#undef MT

/* Finds a tensor and checks its shape [ne0, ne1] (ne1 = 1 for vectors) and its type against kind. */
static bool model_tensor(const Gguf *g, const char *name, u64 ne0, u64 ne1, ModelWeightKind kind, bool required,
                         const GgufTensor **out, Err *e) {
    const GgufTensor *t = gguf_find_tensor(g, name);
    *out = t;
    if (!t) {
        if (!required) return true;
        return err_set(e, EXIT_MODEL, "%s: tensor '%s' is missing (expected shape [%llu, %llu])", g->path, name,
                       (unsigned long long)ne0, (unsigned long long)ne1);
    }
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1)
        return err_set(e, EXIT_MODEL, "%s: tensor '%s' has shape [%llu, %llu, %llu, %llu], expected [%llu, %llu]",
                       g->path, name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                       (unsigned long long)t->ne[2], (unsigned long long)t->ne[3],
                       (unsigned long long)ne0, (unsigned long long)ne1);
    u64 allowed = 0;
    for (u32 ty = 0; ty < 64; ty++)
        if (ggml_type_supported(ty)) allowed |= model_weight_kinds[kind].types & 1ull << ty;
    if (t->type >= 64 || !(allowed >> t->type & 1)) {
        char list[160]; int n = 0;
        list[0] = 0;
        for (u32 ty = 0; ty < 64; ty++)
            if (allowed >> ty & 1 && n < (int)sizeof list) n += fmt_buf(list + n, (int)sizeof list - n, "%s%s", n ? " " : "", ggml_type_name(ty));
        return err_set(e, EXIT_MODEL, "%s: tensor '%s': type %s is not allowed for %s (allowed: %s)",
                       g->path, name, ggml_type_name(t->type), model_weight_kinds[kind].what, list);
    }
    u64 rb;
    if (!ggml_row_bytes(t->type, ne0, &rb))
        return err_set(e, EXIT_MODEL, "%s: tensor '%s': row of %llu is not a multiple of the %s block of %u",
                       g->path, name, (unsigned long long)ne0, ggml_type_name(t->type), ggml_block_elems(t->type));
    return true;
}

bool model_weights_load(ModelWeights *w, const ModelConfig *c, const Gguf *g, Arena *a, Err *e) {
    memset(w, 0, sizeof *w);
    u64 E = c->n_embd, Q = (u64)c->n_head * c->head_dim, KV = (u64)c->n_head_kv * c->head_dim, F = c->n_ff;
    if (!model_tensor(g, "token_embd.weight", E, c->n_vocab, WK_MATRIX, true, &w->tok_embd, e)) return false;
    if (!model_tensor(g, "output_norm.weight", E, 1, WK_VECTOR, true, &w->output_norm, e)) return false;
    if (!model_tensor(g, "output.weight", E, c->n_vocab, WK_MATRIX, !c->tied_output, &w->output, e)) return false;
    if (c->tied_output) w->output = w->tok_embd;
    if (!model_tensor(g, "rope_freqs.weight", c->rope_dim / 2, 1, WK_VECTOR, false, &w->rope_freqs, e)) return false;
    w->layers = push_array(a, ModelLayer, c->n_layer);
    for (u32 il = 0; il < c->n_layer; il++) {
        ModelLayer *L = &w->layers[il];
        char n[96];
#define T(field, suffix, ne0, ne1, kind, req) \
        fmt_buf(n, sizeof n, "blk.%u." suffix, il); if (!model_tensor(g, n, ne0, ne1, kind, req, &L->field, e)) return false;
        T(attn_norm, "attn_norm.weight", E, 1, WK_VECTOR, true);
        T(wq, "attn_q.weight", E, Q, WK_MATRIX, true);
        T(wk, "attn_k.weight", E, KV, WK_MATRIX, true);
        T(wv, "attn_v.weight", E, KV, WK_MATRIX, true);
        T(wo, "attn_output.weight", Q, E, WK_MATRIX, true);
        T(ffn_norm, "ffn_norm.weight", E, 1, WK_VECTOR, true);
        T(w_gate, "ffn_gate.weight", E, F, WK_MATRIX, true);
        T(w_up, "ffn_up.weight", E, F, WK_MATRIX, true);
        T(w_down, "ffn_down.weight", F, E, WK_MATRIX, true);
        if (c->qkv_bias) {
            T(bq, "attn_q.bias", Q, 1, WK_VECTOR, true);
            T(bk, "attn_k.bias", KV, 1, WK_VECTOR, true);
            T(bv, "attn_v.bias", KV, 1, WK_VECTOR, true);
        }
        if (c->qk_norm) {
            T(q_norm, "attn_q_norm.weight", c->head_dim, 1, WK_VECTOR, true);
            T(k_norm, "attn_k_norm.weight", c->head_dim, 1, WK_VECTOR, true);
        }
        if (c->post_norms) {
            T(post_attn_norm, "post_attention_norm.weight", E, 1, WK_VECTOR, true);
            T(post_ffn_norm, "post_ffw_norm.weight", E, 1, WK_VECTOR, true);
        }
#undef T
    }
    return true;
}

bool model_open(Model *m, const char *path, bool allow_unlisted, Arena *a, Err *e) {
    memset(m, 0, sizeof *m);
    if (path) {
        if (!gguf_open(&m->gguf, path, a, e)) return false;
    } else {
        const u8 *d; u64 n;
        model_embedded(&d, &n);
        if (!gguf_parse(&m->gguf, d, n, "<embedded stories260K.gguf>", a, e)) return false;
    }
    if (!model_config_from_gguf(&m->gguf, allow_unlisted, &m->cfg, e) ||
        !model_weights_load(&m->w, &m->cfg, &m->gguf, a, e)) {
        gguf_close(&m->gguf);
        return false;
    }
    return true;
}

void model_close(Model *m) { gguf_close(&m->gguf); }
