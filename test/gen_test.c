/* gen_test.c — `edge gen-model` files and `edge plan`.

   gen-model: the tiny fixture configs in every type are written, parsed, matched to their row,
   and their directory (names, types, shapes, order, offsets) equals llama.cpp's own files in
   ../shared/fixtures where present; the Q4_K_M type table equals the fixtures README's; real
   configs with --layers 2 load with --allow-unlisted only; every file runs one token through
   the reference and the GPU without NaN, the two agreeing. Every listed row at full depth (no
   data: gen_model_dir) matches its own row strictly, with the Q6_K layers of llama.cpp's
   use_more_bits written out by hand for 16, 26 and 28 layers. Real configs run on the reference
   only (a 2-layer llama-3.2-1b takes 15 s on lavapipe: its 128256-row LM head).
   plan: the totals equal what xf_init allocates (also with arenas split into many blocks), and
   the padding overhead of real configs is under 2% (also at a 256-byte offset alignment). */

static char gent_dir[64];

static const char *gent_tmpdir(void) {
    if (!gent_dir[0]) {
        fmt_buf(gent_dir, sizeof gent_dir, "/tmp/edge-gen-XXXXXX");
        if (!mkdtemp(gent_dir)) { gent_dir[0] = 0; return 0; }
    }
    return gent_dir;
}

static void gent_rm(const char *path) { remove(path); }

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
            u32 ft;
            REQUIRE(row && gen_type_parse(types[ty], &ft));
            Err e = {0};
            CHECKF(gen_model_write(path, row, row->n_layer, ft, 7, &e), "%s: %s", what, e.msg);
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
        CHECKF(gen_model_write(path, row, 2, 15, 3, &e), "%s: %s", configs[c], e.msg);
        Arena a;
        arena_init(&a, "gen test", 32u << 20);
        Model m;
        CHECKF(!model_open(&m, path, false, &a, &e), "%s: a 2-layer file matched a listed row", configs[c]);
        CHECKF(strstr(e.msg, "block_count is 2, expected"), "%s: %s", configs[c], e.msg);
        e = (Err){0};
        if (!model_open(&m, path, true, &a, &e)) { CHECKF(0, "%s: %s", configs[c], e.msg); arena_free(&a); continue; }
        CHECK(m.cfg.id == MODEL_UNLISTED && m.cfg.n_layer == 2 && m.cfg.n_vocab == row->n_vocab && m.cfg.n_embd == row->n_embd);
        CHECKF(m.cfg.tied_output, "%s: the head must be tied", configs[c]);
        /* gemma-3-270m's 640-wide rows are not whole K-quant blocks: Q8_0 (llama.cpp: Q6_K -> Q8_0, Q4_K -> Q5_0) */
        u32 k4 = row->n_embd % 256 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q4_K, k6 = row->n_embd % 256 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q6_K;
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
        bool ok = gen_model_dir(&m, row, row->n_layer, 15, &a, &e);
        if (!strcmp(row->name, "stories260K")) {   /* rows of 172: no K-quant and no Q8_0 block fits */
            CHECKF(!ok && strstr(e.msg, "ffn_down") && strstr(e.msg, "172"), "%s", e.msg);
            arena_free(&a);
            continue;
        }
        if (!ok) { CHECKF(0, "%s: %s", row->name, e.msg); arena_free(&a); continue; }
        CHECKF(m.cfg.id == (ModelId)r, "%s matched %s", row->name, m.cfg.name);
        bool k_ok = row->n_embd % 256 == 0 && row->n_ff % 256 == 0;
        if (!k_ok) {                                /* qwen2.5-0.5b: 896-wide rows fall back to Q8_0 */
            CHECK(m.w.layers[0].wq->type == GGML_TYPE_Q8_0 && m.w.tok_embd->type == GGML_TYPE_Q8_0);
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
            REQUIRE(plan_compute(&p, vk, &m, ctx, DT_F32, false, &e));
            Xf xf;
            REQUIRE(xf_init(&xf, vk, &m, ctx, MIN(ctx, EDGE_PREFILL_BATCH), DT_F32, &e));
            const char *nm = files[f] ? files[f] : "embedded";
            CHECKF(gent_blocks(&xf.wa) == p.plan_w && gent_blocks(&xf.sa) == p.plan_s,
                   "%s split %u: plan %llu + %llu, allocated %llu + %llu", nm, split, (unsigned long long)p.plan_w,
                   (unsigned long long)p.plan_s, (unsigned long long)gent_blocks(&xf.wa), (unsigned long long)gent_blocks(&xf.sa));
            CHECKF(xf.wa.used == p.weights && xf.sa.used == p.kv + p.act, "%s: tensor bytes differ", nm);
            CHECKF(!split || xf.wa.n_blocks + xf.sa.n_blocks > 2, "%s: %u + %u blocks", nm, xf.wa.n_blocks, xf.sa.n_blocks);
            /* the KV cache: 2 x layers x kv_dim x ctx x 4 bytes */
            CHECK(p.kv == 2ull * m.cfg.n_layer * m.cfg.n_head_kv * m.cfg.head_dim * ctx * 4);
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
        REQUIRE(gen_model_dir(&m, row, row->n_layer, 15, &a, &e));
        f64 ov[2];
        for (u32 k = 0; k < 2; k++) {
            vk->caps.min_offset_align = k ? 256 : saved_align;
            vk->caps.max_alloc = MAX(saved_alloc, 4ull << 30);
            Plan p;
            u32 ctx = MIN(row->ctx, 4096u);
            REQUIRE(plan_compute(&p, vk, &m, ctx, DT_F32, false, &e));
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
static GentCmp gent_row_cmp(const ModelEntry *row, u32 n_layer, u32 ftype, const char *file, u32 seed, const i32 *toks, u32 T,
                            DType act, bool step) {
    GentCmp r = {0};
    const char *dir = gent_tmpdir();
    REQUIRE(dir);
    char path[256];
    fmt_buf(path, sizeof path, "%s/%s", dir, file);
    Err e = {0};
    REQUIRE(gen_model_write(path, row, n_layer, ftype, seed, &e));
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

static GentCmp gent_real_layer_ex(const char *file, u32 seed, const i32 *toks, u32 T, DType act, bool step) {
    const ModelEntry *real = gen_find_config("qwen2.5-1.5b-instruct");
    REQUIRE(real);
    ModelEntry row = *real;
    row.n_vocab = 8192;
    return gent_row_cmp(&row, 1, 15, file, seed, toks, T, act, step);
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
   with cooperative matrices (caps.coopmat) every Q4_K / Q6_K prefill product runs on matmul_cm
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
    REQUIRE(gen_model_write(path, &row, row.n_layer, 1, 21, &e));
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
        GentCmp r = gent_row_cmp(&row, row.n_layer, 1, "scaled.gguf", 21, toks, T, DT_F32, step);
        if (!r.ran) return;     /* failed already */
        CHECKF(r.worst <= 1e-3 * (1 + r.mx), "%s: |gpu - ref| = %g (max |logit| %g)", step ? "decode" : "prefill", r.worst, r.mx);
        out("    %s: max |gpu - ref| %.3g (max |logit| %.3g)\n", step ? "decode" : "prefill", r.worst, r.mx);
    }
}
