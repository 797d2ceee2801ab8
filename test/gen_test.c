/* gen_test.c — `edge gen-model` files and `edge plan`.

   gen-model: the tiny fixture configs in every type are written, parsed, matched to their row,
   and their directory (names, types, shapes, order, offsets) equals llama.cpp's own files in
   ../shared/fixtures where present; the Q4_K_M type table equals the fixtures README's; real
   configs with --layers 2 load with --allow-unlisted only; every file runs one token through
   the reference and the GPU without NaN, the two agreeing. Every listed row at full depth (no
   data: gen_model_dir) matches its own row strictly, with the Q6_K layers of llama.cpp's
   use_more_bits written out by hand for 16, 26 and 28 layers. Real configs run on the reference
   only (a 2-layer llama-3.2-1b takes 15 s on lavapipe: its 128256-row LM head).
   llama-quantize's per-tensor types: gen-model's directory equals every model fixture's (names,
   order, shapes, types, offsets, file_type) for the fixture's own config and preset; the fallbacks
   at the real widths 640, 896 and 1152 give the type counts worked out by hand from
   llama-quant.cpp's rules; every preset loads, with plausible dequantized weights.
   plan: the totals equal what xf_init allocates (also with arenas split into many blocks), and
   the padding overhead of real configs is under 2% (also at a 256-byte offset alignment). */

#include <dirent.h>

static char gent_dir[64];

static const char *gent_tmpdir(void) {
    if (!gent_dir[0]) {
        fmt_buf(gent_dir, sizeof gent_dir, "/tmp/edge-gen-XXXXXX");
        if (!mkdtemp(gent_dir)) { gent_dir[0] = 0; return 0; }
    }
    return gent_dir;
}

static void gent_rm(const char *path) { remove(path); }

static const GenType gent_q4km = { 15, GGML_TYPE_COUNT, GGML_TYPE_COUNT };   /* Q4_K_M, no overrides */

/* One token (id 1 at position 0) through the reference and the GPU: finite, and within tol. */
static void gent_run_one(const Model *m, const char *what, bool gpu) {
    Err e = {0};
    Engine r, g;
    i32 tok = 1;
    REQUIRE(eng_open(&r, m, ENG_REF, 2, DT_F32, &e));
    CHECKF(eng_feed(&r, &tok, 1, 0, &e), "%s: %s", what, e.msg);
    u32 V = m->cfg.n_vocab;
    f32 *ref = malloc((u64)V * 4);
    memcpy(ref, eng_last_logits(&r), (u64)V * 4);
    eng_close(&r);
    u32 bad = 0;
    for (u32 i = 0; i < V; i++) if (!isfinite(ref[i])) bad++;
    CHECKF(bad == 0, "%s: %u non-finite reference logits", what, bad);
    if (!gpu) { free(ref); return; }
    if (!eng_open(&g, m, ENG_GPU, 2, DT_F32, &e)) {
        free(ref);
        test_vk();      /* no Vulkan device: skips (fails under EDGE_TEST_REQUIRE=1); a device that does not open the engine fails */
        CHECKF(0, "%s: the GPU engine does not open: %s", what, e.msg);
        return;
    }
    CHECKF(eng_feed(&g, &tok, 1, 0, &e), "%s: %s", what, e.msg);
    const f32 *gl = eng_last_logits(&g);
    f64 worst = 0, mx = 0;
    for (u32 i = 0; i < V; i++) {
        if (!isfinite(gl[i])) bad++;
        f64 d = fabs((f64)gl[i] - (f64)ref[i]);
        if (d > worst) worst = d;
        if (fabs(ref[i]) > mx) mx = fabs(ref[i]);
    }
    CHECKF(bad == 0, "%s: %u non-finite GPU logits", what, bad);
    CHECKF(worst <= 1e-3 * (1 + mx), "%s: |gpu - ref| = %g (max |logit| %g)", what, worst, mx);
    eng_close(&g);
    free(ref);
}

/* The README's Q4_K_M table: the Q6_K tensors of each tiny fixture. */
static bool gent_tiny_q6k(const char *config, const char *name) {
    static const struct { const char *config, *names[5]; } t[] = {
        { "tiny-llama",  { "output.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight" } },
        { "tiny-qwen2",  { "token_embd.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight" } },
        { "tiny-gemma2", { "token_embd.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight" } },
        { "tiny-gemma3", { "token_embd.weight", "blk.2.attn_v.weight", "blk.2.ffn_down.weight",
                           "blk.5.attn_v.weight", "blk.5.ffn_down.weight" } },
        { "tiny-qwen3",  { "token_embd.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight" } },
    };
    for (u32 i = 0; i < ARRAY_COUNT(t); i++) {
        if (strcmp(t[i].config, config)) continue;
        for (u32 j = 0; j < 5 && t[i].names[j]; j++) if (!strcmp(t[i].names[j], name)) return true;
    }
    return false;
}

static bool gent_name_is(const GgufTensor *t, const char *s) { return gguf_str_eq(t->name, s); }

