/* bench.c — `edge bench`: load time, time to first token, prefill and decode speed of a model
   on this device, in the style of llama-bench (pp = prompt processing, tg = text generation).

   Method: the clock starts before the model file is opened. "load" covers opening the file,
   Vulkan bring-up, the memory plan, allocation and the weight upload; "ttft" runs to the first
   generated token of the first (cold) repetition, so it includes pipeline creation (the
   pipeline cache makes a second process faster). Then -r repetitions, each from an empty
   context: prefill -p seeded random tokens in batches, then -n greedy decode steps (each one
   replayed command buffer and one 4-byte readback). Reported: median and spread (min..max)
   of the per-repetition tok/s, device memory allocated vs planned, dispatches per decode token,
   and the decode roofline: weight bytes read per token / decode time.

   Usage: edge bench [-m MODEL] [-p 512] [-n 128] [-r 5] [-b BATCH] [--act f32|f16] [--json] [--allow-unlisted] */
#include <time.h>


static int bench_cmp(const void *a, const void *b) { f64 x = *(const f64 *)a, y = *(const f64 *)b; return x < y ? -1 : x > y; }

static int bench_usage(const char *why) {
    errf("edge bench: %s\n"
         "usage: edge bench [-m MODEL.gguf] [-p N] [-n N] [-r N] [-b N] [--act f32|f16] [--json] [--allow-unlisted]\n"
         "  -p N     prompt tokens per repetition (default 512; 0 skips prefill)\n"
         "  -n N     generated tokens per repetition (default 128)\n"
         "  -r N     repetitions (default 5)\n"
         "  -b N     prefill batch in tokens (default min(-p, 512); generation's default is 64): the batch\n"
         "           sizes the logits, activation and attention-score buffers (see edge plan --batch)\n"
         "  --act    GPU activation path (default f16 when the device has f16 arithmetic, else f32)\n"
         "  --json   one JSON object on stdout instead of the table\n", why);
    return EXIT_USAGE;
}

static bool bench_uint(const char *s, u32 lo, u32 hi, u32 *out) {
    char *end; long long v = strtoll(s, &end, 10);
    if (*s == 0 || *end || v < lo || v > hi) return false;
    *out = (u32)v; return true;
}

