/* gpu_test.c — the GPU forward pass (models/transformer.c) against the fixtures' float64
   references, on both kernel paths (tolerances in test/fixtures.c):
     --act f32: every logit within TOL_GPU_F32 (1e-3) of *.exact.logits.f32;
     --act f16: every logit within TOL_GPU_F16_REL (0.5%) of the largest |exact| logit of its row;
   top-1 equal wherever the exact top1-top2 margin is at least twice the row's tolerance.
   Greedy 64 from "Once upon a time" equals the exact greedy tokens up to the first step whose
   exact margin is below twice the f32 tolerance (all 64 where every margin exceeds it), 0.1 on
   the f16 path, and all 64 for stories260K on both paths.
   Also: weights bound as row chunks (EDGE_MAX_BINDING), and a decode that allocates nothing.
   Uses the fixture helpers of reference_test.c. */

typedef struct GpuPath { DType act; const char *name; f64 abs_tol, rel_tol, greedy_margin; DType kv; } GpuPath;   /* kv DT_COUNT: the default */
static const GpuPath gpu_paths[2] = {
    { DT_F32, "f32", TOL_GPU_F32, 0,               2 * TOL_GPU_F32, DT_COUNT },
    { DT_F16, "f16", 0,           TOL_GPU_F16_REL, 0.1,             DT_COUNT },
};
/* --cache-type q8_0 (llama.cpp's Q8_0 blocks): its own tolerance class on both activation paths */
static const GpuPath gpu_q8_paths[2] = {
    { DT_F32, "f32 --cache-type q8_0", 0, TOL_GPU_Q8_REL, GREEDY_MARGIN_Q8, DT_Q8_0 },
    { DT_F16, "f16 --cache-type q8_0", 0, TOL_GPU_Q8_REL, GREEDY_MARGIN_Q8, DT_Q8_0 },
};

static bool gput_device_ok(void) {
    Vk vk; Err e;
    if (!vk_init(&vk, &e)) return false;
    vk_shutdown(&vk);
    return true;
}

/* Compares (n_ids, V) logits with the exact file under a path's rules; returns the worst error
   (absolute for f32, relative to the row's max |exact| for f16). */
static f64 gput_compare(const GpuPath *p, const char *what, const f32 *got, const f32 *ex, u32 n_ids, u32 V) {
    f64 worst = 0;
    for (u32 i = 0; i < n_ids; i++) {
        const f32 *g = got + (u64)i * V, *x = ex + (u64)i * V;
        f64 mx = 0;
        for (u32 j = 0; j < V; j++) if (fabs(x[j]) > mx) mx = fabs(x[j]);
        f64 tol = p->abs_tol > 0 ? p->abs_tol : p->rel_tol * mx, scale = p->abs_tol > 0 ? 1 : mx;
        for (u32 j = 0; j < V; j++) {
            f64 d = fabs((f64)g[j] - (f64)x[j]);
            if (!(d <= tol)) { CHECKF(0, "%s --act %s position %u id %u: gpu %g exact %g (tolerance %g)", what, p->name, i, j, (f64)g[j], (f64)x[j], tol); return 1e30; }
            if (d / scale > worst) worst = d / scale;
        }
        u32 t1 = ref_argmax(x, V), t2 = t1 == 0 ? 1 : 0;
        for (u32 j = 0; j < V; j++) if (j != t1 && x[j] > x[t2]) t2 = j;
        if ((f64)x[t1] - (f64)x[t2] >= 2 * tol) {
            u32 g1 = ref_argmax(g, V);
            CHECKF(g1 == t1, "%s --act %s position %u: top-1 %u, exact %u (margin %g)", what, p->name, i, g1, t1, (f64)x[t1] - (f64)x[t2]);
        }
    }
    return worst;
}

/* The largest binding limit (a multiple of 256) that still splits every weight matrix of the model. */
static u64 gput_chunk_limit(const Model *m) {
    u64 mn = m->w.tok_embd->nbytes;
    if (m->w.output && m->w.output->nbytes < mn) mn = m->w.output->nbytes;
    for (u32 il = 0; il < m->cfg.n_layer; il++) {
        const ModelLayer *L = &m->w.layers[il];
        const GgufTensor *ws[7] = { L->wq, L->wk, L->wv, L->wo, L->w_gate, L->w_up, L->w_down };
        for (u32 w = 0; w < 7; w++) if (ws[w]->nbytes < mn) mn = ws[w]->nbytes;
    }
    return (mn - 1) / 256 * 256;
}

/* The largest activation binding of a batch of T tokens with a context of n_ctx. */
static u64 gput_act_bytes(const ModelConfig *c, u32 T, u32 n_ctx) {
    u64 qd = (u64)c->n_head * c->head_dim, kvd = (u64)c->n_head_kv * c->head_dim, b = 0;
    u64 v[6] = { (u64)c->n_vocab * T, (u64)c->n_ff * T, qd * T, (u64)c->n_embd * T, kvd * n_ctx, (u64)n_ctx * c->n_head * T };
    for (u32 i = 0; i < 6; i++) if (v[i] * 4 > b) b = v[i] * 4;
    return b;
}