TEST(gen_model_tiny_configs_equal_llamacpp_files_and_run) {
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    static const char *const configs[] = { "tiny-llama", "tiny-qwen2", "tiny-gemma2", "tiny-gemma3", "tiny-qwen3" };
    static const char *const types[] = { "F16", "Q8_0", "Q4_K_M" };
    u32 compared = 0;
    for (u32 c = 0; c < ARRAY_COUNT(configs); c++)
        for (u32 ty = 0; ty < ARRAY_COUNT(types); ty++) {
            char path[256], what[64], rel[128], fx[512];
            fmt_buf(what, sizeof what, "%s-%s", configs[c], types[ty]);
            fmt_buf(path, sizeof path, "%s/%s.gguf", dir, what);
            const ModelEntry *row = gen_find_config(configs[c]);
            GenType gt;
            REQUIRE(row && gen_type_parse(types[ty], &gt));
            u32 ft = gt.ftype;
            Err e = {0};
            CHECKF(gen_model_write(path, row, row->n_layer, &gt, 7, &e), "%s: %s", what, e.msg);
            Arena a;
            arena_init(&a, "gen test", 16u << 20);
            Model m;
            if (!model_open(&m, path, false, &a, &e)) { CHECKF(0, "%s: %s", what, e.msg); arena_free(&a); continue; }
            CHECKF(m.cfg.id == (ModelId)(row - model_table), "%s matched %s", what, m.cfg.name);
            u32 v = 0;
            CHECK(gguf_get_u32(&m.gguf, "general.file_type", &v) && v == ft);
            CHECK(gguf_get_u32(&m.gguf, "general.quantization_version", &v) && v == 2);
            const GgufKV *tk = gguf_find_kv(&m.gguf, "tokenizer.ggml.tokens");
            CHECK(tk && tk->arr_n == row->n_vocab);
            /* types: 1-D F32; 2-D by the file type (Q4_K_M: the README's table) */
            for (u64 i = 0; i < m.gguf.n_tensors; i++) {
                const GgufTensor *t = &m.gguf.tensors[i];
                char nm[96]; fmt_buf(nm, sizeof nm, "%.*s", (int)t->name.len, t->name.ptr);
                u32 want = t->ndim == 1 ? GGML_TYPE_F32 : ft == 1 ? GGML_TYPE_F16 : ft == 7 ? GGML_TYPE_Q8_0
                         : gent_tiny_q6k(configs[c], nm) ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_K;
                CHECKF(t->type == want, "%s: %s is %s, expected %s", what, nm, ggml_type_name(t->type), ggml_type_name(want));
            }
            /* llama.cpp's own file of the same config and type, where the fixtures have it */
            fmt_buf(rel, sizeof rel, "models/%s.gguf", what);
            if (fixture_path(fx, sizeof fx, rel)) {
                Gguf ref;
                REQUIRE(gguf_open(&ref, fx, &a, &e));
                CHECKF(ref.n_tensors == m.gguf.n_tensors, "%s: %llu tensors, llama.cpp %llu", what,
                       (unsigned long long)m.gguf.n_tensors, (unsigned long long)ref.n_tensors);
                for (u64 i = 0; i < MIN(ref.n_tensors, m.gguf.n_tensors); i++) {
                    const GgufTensor *x = &m.gguf.tensors[i], *y = &ref.tensors[i];
                    bool same = x->name.len == y->name.len && !memcmp(x->name.ptr, y->name.ptr, x->name.len) &&
                                x->type == y->type && x->ndim == y->ndim && !memcmp(x->ne, y->ne, sizeof x->ne) &&
                                x->offset == y->offset;
                    CHECKF(same, "%s: tensor %llu is %.*s %s, llama.cpp has %.*s %s", what, (unsigned long long)i,
                           (int)x->name.len, x->name.ptr, ggml_type_name(x->type), (int)y->name.len, y->name.ptr,
                           ggml_type_name(y->type));
                }
                gguf_close(&ref);
                compared++;
            }
            gent_run_one(&m, what, true);
            model_close(&m);
            arena_free(&a);
            gent_rm(path);
        }
    out("    %u generated files compared with llama.cpp's fixtures tensor by tensor\n", compared);
    CHECK(compared >= 5);
}

TEST(gen_model_real_configs_two_layers_load_unlisted_and_run) {
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    static const char *const configs[] = { "llama-3.2-1b-instruct", "qwen2.5-1.5b-instruct", "gemma-3-270m-it", "gemma-2-2b-it" };
    for (u32 c = 0; c < ARRAY_COUNT(configs); c++) {
        const ModelEntry *row = gen_find_config(configs[c]);
        REQUIRE(row);
        char path[256];
        fmt_buf(path, sizeof path, "%s/%s-2.gguf", dir, configs[c]);
        Err e = {0};
        CHECKF(gen_model_write(path, row, 2, &gent_q4km, 3, &e), "%s: %s", configs[c], e.msg);
        Arena a;
        arena_init(&a, "gen test", 32u << 20);
        Model m;
        CHECKF(!model_open(&m, path, false, &a, &e), "%s: a 2-layer file matched a listed row", configs[c]);
        CHECKF(strstr(e.msg, "block_count is 2, expected"), "%s: %s", configs[c], e.msg);
        e = (Err){0};
        if (!model_open(&m, path, true, &a, &e)) { CHECKF(0, "%s: %s", configs[c], e.msg); arena_free(&a); continue; }
        CHECK(m.cfg.id == MODEL_UNLISTED && m.cfg.n_layer == 2 && m.cfg.n_vocab == row->n_vocab && m.cfg.n_embd == row->n_embd);
        CHECKF(m.cfg.tied_output, "%s: the head must be tied", configs[c]);
        /* gemma-3-270m's 640-wide rows are not whole K-quant blocks: llama-quantize's Q6_K -> Q8_0, Q4_K -> Q5_0 */
        u32 k4 = row->n_embd % 256 ? GGML_TYPE_Q5_0 : GGML_TYPE_Q4_K, k6 = row->n_embd % 256 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q6_K;
        CHECK(m.w.tok_embd->type == k6);
        CHECK(m.w.layers[0].wv->type == k4 && m.w.layers[0].w_down->type == GGML_TYPE_Q4_K);
        CHECK(m.w.layers[1].wv->type == k6 && m.w.layers[1].w_down->type == GGML_TYPE_Q6_K);
        CHECK(m.w.layers[1].wq->type == k4 && m.w.layers[1].w_gate->type == k4);
        if (row->arch == ARCH_LLAMA) {
            CHECKF(m.w.rope_freqs && m.w.rope_freqs->ne[0] == row->rope_dim / 2 && m.w.rope_freqs->type == GGML_TYPE_F32,
                   "%s: rope_freqs", configs[c]);
            f32 lo, hi;
            memcpy(&lo, m.w.rope_freqs->data, 4);
            memcpy(&hi, m.w.rope_freqs->data + 4 * (row->rope_dim / 2 - 1), 4);
            CHECKF(lo == 1.0f && hi == 32.0f, "%s: llama3 factors %g .. %g, expected 1 .. 32", configs[c], lo, hi);
        }
        gent_run_one(&m, configs[c], false);
        model_close(&m);
        arena_free(&a);
        gent_rm(path);
    }
    rmdir(dir);     /* empty now: both gen tests remove their files */
    gent_dir[0] = 0;
}

/* ---- llama-quantize's per-tensor types --------------------------------------------------------- */
/* The config row and preset of a fixture file named "<config>-<preset>.gguf"; false for other names
   (stories260K, F32 files, configs edge does not list). */
static bool gent_fixture_preset(const char *name, const ModelEntry **row, GenType *gt) {
    for (u32 r = 0; r < MODEL_COUNT; r++) {
        u64 n = strlen(model_table[r].name);
        if (strncmp(name, model_table[r].name, n) || name[n] != '-') continue;
        if (!gen_type_parse(name + n + 1, gt)) return false;
        *row = &model_table[r];
        /* the fixtures README: tiny-gemma3w-Q4_0 was made with --token-embedding-type f16 */
        if (!strcmp(name, "tiny-gemma3w-Q4_0")) gt->tok_embd = GGML_TYPE_F16;
        return true;
    }
    return false;
}

/* Every model fixture made by llama-quantize (or the converter, F16) of a listed config: gen-model's
   directory for the same config and preset has the fixture's names, order, shapes, per-tensor types
   and data offsets, and its general.file_type. The ground truth is the fixture files themselves. */
