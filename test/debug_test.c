/* debug_test.c — the debug tools of models/xf_debug.c: trace statistics cover exactly a
   tensor's own elements, the dtype chain of every listed model config (both activation
   dtypes) holds, and --profile counts exactly the dispatches that were recorded.
   (The NaN injector and --check-nan are driven through the binary: test/cli/debug_*.sh.) */

/* CPU statistics straight from the host copy, written independently of xf_stats_raw. */
static void dbg_cpu_stats(const f32 *v, u64 n, u64 ne0, f64 *mn, f64 *mx, f64 *sum, f64 *amax, u64 *ar, u64 *ac) {
    *mn = v[0]; *mx = v[0]; *sum = 0; *amax = fabs(v[0]); *ar = 0; *ac = 0;
    for (u64 i = 0; i < n; i++) {
        *sum += v[i];
        if (v[i] < *mn) *mn = v[i];
        if (v[i] > *mx) *mx = v[i];
        if (fabs(v[i]) > *amax) { *amax = fabs(v[i]); *ar = i / ne0; *ac = i % ne0; }
    }
}

TEST(trace_stats_cover_exactly_the_tensor_not_its_neighbours) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "debug-test", 1 << 16, &e));
    trng_seed(7);
    u64 big_ne[1] = { 301 }, ne[2] = { 13, 5 }, ne16[2] = { 7, 3 };
    Tensor before = vk_tensor(&a, "before", DT_F32, 1, big_ne);
    Tensor t = vk_tensor(&a, "t", DT_F32, 2, ne);
    Tensor t16 = vk_tensor(&a, "t16", DT_F16, 2, ne16);
    Tensor after = vk_tensor(&a, "after", DT_F32, 1, big_ne);
    f32 huge[301], nanv[301];
    for (u32 i = 0; i < 301; i++) { huge[i] = (i & 1) ? 1e30f : -1e30f; nanv[i] = NAN; }
    vk_upload(vk, &before, huge);
    vk_upload(vk, &after, nanv);
    f32 x[65]; for (u32 i = 0; i < 65; i++) x[i] = trng_normal() * 3.0f;
    x[65 - 1] = 1e30f;                    /* the last row (row 4) holds a huge value: a 3-row view must not see it */
    vk_upload(vk, &t, x);
    f32 x16[21]; u16 h16[21];
    for (u32 i = 0; i < 21; i++) { h16[i] = f16_from_f32(trng_normal() * 100.0f); x16[i] = f32_from_f16(h16[i]); }
    vk_upload(vk, &t16, h16);
    u8 scratch[4096];

    /* the whole tensor, a view of its first 3 rows (xf_rows), and an odd-length f16 tensor */
    Tensor v3 = xf_rows(&t, 3);
    const Tensor *cases[3] = { &t, &v3, &t16 };
    const f32 *host[3] = { x, x, x16 };
    for (u32 c = 0; c < 3; c++) {
        const Tensor *tt = cases[c];
        XfStats s;
        xf_tensor_stats(vk, tt, &s, scratch);
        f64 mn, mx, sum, amax; u64 ar, ac;
        dbg_cpu_stats(host[c], tt->nelem, tt->ne[0], &mn, &mx, &sum, &amax, &ar, &ac);
        CHECKF(s.n == tt->nelem, "case %u: %llu elements, tensor has %llu", c, (unsigned long long)s.n, (unsigned long long)tt->nelem);
        CHECKF(s.nan == 0 && s.inf == 0, "case %u: %llu NaN %llu Inf (the neighbours hold NaN)", c, (unsigned long long)s.nan, (unsigned long long)s.inf);
        CHECKF(s.min == mn && s.max == mx, "case %u: min %g max %g, CPU %g %g", c, s.min, s.max, mn, mx);
        CHECKF(fabs(s.sum - sum) <= 1e-9 * (1 + fabs(sum)), "case %u: sum %g, CPU %g", c, s.sum, sum);
        CHECKF(s.maxabs == amax && s.amax_row == ar && s.amax_col == ac, "case %u: |max| %g at (%llu, %llu), CPU %g at (%llu, %llu)",
               c, s.maxabs, (unsigned long long)s.amax_row, (unsigned long long)s.amax_col, amax, (unsigned long long)ar, (unsigned long long)ac);
        if (c > 0) CHECKF(s.maxabs < 1e29, "case %u: |max| %g comes from outside the tensor's rows", c, s.maxabs);
    }
    /* the same statistics see the huge value when the 5th row is part of the tensor */
    XfStats s;
    Tensor v5 = xf_rows(&t, 5);
    xf_tensor_stats(vk, &v5, &s, scratch);
    CHECK(s.maxabs == 1e30f && s.amax_row == 4 && s.amax_col == 12);
    /* and count NaN when the tensor itself holds them */
    xf_tensor_stats(vk, &after, &s, scratch);
    CHECK(s.nan == 301 && s.n == 301);
    vk_arena_free(&a);
}