/* The fixtures of the GPU tests: reft_fixtures', and under EDGE_TEST_QUICK (the sanitizer pass, where
   each file costs minutes) one per architecture, its Q4_K_M (and stories260K), as fat.sh and
   run_parallel.sh take them there: these loops repeat the same host code per file, and every weight
   type's upload still runs under the sanitizers in gen_model_every_preset_loads_with_plausible_weights. */
static u32 gput_fixtures(RefFixture *fx) {
    u32 n = reft_fixtures(fx, REFT_MAX_FIXTURES);
    if (!getenv("EDGE_TEST_QUICK")) return n;
    u32 k = 0;
    for (u32 i = 0; i < n; i++) {
        u64 len = strlen(fx[i].name);
        if (!strcmp(fx[i].name, "stories260K") || (len > 7 && !strcmp(fx[i].name + len - 7, "-Q4_K_M"))) fx[k++] = fx[i];
    }
    return k;
}

/* Evaluates every token case of every fixture on the GPU with one kernel path. With `chunked`,
   only the short case, under a binding limit that splits every weight matrix into several row
   chunks (and as many of its tokens as keep every activation under that limit).
   kv, last_row: eng_open_gen's (DT_COUNT, false: as eng_open_batch); last_row: the prompt's last
   row alone, read as generation reads it (eng_last_logits), is compared. */
static void gput_logits_gen(const GpuPath *p, bool chunked, u32 batch, DType kv, bool last_row) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    static RefFixture fx[REFT_MAX_FIXTURES];
    u32 n = gput_fixtures(fx);
    REQUIRE(n > 0);
    static const char *const cases[] = { "short", "medium", "story" };
    for (u32 f = 0; f < n; f++) {
        Arena a; Model m; Err e = {0};
        if (!reft_open(&fx[f], "gpu test", &a, &m)) continue;
        u32 V = m.cfg.n_vocab;
        f64 worst = 0;
        u64 limit = 0;
        for (u32 c = 0; c < (chunked ? 1u : ARRAY_COUNT(cases)); c++) {
            u64 pos = arena_pos(&a);
            char file[64]; u8 *tok_txt, *exact; u64 tok_n, exact_n;
            fmt_buf(file, sizeof file, "%s.tokens.txt", cases[c]);
            REQUIRE(reft_golden(&a, fx[f].name, file, &tok_txt, &tok_n));
            fmt_buf(file, sizeof file, "%s.exact.logits.f32", cases[c]);
            REQUIRE(reft_golden(&a, fx[f].name, file, &exact, &exact_n));
            i32 *ids; u32 n_ids;
            REQUIRE(eng_parse_tokens((const char *)tok_txt, &a, &ids, &n_ids));
            REQUIRE(exact_n == (u64)n_ids * V * 4);
            OptInt max_binding = edge_opt.max_binding;
            if (chunked) {
                limit = gput_chunk_limit(&m);
                while (n_ids > 1 && gput_act_bytes(&m.cfg, n_ids, n_ids) > limit) n_ids--;
                REQUIRE(gput_act_bytes(&m.cfg, n_ids, n_ids) <= limit);
                TEST_OPTION(max_binding, opt_int((i64)limit));    /* EDGE_MAX_BINDING for this eng_open only */
            }
            Engine g;
            bool opened = eng_open_gen(&g, &m, ENG_GPU, n_ids, p->act, kv, batch, last_row, 1, &e);
            edge_opt.max_binding = max_binding;
            if (!opened) { CHECKF(0, "%s: %s", fx[f].name, e.msg); arena_pop_to(&a, pos); continue; }
            if (chunked) {
                CHECK(g.vk.caps.max_storage_range == limit);
                for (u32 il = 0; il < m.cfg.n_layer; il++) {
                    const XfLayer *L = &g.xf.w.layers[il];
                    const Tensor *ws[7] = { &L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down };
                    for (u32 w = 0; w < 7; w++)
                        CHECKF(ws[w]->nbytes > limit, "%s: a weight of %llu bytes is not chunked at %llu", fx[f].name,
                               (unsigned long long)ws[w]->nbytes, (unsigned long long)limit);
                }
            }
            u64 al = g.vk.caps.min_offset_align;   /* one row where the head's last-row views stay aligned (xf_one_row) */
            bool one = last_row && (4ull * m.cfg.n_embd) % al == 0 && dtype_bytes(p->act, m.cfg.n_embd) % al == 0;
            CHECKF(g.xf.one_row == one && (!one || (g.xf.s.logits.ne[1] == 1 && !g.batch)), "%s: one logits row %d, expected %d", fx[f].name, g.xf.one_row, one);
            f32 *got = push_array(&a, f32, (u64)n_ids * V);
            if (eng_feed(&g, ids, n_ids, last_row ? 0 : got, &e)) {
                char what[160]; fmt_buf(what, sizeof what, "%s %s", fx[f].name, cases[c]);
                const f32 *want = (const f32 *)exact + (last_row ? (u64)(n_ids - 1) * V : 0);
                f64 w = gput_compare(p, what, last_row ? eng_last_logits(&g) : got, want, last_row ? 1 : n_ids, V);
                if (w > worst) worst = w;
            } else CHECKF(0, "%s: %s", fx[f].name, e.msg);
            eng_close(&g);
            arena_pop_to(&a, pos);
        }
        if (chunked) out("    %-20s binding limit %llu bytes: max |gpu - exact| %.3g\n", fx[f].name, (unsigned long long)limit, worst);
        else out("    %-20s --act %s  max %s %.3g\n", fx[f].name, p->name, p->abs_tol > 0 ? "|gpu - exact|" : "|gpu - exact| / max|exact|", worst);
        model_close(&m);
        arena_free(&a);
    }
}