static int bench_cmd(int argc, char **argv) {
    const char *path = 0, *act_s = 0;
    u32 n_p = 512, n_g = 128, reps = 5, batch = 0;
    bool json = false, allow_unlisted = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--allow-unlisted")) allow_unlisted = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { bench_usage("help"); return EXIT_OK; }
        else if (i + 1 < argc && (!strcmp(a, "-m") || !strcmp(a, "-p") || !strcmp(a, "-n") || !strcmp(a, "-r") || !strcmp(a, "-b") || !strcmp(a, "--act"))) {
            const char *v = argv[++i];
            if (!strcmp(a, "-m")) path = v;
            else if (!strcmp(a, "--act")) act_s = v;
            else if (!strcmp(a, "-p") && !bench_uint(v, 0, EDGE_MAX_CTX, &n_p)) return bench_usage("-p wants 0..EDGE_MAX_CTX");
            else if (!strcmp(a, "-n") && !bench_uint(v, 1, EDGE_MAX_CTX, &n_g)) return bench_usage("-n wants 1..EDGE_MAX_CTX");
            else if (!strcmp(a, "-r") && !bench_uint(v, 1, 1000, &reps)) return bench_usage("-r wants 1..1000");
            else if (!strcmp(a, "-b") && !bench_uint(v, 1, 4096, &batch)) return bench_usage("-b wants 1..4096");
        } else { char w[160]; fmt_buf(w, sizeof w, "unknown option or missing value '%s'", a); return bench_usage(w); }
    }
    if (act_s && strcmp(act_s, "f32") && strcmp(act_s, "f16")) return bench_usage("--act is f32 or f16");

    f64 t_start = now_sec();
    Arena a; arena_init(&a, "bench", (u64)EDGE_HOST_ARENA_MIB << 20);
    Err e = {0};
    Model m;
    if (!model_open(&m, path, allow_unlisted, &a, &e)) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    u32 n_ctx = n_p + n_g;
    if (n_ctx > m.cfg.n_ctx) { errf("edge bench: -p %u + -n %u exceed the context of %u for '%s'\n", n_p, n_g, m.cfg.n_ctx, m.cfg.name); model_close(&m); arena_free(&a); return EXIT_USAGE; }
    /* the default path: f16 where the device has f16 arithmetic (eng_open's DT_COUNT) */
    DType act = !act_s ? DT_COUNT : !strcmp(act_s, "f16") ? DT_F16 : DT_F32;
    Engine g;
    eng_prefill_batch = batch ? batch : MAX(1, MIN(n_p, 512));
    if (!eng_open(&g, &m, ENG_GPU, n_ctx, act, &e)) { errf("edge: %s\n", e.msg); model_close(&m); arena_free(&a); return e.code; }
    f64 t_loaded = now_sec();
    eng_time_decode(&g, true);          /* the GPU time of a decode step beside the wall time */
    act = eng_info(&g).act;

    i32 *prompt = push_array(&a, i32, n_p ? n_p : 1);
    u64 seed = 0x9e3779b97f4a7c15ull;
    for (u32 i = 0; i < n_p; i++) { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; prompt[i] = (i32)(seed % m.cfg.n_vocab); }
    if (n_p) prompt[0] = 1 % (i32)m.cfg.n_vocab;
    f64 *pp = push_array(&a, f64, reps), *tg = push_array(&a, f64, reps), *gpu = push_array(&a, f64, n_g);
    f64 ttft = 0;
    int rc = EXIT_OK;
    for (u32 r = 0; r <= reps && rc == EXIT_OK; r++) {           /* r == 0: the cold run, not counted */
        eng_reset(&g);
        f64 t0 = now_sec();
        i32 tok = 1 % (i32)m.cfg.n_vocab;
        if (n_p) {
            if (!eng_feed(&g, prompt, n_p, 0, &e)) { rc = e.code; break; }
            tok = (i32)ref_argmax(eng_last_logits(&g), m.cfg.n_vocab);
        } else if (!eng_decode(&g, tok, true, &tok, &e)) { rc = e.code; break; }
        f64 t1 = now_sec();
        if (r == 0) ttft = t1 - t_start;
        /* greedy decode as edge run does it (eng_decode: on a GPU, the next step queued before the host waits) */
        for (u32 s = n_p ? 0 : 1; s < n_g; s++)
            if (!eng_decode(&g, tok, s + 1 < n_g, &tok, &e)) { rc = e.code; break; }
        eng_decode_end(&g);
        f64 t2 = now_sec();
        if (r > 0) { pp[r - 1] = n_p ? n_p / (t1 - t0) : 0; tg[r - 1] = (n_p ? n_g : n_g - 1) / (t2 - t1); }
        if (!json && isatty(2)) errf("\redge bench: repetition %u/%u", r, reps);
    }
    /* one more repetition, not counted: each decode step's GPU time read back after it (a query read per
       token would perturb the timed runs), to set against the wall time per token */
    u32 n_gpu = 0;
    if (rc == EXIT_OK && eng_info(&g).timestamps) {
        eng_reset(&g);
        eng_set_chain(&g, false);
        i32 tok = 1 % (i32)m.cfg.n_vocab;
        bool fed = !n_p || eng_feed(&g, prompt, n_p, 0, &e);    /* (the timed repetitions fed the same prompt) */
        if (!fed) rc = e.code;
        else if (n_p) tok = (i32)ref_argmax(eng_last_logits(&g), m.cfg.n_vocab);
        for (u32 s = 0; fed && s < n_g && eng_decode(&g, tok, false, &tok, &e); s++) gpu[n_gpu++] = eng_decode_gpu_ns(&g);
    }
    if (!json && isatty(2)) errf("\n");
    if (rc != EXIT_OK) { errf("edge: %s\n", e.msg); eng_close(&g); model_close(&m); arena_free(&a); return rc; }

    f64 pps[1000], tgs[1000];
    memcpy(pps, pp, reps * sizeof(f64)); memcpy(tgs, tg, reps * sizeof(f64));
    qsort(pps, reps, sizeof(f64), bench_cmp); qsort(tgs, reps, sizeof(f64), bench_cmp); qsort(gpu, n_gpu, sizeof(f64), bench_cmp);
    f64 pp_med = pps[reps / 2], tg_med = tgs[reps / 2];
    /* a decode step's GPU time (median, timed alone) beside the wall time per token of the chained steps */
    f64 gpu_us = n_gpu ? gpu[n_gpu / 2] * 1e-3 : 0, wall_us = tg_med > 0 ? 1e6 / tg_med : 0;
    /* weight bytes a decode token reads: every matrix once (the embedding table: one row) */
    EngInfo gi = eng_info(&g);
    u64 wbytes = gi.weight_bytes - gi.embd_bytes / m.cfg.n_vocab * (m.cfg.n_vocab - 1);
    if (m.cfg.tied_output) wbytes += gi.embd_bytes - gi.embd_bytes / m.cfg.n_vocab;
    f64 gbs = (f64)wbytes * tg_med / 1e9;
    u64 dev_alloc = gi.alloc_bytes, plan = gi.plan_bytes, tensors = gi.weight_bytes + gi.state_bytes;
    u32 dispatches = gi.dispatches;
    const char *actn = act == DT_F16 ? "f16" : "f32";
    if (json) {
        out("{\"model\":\"%s\",\"file\":\"%s\",\"device\":\"%s\",\"act\":\"%s\",\"n_prompt\":%u,\"n_gen\":%u,\"reps\":%u,"
            "\"load_s\":%.4f,\"ttft_s\":%.4f,\"pp_tps\":%.2f,\"pp_min\":%.2f,\"pp_max\":%.2f,\"tg_tps\":%.2f,\"tg_min\":%.2f,\"tg_max\":%.2f,"
            "\"decode_gpu_us\":%.2f,\"decode_wall_us\":%.2f,\"dispatches_per_token\":%u,\"device_bytes\":%llu,\"plan_bytes\":%llu,\"tensor_bytes\":%llu,\"decode_weight_bytes\":%llu,\"decode_gbs\":%.2f}\n",
            m.cfg.name, path ? path : "(embedded)", gi.device, actn, n_p, n_g, reps, t_loaded - t_start, ttft,
            pp_med, pps[0], pps[reps - 1], tg_med, tgs[0], tgs[reps - 1], gpu_us, wall_us, dispatches,
            (unsigned long long)dev_alloc, (unsigned long long)plan, (unsigned long long)tensors, (unsigned long long)wbytes, gbs);
    } else {
        out("model: %s (%s)  device: %s  activations: %s\n", m.cfg.name, path ? path : "embedded", gi.device, actn);
        out("load %.3f s   time to first token (cold) %.3f s\n", t_loaded - t_start, ttft);
        out("device memory: %llu bytes allocated, plan %llu, tensors %llu (alignment overhead %.3f%%)\n",
            (unsigned long long)dev_alloc, (unsigned long long)plan, (unsigned long long)tensors,
            plan ? 100.0 * (f64)(plan - tensors) / (f64)plan : 0.0);
        out("| %-24s | %-6s | %-8s | %14s | %19s |\n", "model", "act", "test", "t/s (median)", "min .. max");
        out("| %-24s | %-6s | %-8s | %14s | %19s |\n", "------------------------", "------", "--------", "--------------", "-------------------");
        char tn[32];
        if (n_p) { fmt_buf(tn, sizeof tn, "pp%u", n_p); out("| %-24s | %-6s | %-8s | %14.2f | %8.2f .. %8.2f |\n", m.cfg.name, actn, tn, pp_med, pps[0], pps[reps - 1]); }
        fmt_buf(tn, sizeof tn, "tg%u", n_g);
        out("| %-24s | %-6s | %-8s | %14.2f | %8.2f .. %8.2f |\n", m.cfg.name, actn, tn, tg_med, tgs[0], tgs[reps - 1]);
        out("decode: %u dispatches per token, %.1f MB of weights per token, %.1f GB/s effective\n",
            dispatches, (f64)wbytes / 1e6, gbs);
        if (gpu_us > 0) out("decode step: %.1f us of GPU time (a step timed alone), %.1f us wall per token (greedy steps queued back to back)\n", gpu_us, wall_us);
    }
    eng_close(&g);
    model_close(&m);
    arena_free(&a);
    return EXIT_OK;
}

#define BENCH_COMMANDS { "bench", bench_cmd, "speed of a model on this device: load, time to first token, prefill and decode tok/s" },
