/* eval.c — `edge eval`: token ids through a model on either backend (models/engine.h), the
   logits of every position to a file or greedy ids on stdout (the golden tests use it).

   Exit codes: EXIT_USAGE (bad option, token id out of range, context too long, unwritable
   file), EXIT_MODEL and EXIT_DEVICE from the model and engine, EXIT_NUMERIC (non-finite logits). */

static int eval_usage(const char *why) {
    errf("edge eval: %s\n"
         "usage: edge eval [-m MODEL.gguf] --tokens \"ID ID ...\" (--logits OUT.f32 | --greedy N)\n"
         "                 [--backend ref|gpu] [--act f32|f16] [--batch N] [--allow-unlisted]\n"
         "  --logits OUT.f32  write little-endian f32 logits [n_tokens][n_vocab]; row i predicts after tokens 0..i\n"
         "  --greedy N        print N greedily generated ids (argmax, lowest id on ties, no EOS stop)\n"
         "  --act f32|f16     GPU activation path (default f32, the golden tests' class; edge run and bench\n"
         "                    default to f16 where the device has it)\n"
         "  --batch N         GPU prefill batch in tokens (default 64)\n"
         "  without -m the embedded stories260K model is used\n", why);
    return EXIT_USAGE;
}

static bool eval_all_finite(const f32 *x, u32 n) {
    for (u32 i = 0; i < n; i++) if (!isfinite(x[i])) return false;
    return true;
}

/* greedy ids printed on stdout (GPU: the next ids come from the argmax kernel, which also flags
   NaN/Inf rows; reference: the last logits checked here); the exit code */
static int eval_greedy(Engine *g, EngBackend be, i64 greedy, u32 n_vocab) {
    Err e = {0};
    i32 tok = greedy > 0 ? eng_last_argmax(g) : 0;
    for (i64 s = 0; s < greedy; s++) {
        out(s ? " %d" : "%d", tok);
        if (s + 1 >= greedy) break;
        if (be == ENG_GPU) {
            if (!eng_decode(g, tok, s + 2 < greedy, &tok, &e)) { errf("\nedge: %s\n", e.msg); return e.code; }
            continue;
        }
        if (!eng_feed(g, &tok, 1, 0, &e)) { errf("\nedge: %s\n", e.msg); return e.code; }
        if (!eval_all_finite(eng_last_logits(g), n_vocab)) {
            errf("\nedge eval: non-finite logits at greedy step %lld\n", (long long)s); return EXIT_NUMERIC;
        }
        tok = eng_last_argmax(g);
    }
    if (greedy >= 0) out("\n");
    return EXIT_OK;
}