static void gput_logits(const GpuPath *p, bool chunked, u32 batch) { gput_logits_gen(p, chunked, batch, DT_COUNT, false); }

TEST(gpu_fixture_logits_act_f32) { gput_logits(&gpu_paths[0], false, EDGE_PREFILL_BATCH); }
/* generation's engine (one logits row on the device, none batch-sized on the host): the prompt's
   last row, in batches of 16 (the last row of a batch at any offset), and with every prefill
   attn_out / ffn_down product split over k (EDGE_SPLITK=4: the partials in split_part) */
TEST(gpu_fixture_last_row_logits) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    gput_logits_gen(&gpu_paths[0], false, 16, DT_F32, true);
    u64 before = op_split_products;
    TEST_OPTION(splitk, opt_int(4));
    gput_logits_gen(&gpu_paths[0], false, EDGE_PREFILL_BATCH, DT_F32, true);
    CHECKF(op_split_products > before, "no product was split (%llu)", (unsigned long long)(op_split_products - before));
}
/* prompts in batches of 16 tokens: the prefill recording of the first batch is replayed for the
   next ones at later positions (xf_forward keeps it while the batch size stays) */
TEST(gpu_fixture_logits_batches_of_16) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    u64 before = xf_prefill_replays;
    gput_logits(&gpu_paths[0], false, 16);
    CHECKF(xf_prefill_replays - before > 0, "%llu replayed batches", (unsigned long long)(xf_prefill_replays - before));
    out("    %llu batches replayed\n", (unsigned long long)(xf_prefill_replays - before));
}
/* every prefill attn_out / ffn_down product split over k (EDGE_SPLITK=4: as many slices as the row
   length allows, at most 4), which the device would only choose with many compute units */
TEST(gpu_fixture_logits_split_k) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    u64 before = op_split_products;
    TEST_OPTION(splitk, opt_int(4));
    gput_logits(&gpu_paths[0], false, EDGE_PREFILL_BATCH);
    CHECKF(op_split_products > before, "no product was split (%llu)", (unsigned long long)(op_split_products - before));
    out("    %llu products split\n", (unsigned long long)(op_split_products - before));
}
/* --cache-type f16 with f32 activations: the f16 path's tolerance class. The f32 path's 1e-3 does
   not hold (lavapipe: max |gpu - exact| 5.1e-3 .. 2.4e-2 over the fixtures, 0.06-0.10% of the row's
   largest logit), so f32 activations keep an f32 cache by default (eng_kv_default). */
TEST(gpu_fixture_logits_act_f32_cache_f16) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Vk vk; Err e; vk_init(&vk, &e); bool s16 = vk.caps.storage16; vk_shutdown(&vk);
    if (!s16) SKIP("the device has no 16-bit storage");
    static const GpuPath f32_f16c = { DT_F32, "f32 --cache-type f16", 0, TOL_GPU_F16_REL, 0.1, DT_F16 };
    gput_logits_gen(&f32_f16c, false, EDGE_PREFILL_BATCH, DT_F16, false);
}
TEST(gpu_fixture_logits_act_f16) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Vk vk; Err e; vk_init(&vk, &e); bool f16 = vk.caps.f16_arith; vk_shutdown(&vk);
    if (!f16) SKIP("the device has no f16 arithmetic");
    gput_logits(&gpu_paths[1], false, EDGE_PREFILL_BATCH);
}

TEST(gpu_fixture_logits_with_chunked_bindings) { gput_logits(&gpu_paths[0], true, EDGE_PREFILL_BATCH); }

/* The per-step exact margins of a greedy file: the lines "step token top1_minus_top2" after the
   "min_top1_top2_margin:" header (1e9 where a step has no line). */
