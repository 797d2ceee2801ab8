/* plan.c — `edge plan`: options, then models/plan.h's plan_compute_eng (which prints every buffer
   and the totals) for a GGUF (-m) or a listed config from its shapes alone (--config, through
   models/genmodel.h's gen_model_dir). Exit 3 (EXIT_DEVICE) when the plan does not fit. */

#define PLAN_DEFAULT_CTX 8192   /* tokens: the context planned without -c, capped by the model's limit */

static int plan_usage(const char *why) {
    errf("edge plan: %s\n"
         "usage: edge plan (-m MODEL.gguf | --config NAME [--type PRESET] [--layers N]) [-c CTX] [--act f32|f16]\n"
         "                 [--cache-type f32|f16|q8_0] [--batch N] [-np N] [--allow-unlisted]\n"
         "  every device buffer (name, dtype, shape, bytes, arena, block, offset), the totals per arena\n"
         "  (weights, KV cache, activations, padding), host memory, and whether it fits this device.\n"
         "  --config plans a listed config from its shapes alone (no file; --type: an `edge gen-model` preset, default Q4_K_M).\n"
         "  CTX defaults to the model's context limit, at most " STR(PLAN_DEFAULT_CTX) "; -c goes up to the limit. --batch: prefill batch in tokens\n"
         "  (default 64; edge bench uses min(-p, 512)). --act: default f16 where the device has shaderFloat16, as edge run.\n"
         "  --cache-type: the KV cache (default: as --act, as edge run; q8_0: blocks of 32 int8 values and an f16 scale).\n"
         "  -np N: N sequences decoded together (edge run -np), each with a context of CTX: the KV cache per sequence and in all.\n"
         "  The plan is edge run's: one logits row (per sequence). Exit 3 when it does not fit.\n", why);
    return EXIT_USAGE;
}

static int plan_cmd(int argc, char **argv) {
    const char *path = 0, *cfg = 0, *type = "Q4_K_M", *act_s = 0, *kv_s = 0;
    u64 ctx = 0, layers = 0;
    u32 batch = EDGE_PREFILL_BATCH, np = 1;
    bool allow = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { plan_usage("help"); return EXIT_OK; }
        if (!strcmp(a, "--allow-unlisted")) { allow = true; continue; }
        if (i + 1 >= argc) { char w[96]; fmt_buf(w, sizeof w, "unknown option or missing value: '%s'", a); return plan_usage(w); }
        const char *v = argv[++i];
        char *end = 0;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) path = v;
        else if (!strcmp(a, "--config")) cfg = v;
        else if (!strcmp(a, "--type")) type = v;
        else if (!strcmp(a, "--act")) act_s = v;
        else if (!strcmp(a, "--cache-type")) kv_s = v;
        else if (!strcmp(a, "-c")) { ctx = strtoull(v, &end, 10); if (*end || !*v || !ctx || ctx > EDGE_MAX_POS) return plan_usage("-c wants 1 or more tokens (at most the model's limit)"); }
        else if (!strcmp(a, "--batch")) { u64 b = strtoull(v, &end, 10); if (*end || !*v || !b || b > EDGE_MAX_PREFILL_BATCH) return plan_usage("--batch wants 1.." STR(EDGE_MAX_PREFILL_BATCH)); batch = (u32)b; }
        else if (!strcmp(a, "-np") || !strcmp(a, "--parallel")) { u64 b = strtoull(v, &end, 10); if (*end || !*v || !b || b > EDGE_MAX_SEQ) return plan_usage("-np wants 1..EDGE_MAX_SEQ (64) sequences"); np = (u32)b; }
        else if (!strcmp(a, "--layers")) { layers = strtoull(v, &end, 10); if (*end || !*v || !layers || layers > 4096) return plan_usage("--layers wants 1..4096"); }
        else { char w[96]; fmt_buf(w, sizeof w, "unknown option '%s'", a); return plan_usage(w); }
    }
    if (act_s && strcmp(act_s, "f32") && strcmp(act_s, "f16")) return plan_usage("--act is f32 or f16");
    if (kv_s && strcmp(kv_s, "f32") && strcmp(kv_s, "f16") && strcmp(kv_s, "q8_0")) return plan_usage("--cache-type is f32, f16 or q8_0");
    if (path && cfg) return plan_usage("-m and --config exclude each other");
    Arena a;
    arena_init(&a, "plan", (u64)EDGE_HOST_ARENA_MIB << 20);
    Model m;
    Err e = {0};
    bool ok;
    if (cfg) {
        const ModelEntry *t = gen_find_config(cfg);
        GenType gt;
        if (!t) { arena_free(&a); return plan_usage("unknown --config (see `edge models`)"); }
        if (!gen_type_parse(type, &gt)) { arena_free(&a); return plan_usage("unknown --type preset (edge gen-model --help lists them)"); }
        ok = gen_model_dir(&m, t, layers ? (u32)layers : t->n_layer, &gt, &a, &e);
    } else ok = model_open(&m, path, allow, &a, &e);
    if (!ok) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    u32 n_ctx = ctx ? (u32)ctx : MIN(m.cfg.n_ctx, (u32)PLAN_DEFAULT_CTX);
    int rc = EXIT_OK;
    Engine g;
    Plan p;
    if (n_ctx > m.cfg.n_ctx) { errf("edge plan: -c %u exceeds the context limit of %u tokens for '%s'\n", n_ctx, m.cfg.n_ctx, m.cfg.name); rc = EXIT_USAGE; }
    else if (!eng_open_device(&g, &e)) { errf("edge: %s\n", e.msg); rc = e.code; }
    else {
        DType kv = !kv_s ? DT_COUNT : !strcmp(kv_s, "f16") ? DT_F16 : !strcmp(kv_s, "q8_0") ? DT_Q8_0 : DT_F32;
        DType act = act_s ? (!strcmp(act_s, "f16") ? DT_F16 : DT_F32) : eng_caps(&g).f16_arith ? DT_F16 : DT_F32;   /* as edge run */
        if (!plan_compute_eng(&p, &g, &m, n_ctx, act, kv, batch, np, true, &e)) { errf("edge: %s\n", e.msg); rc = e.code; }
        else if (!p.fits) rc = EXIT_DEVICE;
        eng_close(&g);
    }
    model_close(&m);
    arena_free(&a);
    return rc;
}

#define PLAN_COMMANDS { "plan", plan_cmd, "the exact device and host memory plan of a model, and whether it fits" },