/* A ModelConfig and weights (no data) for a models.def row: enough for describe mode. */
typedef struct DbgModel { Model m; GgufTensor *t; u32 n_t; ModelLayer *layers; } DbgModel;

static const GgufTensor *dbg_w(DbgModel *d, u32 type, u64 ne0, u64 ne1) {
    GgufTensor *g = &d->t[d->n_t++];
    memset(g, 0, sizeof *g);
    g->name = (GgufStr){ "w", 1 };
    g->ndim = ne1 > 1 ? 2 : 1; g->ne[0] = ne0; g->ne[1] = ne1; g->ne[2] = g->ne[3] = 1;
    g->type = type; g->nelem = ne0 * ne1;
    return g;
}

/* The type of a matrix of rows of ne0 in a file of weight type wt (DT_COUNT: this test's default mix,
   below): wt where the row is whole blocks of it, else llama-quantize's kind of fallback (Q5_0 where
   rows are whole blocks of 32, else F16). */
static u32 dbg_mt(DType wt, u64 ne0, u32 dflt) {
    if (wt == DT_COUNT) return dflt;
    if (ne0 % dtype_info[wt].blk == 0) return (u32)dtype_info[wt].ggml;
    return ne0 % 32 == 0 ? GGML_TYPE_Q5_0 : GGML_TYPE_F16;
}

static void dbg_model(DbgModel *d, const ModelEntry *r, DType wt) {
    memset(d, 0, sizeof *d);
    ModelConfig *c = &d->m.cfg;
    bool gemma = r->arch == ARCH_GEMMA2 || r->arch == ARCH_GEMMA3;
    c->id = (ModelId)(r - model_table); c->name = r->name; c->arch = r->arch;
    c->n_vocab = r->n_vocab; c->n_embd = r->n_embd; c->n_layer = r->n_layer; c->n_head = r->n_head; c->n_head_kv = r->n_head_kv;
    c->head_dim = r->head_dim; c->n_ff = r->n_ff; c->rope_dim = r->rope_dim; c->n_ctx = r->ctx; c->eps = r->eps;
    c->rope_neox = r->arch != ARCH_LLAMA; c->qkv_bias = r->arch == ARCH_QWEN2; c->qk_norm = r->arch == ARCH_GEMMA3 || r->arch == ARCH_QWEN3;
    c->post_norms = gemma; c->gelu = gemma; c->tied_output = r->tied;
    c->embd_scale = 1; c->attn_scale = 1; c->attn_softcap = r->attn_softcap; c->final_softcap = r->final_softcap;
    c->swa_window = r->swa_window; c->swa_period = r->swa_window ? (r->arch == ARCH_GEMMA2 ? 2 : 6) : 0;
    c->rope_base = r->rope_base; c->rope_base_swa = r->rope_base_swa ? r->rope_base_swa : r->rope_base;
    c->rope_swa_own_base = r->arch == ARCH_GEMMA3; c->freq_scale = 1;
    d->t = calloc(8 + 16 * (u64)c->n_layer, sizeof *d->t);
    d->layers = calloc(c->n_layer, sizeof *d->layers);
    u32 E = c->n_embd, qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim, F = c->n_ff;
    /* matrices: q8_0 where every row length is a whole number of blocks, else f16 */
    u32 mt = E % 32 == 0 && qd % 32 == 0 && F % 32 == 0 ? GGML_TYPE_Q8_0 : GGML_TYPE_F16;
    ModelWeights *w = &d->m.w;
    w->tok_embd = dbg_w(d, dbg_mt(wt, E, E % 256 == 0 ? GGML_TYPE_Q6_K : mt), E, c->n_vocab);
    w->output_norm = dbg_w(d, GGML_TYPE_F32, E, 1);
    w->output = c->tied_output ? w->tok_embd : dbg_w(d, dbg_mt(wt, E, mt), E, c->n_vocab);
    w->layers = d->layers;
    for (u32 il = 0; il < c->n_layer; il++) {
        ModelLayer *L = &d->layers[il];
        L->attn_norm = dbg_w(d, GGML_TYPE_F32, E, 1);
        L->wq = dbg_w(d, dbg_mt(wt, E, mt), E, qd); L->wk = dbg_w(d, dbg_mt(wt, E, mt), E, kvd);
        L->wv = dbg_w(d, il % 2 ? dbg_mt(wt, E, mt) : dbg_mt(DT_Q8_0, E, mt), E, kvd);   /* a layer whose v differs from q, k */
        if (c->qkv_bias) { L->bq = dbg_w(d, GGML_TYPE_F32, qd, 1); L->bk = dbg_w(d, GGML_TYPE_F32, kvd, 1); L->bv = dbg_w(d, GGML_TYPE_F32, kvd, 1); }
        if (c->qk_norm) { L->q_norm = dbg_w(d, GGML_TYPE_F32, c->head_dim, 1); L->k_norm = dbg_w(d, GGML_TYPE_F32, c->head_dim, 1); }
        L->wo = dbg_w(d, dbg_mt(wt, qd, mt), qd, E);
        if (c->post_norms) { L->post_attn_norm = dbg_w(d, GGML_TYPE_F32, E, 1); L->post_ffn_norm = dbg_w(d, GGML_TYPE_F32, E, 1); }
        L->ffn_norm = dbg_w(d, GGML_TYPE_F32, E, 1);
        L->w_gate = dbg_w(d, dbg_mt(wt, E, mt), E, F); L->w_up = dbg_w(d, dbg_mt(wt, E, mt), E, F); L->w_down = dbg_w(d, dbg_mt(wt, F, mt), F, E);
    }
}