static void gput_margins(const char *txt, f64 margin[64]) {
    for (u32 s = 0; s < 64; s++) margin[s] = 1e9;
    const char *hdr = strstr(txt, "min_top1_top2_margin:");
    for (const char *l = hdr ? strchr(hdr, '\n') : 0; l && *++l; l = strchr(l, '\n')) {
        unsigned step, tok; double mg;
        if (sscanf(l, "%u %u %lf", &step, &tok, &mg) == 3 && step < 64) margin[step] = mg;
    }
}

/* 64 greedy ids after the prompt: each step fed the exact file's previous id (`forced`, so every
   step is checked whatever came before), or its own previous id one step at a time, or chained on
   the GPU as edge run and bench decode (eng_decode with the chain on). */
typedef enum GputMode { GPUT_FORCED, GPUT_STEPS, GPUT_CHAINED } GputMode;
static bool gput_greedy(Engine *g, const i32 *prompt, u32 n_prompt, const i32 *want, GputMode mode, i32 got[64], Err *e) {
    eng_reset(g);
    eng_set_chain(g, mode == GPUT_CHAINED);
    if (!eng_feed(g, prompt, n_prompt, 0, e)) return false;
    got[0] = (i32)ref_argmax(eng_last_logits(g), g->m->cfg.n_vocab);
    for (u32 s = 1; s < 64; s++) {
        if (!eng_decode(g, mode == GPUT_FORCED ? want[s - 1] : got[s - 1], s + 1 < 64, &got[s], e)) return false;
        if (s == 1 && mode == GPUT_CHAINED) CHECKF(g->chained, "the GPU greedy steps are not chained");
    }
    eng_decode_end(g);
    return true;
}

/* Greedy on the GPU (decode replays the recorded step; only ids come back) against the exact
   greedy file: fed the exact ids, every step whose exact margin is at least the path's threshold
   picks the exact id; running on its own ids, one step at a time and chained, both runs are
   identical for all 64 steps and equal the exact ids up to the first step below the threshold. */
/* One path's greedy check over every fixture (gpu_fixture_greedy's rules). */
static void gput_greedy_path(const GpuPath *p) {
    static RefFixture fx[REFT_MAX_FIXTURES];
    u32 n = gput_fixtures(fx);
    REQUIRE(n > 0);
    for (u32 f = 0; f < n; f++) {
        Arena a; Model m; Err e = {0};
        u8 *txt; u64 n_txt;
        if (!reft_open(&fx[f], "gpu greedy", &a, &m)) continue;
        REQUIRE(reft_golden(&a, fx[f].name, "once_upon_a_time.exact.greedy.txt", &txt, &n_txt));
        i32 *prompt, *want; u32 n_prompt, n_want;
        REQUIRE(reft_ids_field(&a, (const char *)txt, "prompt_tokens:", &prompt, &n_prompt));
        REQUIRE(reft_ids_field(&a, (const char *)txt, "generated_tokens:", &want, &n_want));
        REQUIRE(n_want == 64);
        f64 margin[64];
        gput_margins((const char *)txt, margin);
        u32 must = 64, checked = 0;
        bool stories = !strcmp(fx[f].name, "stories260K") && p->kv == DT_COUNT;   /* (the real model: all 64 on every path) */
        for (u32 s = 0; s < 64 && !stories; s++) if (margin[s] < p->greedy_margin) { must = s; break; }
        Engine g;
        if (!eng_open_gen(&g, &m, ENG_GPU, n_prompt + 64, p->act, p->kv, EDGE_PREFILL_BATCH, false, 1, &e)) {
            CHECKF(0, "%s", e.msg); model_close(&m); arena_free(&a); continue;
        }
        i32 got[3][64];
        for (int mode = GPUT_FORCED; mode <= GPUT_CHAINED; mode++)
            CHECKF(gput_greedy(&g, prompt, n_prompt, want, (GputMode)mode, got[mode], &e), "%s: %s", fx[f].name, e.msg);
        for (u32 s = 0; s < 64; s++) {
            if (margin[s] < p->greedy_margin) continue;
            checked++;
            CHECKF(got[GPUT_FORCED][s] == want[s], "%s --act %s: fed the exact ids, step %u gives %d, exact %d (margin %g)",
                   fx[f].name, p->name, s, got[GPUT_FORCED][s], want[s], margin[s]);
        }
        u32 same = 0;
        while (same < 64 && got[GPUT_STEPS][same] == want[same]) same++;
        CHECKF(same >= must, "%s --act %s: greedy differs at step %u (gpu %d, exact %d); must agree for %u steps",
               fx[f].name, p->name, same, same < 64 ? got[GPUT_STEPS][same] : -1, same < 64 ? want[same] : -1, must);
        CHECKF(!memcmp(got[GPUT_STEPS], got[GPUT_CHAINED], sizeof got[0]), "%s --act %s: chained greedy differs from step by step",
               fx[f].name, p->name);
        out("    %-20s --act %s  fed exact ids: %u of 64 steps checked; greedy agrees for %u of 64 (required %u)\n",
            fx[f].name, p->name, checked, same, must);
        eng_close(&g);
        model_close(&m);
        arena_free(&a);
    }
}

