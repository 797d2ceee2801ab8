/* reference_test.c — the scalar reference against the fixtures' golden files, the config table
   matching, and the --allow-unlisted path.

   Every model fixture (all of ../shared/fixtures/models when that folder exists, else the copies
   in test/fixtures) but those config/fixtures.def skips, is checked on every token case: every logit
   within TOL_REF_EXACT (2e-4) of the float64 reference (*.exact.logits.f32), the same top-1 wherever
   the exact top1-top2 margin is at least twice that, and for F32 files (stories260K, tiny-*-F32) also
   within TOL_REF_LLAMACPP (2e-4; 3e-2 for gemma's fp16 GELU table) of llama.cpp's own logits.
   Greedy 64 from "Once upon a time" must equal the exact greedy file for every fixture and
   llama.cpp's for stories260K and the F32/F16 files. Each sequence is evaluated once, with the
   KV cache, one token at a time. */
#include <dirent.h>

#define REFT_MAX_FIXTURES 64
#define REFT_ARENA_MIB    64      /* MiB per fixture: file bytes for patched copies, directory, state */

typedef struct RefFixture {
    char name[96];              /* model file name without .gguf; also its golden/ folder */
    char path[512];
} RefFixture;

static int reft_cmp(const void *a, const void *b) { return strcmp(((const RefFixture *)a)->name, ((const RefFixture *)b)->name); }