TEST(gen_model_types_equal_every_model_fixture) {
    const char *dir = shared_fixtures_present() ? "../shared/fixtures/models" : "test/fixtures/models";
    DIR *d = opendir(dir);
    if (!d) SKIP_UNLESS_REQUIRED("no model fixtures");
    u32 compared = 0;
    for (struct dirent *de; (de = readdir(d));) {
        char name[128], path[512];
        u64 len = strlen(de->d_name);
        if (len < 6 || len >= sizeof name || strcmp(de->d_name + len - 5, ".gguf")) continue;
        fmt_buf(name, sizeof name, "%.*s", (int)(len - 5), de->d_name);
        const ModelEntry *row; GenType gt;
        if (!gent_fixture_preset(name, &row, &gt)) continue;
        fmt_buf(path, sizeof path, "%s/%s", dir, de->d_name);
        Arena a;
        arena_init(&a, "gen test", 16u << 20);
        Err e = {0};
        Gguf ref; GenTensor *l; u32 n, ft = 0;
        REQUIRE(gguf_open(&ref, path, &a, &e));
        CHECKF(gen_tensors(row, row->n_layer, &gt, &a, &l, &n, false, &e), "%s: %s", name, e.msg);
        CHECKF(gguf_get_u32(&ref, "general.file_type", &ft) && ft == gt.ftype, "%s: file_type %u, gen-model %u", name, ft, gt.ftype);
        CHECKF(n == ref.n_tensors, "%s: %u tensors, llama.cpp %llu", name, n, (unsigned long long)ref.n_tensors);
        u64 off = 0;
        for (u32 i = 0; i < MIN(n, ref.n_tensors); i++) {
            const GgufTensor *y = &ref.tensors[i];
            bool same = gguf_str_eq(y->name, l[i].name) && y->type == l[i].type && y->ndim == l[i].ndim &&
                        y->ne[0] == l[i].ne[0] && (l[i].ndim == 1 || y->ne[1] == l[i].ne[1]) && y->offset == off;
            CHECKF(same, "%s: tensor %u is %s %s, llama.cpp has %.*s %s", name, i, l[i].name, ggml_type_name(l[i].type),
                   (int)y->name.len, y->name.ptr, ggml_type_name(y->type));
            off += align_up(l[i].nbytes, 32);
        }
        gguf_close(&ref);
        arena_free(&a);
        compared++;
    }
    closedir(d);
    out("    %u fixture files: gen-model writes their per-tensor types\n", compared);
    CHECKF(compared >= (shared_fixtures_present() ? 18u : 1u), "only %u fixtures compared", compared);
}

/* Counts of 2-D tensors by type, "Q5_0 132 Q8_0 13 ...", in the order of the type ids (F32 0, F16 1,
   Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8, Q2_K 10 .. Q6_K 14, IQ4_NL 20, IQ4_XS 23, BF16 30). */
static void gent_type_counts(const GenTensor *l, u32 n, char *buf, int cap) {
    u32 c[GGML_TYPE_COUNT] = {0};
    for (u32 i = 0; i < n; i++) if (l[i].ndim == 2) c[l[i].type]++;
    int k = 0;
    buf[0] = 0;
    for (u32 t = 0; t < GGML_TYPE_COUNT && k < cap; t++)
        if (c[t]) k += fmt_buf(buf + k, cap - k, "%s%s %u", k ? " " : "", ggml_type_name(t), c[t]);
}

static u32 gent_type_of(const GenTensor *l, u32 n, const char *name) {
    for (u32 i = 0; i < n; i++) if (!strcmp(l[i].name, name)) return l[i].type;
    return GGML_TYPE_COUNT;
}

/* The fallback rules at the real widths 640 (gemma-3-270m), 896 (qwen2.5-0.5b) and 1152
   (gemma-3-1b), and the mixes of llama-3.2-1b, full depth. Each expectation is worked out by hand
   from llama-quant.cpp's rules (use_more_bits over 16 layers: 0 1 4 7 10 13 14 15; over 18:
   0 1 4 7 10 13 15 16 17; over 24: 0 1 2 5 8 11 14 17 20 21 22 23; over 26: 13 layers), not from
   this code; qwen2.5-0.5b Q4_K_M's counts are a real file's. */