/* Greedy on the GPU (decode replays the recorded step; only ids come back) against the exact
   greedy file: fed the exact ids, every step whose exact margin is at least the path's threshold
   picks the exact id; running on its own ids, one step at a time and chained, both runs are
   identical for all 64 steps and equal the exact ids up to the first step below the threshold. */
TEST(gpu_fixture_greedy) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    for (u32 pi = 0; pi < 2; pi++) gput_greedy_path(&gpu_paths[pi]);
}

/* The same with a q8_0 KV cache on both activation paths (its greedy margin: test/fixtures.c). */
TEST(gpu_fixture_greedy_cache_q8_0) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Vk vk; Err e; vk_init(&vk, &e); bool f16 = vk.caps.f16_arith; vk_shutdown(&vk);
    for (u32 pi = 0; pi < (f16 ? 2u : 1u); pi++) gput_greedy_path(&gpu_q8_paths[pi]);
}

/* Logits with a q8_0 KV cache against the exact files, both activation paths: TOL_GPU_Q8_REL of the
   row's largest |logit| (the f16 class's rule with its own bound: the cache's 8-bit values). */
TEST(gpu_fixture_logits_cache_q8_0) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Vk vk; Err e; vk_init(&vk, &e); bool f16 = vk.caps.f16_arith; vk_shutdown(&vk);
    for (u32 pi = 0; pi < (f16 ? 2u : 1u); pi++) gput_logits_gen(&gpu_q8_paths[pi], false, EDGE_PREFILL_BATCH, DT_Q8_0, false);
}

/* The f16 path on int8 activations (EDGE_IDOT=1, matrix units off): every prefill product of a
   quantized weight on matmul_q (each 16 activations as int8), gate/up and the LM head of decode on the
   int8 lanes; what a device with integer dot products and no matrix units runs. Its own class
   (TOL_GPU_I8_REL, GREEDY_MARGIN_I8: test/fixtures.c): int8 rounds each value by up to 1/254 of
   its block's largest, about 16x the f16 rounding. */
static const GpuPath gpu_i8_path = { DT_F16, "f16 int8", 0, TOL_GPU_I8_REL, GREEDY_MARGIN_I8, DT_COUNT };
static bool gput_i8_begin(void) {
    Vk vk; Err e; vk_init(&vk, &e); bool ok = vk.caps.f16_arith && vk.caps.storage16 && vk.caps.idot_ok; vk_shutdown(&vk);
    if (!ok) return false;
    TEST_OPTION(idot, true);                   /* EDGE_IDOT=1, put back when the test ends */
    op_matmul_cm_off = true;                   /* the tiles also where matmul_cm would run */
    return true;
}
TEST(gpu_fixture_logits_int8) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    if (!gput_i8_begin()) SKIP("the device has no f16 arithmetic, 16-bit storage or integer dot products");
    u64 n = op_q8t_products;
    gput_logits(&gpu_i8_path, false, EDGE_PREFILL_BATCH);
    op_matmul_cm_off = false;
    CHECKF(op_q8t_products > n, "no prefill product ran on matmul_q");
}
TEST(gpu_fixture_greedy_int8) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    if (!gput_i8_begin()) SKIP("the device has no f16 arithmetic, 16-bit storage or integer dot products");
    u64 n = op_q8_products;
    gput_greedy_path(&gpu_i8_path);
    op_matmul_cm_off = false;
    CHECKF(op_q8_products > n, "no decode product ran on the int8 lanes");
}

/* The f32 path's gate/up on int8 activations in 32-bit multiplies (matvec_k_glu_norm_s: what EDGE_IDOT=1
   runs on a device without f16, e.g. the portable profile), forced on any device: the int8 class. */
static const GpuPath gpu_s8_path = { DT_F32, "f32 int8 mul", 0, TOL_GPU_I8_REL, GREEDY_MARGIN_I8, DT_COUNT };
TEST(gpu_fixture_greedy_int8_mul) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    u64 n = op_q8_products;
    op_matmul_s8_on = true;
    gput_greedy_path(&gpu_s8_path);
    op_matmul_s8_on = false;
    CHECKF(op_q8_products > n, "no decode product ran on the int8 multiply lanes");
}

/* The embedded model (stories260K) opened into a fresh arena, and a prompt of its vocabulary */
static const i32 gput_prompt5[5] = { 1, 403, 407, 261, 378 };
static bool gput_embedded(Arena *a, const char *name, Model *m) {
    arena_init(a, name, 16u << 20);
    Err e = {0};
    return model_open(m, 0, false, a, &e);
}