static int eval_cmd(int argc, char **argv) {
    const char *path = 0, *tokens = 0, *logits_path = 0, *backend = "ref", *act_s = "f32";
    i64 greedy = -1;
    u32 batch = EDGE_PREFILL_BATCH;
    bool allow_unlisted = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--allow-unlisted")) allow_unlisted = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { eval_usage("help"); return EXIT_OK; }
        else if (!strcmp(a, "-m") || !strcmp(a, "--model") || !strcmp(a, "--tokens") || !strcmp(a, "--logits") ||
                 !strcmp(a, "--greedy") || !strcmp(a, "--backend") || !strcmp(a, "--act") || !strcmp(a, "--batch")) {
            if (!has_val) { char w[96]; fmt_buf(w, sizeof w, "%s needs a value", a); return eval_usage(w); }
            const char *v = argv[++i];
            if (a[1] == 'm' || !strcmp(a, "--model")) path = v;
            else if (!strcmp(a, "--tokens")) tokens = v;
            else if (!strcmp(a, "--logits")) logits_path = v;
            else if (!strcmp(a, "--backend")) backend = v;
            else if (!strcmp(a, "--act")) act_s = v;
            else if (!strcmp(a, "--batch")) {
                char *end; long long b = strtoll(v, &end, 10);
                if (*end || !*v || b < 1 || b > 4096) return eval_usage("--batch wants 1..4096");
                batch = (u32)b;
            } else {
                char *end;
                greedy = strtoll(v, &end, 10);
                if (*end || greedy < 0 || greedy > EDGE_MAX_POS) return eval_usage("--greedy wants a count of 0 or more");
            }
        } else { char w[160]; fmt_buf(w, sizeof w, "unknown option '%s'", a); return eval_usage(w); }
    }
    if (!tokens) return eval_usage("--tokens is required");
    if (!logits_path && greedy < 0) return eval_usage("one of --logits or --greedy is required");
    if (strcmp(backend, "ref") && strcmp(backend, "gpu")) return eval_usage("--backend is ref or gpu");
    if (strcmp(act_s, "f32") && strcmp(act_s, "f16")) return eval_usage("--act is f32 or f16");
    EngBackend be = !strcmp(backend, "gpu") ? ENG_GPU : ENG_REF;
    DType act = !strcmp(act_s, "f16") ? DT_F16 : DT_F32;

    Arena a;
    arena_init(&a, "eval", (u64)EDGE_HOST_ARENA_MIB << 20);
    i32 *ids; u32 n_ids;
    if (!eng_parse_tokens(tokens, &a, &ids, &n_ids) || n_ids == 0) {
        arena_free(&a);
        return eval_usage("--tokens wants one or more decimal ids");
    }
    Err e = {0};
    Model m;
    if (!model_open(&m, path, allow_unlisted, &a, &e)) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    int rc = EXIT_OK;
    u64 n_ctx = (u64)n_ids + (greedy > 0 ? (u64)greedy : 0);
    for (u32 i = 0; i < n_ids; i++)
        if ((u32)ids[i] >= m.cfg.n_vocab) {
            errf("edge eval: token id %d at index %u is out of range (n_vocab %u)\n", ids[i], i, m.cfg.n_vocab);
            rc = EXIT_USAGE; goto done;
        }
    if (n_ctx > m.cfg.n_ctx) {
        errf("edge eval: %llu positions exceed the context limit of %u for '%s'\n", (unsigned long long)n_ctx,
             m.cfg.n_ctx, m.cfg.name);
        rc = EXIT_USAGE; goto done;
    }
    Engine g;
    FILE *f = 0;
    f32 *all = 0;
    if (!eng_open_batch(&g, &m, be, (u32)n_ctx, act, batch, &e)) { errf("edge: %s\n", e.msg); rc = e.code; goto done; }
    if (logits_path && !(f = fopen(logits_path, "wb"))) {
        errf("edge eval: cannot write '%s'\n", logits_path); rc = EXIT_USAGE; goto done_engine;
    }
    all = malloc((u64)n_ids * m.cfg.n_vocab * sizeof(f32));
    if (!eng_feed(&g, ids, n_ids, all, &e)) { errf("edge: %s\n", e.msg); rc = e.code; goto done_engine; }
    for (u32 i = 0; i < n_ids; i++)
        if (!eval_all_finite(all + (u64)i * m.cfg.n_vocab, m.cfg.n_vocab)) {
            errf("edge eval: non-finite logits at position %u\n", i); rc = EXIT_NUMERIC; goto done_engine;
        }
    /* Little-endian f32: every target of edge (aarch64, x86-64) is little-endian. */
    if (f && fwrite(all, sizeof(f32), (u64)n_ids * m.cfg.n_vocab, f) != (u64)n_ids * m.cfg.n_vocab) {
        errf("edge eval: short write to '%s'\n", logits_path); rc = EXIT_USAGE; goto done_engine;
    }
    rc = eval_greedy(&g, be, greedy, m.cfg.n_vocab);
done_engine:
    if (f && fclose(f) != 0 && rc == EXIT_OK) { errf("edge eval: cannot write '%s'\n", logits_path); rc = EXIT_USAGE; }
    free(all);
    eng_close(&g);
done:
    model_close(&m);
    arena_free(&a);
    return rc;
}

#define EVAL_COMMANDS \
    { "eval", eval_cmd, "evaluate token ids on a model: logits file or greedy ids (tests)" },