TEST(gen_model_mixes_and_fallbacks_on_real_configs) {
    static const struct { const char *config, *preset, *tok, *out, *counts; } cases[] = {
        /* q/k/gate/up and v's plain layers Q4_K -> Q5_0; v's more_bits layers Q6_K -> Q8_0; tied head Q8_0 */
        { "qwen2.5-0.5b-instruct", "Q4_K_M", 0, 0, "Q5_0 132 Q8_0 13 Q4_K 12 Q6_K 12" },
        { "gemma-3-1b-it",         "Q4_K_M", 0, 0, "Q5_0 117 Q8_0 14 Q4_K 39 Q6_K 13" },
        { "gemma-3-270m-it",       "Q4_K_M", 0, 0, "Q5_0 81 Q8_0 10 Q4_K 27 Q6_K 9" },
        /* Q2_K -> Q4_0; attn_v Q4_K (n_gqa 7) -> Q5_0; attn_output Q3_K -> Q4_0; ffn_down Q3_K (4864 wide) */
        { "qwen2.5-0.5b-instruct", "Q2_K",   0, 0, "Q4_0 120 Q5_0 24 Q8_0 1 Q3_K 24" },
        /* IQ4_XS -> IQ4_NL; attn_v Q5_K (n_gqa >= 4) -> Q5_1; ffn_down of layers < 24/8: Q5_K */
        { "qwen2.5-0.5b-instruct", "IQ4_XS", 0, 0, "Q5_1 24 Q8_0 1 Q5_K 3 IQ4_NL 120 IQ4_XS 21" },
        /* Q5_K -> Q5_1, the more_bits layers' Q6_K -> Q8_0 (v) or Q6_K (ffn_down, 6912 wide) */
        { "gemma-3-1b-it",         "Q5_K_M", 0, 0, "Q5_1 117 Q8_0 14 Q5_K 39 Q6_K 13" },
        /* Q3_K -> Q4_0; attn_v Q5_K (layers 0, 1) -> Q5_1, else Q4_K -> Q5_0; ffn_down layer 0 Q5_K; head Q8_0 */
        { "gemma-3-270m-it",       "Q3_K_M", 0, 0, "Q4_0 72 Q5_0 16 Q5_1 2 Q8_0 1 Q4_K 35 Q5_K 1" },
        { "gemma-3-270m-it",       "Q6_K",   0, 0, "Q8_0 91 Q6_K 36" },
        /* the QAT-style file: an F16 tied embedding, Q4_0 elsewhere; or the head's type given */
        { "gemma-3-270m-it",       "Q4_0",   "F16", 0, "F16 1 Q4_0 126" },
        { "gemma-3-270m-it",       "Q4_0",   0, "Q4_0", "Q4_0 127" },
        { "gemma-3-270m-it",       "Q4_0",   0, 0, "Q4_0 126 Q8_0 1" },
        /* stories260K: ffn_down's 172 is not whole 32-blocks either: F16; v of layers 2, 4: Q8_0 */
        { "stories260K",           "Q4_K_M", 0, 0, "F16 5 Q5_0 29 Q8_0 3" },
        /* llama-3.2-1b (2048 wide, n_gqa 4, 16 layers, tied): the mixes without fallbacks */
        { "llama-3.2-1b-instruct", "Q2_K",   0, 0, "Q2_K 64 Q3_K 32 Q4_K 16 Q6_K 1" },
        { "llama-3.2-1b-instruct", "Q3_K_L", 0, 0, "Q3_K 64 Q5_K 48 Q6_K 1" },
        { "llama-3.2-1b-instruct", "Q4_K_S", 0, 0, "Q4_K 106 Q5_K 6 Q6_K 1" },
        { "llama-3.2-1b-instruct", "Q5_K_M", 0, 0, "Q5_K 96 Q6_K 17" },
        { "llama-3.2-1b-instruct", "IQ4_XS", 0, 0, "Q5_K 18 Q6_K 1 IQ4_XS 94" },
        { "llama-3.2-1b-instruct", "Q4_1",   0, 0, "Q4_1 112 Q6_K 1" },
        { "llama-3.2-1b-instruct", "BF16",   0, 0, "BF16 113" },
    };
    for (u32 c = 0; c < ARRAY_COUNT(cases); c++) {
        const ModelEntry *row = gen_find_config(cases[c].config);
        GenType gt;
        REQUIRE(row && gen_type_parse(cases[c].preset, &gt));
        if (cases[c].tok) REQUIRE(gen_tensor_type_parse(cases[c].tok, &gt.tok_embd));
        if (cases[c].out) REQUIRE(gen_tensor_type_parse(cases[c].out, &gt.output));
        Arena a;
        arena_init(&a, "gen test", 4u << 20);
        GenTensor *l; u32 n; Err e = {0};
        if (!gen_tensors(row, row->n_layer, &gt, &a, &l, &n, false, &e)) { CHECKF(0, "%s %s: %s", cases[c].config, cases[c].preset, e.msg); arena_free(&a); continue; }
        char got[256];
        gent_type_counts(l, n, got, sizeof got);
        CHECKF(!strcmp(got, cases[c].counts), "%s %s (tok %s, out %s): %s, expected %s", cases[c].config, cases[c].preset,
               cases[c].tok ? cases[c].tok : "-", cases[c].out ? cases[c].out : "-", got, cases[c].counts);
        if (c == 1) {   /* gemma-3-1b Q4_K_M, by role */
            static const char *const q50[] = { "attn_q", "attn_k", "ffn_gate", "ffn_up" };
            for (u32 il = 0; il < row->n_layer; il++)
                for (u32 k = 0; k < ARRAY_COUNT(q50); k++) {
                    char nm[64]; fmt_buf(nm, sizeof nm, "blk.%u.%s.weight", il, q50[k]);
                    CHECKF(gent_type_of(l, n, nm) == GGML_TYPE_Q5_0, "gemma-3-1b Q4_K_M %s", nm);
                }
            CHECK(gent_type_of(l, n, "token_embd.weight") == GGML_TYPE_Q8_0);
            CHECK(gent_type_of(l, n, "blk.0.attn_v.weight") == GGML_TYPE_Q8_0 && gent_type_of(l, n, "blk.3.attn_v.weight") == GGML_TYPE_Q5_0);
        }
        arena_free(&a);
    }
}

/* Every preset written for tiny-llama (256 wide) and tiny-gemma3w (640: the fallbacks) loads, and
   each 2-D weight dequantizes to plausible values (std 0.01..0.04 around a mean under 0.005 in
   magnitude, the generator's target being 0.02 and 0), and a token through the reference is finite.
   --layers 1 keeps it fast. */
TEST(gen_model_every_preset_loads_with_plausible_weights) {
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    static const char *const configs[] = { "tiny-llama", "tiny-gemma3w" };
    static const char *const presets[] = { "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M",
                                           "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS" };
    u32 seen[GGML_TYPE_COUNT] = {0};
    for (u32 c = 0; c < ARRAY_COUNT(configs); c++)
        for (u32 p = 0; p < ARRAY_COUNT(presets); p++) {
            const ModelEntry *row = gen_find_config(configs[c]);
            GenType gt;
            REQUIRE(row && gen_type_parse(presets[p], &gt));
            char path[256], what[64];
            fmt_buf(what, sizeof what, "%s-%s", configs[c], presets[p]);
            fmt_buf(path, sizeof path, "%s/%s.gguf", dir, what);
            Err e = {0};
            if (!gen_model_write(path, row, 1, &gt, 5, &e)) { CHECKF(0, "%s: %s", what, e.msg); continue; }
            Arena a;
            arena_init(&a, "gen test", 16u << 20);
            Model m;
            if (!model_open(&m, path, true, &a, &e)) { CHECKF(0, "%s: %s", what, e.msg); arena_free(&a); gent_rm(path); continue; }
            for (u64 i = 0; i < m.gguf.n_tensors; i++) {
                const GgufTensor *t = &m.gguf.tensors[i];
                if (t->ndim != 2) continue;
                seen[t->type]++;
                f32 *x = malloc(t->nelem * 4);
                u64 rb; REQUIRE(ggml_row_bytes(t->type, t->ne[0], &rb));
                for (u64 r = 0; r < t->ne[1]; r++) dequant_row(t->type, t->data + r * rb, x + r * t->ne[0], t->ne[0]);
                f64 s = 0, s2 = 0;
                for (u64 j = 0; j < t->nelem; j++) { s += x[j]; s2 += (f64)x[j] * x[j]; }
                f64 mean = s / t->nelem, sd = sqrt(s2 / t->nelem - mean * mean);
                CHECKF(sd >= 0.01 && sd <= 0.04 && fabs(mean) < 0.005, "%s %.*s (%s): mean %g std %g", what, (int)t->name.len,
                       t->name.ptr, ggml_type_name(t->type), mean, sd);
                free(x);
            }
            gent_run_one(&m, what, true);       /* the GPU with every preset's types, f32 activations */
            model_close(&m);
            arena_free(&a);
            gent_rm(path);
        }
    for (u32 t = 0; t < GGML_TYPE_COUNT; t++)   /* every weight type but F32 was generated */
        if (ggml_type_supported(t) && t != GGML_TYPE_F32) CHECKF(seen[t] > 0, "no %s tensor generated", ggml_type_name(t));
    rmdir(dir);
    gent_dir[0] = 0;
}