/* Greedy ids from the prompt up to position ctx - 1: ids[np .. ctx - 1] (the last step queues nothing after it) */
static bool gput_greedy_ids(Engine *g, const i32 *prompt, u32 np, u32 ctx, i32 *ids, Err *e) {
    if (!eng_feed(g, prompt, np, 0, e)) return false;
    ids[np] = (i32)ref_argmax(eng_last_logits(g), g->m->cfg.n_vocab);
    for (u32 p = np; p + 1 < ctx; p++) if (!eng_decode(g, ids[p], p + 2 < ctx, &ids[p + 1], e)) return false;
    eng_decode_end(g);
    return true;
}

/* Chained greedy steps (eng_decode with the chain on: a step queued before the host reads the one
   before) give the ids of steps one at a time, also when a run ends with a step in flight and decoding
   goes on from there one step at a time, and up to the end of the context, past which they report an
   error. */
TEST(gpu_greedy_chained_matches_steps) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Arena a; Model m;
    REQUIRE(gput_embedded(&a, "gpu chain", &m));
    Err e = {0};
    Engine g;
    const u32 ctx = 40, np = 5;
    REQUIRE(eng_open(&g, &m, ENG_GPU, ctx, DT_F32, &e));
    const i32 *prompt = gput_prompt5;
    i32 want[40], got[40];
    eng_set_chain(&g, false);
    REQUIRE(gput_greedy_ids(&g, prompt, np, ctx, want, &e));
    eng_reset(&g);
    eng_set_chain(&g, true);
    REQUIRE(eng_feed(&g, prompt, np, 0, &e));
    got[np] = (i32)ref_argmax(eng_last_logits(&g), m.cfg.n_vocab);
    u32 p = np;
    for (; p < np + 10; p++) REQUIRE(eng_decode(&g, got[p], true, &got[p + 1], &e));
    CHECK(g.chained);
    CHECK(g.xf.r.chain_n > 0 && g.xf.r.chain_n == g.xf.r.chain_p - eng_pos(&g));   /* the steps from position 15 on are in flight: dropped */
    eng_decode_end(&g);
    CHECK(eng_pos(&g) == p && g.xf.r.chain_n == 0);
    eng_set_chain(&g, false);
    for (; p < np + 16; p++) REQUIRE(eng_decode(&g, got[p], true, &got[p + 1], &e));   /* (odd: with 2 steps per recording the last one holds a step past the context) */
    CHECK(!g.chained);
    eng_set_chain(&g, true);
    for (; p + 1 < ctx; p++) REQUIRE(eng_decode(&g, got[p], true, &got[p + 1], &e));
    CHECK(eng_pos(&g) == ctx - 1 && g.chained);
    i32 last;
    REQUIRE(eng_decode(&g, got[p], true, &last, &e));        /* the step at position ctx - 1: nothing queued after it */
    CHECK(eng_pos(&g) == ctx && g.xf.r.chain_n < EDGE_CHAIN_STEPS && g.xf.r.chain_n == g.xf.r.chain_p - eng_pos(&g));   /* (steps past the context: never returned) */
    CHECK(!eng_decode(&g, last, true, &last, &e));
    CHECKF(strstr(e.msg, "past the context") != 0, "%s", e.msg);
    eng_decode_end(&g);
    CHECK(g.xf.r.chain_n == 0);
    u32 same = np;
    while (same < ctx && got[same] == want[same]) same++;
    CHECKF(same == ctx, "chained greedy differs at position %u (%d, step by step %d)", same, same < ctx ? got[same] : -1, same < ctx ? want[same] : -1);
    eng_close(&g);
    model_close(&m);
    arena_free(&a);
}

/* One-row decode recordings per key level (64, 128, ...: XfRecs.dec / chain) give the ids of recordings
   whose attention grid covers the whole context, step by step and chained, across the levels' bounds. */
TEST(gpu_decode_key_levels_match_whole_context_grid) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Arena a; Model m;
    REQUIRE(gput_embedded(&a, "gpu key levels", &m));
    Err e = {0};
    enum { CTX = 200, NP = 5 };
    i32 got[3][CTX];
    for (u32 run = 0; run < 3; run++) {           /* 0: one level (the whole context); 1: levels, step by step; 2: levels, chained */
        xf_key_levels_off = run == 0;
        Engine g;
        REQUIRE(eng_open(&g, &m, ENG_GPU, CTX, DT_F32, &e));
        eng_set_chain(&g, run == 2);
        REQUIRE(gput_greedy_ids(&g, gput_prompt5, NP, CTX, got[run], &e));
        if (run == 0) CHECK(g.xf.r.dec_lv == 0 && g.xf.r.dec[0].ready && !g.xf.r.dec[1].ready);
        if (run == 1) CHECK(g.xf.r.dec_lv == 2 && g.xf.r.dec[0].ready && g.xf.r.dec[1].ready && g.xf.r.dec[2].ready);   /* 64, 128, 200 */
        if (run == 2) CHECK((g.xf.r.chain[0][1].ready || g.xf.r.chain[1][1].ready) && (g.xf.r.chain[0][2].ready || g.xf.r.chain[1][2].ready));
        eng_close(&g);
    }
    xf_key_levels_off = false;
    for (u32 run = 1; run < 3; run++) {
        u32 same = NP;
        while (same < CTX && got[run][same] == got[0][same]) same++;
        CHECKF(same == CTX, "run %u differs at position %u (%d, whole-context grid %d)", run, same, same < CTX ? got[run][same] : -1,
               same < CTX ? got[0][same] : -1);
    }
    model_close(&m);
    arena_free(&a);
}