/* One describe run with die() trapped (its own frame: setjmp leaves the caller's loop variables alone);
   n_seq > 1: a batched step of T rows. The count of ops on matmul_cm_b into *cmb when cmb. */
static __attribute__((noinline)) u32 dbg_describe_rows(Vk *vk, const Model *m, u32 r, DType act, u32 T, u32 n_seq, u32 per_layer, u32 *cmb) {
    static Xf xf; static XfDesc desc;
    static bool ok;
    int code = 0;
    bool died = EXPECT_DIE(&code, ok = xf_describe(&xf, vk, m, 128, 16, act, T, n_seq, &desc));
    CHECKF(!died, "%s act %s: %s", model_table[r].name, dtype_name[act], die_trap_msg);
    if (died) return 0;
    CHECKF(ok, "%s act %s %s: %s", model_table[r].name, dtype_name[act], n_seq > 1 ? "batched step" : T == 1 ? "decode" : "prefill", desc.chain_msg);
    if (cmb) { *cmb = 0; for (u32 j = 0; j < desc.n_ops; j++) *cmb += desc.ops[j].k && !strncmp(desc.ops[j].k->name, "matmul_cm_b_", 12); }
    /* at least per_layer ops per layer: 8 where decode's q/k/v and gate/up run without their norm and RoPE
       epilogues (norm, qkv, rope_kv, attention, out, norm, gate_up, down), 4 with them */
    CHECKF(desc.n_ops >= per_layer * model_table[r].n_layer, "%s act %s T=%u: %u ops", model_table[r].name, dtype_name[act], T, desc.n_ops);
    xf_desc_free(&desc); xf_free(&xf);
    return 1;
}

static u32 dbg_describe_one(Vk *vk, const Model *m, u32 r, DType act, u32 T, u32 per_layer) {
    return dbg_describe_rows(vk, m, r, act, T, 1, per_layer, 0);
}

static Vk dbg_vk;   /* a device-less Vk: describe mode needs only capabilities */

/* dbg_vk with the capabilities of a desktop GPU, cooperative matrices where coopmat */
static Vk *dbg_vk_init(bool coopmat) {
    Vk *vk = &dbg_vk;
    memset(vk, 0, sizeof *vk);
    vk->caps.f16_arith = vk->caps.storage16 = vk->caps.int8_arith = true;
    vk->caps.coopmat = coopmat;
    vk->caps.subgroup_ops = ~0u; vk->caps.max_push = 256; vk->caps.min_offset_align = 64;
    vk->caps.max_storage_range = 1u << 27; vk->caps.max_alloc = 1ull << 31;
    vk->caps.max_shared = 49152; vk->caps.max_wg_invocations = 1024;
    vk->caps.max_wg_size[0] = vk->caps.max_wg_size[1] = vk->caps.max_wg_size[2] = 1024;
    vk->caps.subgroup_size = 32;
    return vk;
}