/* use_more_bits(i, n) for n = 16, 26, 28, written out by hand from llama.cpp's definition. */
static bool gent_q6k_layer(u32 n, u32 i) {
    static const u32 l16[] = { 0, 1, 4, 7, 10, 13, 14, 15 };
    static const u32 l26[] = { 0, 1, 2, 5, 8, 11, 14, 17, 20, 22, 23, 24, 25 };
    static const u32 l28[] = { 0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27 };
    const u32 *l = n == 16 ? l16 : n == 26 ? l26 : l28;
    u32 k = n == 16 ? ARRAY_COUNT(l16) : n == 26 ? ARRAY_COUNT(l26) : ARRAY_COUNT(l28);
    for (u32 j = 0; j < k; j++) if (l[j] == i) return true;
    return false;
}

TEST(gen_model_every_row_matches_itself_with_llamacpp_types) {
    for (u32 r = 0; r < MODEL_COUNT; r++) {
        const ModelEntry *row = &model_table[r];
        Arena a;
        arena_init(&a, "gen test", 48u << 20);
        Model m;
        Err e = {0};
        bool ok = gen_model_dir(&m, row, row->n_layer, &gent_q4km, &a, &e);
        if (!ok) { CHECKF(0, "%s: %s", row->name, e.msg); arena_free(&a); continue; }
        CHECKF(m.cfg.id == (ModelId)r, "%s matched %s", row->name, m.cfg.name);
        bool k_ok = row->n_embd % 256 == 0 && row->n_ff % 256 == 0;
        if (!strcmp(row->name, "stories260K")) {   /* rows of 172 are not even whole 32-blocks: F16 */
            for (u32 il = 0; il < row->n_layer; il++) CHECK(m.w.layers[il].w_down->type == GGML_TYPE_F16);
        } else if (!k_ok) {                         /* 640, 896, 1152-wide rows: Q4_K -> Q5_0, the head's Q6_K -> Q8_0 */
            CHECK(m.w.layers[0].wq->type == GGML_TYPE_Q5_0 && m.w.tok_embd->type == GGML_TYPE_Q8_0);
            CHECK(m.w.layers[0].w_down->type == GGML_TYPE_Q6_K || m.w.layers[0].w_down->type == GGML_TYPE_Q4_K);
        } else if (row->n_layer == 16 || row->n_layer == 26 || row->n_layer == 28) {
            for (u32 il = 0; il < row->n_layer; il++) {
                u32 want = gent_q6k_layer(row->n_layer, il) ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_K;
                CHECKF(m.w.layers[il].wv->type == want && m.w.layers[il].w_down->type == want, "%s layer %u: %s/%s", row->name,
                       il, ggml_type_name(m.w.layers[il].wv->type), ggml_type_name(m.w.layers[il].w_down->type));
                CHECK(m.w.layers[il].wk->type == GGML_TYPE_Q4_K && m.w.layers[il].w_up->type == GGML_TYPE_Q4_K);
            }
            CHECK(m.w.output->type == GGML_TYPE_Q6_K);
        }
        /* llama-quantize's order: non-layer tensors by name, then layers in number order */
        const GgufTensor *T = m.gguf.tensors;
        CHECK(gent_name_is(&T[0], m.cfg.tied_output ? "output_norm.weight" : "output.weight"));
        char last[64];      /* llama.cpp's files (../shared/fixtures/models) end with the last layer's, by name */
        fmt_buf(last, sizeof last, "blk.%u.%s.weight", row->n_layer - 1, m.cfg.post_norms ? "post_ffw_norm" : "ffn_up");
        CHECKF(gent_name_is(&T[m.gguf.n_tensors - 1], last), "%s: the last tensor is %.*s, expected %s", row->name,
               (int)T[m.gguf.n_tensors - 1].name.len, T[m.gguf.n_tensors - 1].name.ptr, last);
        arena_free(&a);
    }
}

/* ---- plan ------------------------------------------------------------------------------------- */
static u64 gent_blocks(const DevArena *d) { u64 s = 0; for (u32 i = 0; i < d->n_blocks; i++) s += d->blocks[i].size; return s; }

TEST(plan_totals_equal_what_xf_init_allocates) {
    Vk *vk = test_vk();
    static const char *const files[] = { 0, "models/tiny-llama-Q4_K_M.gguf", "models/tiny-qwen2-Q4_K_M.gguf",
                                         "models/tiny-gemma3-Q4_K_M.gguf" };
    u64 saved = vk->caps.max_alloc;            /* test_vk() puts the caps back when the test ends */
    for (u32 split = 0; split < 2; split++) {
        vk->caps.max_alloc = split ? 600u << 10 : saved;     /* 600 KiB blocks: arenas of several blocks */
        for (u32 f = 0; f < ARRAY_COUNT(files); f++) {
            char path[512];
            if (files[f]) REQUIRE(fixture_path(path, sizeof path, files[f]));
            Arena a;
            arena_init(&a, "plan test", 16u << 20);
            Model m;
            Err e = {0};
            REQUIRE(model_open(&m, files[f] ? path : 0, false, &a, &e));
            u32 ctx = MIN(m.cfg.n_ctx, 256);
            Plan p;
            REQUIRE(plan_compute(&p, vk, &m, ctx, DT_F32, EDGE_PREFILL_BATCH, 0, false, &e));
            Xf xf;
            REQUIRE(xf_init(&xf, vk, &m, ctx, MIN(ctx, EDGE_PREFILL_BATCH), DT_F32, 0, &e));
            const char *nm = files[f] ? files[f] : "embedded";
            CHECKF(gent_blocks(&xf.w.arena) == p.plan_w && gent_blocks(&xf.s.arena) == p.plan_s,
                   "%s split %u: plan %llu + %llu, allocated %llu + %llu", nm, split, (unsigned long long)p.plan_w,
                   (unsigned long long)p.plan_s, (unsigned long long)gent_blocks(&xf.w.arena), (unsigned long long)gent_blocks(&xf.s.arena));
            CHECKF(xf.w.arena.used == p.weights && xf.s.arena.used == p.kv + p.act, "%s: tensor bytes differ", nm);
            CHECKF(!split || xf.w.arena.n_blocks + xf.s.arena.n_blocks > 2, "%s: %u + %u blocks", nm, xf.w.arena.n_blocks, xf.s.arena.n_blocks);
            /* a layer's q, k, v and its gate, up stay in one block (vk_arena_keep): one view each */
            for (u32 il = 0; il < m.cfg.n_layer; il++) {
                const XfLayer *L = &xf.w.layers[il];
                CHECKF(L->wq.block == L->wk.block && L->wk.block == L->wv.block && L->w_gate.block == L->w_up.block,
                       "%s split %u layer %u: q/k/v in blocks %u %u %u, gate/up %u %u", nm, split, il, L->wq.block, L->wk.block,
                       L->wv.block, L->w_gate.block, L->w_up.block);
            }
            /* the KV cache: 2 x kv_dim x 4 bytes x (ctx positions per global layer, a ring of window + batch - 1 per
               sliding-window layer) */
            u64 pos = 0;
            for (u32 il = 0; il < m.cfg.n_layer; il++)
                pos += model_layer_is_swa(&m.cfg, il) && m.cfg.swa_window ? MIN(ctx, m.cfg.swa_window + MIN(ctx, EDGE_PREFILL_BATCH) - 1) : ctx;
            CHECKF(p.kv == 2ull * m.cfg.n_head_kv * m.cfg.head_dim * pos * 4, "%s: KV %llu", nm, (unsigned long long)p.kv);
            xf_free(&xf);
            model_close(&m);
            arena_free(&a);
        }
    }
}