/* The decode step allocates nothing and builds no pipelines: arena positions and the pipeline
   count are the same before and after 32 tokens; the step is one replayed recording. */
TEST(gpu_decode_allocates_nothing) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    Arena a; Model m;
    REQUIRE(gput_embedded(&a, "gpu decode", &m));
    Err e = {0};
    Engine g;
    REQUIRE(eng_open(&g, &m, ENG_GPU, 64, DT_F32, &e));
    i32 tok = 0;
    REQUIRE(eng_feed(&g, gput_prompt5, 5, 0, &e));
    tok = (i32)ref_argmax(eng_last_logits(&g), m.cfg.n_vocab);
    eng_set_chain(&g, false);
    REQUIRE(eng_decode(&g, tok, true, &tok, &e));        /* the first decode records the step */
    u64 host = arena_pos(&a), names = arena_pos(&g.xf.w.names), wa = g.xf.w.arena.pos, sa = g.xf.s.arena.pos;
    u64 wa_used = g.xf.w.arena.used, sa_used = g.xf.s.arena.used;
    u32 pipes = g.vk.n_pipelines;
    VkCommandBuffer cmd = g.xf.r.dec[0].cmd;   /* (positions below 64: the first key level) */
    for (u32 i = 0; i < 32; i++) REQUIRE(eng_decode(&g, tok, true, &tok, &e));
    CHECK(arena_pos(&a) == host);
    CHECK(arena_pos(&g.xf.w.names) == names);
    CHECK(g.xf.w.arena.pos == wa && g.xf.s.arena.pos == sa && g.xf.w.arena.used == wa_used && g.xf.s.arena.used == sa_used);
    CHECKF(g.vk.n_pipelines == pipes, "%u pipelines created during decode", g.vk.n_pipelines - pipes);
    CHECK(g.xf.r.dec_lv == 0 && g.xf.r.dec[0].cmd == cmd && g.xf.r.dec[0].ready);
    CHECK(g.xf.r.n_dispatch_last == g.xf.r.dec[0].n_dispatch && g.xf.r.dec[0].n_dispatch > 0);
    /* greedy steps chained on the GPU (eng_decode, chain on): their two recordings are made at the
       first chained steps; after that the chain allocates nothing either */
    eng_set_chain(&g, true);
    for (u32 i = 0; i < 2; i++) REQUIRE(eng_decode(&g, tok, true, &tok, &e));
    CHECK(g.chained && g.xf.r.chain[0][0].ready && g.xf.r.chain[1][0].ready);
    host = arena_pos(&a); names = arena_pos(&g.xf.w.names); wa = g.xf.w.arena.pos; sa = g.xf.s.arena.pos;
    wa_used = g.xf.w.arena.used; sa_used = g.xf.s.arena.used; pipes = g.vk.n_pipelines;
    VkCommandBuffer c0 = g.xf.r.chain[0][0].cmd, c1 = g.xf.r.chain[1][0].cmd;
    for (u32 i = 0; i < 16; i++) REQUIRE(eng_decode(&g, tok, i + 1 < 16, &tok, &e));
    eng_decode_end(&g);
    CHECK(arena_pos(&a) == host && arena_pos(&g.xf.w.names) == names);
    CHECK(g.xf.w.arena.pos == wa && g.xf.s.arena.pos == sa && g.xf.w.arena.used == wa_used && g.xf.s.arena.used == sa_used);
    CHECKF(g.vk.n_pipelines == pipes, "%u pipelines created during chained decode", g.vk.n_pipelines - pipes);
    CHECK(g.xf.r.chain[0][0].cmd == c0 && g.xf.r.chain[1][0].cmd == c1);
    /* the plan is what was allocated: the arenas are exactly the planned bytes */
    u64 wcap = 0, scap = 0;
    for (u32 i = 0; i < g.xf.w.arena.n_blocks; i++) wcap += g.xf.w.arena.blocks[i].size;
    for (u32 i = 0; i < g.xf.s.arena.n_blocks; i++) scap += g.xf.s.arena.blocks[i].size;
    CHECK(wcap == g.xf.w.plan && scap == g.xf.s.plan);
    eng_close(&g);
    model_close(&m);
    arena_free(&a);
}