TEST(dtype_chain_holds_for_every_model_config_and_activation_dtype) {
    Vk *vk = dbg_vk_init(false);
    u32 checked = 0;
    for (u32 r = 0; r < MODEL_COUNT; r++) {
        DbgModel d; dbg_model(&d, &model_table[r], DT_COUNT);
        for (int a = 0; a < 2; a++) {
            DType act = a ? DT_F16 : DT_F32;
            for (int ph = 0; ph < 2; ph++) checked += dbg_describe_one(vk, &d.m, r, act, ph ? 1 : 16, 4);   /* Q8_0: fused */
        }
        free(d.t); free(d.layers);
    }
    CHECK(checked == 4 * MODEL_COUNT);

    /* a device with cooperative matrices: matmul_cm binds each product's X up to a whole tile of
       128 tokens and attn_cm runs prefill attention; the chain holds there too (it flagged the
       tile's tail, another tensor's bytes, before the check read only a binding's data) */
    checked = 0;
    vk = dbg_vk_init(true);
    u64 cm0 = op_cm_products;
    for (u32 r = 0; r < MODEL_COUNT; r++) {
        DbgModel d; dbg_model(&d, &model_table[r], DT_Q4_K);
        checked += dbg_describe_one(vk, &d.m, r, DT_F16, 16, 4);
        free(d.t); free(d.layers);
    }
    CHECK(checked == MODEL_COUNT);
    CHECKF(op_cm_products > cm0 + 4 * MODEL_COUNT, "%llu products on matmul_cm", (unsigned long long)(op_cm_products - cm0));

    /* matmul_cm needs 34 KiB of workgroup memory: with 32 KiB the products run the tiles (they
       died when the pipeline was made, before op_matmul_cm_fits asked the kernel) */
    vk->caps.max_shared = 32768;
    cm0 = op_cm_products;
    DbgModel dq; dbg_model(&dq, &model_table[MODEL_llama_3_2_1b_instruct], DT_Q4_K);
    CHECK(dbg_describe_one(vk, &dq.m, MODEL_llama_3_2_1b_instruct, DT_F16, 16, 4) == 1 && op_cm_products == cm0);
    free(dq.t); free(dq.layers);
    vk = dbg_vk_init(false);

    /* every weight type in every config, with its fallbacks where a row is not whole blocks of it
       (gemma-3-270m's 640: Q5_0 beside Q4_K), f32 and f16 activations, both phases: each op finds
       its kernel (the plan takes the unfused entries for the types without fused ones) and the
       dtype chain holds */
    checked = 0;
    u32 nw = 0;
    vk->caps.max_alloc = 1ull << 33;        /* F32 weights: gemma-2's 2.4 GB embedding in one block */
    for (u32 t = 0; t < DT_COUNT; t++) {
        if (dtype_info[t].role != DR_WEIGHT) continue;
        nw++;
        for (u32 r = 0; r < MODEL_COUNT; r++) {
            DbgModel d; dbg_model(&d, &model_table[r], (DType)t);
            for (int a = 0; a < 2; a++)
                for (int ph = 0; ph < 2; ph++)   /* the types without decode lanes run unfused: 8 ops per layer */
                    checked += dbg_describe_one(vk, &d.m, r, a ? DT_F16 : DT_F32, ph ? 1 : 16, ph && !dtype_klanes((DType)t) ? 8 : 4);
            free(d.t); free(d.layers);
        }
    }
    CHECK(checked == 4 * MODEL_COUNT * nw);
    vk->caps.max_alloc = 1ull << 31;

    /* the check can fail: a tensor written as f16 and read as f32 */
    Xf xf; memset(&xf, 0, sizeof xf);
    XfDesc desc; memset(&desc, 0, sizeof desc);
    DevArena sa; vk_arena_plan(vk, &sa, "state");
    u64 ne[1] = { 64 };
    Tensor h16 = vk_tensor(&sa, "h", DT_F16, 1, ne), h32 = h16;
    h32.dtype = DT_F32; h32.nbytes = 256;
    Tensor b = vk_tensor(&sa, "b", DT_F32, 1, ne), y = vk_tensor(&sa, "y", DT_F32, 1, ne);
    xf.vk = vk; xf.d.desc = &desc; xf.d.cur.name = "test";
    xf_chain_write(&desc, &h16, "writer");
    xf_chain_write(&desc, &b, "writer");
    VkPipe p = { .k = &kernel_table[vk_kernel_find("add_f32")] };
    const Tensor *ts[3] = { &h32, &b, &y };
    xf_chain_cb(&xf, &p, ts, 3);
    CHECKF(desc.chain_errors == 1 && strstr(desc.chain_msg, "reads 'h' as f32, but op 'writer' wrote it as f16"), "%s", desc.chain_msg);
    xf_desc_free(&desc);
}