TEST(plan_overhead_of_real_configs_is_under_2_percent) {
    Vk *vk = test_vk();
    static const char *const configs[] = { "gemma-2-2b-it", "llama-3.2-1b-instruct", "qwen2.5-1.5b-instruct" };
    u64 saved_align = vk->caps.min_offset_align, saved_alloc = vk->caps.max_alloc;   /* put back by the runner (test_vk) */
    for (u32 c = 0; c < ARRAY_COUNT(configs); c++) {
        const ModelEntry *row = gen_find_config(configs[c]);
        REQUIRE(row);
        Arena a;
        arena_init(&a, "plan test", 48u << 20);
        Model m;
        Err e = {0};
        REQUIRE(gen_model_dir(&m, row, row->n_layer, &gent_q4km, &a, &e));
        f64 ov[2];
        for (u32 k = 0; k < 2; k++) {
            vk->caps.min_offset_align = k ? 256 : saved_align;
            vk->caps.max_alloc = MAX(saved_alloc, 4ull << 30);
            Plan p;
            u32 ctx = MIN(row->ctx, 4096u);
            REQUIRE(plan_compute(&p, vk, &m, ctx, DT_F32, EDGE_PREFILL_BATCH, 0, false, &e));
            ov[k] = plan_overhead(&p);
            CHECKF(ov[k] < 0.02, "%s: overhead %g", configs[c], ov[k]);
            CHECK(p.weights > 0 && p.kv == 2ull * row->n_layer * row->n_head_kv * row->head_dim * ctx * 4);
        }
        out("    %-24s Q4_K_M ctx 4096: padding overhead %.5f%% (device alignment %llu), %.5f%% (alignment 256)\n",
            configs[c], ov[0] * 100, (unsigned long long)saved_align, ov[1] * 100);
        arena_free(&a);
    }
}

/* A gen-model file of `row` (n_layer layers, file type ftype; loaded with --allow-unlisted), `T`
   tokens with every logit row through the CPU reference and the GPU with activations `act` (step:
   one token at a time, the decode path), in the environment the caller set. gent_real_layer: one
   layer of qwen2.5-1.5b's real shapes (k = 1536 and 8960, Q4_K and Q6_K weights) with an
   8,192-token vocabulary (the product shapes are real; a short vocabulary keeps the LM head cheap
   and still holds every split-k partial: the logits buffer is the scratch). Fails the test on a load or feed error, or when the GPU engine does not open (the
   callers check the device's features first); ran = false then. */
typedef struct GentCmp { f64 worst, mx; u64 bad; bool ran; } GentCmp;
static GentCmp gent_row_cmp(const ModelEntry *row, u32 n_layer, const GenType *gt, const char *file, u32 seed, const i32 *toks, u32 T,
                            DType act, bool step) {
    GentCmp r = {0};
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    char path[256];
    fmt_buf(path, sizeof path, "%s/%s", dir, file);
    Err e = {0};
    REQUIRE(gen_model_write(path, row, n_layer, gt, seed, &e));
    Arena a;
    arena_init(&a, "gen test", 32u << 20);
    Model m;
    if (!model_open(&m, path, true, &a, &e)) { CHECKF(0, "%s", e.msg); arena_free(&a); gent_rm(path); return r; }
    u32 V = m.cfg.n_vocab;
    f32 *ref = malloc((u64)T * V * 4), *got = malloc((u64)T * V * 4);
    Engine er, eg;
    REQUIRE(eng_open(&er, &m, ENG_REF, T, DT_F32, &e));
    CHECKF(eng_feed(&er, toks, T, ref, &e), "reference: %s", e.msg);
    eng_close(&er);
    if (eng_open(&eg, &m, ENG_GPU, T, act, &e)) {
        if (step) for (u32 i = 0; i < T; i++) CHECKF(eng_feed(&eg, toks + i, 1, got + (u64)i * V, &e), "gpu: %s", e.msg);   /* decode */
        else CHECKF(eng_feed(&eg, toks, T, got, &e), "gpu: %s", e.msg);
        eng_close(&eg);
        r.ran = true;
        for (u64 i = 0; i < (u64)T * V; i++) {
            if (!isfinite(got[i])) r.bad++;
            r.worst = MAX(r.worst, fabs((f64)got[i] - ref[i]));
            r.mx = MAX(r.mx, fabs((f64)ref[i]));
        }
        CHECKF(r.bad == 0, "%llu non-finite GPU logits", (unsigned long long)r.bad);
    } else CHECKF(0, "the GPU engine does not open: %s", e.msg);
    free(ref); free(got);
    model_close(&m);
    arena_free(&a);
    gent_rm(path);
    rmdir(dir);
    gent_dir[0] = 0;
    return r;
}

/* One layer of `config` made as preset gt, with an 8,192-token vocabulary (gent_real_layer_ex: qwen2.5-1.5b as Q4_K_M). */
static GentCmp gent_layer_cmp(const char *config, const GenType *gt, const char *file, u32 seed, const i32 *toks, u32 T, DType act, bool step) {
    const ModelEntry *real = gen_find_config(config);
    REQUIRE(real);
    ModelEntry row = *real;
    row.n_vocab = 8192;
    return gent_row_cmp(&row, 1, gt, file, seed, toks, T, act, step);
}

static GentCmp gent_real_layer_ex(const char *file, u32 seed, const i32 *toks, u32 T, DType act, bool step) {
    return gent_layer_cmp("qwen2.5-1.5b-instruct", &gent_q4km, file, seed, toks, T, act, step);
}

static GentCmp gent_real_layer(const char *file, u32 seed, const i32 *toks, u32 T, DType act) {
    return gent_real_layer_ex(file, seed, toks, T, act, false);
}

/* Split-k prefill on real shapes (the fixtures' rows are too short to split): 6 tokens,
   EDGE_SPLITK=4 on the GPU (k = 1536 and 8960: 3 and 4 slices) against the CPU reference;
   attn_out and ffn_down must have gone through op_matmul_split. */