/* The model fixtures that have a golden folder, sorted by name. */
static u32 reft_fixtures(RefFixture *fx, u32 cap) {
    const char *dir = shared_fixtures_present() ? "../shared/fixtures/models" : "test/fixtures/models";
    DIR *d = opendir(dir);
    u32 n = 0;
    if (!d) return 0;
    for (struct dirent *de; (de = readdir(d)) && n < cap;) {
        size_t len = strlen(de->d_name);
        if (len < 6 || len - 5 >= sizeof fx[n].name || strcmp(de->d_name + len - 5, ".gguf")) continue;
        fmt_buf(fx[n].name, sizeof fx[n].name, "%.*s", (int)(len - 5), de->d_name);
        char g[256];
        fmt_buf(g, sizeof g, "golden/%s/short.tokens.txt", fx[n].name);
        char tmp[512];
        if (!fixture_path(tmp, sizeof tmp, g)) continue;
        if (fixture_skipped(FIXTURE_MODEL, fx[n].name)) continue;
        fmt_buf(fx[n].path, sizeof fx[n].path, "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(d);
    qsort(fx, n, sizeof *fx, reft_cmp);
    return n;
}

/* Opens fixture fx's model in a fresh arena of REFT_ARENA_MIB named `what`; false (a failed check,
   nothing held) when it does not load. */
static bool reft_open(const RefFixture *fx, const char *what, Arena *a, Model *m) {
    Err e = {0};
    arena_init(a, what, (u64)REFT_ARENA_MIB << 20);
    if (model_open(m, fx->path, false, a, &e)) return true;
    CHECKF(0, "%s: %s", fx->name, e.msg);
    arena_free(a);
    return false;
}

/* Reads golden/<fixture>/<file>; false when absent. */
static bool reft_golden(Arena *a, const char *fixture, const char *file, u8 **data, u64 *size) {
    char rel[256], path[512];
    Err e;
    fmt_buf(rel, sizeof rel, "golden/%s/%s", fixture, file);
    if (!fixture_path(path, sizeof path, rel)) return false;
    return read_file_all(a, path, data, size, &e);
}

/* The ids after "<field>:" on its line of a greedy file. */
static bool reft_ids_field(Arena *a, const char *text, const char *field, i32 **ids, u32 *n) {
    const char *p = strstr(text, field);
    if (!p) return false;
    p += strlen(field);
    const char *end = strchr(p, '\n');
    u64 len = end ? (u64)(end - p) : strlen(p);
    char *line = push_array(a, char, len + 1);
    memcpy(line, p, len);
    line[len] = 0;
    return eng_parse_tokens(line, a, ids, n);
}

/* Runs ids through a fresh state; returns the logits of every position (n_ids, n_vocab). */
static f32 *reft_eval(Arena *a, const Model *m, const i32 *ids, u32 n_ids, u32 n_extra, RefState *s) {
    Err e = {0};
    if (!ref_init(s, m, n_ids + n_extra, a, &e)) { CHECKF(0, "%s", e.msg); return 0; }
    f32 *rows = push_array(a, f32, (u64)n_ids * m->cfg.n_vocab);
    for (u32 i = 0; i < n_ids; i++) {
        if (!ref_step(s, ids[i], &e)) { CHECKF(0, "%s", e.msg); return 0; }
        memcpy(rows + (u64)i * m->cfg.n_vocab, s->logits, m->cfg.n_vocab * sizeof(f32));
    }
    return rows;
}

/* max |a-b| over n values, and the first index where it exceeds tol (-1 if none). */
static f64 reft_maxdiff(const f32 *a, const f32 *b, u64 n, f64 tol, i64 *first_bad) {
    f64 mx = 0;
    *first_bad = -1;
    for (u64 i = 0; i < n; i++) {
        f64 d = fabs((f64)a[i] - (f64)b[i]);
        if (!(d <= mx)) mx = d;     /* NaN makes mx NaN */
        if (!(d <= tol) && *first_bad < 0) *first_bad = (i64)i;
    }
    return mx;
}

static bool reft_is_f32_file(const char *name) { return !strcmp(name, "stories260K") || strstr(name, "-F32"); }

TEST(reference_fixture_logits) {
    static RefFixture fx[REFT_MAX_FIXTURES];
    u32 n = reft_fixtures(fx, REFT_MAX_FIXTURES);
    REQUIRE(n > 0);
    static const char *const cases[] = { "short", "medium", "story" };
    for (u32 f = 0; f < n; f++) {
        Arena a; Model m;
        if (!reft_open(&fx[f], "reference test", &a, &m)) continue;
        u32 V = m.cfg.n_vocab;
        f64 worst = 0, worst_cpp = -1;
        for (u32 c = 0; c < ARRAY_COUNT(cases); c++) {
            u64 pos = arena_pos(&a);
            char file[64];
            u8 *tok_txt, *exact, *cpp; u64 tok_n, exact_n, cpp_n;
            fmt_buf(file, sizeof file, "%s.tokens.txt", cases[c]);
            REQUIRE(reft_golden(&a, fx[f].name, file, &tok_txt, &tok_n));
            fmt_buf(file, sizeof file, "%s.exact.logits.f32", cases[c]);
            REQUIRE(reft_golden(&a, fx[f].name, file, &exact, &exact_n));
            i32 *ids; u32 n_ids;
            REQUIRE(eng_parse_tokens((const char *)tok_txt, &a, &ids, &n_ids));
            CHECKF(exact_n == (u64)n_ids * V * 4, "%s %s: exact file has %llu bytes for %u tokens", fx[f].name,
                   cases[c], (unsigned long long)exact_n, n_ids);
            if (exact_n != (u64)n_ids * V * 4) continue;
            RefState s;
            f32 *got = reft_eval(&a, &m, ids, n_ids, 0, &s);
            if (!got) continue;
            const f32 *ex = (const f32 *)exact;
            i64 bad;
            f64 d = reft_maxdiff(got, ex, (u64)n_ids * V, TOL_REF_EXACT, &bad);
            CHECKF(bad < 0, "%s %s: |ref - exact| = %g at position %lld id %lld (ref %g exact %g)", fx[f].name, cases[c],
                   d, (long long)(bad / V), (long long)(bad % V), bad >= 0 ? got[bad] : 0.0, bad >= 0 ? ex[bad] : 0.0);
            if (!(d <= worst)) worst = d;
            for (u32 i = 0; i < n_ids; i++) {
                const f32 *er = ex + (u64)i * V;
                u32 t1 = ref_argmax(er, V), t2 = t1 == 0 ? 1 : 0;
                for (u32 j = 0; j < V; j++) if (j != t1 && er[j] > er[t2]) t2 = j;
                if ((f64)er[t1] - (f64)er[t2] < 2 * TOL_REF_EXACT) continue;
                u32 g1 = ref_argmax(got + (u64)i * V, V);
                CHECKF(g1 == t1, "%s %s position %u: top-1 %u, exact %u (margin %g)", fx[f].name, cases[c], i, g1, t1,
                       (f64)er[t1] - (f64)er[t2]);
            }
            fmt_buf(file, sizeof file, "%s.logits.f32", cases[c]);
            if (reft_is_f32_file(fx[f].name) && reft_golden(&a, fx[f].name, file, &cpp, &cpp_n) && cpp_n == exact_n) {
                f64 tc = m.cfg.arch == ARCH_GEMMA2 || m.cfg.arch == ARCH_GEMMA3 ? TOL_REF_LLAMACPP_GELU : TOL_REF_LLAMACPP;
                f64 dc = reft_maxdiff(got, (const f32 *)cpp, (u64)n_ids * V, tc, &bad);
                CHECKF(bad < 0, "%s %s: |ref - llama.cpp| = %g at position %lld", fx[f].name, cases[c], dc,
                       (long long)(bad / V));
                if (!(dc <= worst_cpp)) worst_cpp = dc;
            }
            arena_pop_to(&a, pos);
        }
        if (worst_cpp >= 0) out("    %-20s max |ref - exact| %.3g   max |ref - llama.cpp| %.3g\n", fx[f].name, worst, worst_cpp);
        else out("    %-20s max |ref - exact| %.3g\n", fx[f].name, worst);
        model_close(&m);
        arena_free(&a);
    }
}

/* 64 greedy ids after the prompt, with the KV cache (each new id is one more step). */
static void reft_greedy(Arena *a, const Model *m, const i32 *prompt, u32 n_prompt, u32 n_gen, u32 *out_ids) {
    RefState s;
    if (!reft_eval(a, m, prompt, n_prompt, n_gen, &s)) return;
    Err e = {0};
    for (u32 g = 0; g < n_gen; g++) {
        out_ids[g] = ref_argmax(s.logits, m->cfg.n_vocab);
        if (g + 1 < n_gen && !ref_step(&s, (i32)out_ids[g], &e)) { CHECKF(0, "%s", e.msg); return; }
    }
}

/* Compares a greedy run with the generated_tokens of a golden file; returns false if the file is absent. */
static bool reft_check_greedy(Arena *a, const Model *m, const char *fixture, const char *file) {
    u8 *txt; u64 n_txt;
    if (!reft_golden(a, fixture, file, &txt, &n_txt)) return false;
    i32 *prompt, *want; u32 n_prompt, n_want;
    REQUIRE(reft_ids_field(a, (const char *)txt, "prompt_tokens:", &prompt, &n_prompt));
    REQUIRE(reft_ids_field(a, (const char *)txt, "generated_tokens:", &want, &n_want));
    REQUIRE(n_want == 64 && n_prompt > 0);
    u32 got[64] = {0};
    reft_greedy(a, m, prompt, n_prompt, 64, got);
    u32 same = 0;
    while (same < 64 && got[same] == (u32)want[same]) same++;
    CHECKF(same == 64, "%s %s: greedy differs at step %u (ref %u, golden %d)", fixture, file, same,
           same < 64 ? got[same] : 0, same < 64 ? want[same] : 0);
    return true;
}

TEST(reference_fixture_greedy) {
    static RefFixture fx[REFT_MAX_FIXTURES];
    u32 n = reft_fixtures(fx, REFT_MAX_FIXTURES);
    REQUIRE(n > 0);
    static const char *const stories_prompts[] = {
        "lily_and_tom_went_to_the_park.greedy.txt", "the_cat.greedy.txt", "one_day.greedy.txt",
        "bos_only.greedy.txt", "zoo.greedy.txt", "tom_had_a_red_ball.greedy.txt",
    };
    for (u32 f = 0; f < n; f++) {
        Arena a; Model m;
        if (!reft_open(&fx[f], "reference test", &a, &m)) continue;
        CHECKF(reft_check_greedy(&a, &m, fx[f].name, "once_upon_a_time.exact.greedy.txt"), "%s: no exact greedy file",
               fx[f].name);
        bool llamacpp = reft_is_f32_file(fx[f].name) || strstr(fx[f].name, "-F16");
        if (llamacpp)
            CHECKF(reft_check_greedy(&a, &m, fx[f].name, "once_upon_a_time.greedy.txt"), "%s: no greedy file", fx[f].name);
        if (!strcmp(fx[f].name, "stories260K"))
            for (u32 i = 0; i < ARRAY_COUNT(stories_prompts); i++)
                CHECKF(reft_check_greedy(&a, &m, fx[f].name, stories_prompts[i]), "%s: no greedy file %s", fx[f].name, stories_prompts[i]);
        model_close(&m);
        arena_free(&a);
    }
}

TEST(reference_embedded_is_stories260K) {
    Arena a;
    arena_init(&a, "reference test", 16u << 20);
    Err e = {0};
    Model m;
    REQUIRE(model_open(&m, 0, false, &a, &e));
    CHECK(m.cfg.id == MODEL_stories260k);
    CHECK(!strcmp(m.cfg.name, "stories260K"));
    CHECK(reft_check_greedy(&a, &m, "stories260K", "once_upon_a_time.greedy.txt"));
    model_close(&m);
    arena_free(&a);
}

/* ---- config matching ------------------------------------------------------------------------ */
/* A copy of a fixture file in the arena with the u32 value of one key replaced. */
static u8 *reft_patched(Arena *a, const char *rel, const char *key, u32 v, f32 vf, u64 *size) {
    char path[512];
    Err e = {0};
    u8 *data;
    if (!fixture_path(path, sizeof path, rel) || !read_file_all(a, path, &data, size, &e)) return 0;
    Gguf g;
    if (!gguf_parse(&g, data, *size, rel, a, &e)) return 0;
    const GgufKV *kv = gguf_find_kv(&g, key);
    if (!kv) return 0;
    u8 *p = data + (kv->val - data);
    if (kv->type == GGUF_U32) memcpy(p, &v, 4);
    else if (kv->type == GGUF_F32) memcpy(p, &vf, 4);
    else return 0;
    return data;
}

static bool reft_has(const char *s, const char *needle) { return strstr(s, needle) != 0; }

TEST(model_config_mismatch_names_key_found_expected) {
    Arena a;
    arena_init(&a, "reference test", 32u << 20);
    u64 size;
    u8 *data = reft_patched(&a, "models/stories260K.gguf", "llama.feed_forward_length", 200, 0, &size);
    REQUIRE(data);
    Gguf g;
    Err e = {0};
    REQUIRE(gguf_parse(&g, data, size, "patched.gguf", &a, &e));
    ModelConfig cfg;
    CHECK(!model_config_from_gguf(&g, false, &cfg, &e));
    CHECK(e.code == EXIT_MODEL);
    CHECKF(reft_has(e.msg, "llama.feed_forward_length") && reft_has(e.msg, "200") && reft_has(e.msg, "172") &&
           reft_has(e.msg, "stories260K"), "message: %s", e.msg);
    /* --allow-unlisted takes the file's value; the weights then disagree with it, by name and shape. */
    e = (Err){0};
    REQUIRE(model_config_from_gguf(&g, true, &cfg, &e));
    CHECK(cfg.id == MODEL_UNLISTED && cfg.n_ff == 200 && cfg.n_embd == 64 && cfg.arch == ARCH_LLAMA);
    ModelWeights w;
    CHECK(!model_weights_load(&w, &cfg, &g, &a, &e));
    CHECK(e.code == EXIT_MODEL);
    CHECKF(reft_has(e.msg, "blk.0.ffn_gate.weight") && reft_has(e.msg, "[64, 172") && reft_has(e.msg, "[64, 200]"),
           "message: %s", e.msg);
    arena_free(&a);
}

TEST(model_config_fixture_rules) {
    /* The derived rules of each fixture config, from the fixtures README's table. */
    static const struct { const char *file; ModelId id; bool neox, bias, qkn, post, tied, gelu; f32 scale, acap, fcap; u32 swa_layers; }
    want[] = {
        { "models/tiny-llama-Q4_K_M.gguf",  MODEL_tiny_llama,  false, false, false, false, false, false, 1,  0,  0,  0 },
        { "models/tiny-qwen2-Q4_K_M.gguf",  MODEL_tiny_qwen2,  true,  true,  false, false, true,  false, 1,  0,  0,  0 },
        { "models/tiny-gemma2-Q4_K_M.gguf", MODEL_tiny_gemma2, true,  false, false, true,  true,  true,  16, 50, 30, 0x1 },
        { "models/tiny-gemma3-Q4_K_M.gguf", MODEL_tiny_gemma3, true,  false, true,  true,  true,  true,  16, 0,  0,  0x1f },
        { "models/tiny-qwen3-Q4_K_M.gguf",  MODEL_tiny_qwen3,  true,  false, true,  false, true,  false, 1,  0,  0,  0 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(want); i++) {
        Arena a;
        arena_init(&a, "reference test", 16u << 20);
        char path[512];
        REQUIRE(fixture_path(path, sizeof path, want[i].file));
        Err e = {0};
        Model m;
        REQUIRE(model_open(&m, path, false, &a, &e));
        const ModelConfig *c = &m.cfg;
        CHECKF(c->id == want[i].id, "%s", want[i].file);
        CHECKF(c->rope_neox == want[i].neox && c->qkv_bias == want[i].bias && c->qk_norm == want[i].qkn &&
               c->post_norms == want[i].post && c->tied_output == want[i].tied && c->gelu == want[i].gelu, "%s", want[i].file);
        CHECKF(c->embd_scale == want[i].scale && c->attn_softcap == want[i].acap && c->final_softcap == want[i].fcap,
               "%s", want[i].file);
        CHECKF(c->attn_scale == 1.0f / sqrtf((f32)c->head_dim), "%s", want[i].file);
        u32 mask = 0;
        for (u32 il = 0; il < c->n_layer; il++) if (model_layer_is_swa(c, il)) mask |= 1u << il;
        CHECKF(mask == want[i].swa_layers, "%s: sliding layers 0x%x", want[i].file, mask);
        if (want[i].id == MODEL_tiny_gemma3) {
            f32 base, fs;
            model_layer_rope(c, 0, &base, &fs); CHECK(base == 10000.0f && fs == 1.0f);
            model_layer_rope(c, 5, &base, &fs); CHECK(base == 1e6f && fs == 1.0f);
        }
        if (want[i].id == MODEL_tiny_qwen3) {      /* README: head_dim 128 from key_length, 4 x 128 = 512 != n_embd 256 */
            CHECK(c->head_dim == 128 && c->n_head * c->head_dim == 512 && c->n_embd == 256 && c->rope_dim == 128);
            CHECK(m.w.layers[1].q_norm && m.w.layers[1].k_norm && !m.w.layers[1].bq && m.w.output == m.w.tok_embd);
        }
        model_close(&m);
        arena_free(&a);
    }
}

TEST(reference_allow_unlisted_runs_the_file_config) {
    /* tiny-llama with rope.freq_base patched to 20000: refused as listed, loaded with --allow-unlisted.
       RoPE is the identity at position 0, so row 0 equals the exact reference; later rows must not. */
    Arena a;
    arena_init(&a, "reference test", 32u << 20);
    u64 size;
    u8 *data = reft_patched(&a, "models/tiny-llama-Q4_K_M.gguf", "llama.rope.freq_base", 0, 20000.0f, &size);
    REQUIRE(data);
    Model m;
    Err e = {0};
    memset(&m, 0, sizeof m);
    REQUIRE(gguf_parse(&m.gguf, data, size, "patched.gguf", &a, &e));
    CHECK(!model_config_from_gguf(&m.gguf, false, &m.cfg, &e));
    CHECKF(reft_has(e.msg, "llama.rope.freq_base") && reft_has(e.msg, "20000") && reft_has(e.msg, "10000"), "%s", e.msg);
    REQUIRE(model_config_from_gguf(&m.gguf, true, &m.cfg, &e));
    REQUIRE(model_weights_load(&m.w, &m.cfg, &m.gguf, &a, &e));
    CHECK(m.cfg.id == MODEL_UNLISTED && m.cfg.rope_base == 20000.0f);
    u8 *tok_txt, *exact; u64 tn, en;
    REQUIRE(reft_golden(&a, "tiny-llama-Q4_K_M", "story.tokens.txt", &tok_txt, &tn));
    REQUIRE(reft_golden(&a, "tiny-llama-Q4_K_M", "story.exact.logits.f32", &exact, &en));
    i32 *ids; u32 n_ids;
    REQUIRE(eng_parse_tokens((const char *)tok_txt, &a, &ids, &n_ids));
    RefState s;
    f32 *got = reft_eval(&a, &m, ids, n_ids, 0, &s);
    REQUIRE(got);
    i64 bad;
    u32 V = m.cfg.n_vocab;
    f64 d0 = reft_maxdiff(got, (const f32 *)exact, V, 1e-3, &bad);
    CHECKF(bad < 0, "row 0 differs by %g", d0);
    f64 d1 = reft_maxdiff(got + V, (const f32 *)exact + V, (u64)(n_ids - 1) * V, 1e-3, &bad);
    CHECKF(d1 > 1e-2, "later rows should move with the RoPE base, max |d| %g", d1);
    arena_free(&a);
}

TEST(reference_primitives) {
    CHECK(ref_gelu_tanh(-INFINITY) == 0.0);
    CHECK(ref_gelu_tanh(INFINITY) == INFINITY);
    CHECK(ref_gelu_tanh(-1e30) == 0.0);
    CHECK(ref_gelu_tanh(1e30) == 1e30);
    CHECK(ref_gelu_tanh(0) == 0.0);
    CHECK(fabs(ref_gelu_tanh(1.0) - 0.8411919906082768) < 1e-15);     /* 0.5(1+tanh(sqrt(2/pi)·1.044715)) */
    CHECK(fabs(ref_softcap(98.0, 50.0) - 50.0 * tanh(1.96)) < 1e-12);
    CHECK(ref_softcap(1e300, 30.0) == 30.0);
    f32 l[5] = { 1, 3, 3, -1, 2 };
    CHECK(ref_argmax(l, 5) == 1);          /* ties: the lowest id */
}

/* ---- every table row is matchable ------------------------------------------------------------ */
/* A metadata-only GGUF v3 (no tensors) in the arena, as llama.cpp's converter would write the keys of a row. */
typedef struct GgufW { u8 *p; u64 n, cap; u32 n_kv; } GgufW;

static void gw_bytes(GgufW *w, const void *d, u64 n) { if (w->n + n <= w->cap) memcpy(w->p + w->n, d, n); w->n += n; }
static void gw_u32(GgufW *w, u32 v) { gw_bytes(w, &v, 4); }
static void gw_u64(GgufW *w, u64 v) { gw_bytes(w, &v, 8); }
static void gw_key(GgufW *w, const char *arch, const char *k, u32 type) {
    char full[128];
    fmt_buf(full, sizeof full, arch ? "%s.%s" : "%s%s", arch ? arch : "", k);
    gw_u64(w, strlen(full)); gw_bytes(w, full, strlen(full)); gw_u32(w, type);
    w->n_kv++;
}
static void gw_kv_u32(GgufW *w, const char *arch, const char *k, u32 v) { gw_key(w, arch, k, GGUF_U32); gw_u32(w, v); }
static void gw_kv_f32(GgufW *w, const char *arch, const char *k, f32 v) { gw_key(w, arch, k, GGUF_F32); gw_bytes(w, &v, 4); }
static void gw_kv_str(GgufW *w, const char *arch, const char *k, const char *s) {
    gw_key(w, arch, k, GGUF_STRING); gw_u64(w, strlen(s)); gw_bytes(w, s, strlen(s));
}

static u64 reft_row_gguf(const ModelEntry *t, const char *general_name, u8 *buf, u64 cap) {
    GgufW w = { buf, 0, cap, 0 };
    const char *a = model_arch_name(t->arch);
    gw_bytes(&w, "GGUF", 4); gw_u32(&w, 3); gw_u64(&w, 0);
    u64 n_kv_at = w.n;
    gw_u64(&w, 0);
    gw_kv_str(&w, 0, "general.architecture", a);
    gw_kv_str(&w, 0, "general.name", general_name);
    gw_kv_u32(&w, a, "vocab_size", t->n_vocab);
    gw_kv_u32(&w, a, "context_length", t->ctx);
    gw_kv_u32(&w, a, "embedding_length", t->n_embd);
    gw_kv_u32(&w, a, "block_count", t->n_layer);
    gw_kv_u32(&w, a, "feed_forward_length", t->n_ff);
    gw_kv_u32(&w, a, "attention.head_count", t->n_head);
    gw_kv_u32(&w, a, "attention.head_count_kv", t->n_head_kv);
    gw_kv_u32(&w, a, "attention.key_length", t->head_dim);
    gw_kv_u32(&w, a, "attention.value_length", t->head_dim);
    gw_kv_f32(&w, a, "attention.layer_norm_rms_epsilon", t->eps);
    gw_kv_f32(&w, a, "rope.freq_base", t->rope_base);
    if (t->rope_dim != t->head_dim) gw_kv_u32(&w, a, "rope.dimension_count", t->rope_dim);
    if (t->swa_window) gw_kv_u32(&w, a, "attention.sliding_window", t->swa_window);
    if (t->arch == ARCH_GEMMA2) {
        gw_kv_f32(&w, a, "attn_logit_softcapping", t->attn_softcap);
        gw_kv_f32(&w, a, "final_logit_softcapping", t->final_softcap);
    }
    if (t->arch != ARCH_LLAMA && t->rope_factor != 1.0f) {     /* as the converter writes Gemma 3 4B's rope_scaling */
        gw_kv_str(&w, a, "rope.scaling.type", "linear");
        gw_kv_f32(&w, a, "rope.scaling.factor", t->rope_factor);
    }
    u64 n_kv = w.n_kv;
    memcpy(buf + n_kv_at, &n_kv, 8);
    return w.n;
}

TEST(model_table_every_row_matches_its_published_keys) {
    Arena a;
    arena_init(&a, "reference test", 4u << 20);
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *t = &model_table[i];
        u64 pos = arena_pos(&a);
        u8 *buf = push_array(&a, u8, 8192);
        char gname[96];
        fmt_buf(gname, sizeof gname, "%s", strstr(t->name, "coder") ? "Qwen2.5 Coder" : t->name);
        u64 n = reft_row_gguf(t, gname, buf, 8192);
        REQUIRE(n <= 8192);
        Gguf g;
        Err e = {0};
        REQUIRE(gguf_parse(&g, buf, n, t->name, &a, &e));
        ModelConfig cfg;
        bool ok = model_config_from_gguf(&g, false, &cfg, &e);
        CHECKF(ok && cfg.id == (ModelId)i, "row %s: %s (matched %s)", t->name, ok ? "" : e.msg, ok ? cfg.name : "-");
        if (ok) {
            CHECKF(cfg.n_ctx == t->ctx && cfg.kernel == t->kernel && cfg.chat == t->chat && cfg.tok == t->tok, "%s", t->name);
            /* The gemma3 rows: 5 local layers of 6; gemma2: every other layer slides. */
            if (t->arch == ARCH_GEMMA3) CHECK(model_layer_is_swa(&cfg, 4) && !model_layer_is_swa(&cfg, 5));
            if (t->arch == ARCH_GEMMA2) CHECK(model_layer_is_swa(&cfg, 0) && !model_layer_is_swa(&cfg, 1));
        }
        arena_pop_to(&a, pos);
    }
    /* A row's key changed: refused, naming the key, the value found and the value expected. */
    ModelEntry t = model_table[MODEL_gemma_2_2b_it];
    t.swa_window = 2048;
    u8 *buf = push_array(&a, u8, 8192);
    u64 n = reft_row_gguf(&t, "gemma", buf, 8192);
    Gguf g;
    Err e = {0};
    REQUIRE(gguf_parse(&g, buf, n, "g.gguf", &a, &e));
    ModelConfig cfg;
    CHECK(!model_config_from_gguf(&g, false, &cfg, &e) && e.code == EXIT_MODEL);
    CHECKF(reft_has(e.msg, "gemma2.attention.sliding_window is 2048, expected 4096"), "%s", e.msg);
    /* gemma-3-4b's linear RoPE scaling (x8): the factor on the global layers only (llama.cpp's freq_scale_swa is 1),
       and a file without it is not that row */
    t = model_table[MODEL_gemma_3_4b_it];
    n = reft_row_gguf(&t, "gemma", buf, 8192);
    REQUIRE(gguf_parse(&g, buf, n, "g.gguf", &a, &e));
    REQUIRE(model_config_from_gguf(&g, false, &cfg, &e));
    f32 base, fs;
    model_layer_rope(&cfg, 5, &base, &fs); CHECK(base == 1e6f && fs == 0.125f);
    model_layer_rope(&cfg, 4, &base, &fs); CHECK(base == 10000.0f && fs == 1.0f);
    t.rope_factor = 1.0f;
    n = reft_row_gguf(&t, "gemma", buf, 8192);
    REQUIRE(gguf_parse(&g, buf, n, "g.gguf", &a, &e));
    CHECK(!model_config_from_gguf(&g, false, &cfg, &e) && e.code == EXIT_MODEL);
    CHECKF(reft_has(e.msg, "rope.scaling.factor (linear) is 1, expected 8"), "%s", e.msg);
    /* The 27B attention-scale rule: 46 gemma2 layers use 1/sqrt(n_embd/n_head). */
    t = model_table[MODEL_gemma_2_2b_it];
    t.n_layer = 46;
    n = reft_row_gguf(&t, "gemma", buf, 8192);
    REQUIRE(gguf_parse(&g, buf, n, "g.gguf", &a, &e));
    REQUIRE(model_config_from_gguf(&g, true, &cfg, &e));
    CHECK(cfg.attn_scale == 1.0f / sqrtf(2304.0f / 8.0f));
    /* An unsupported architecture is named (model_arch_name gives "?" past the enum). */
    t.arch = ARCH_COUNT;
    n = reft_row_gguf(&t, "x", buf, 8192);
    REQUIRE(gguf_parse(&g, buf, n, "g.gguf", &a, &e));
    CHECK(!model_config_from_gguf(&g, true, &cfg, &e) && e.code == EXIT_MODEL);
    CHECKF(reft_has(e.msg, "general.architecture '?' is not supported"), "%s", e.msg);
    arena_free(&a);
}