/* edge paths -np: a batched step (xf_decode_rows) of 3 and 16 rows in a context of 16 sequences, for
   every config at f16: without cooperative matrices each row runs a lone decode step's kernels (no
   matmul_cm_b); with them the batch path's products run on matmul_cm_b (xf_batch_tiles); the dtype
   chain holds on both (the batch path's q/k/v rows side by side, its split partials and sums). */
TEST(dtype_chain_holds_for_batched_steps_on_both_paths) {
    TEST_OPTION(batch_tiles, (OptInt){0});     /* EDGE_BATCH_TILES unset: the device decides */
    u32 checked = 0;
    for (int cm = 0; cm < 2; cm++) {
        Vk *vk = dbg_vk_init(cm);
        for (u32 r = 0; r < MODEL_COUNT; r++) {
            DbgModel d; dbg_model(&d, &model_table[r], DT_Q4_K);
            for (u32 T = 3; T <= 16; T += 13) {
                u32 cmb = 0, ok = dbg_describe_rows(vk, &d.m, r, DT_F16, T, 16, 4, &cmb);
                checked += ok;
                CHECKF(!ok || (cm ? cmb >= 4 * model_table[r].n_layer : cmb == 0), "%s coopmat %d, %u rows: %u ops on matmul_cm_b",
                       model_table[r].name, cm, T, cmb);
            }
            free(d.t); free(d.layers);
        }
    }
    CHECK(checked == 4 * MODEL_COUNT);
    dbg_vk_init(false);
}

/* edge paths where the device has cooperative matrices (described: lavapipe has none): prefill
   attention records attn_cm in the layers where op_attention_cm_fits (f16 cache, head_dim 64, 128
   or 256, at least 80 cache rows; softcaps and sliding windows are the kernel's), attn_tile where there
   are no matrix units (f16), and attn_flash elsewhere, and the plan line says so. */
TEST(paths_report_attn_cm_where_op_attention_cm_fits) {
    struct { ModelId id; DType act; bool coopmat; u32 cm; const char *plan; } cs[] = {
        { MODEL_tiny_llama,  DT_F16, true,  2, "flash on cooperative matrices (attn_cm)" },   /* head_dim 64 */
        { MODEL_tiny_llama,  DT_F16, false, 0, "flash in register tiles (attn_tile)" },       /* no cooperative matrices */
        { MODEL_tiny_llama,  DT_F32, true,  0, "flash" },                                     /* f32 activations and cache */
        /* head_dim 256, softcap; the sliding layers' rings (window 16 + a batch of 16 - 1 rows) are below attn_cm's 80 */
        { MODEL_tiny_gemma2, DT_F16, true,  1, "flash, on cooperative matrices (attn_cm) in 1 of 2 layers" },
        { MODEL_tiny_gemma3, DT_F16, true,  1, "flash, on cooperative matrices (attn_cm) in 1 of 6 layers" },
        { MODEL_tiny_gemma3, DT_F32, true,  0, "flash" },                                     /* f32 activations and cache */
    };
    for (u32 i = 0; i < ARRAY_COUNT(cs); i++) {
        Vk *vk = dbg_vk_init(cs[i].coopmat);
        DbgModel d; dbg_model(&d, &model_table[cs[i].id], DT_Q4_K);
        static Xf xf; static XfDesc desc;
        xf_describe(&xf, vk, &d.m, 128, 16, cs[i].act, 16, 1, &desc);
        u32 cm = 0, attn = 0, tile = 0;
        for (u32 j = 0; j < desc.n_ops; j++) if (!strcmp(desc.ops[j].name, "attention")) {
            attn++;
            cm += desc.ops[j].k && !strncmp(desc.ops[j].k->name, "attn_cm_", 8);
            tile += desc.ops[j].k && !strncmp(desc.ops[j].k->name, "attn_tile_", 10);
        }
        char buf[128];
        const char *plan = xf_attn_plan_str(&xf, PH_PREFILL, buf, sizeof buf);
        u32 want_tile = cs[i].act == DT_F16 && !cs[i].coopmat ? attn : 0;   /* attn_tile: f16, no matrix units */
        CHECKF(tile == want_tile, "%s act %s coopmat %d: %u attention ops on attn_tile, want %u", model_table[cs[i].id].name,
               dtype_name[cs[i].act], cs[i].coopmat, tile, want_tile);
        CHECKF(attn == d.m.cfg.n_layer && cm == cs[i].cm && xf_attn_cm_layers(&xf) == cm && !strcmp(plan, cs[i].plan),
               "%s act %s coopmat %d: %u of %u attention ops on attn_cm (want %u), the plan counts %u: '%s'", model_table[cs[i].id].name,
               dtype_name[cs[i].act], cs[i].coopmat, cm, attn, cs[i].cm, xf_attn_cm_layers(&xf), plan);
        xf_desc_free(&desc); xf_free(&xf);
        free(d.t); free(d.layers);
    }
}