TEST(gen_model_real_shapes_split_k_prefill_matches_reference) {
    test_vk();                                  /* skips without a device (fails under EDGE_TEST_REQUIRE=1) */
    const i32 toks[6] = { 1, 17, 2042, 99, 1500, 7 };
    u64 before = op_split_products;
    TEST_OPTION(splitk, opt_int(4));           /* EDGE_SPLITK=4, put back when the test ends */
    GentCmp r = gent_real_layer("split-k.gguf", 11, toks, 6, DT_F32);
    if (!r.ran) return;     /* failed already */
    CHECKF(r.worst <= 1e-3 * (1 + r.mx), "|gpu - ref| = %g (max |logit| %g)", r.worst, r.mx);
    CHECKF(op_split_products - before == 2, "%llu products split, expected attn_out and ffn_down", (unsigned long long)(op_split_products - before));
    out("    max |gpu - ref| %.3g (max |logit| %.3g), %llu products split\n", r.worst, r.mx, (unsigned long long)(op_split_products - before));
}

/* The same layer with f16 activations, 40 tokens, slices by the device's own rule: on a device
   with cooperative matrices (caps.coopmat) every prefill product (all but F32 and BF16 weights) runs on matmul_cm
   (or matmul_cm_split), which must then have run; elsewhere on the f16 tiles. Against the f32 CPU
   reference, so the bound is the f16 activations' (measured: lavapipe 4.7e-3 of max |logit| 4.75,
   the H200: 4.9e-3, 7 products on matmul_cm). */
TEST(gen_model_real_shapes_f16_prefill_matches_reference) {
    Vk *vk = test_vk();
    if (!vk->caps.f16_arith || !vk->caps.storage16) SKIP("the device has no f16 arithmetic and 16-bit storage");
    enum { T = 40 };
    i32 toks[T];
    for (u32 i = 0; i < T; i++) toks[i] = (i32)((i * 2654435761u) % 8192u);
    u64 before = op_cm_products;
    GentCmp r = gent_real_layer("f16.gguf", 12, toks, T, DT_F16);
    if (!r.ran) return;     /* failed already */
    CHECKF(r.worst <= 3e-3 * (1 + r.mx), "|gpu - ref| = %g (max |logit| %g)", r.worst, r.mx);
    if (vk->caps.coopmat) CHECKF(op_cm_products > before, "the device has cooperative matrices, but no product ran on matmul_cm");
    out("    max |gpu - ref| %.3g (max |logit| %.3g), %llu products on matmul_cm\n", r.worst, r.mx, (unsigned long long)(op_cm_products - before));
}

/* The f16 prefill in 3 k slices (EDGE_SPLITK=3: k = 1536 as 3 x 512, k = 8960 as 3,072 + 3,072 +
   2,816, a short last slice): on a device with cooperative matrices matmul_cm_split, elsewhere the f16
   tiles' split; the split's partials summed must match the CPU reference as the unsplit product does
   (op_matmul_split_slices takes 3 slices on the H200 for gemma-2-2b and qwen3-4b). */
TEST(gen_model_real_shapes_f16_prefill_in_three_slices_matches_reference) {
    Vk *vk = test_vk();
    if (!vk->caps.f16_arith || !vk->caps.storage16) SKIP("the device has no f16 arithmetic and 16-bit storage");
    enum { T = 40 };
    i32 toks[T];
    for (u32 i = 0; i < T; i++) toks[i] = (i32)((i * 2246822519u + 3) % 8192u);
    u64 before = op_split_products;
    TEST_OPTION(splitk, opt_int(3));           /* EDGE_SPLITK=3, put back when the test ends */
    GentCmp r = gent_real_layer("split3.gguf", 14, toks, T, DT_F16);
    if (!r.ran) return;     /* failed already */
    CHECKF(r.worst <= 3e-3 * (1 + r.mx), "|gpu - ref| = %g (max |logit| %g)", r.worst, r.mx);
    CHECKF(op_split_products - before == 2, "%llu products split, expected attn_out and ffn_down", (unsigned long long)(op_split_products - before));
    out("    max |gpu - ref| %.3g (max |logit| %.3g), %llu products split\n", r.worst, r.mx, (unsigned long long)(op_split_products - before));
}

/* Decode with f16 activations, one token at a time, with EDGE_IDOT=1: on a device that has
   shaderIntegerDotProduct the gate/up product (FFN norm in its prologue) and the LM head (output
   norm in its prologue) run on int8 activations (matvec_k_glu_norm_q, matvec_k_norm_q: both must
   then have been recorded), even where the driver does not call the dot products accelerated
   (lavapipe). Against the f32 CPU reference: int8 blocks of 32 round each value by up to
   max|x| / 254 of its block, about 8x the f16 rounding, so the bound is wider than the f16
   prefill's (measured on lavapipe: 3.1e-2 with max |logit| 4.1; the f16-pair lanes give 4.8e-3 on
   the same tokens). */
TEST(gen_model_real_shapes_int8_decode_matches_reference) {
    Vk *vk = test_vk();
    if (!vk->caps.f16_arith || !vk->caps.storage16) SKIP("the device has no f16 arithmetic and 16-bit storage");
    if (!vk->caps.idot_ok) SKIP("the device has no shaderIntegerDotProduct");
    enum { T = 12 };
    i32 toks[T];
    for (u32 i = 0; i < T; i++) toks[i] = (i32)((i * 2654435761u + 7) % 8192u);
    u64 before = op_q8_products;
    TEST_OPTION(idot, true);                   /* EDGE_IDOT=1, put back when the test ends */
    GentCmp r = gent_real_layer_ex("int8.gguf", 13, toks, T, DT_F16, true);
    if (!r.ran) return;     /* failed already */
    CHECKF(op_q8_products - before == 2, "%llu products recorded on the int8 lanes, expected gate/up and the LM head",
           (unsigned long long)(op_q8_products - before));
    CHECKF(r.worst <= 1.5e-2 * (1 + r.mx), "|gpu - ref| = %g (max |logit| %g)", r.worst, r.mx);
    out("    max |gpu - ref| %.3g (max |logit| %.3g), %llu products on the int8 lanes\n", r.worst, r.mx, (unsigned long long)(op_q8_products - before));
}

/* Prefill with f16 activations and EDGE_IDOT=1, matrix units off: every product runs on matmul_q
   (int8 activations per 16 values, integer dot products), even where the driver does not call
   them accelerated (lavapipe). Against the f32 CPU reference, in the int8 decode lanes' class
   (gen_model_real_shapes_int8_decode_matches_reference: int8 rounds each value by up to max|x| / 254
   of its 16). */