/* Batched steps on the prefill products (xf_batch_tiles; forced here from 2 sequences with
   EDGE_BATCH_TILES=2, and every product split in 4 k slices with EDGE_SPLITK=4, as on a GPU that
   reports its compute units; of the fixtures only gemma3w's rows of 640 are long enough to split):
   four sequences at different positions, three steps. Every row's logits are within the f16 path's
   tolerance of the reference's for the same step (top-1 equal where the margin allows), and equal bit
   for bit whatever else is in the step: the rows in another order, and steps of two rows (whether a
   product splits must not depend on a step's rows: the partials' buffer is sized for every sequence). */
TEST(gpu_batch_tiles_rows_match_reference_and_each_other) {
    if (!gput_device_ok()) SKIP_UNLESS_REQUIRED("no Vulkan device");
    TEST_OPTION(batch_tiles, opt_int(2));
    TEST_OPTION(splitk, opt_int(4));
    static RefFixture fx[REFT_MAX_FIXTURES];
    u32 nf = gput_fixtures(fx);
    REQUIRE(nf > 0);
    enum { S = 4, K = 3 };
    for (u32 f = 0; f < nf; f++) {
        Arena a; Model m; Err e = {0};
        if (!reft_open(&fx[f], "gpu batch tiles", &a, &m)) continue;
        u32 V = m.cfg.n_vocab;
        Engine g[3];                    /* the reference; the tiles, rows in order; the tiles, rows reversed, then two by two */
        bool open = eng_open_gen(&g[0], &m, ENG_REF, 64, DT_F32, DT_COUNT, 16, true, S, &e);
        open = open && eng_open_gen(&g[1], &m, ENG_GPU, 64, DT_F16, DT_COUNT, 16, true, S, &e);
        open = open && eng_open_gen(&g[2], &m, ENG_GPU, 64, DT_F16, DT_COUNT, 16, true, S, &e);
        if (!open) { CHECKF(0, "%s: %s", fx[f].name, e.msg); model_close(&m); arena_free(&a); continue; }
        CHECKF(g[1].xf.batch_tiles && g[2].xf.batch_tiles, "%s: batched steps not on the prefill products", fx[f].name);
        for (u32 s = 0; s < S; s++) {
            i32 prompt[12];
            u32 len = 2 + 3 * s;
            for (u32 i = 0; i < len; i++) prompt[i] = (i32)((1 + 37 * i + 11 * s) % V);
            for (u32 i = 0; i < 3; i++) { eng_select(&g[i], s); REQUIRE(eng_feed(&g[i], prompt, len, 0, &e)); }
        }
        f32 *lg = push_array(&a, f32, (u64)3 * S * V);
        for (u32 k = 0; k < K; k++) {
            i32 tok[S]; u32 seqs[S] = { 0, 1, 2, 3 }, rev[S] = { 3, 2, 1, 0 };
            for (u32 s = 0; s < S; s++) tok[s] = (i32)((5 + 13 * k + 29 * s) % V);
            REQUIRE(eng_step(&g[0], S, seqs, tok, 0, lg, &e));
            REQUIRE(eng_step(&g[1], S, seqs, tok, 0, lg + (u64)S * V, &e));
            f32 *l2 = lg + (u64)2 * S * V;
            if (k < 2) {
                i32 rt[S];
                for (u32 s = 0; s < S; s++) rt[s] = tok[rev[s]];
                REQUIRE(eng_step(&g[2], S, rev, rt, 0, l2, &e));
                for (u32 s = 0; s < S / 2; s++)        /* back to sequence order */
                    for (u32 j = 0; j < V; j++) { f32 t = l2[(u64)s * V + j]; l2[(u64)s * V + j] = l2[(u64)(S - 1 - s) * V + j]; l2[(u64)(S - 1 - s) * V + j] = t; }
            } else {
                for (u32 h = 0; h < 2; h++) {          /* sequences 2, 0 then 3, 1 */
                    u32 two[2] = { 2 + h, h };
                    i32 tt[2] = { tok[2 + h], tok[h] };
                    f32 *lt = push_array(&a, f32, (u64)2 * V);
                    REQUIRE(eng_step(&g[2], 2, two, tt, 0, lt, &e));
                    memcpy(l2 + (u64)two[0] * V, lt, (u64)V * 4); memcpy(l2 + (u64)two[1] * V, lt + V, (u64)V * 4);
                }
            }
            for (u32 s = 0; s < S; s++) {
                char what[160]; fmt_buf(what, sizeof what, "%s batched step %u sequence %u", fx[f].name, k, s);
                gput_compare(&gpu_paths[1], what, lg + (u64)(S + s) * V, lg + (u64)s * V, 1, V);
                CHECKF(!memcmp(lg + (u64)(S + s) * V, l2 + (u64)s * V, (u64)V * 4), "%s: the row differs with other rows in the step", what);
            }
        }
        for (u32 i = 0; i < 3; i++) eng_close(&g[i]);
        model_close(&m);
        arena_free(&a);
    }
}