static f64 dbg_share_sum(const char *text, const char *phase, u32 *disp) {
    const char *p = strstr(text, phase);
    if (!p) return -1;
    *disp = 0;
    const char *dp = strstr(p, " dispatches per ");
    if (dp) { const char *q = dp; while (q > p && q[-1] >= '0' && q[-1] <= '9') q--; *disp = (u32)strtoul(q, 0, 10); }
    f64 sum = 0;
    const char *line = strchr(p + 1, '\n');
    while (line && !strncmp(line + 1, "  class ", 8)) {
        const char *end = strchr(line + 1, '\n');
        const char *pc = strchr(line + 1, '%');
        if (!pc || (end && pc > end)) break;
        const char *q = pc; while (q > line && q[-1] != ' ') q--;
        sum += strtod(q, 0);
        line = end;
    }
    return sum;
}

TEST(profile_counts_the_recorded_dispatches_and_shares_add_up) {
    (void)test_vk();
    Arena ar; arena_init(&ar, "profile-test", 64 << 20);
    Model m; Err e;
    REQUIRE(model_open(&m, 0, false, &ar, &e));
    XfDebug saved = xf_debug;
    memset(&xf_debug, 0, sizeof xf_debug);
    xf_debug.profile = true;
    Engine g;
    REQUIRE(eng_open(&g, &m, ENG_GPU, 32, DT_F32, &e));
    i32 toks[5] = { 1, 403, 407, 261, 378 };
    REQUIRE(eng_feed(&g, toks, 5, 0, &e));
    u32 pre = g.xf.r.n_dispatch_last;
    i32 next = (i32)ref_argmax(eng_last_logits(&g), m.cfg.n_vocab);
    for (int i = 0; i < 4; i++) REQUIRE(eng_decode(&g, next, i < 3, &next, &e));
    CHECKF(g.xf.d.prof[0].n_dispatch == pre, "prefill: profile counted %u dispatches, the recording had %u", g.xf.d.prof[0].n_dispatch, pre);
    CHECKF(g.xf.d.prof[1].n_dispatch == g.xf.r.dec[g.xf.r.dec_lv].n_dispatch, "decode: profile counted %u, the recording had %u", g.xf.d.prof[1].n_dispatch, g.xf.r.dec[g.xf.r.dec_lv].n_dispatch);
    CHECK(g.xf.d.prof[1].tokens == 4 && g.xf.d.prof[0].tokens == 5);
    char *text = 0; size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    xf_profile_print(&g.xf, f);
    fclose(f);
    if (g.vk.caps.timestamps) {
        u32 dp = 0, dd = 0;
        f64 sp = dbg_share_sum(text, "\nprefill:", &dp), sd = dbg_share_sum(text, "\ndecode:", &dd);
        CHECKF(fabs(sp - 100) <= 1 && fabs(sd - 100) <= 1, "shares add up to %g%% (prefill) and %g%% (decode):\n%s", sp, sd, text);
        CHECKF(dd == g.xf.r.dec[g.xf.r.dec_lv].n_dispatch, "the table says %u dispatches per token, the recording has %u:\n%s", dd, g.xf.r.dec[g.xf.r.dec_lv].n_dispatch, text);
    } else CHECK(strstr(text, "does not support timestamps") != 0);
    free(text);
    /* eng_close prints the table to stderr; keep the test output short */
    xf_debug.profile = false;
    eng_close(&g);
    xf_debug = saved;
    model_close(&m);
    arena_free(&ar);
}