TEST(gen_model_real_shapes_int8_prefill_matches_reference) {
    Vk *vk = test_vk();
    if (!vk->caps.f16_arith || !vk->caps.storage16) SKIP("the device has no f16 arithmetic and 16-bit storage");
    if (!vk->caps.idot_ok) SKIP("the device has no shaderIntegerDotProduct");
    enum { T = 40 };
    i32 toks[T];
    for (u32 i = 0; i < T; i++) toks[i] = (i32)((i * 2246822519u + 5) % 8192u);
    u64 before = op_q8t_products;
    TEST_OPTION(idot, true);                   /* EDGE_IDOT=1, put back when the test ends */
    bool cm_off = op_matmul_cm_off;
    op_matmul_cm_off = true;                   /* the tiles also where matmul_cm would run */
    GentCmp r = gent_real_layer("int8p.gguf", 15, toks, T, DT_F16);
    op_matmul_cm_off = cm_off;
    if (!r.ran) return;     /* failed already */
    CHECKF(op_q8t_products - before >= 4, "%llu prefill products recorded on matmul_q, expected q/k/v, attn_out, gate/up and ffn_down",
           (unsigned long long)(op_q8t_products - before));
    CHECKF(r.worst <= 1.5e-2 * (1 + r.mx), "|gpu - ref| = %g (max |logit| %g)", r.worst, r.mx);
    out("    max |gpu - ref| %.3g (max |logit| %.3g), %llu products on matmul_q\n", r.worst, r.mx, (unsigned long long)(op_q8t_products - before));
}

/* Gemma 3's linear RoPE scaling (gemma-3-4b: factor 8, global layers only) on the GPU: tiny-gemma3's
   shape (5 local layers, layer 5 global) with rope.scaling linear x8 written by gen-model, 24 tokens
   (past the window of 16) through the reference and the GPU, batched and one at a time. The
   loader must read the factor (freq_scale 1/8), and the GPU's RoPE (rope_kv, prefill and decode)
   must apply it where the reference does (model_layer_rope: global layers only). */
TEST(gen_model_gemma3_rope_scaling_gpu_matches_reference) {
    test_vk();                                  /* skips without a device (fails under EDGE_TEST_REQUIRE=1) */
    ModelEntry row = model_table[MODEL_tiny_gemma3];
    row.rope_factor = 8.0f;
    enum { T = 24 };
    i32 toks[T];
    for (u32 i = 0; i < T; i++) toks[i] = (i32)(3 + (i * 2654435761u) % 509u);
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    char path[256];
    fmt_buf(path, sizeof path, "%s/scaled.gguf", dir);
    Err e = {0};
    const GenType f16 = { 1, GGML_TYPE_COUNT, GGML_TYPE_COUNT };
    REQUIRE(gen_model_write(path, &row, row.n_layer, &f16, 21, &e));
    Arena a;
    arena_init(&a, "gen test", 16u << 20);
    Model m;
    CHECKF(!model_open(&m, path, false, &a, &e) && strstr(e.msg, "rope.scaling.factor (linear) is 8, expected 1"), "%s", e.msg);
    e = (Err){0};
    REQUIRE(model_open(&m, path, true, &a, &e));
    f32 base, fs;
    CHECK(m.cfg.freq_scale == 0.125f);
    model_layer_rope(&m.cfg, 5, &base, &fs); CHECK(fs == 0.125f);
    model_layer_rope(&m.cfg, 0, &base, &fs); CHECK(fs == 1.0f);
    model_close(&m);
    arena_free(&a);
    gent_rm(path);
    for (u32 step = 0; step < 2; step++) {
        GentCmp r = gent_row_cmp(&row, row.n_layer, &f16, "scaled.gguf", 21, toks, T, DT_F32, step);
        if (!r.ran) return;     /* failed already */
        CHECKF(r.worst <= 1e-3 * (1 + r.mx), "%s: |gpu - ref| = %g (max |logit| %g)", step ? "decode" : "prefill", r.worst, r.mx);
        out("    %s: max |gpu - ref| %.3g (max |logit| %.3g)\n", step ? "decode" : "prefill", r.worst, r.mx);
    }
}

/* The real widths that are not multiples of 256 (gemma-3-270m 640, qwen2.5-0.5b 896, gemma-3-1b
   1152), one layer each as llama-quantize's presets make them there (Q4_K_M: Q5_0 / Q8_0 fallbacks
   beside Q4_K and Q6_K; the others rotate over the configs), on the GPU against the CPU reference:
   6 tokens of prefill with f32 activations, and decoded one at a time with f16 activations where
   the device has them (the bounds of the real-shape tests above; the int8 lanes' where they ran:
   0.018-0.025 measured with max |logit| 2.5-4.9, on the H200 and on lavapipe with EDGE_IDOT=1). */
TEST(gen_model_real_widths_fallback_mixes_match_reference) {
    Vk *vk = test_vk();
    bool f16 = vk->caps.f16_arith && vk->caps.storage16;
    static const char *const configs[] = { "gemma-3-270m-it", "qwen2.5-0.5b-instruct", "gemma-3-1b-it" };
    static const char *const presets[] = { "Q4_K_M", "Q5_K_M", "IQ4_XS", "Q3_K_M", "Q2_K", "Q4_1", "Q5_1", "Q4_K_S", "IQ4_NL" };
    const i32 toks[6] = { 1, 17, 2042, 99, 1500, 7 };
    for (u32 c = 0; c < ARRAY_COUNT(configs); c++)
        for (u32 j = 0; j < 4; j++) {
            const char *pn = j == 0 ? presets[0] : presets[1 + (c * 3 + j - 1) % (ARRAY_COUNT(presets) - 1)];
            GenType gt;
            REQUIRE(gen_type_parse(pn, &gt));
            char file[96]; fmt_buf(file, sizeof file, "%s-%s.gguf", configs[c], pn);
            GentCmp r = gent_layer_cmp(configs[c], &gt, file, 20 + c * 4 + j, toks, 6, DT_F32, false);
            if (!r.ran) continue;
            CHECKF(r.worst <= 1e-3 * (1 + r.mx), "%s f32 prefill: |gpu - ref| = %g (max |logit| %g)", file, r.worst, r.mx);
            f64 w16 = -1;
            if (f16) {
                u64 q8 = op_q8_products;
                GentCmp h = gent_layer_cmp(configs[c], &gt, file, 20 + c * 4 + j, toks, 6, DT_F16, true);
                if (!h.ran) continue;
                /* where gate/up and the LM head ran on int8 activations (devices that accelerate 8-bit dot
                   products, or EDGE_IDOT=1), their class: gen_model_real_shapes_int8_decode_matches_reference */
                f64 bound = op_q8_products > q8 ? 1.5e-2 : 3e-3;
                CHECKF(h.worst <= bound * (1 + h.mx), "%s f16 decode: |gpu - ref| = %g (max |logit| %g, bound %g (1 + that))", file, h.worst, h.mx, bound);
                w16 = h.worst;
            }
            out("    %-34s max |gpu - ref| f32 prefill %.3g, f16 decode %.3g (max |logit| %.3g)\n", file, r.worst, w16, r.mx);
        }
}
