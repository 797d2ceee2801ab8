/* bench.c — `edge bench`: load time, time to first token, prefill and decode speed of a model
   on this device, in the style of llama-bench (pp = prompt processing, tg = text generation).

   Method: the clock starts before the model file is opened. "load" covers opening the file,
   Vulkan bring-up, the memory plan, allocation and the weight upload; "ttft" runs to the first
   generated token of the first (cold) repetition, so it includes pipeline creation (the
   pipeline cache makes a second process faster). Then -r repetitions, each from an empty
   context: prefill -p seeded random tokens in batches, then -n greedy decode steps (each one
   replayed command buffer and one 4-byte readback): "tg N @ dP", decode at context P .. P + N;
   then, from an empty context again, -n greedy steps: "tg N", decode at context 0 .. N, which is
   what llama-bench's tg N measures (its pp and tg tests each start from an empty context; a
   ratio against its tg128 takes this one). Reported: median and spread (min..max)
   of the per-repetition tok/s, the warm time to first token at -p (the median repetition's
   prefill through the first token's argmax, read back: what a user waits for a prompt of that
   length once the model is loaded), device memory allocated vs planned, dispatches per decode token,
   and the decode roofline: weight bytes read per token / decode time.

   With -np N (as llama-batched-bench's -npl): each repetition prefills the prompt into N sequences
   one after the other, then decodes them together (-n batched steps of N rows, edge run -np's
   eng_step); reported: the aggregate tok/s of prefill and decode (N x tokens / time) and the decode
   latency per step (what each sequence waits per token).

   Usage: edge bench [-m MODEL] [-p 512] [-n 128] [-r 5] [-b BATCH] [-np N] [--act f32|f16] [--cache-type f32|f16|q8_0] [--json] [--allow-unlisted]
   [--profile] (edge.c's debug flags: the per-op table at eng_close) */
#include <time.h>


static int bench_cmp(const void *a, const void *b) { f64 x = *(const f64 *)a, y = *(const f64 *)b; return x < y ? -1 : x > y; }

static int bench_usage(const char *why) {
    errf("edge bench: %s\n"
         "usage: edge bench [-m MODEL.gguf] [-p N] [-n N] [-r N] [-b N] [-np N] [--act f32|f16] [--cache-type f32|f16|q8_0]\n"
         "                  [--json] [--allow-unlisted] [--profile]\n"
         "  -p N     prompt tokens per repetition (default 512; 0 skips prefill); the report gives the\n"
         "           warm time to first token at N (the median repetition's prefill and first token)\n"
         "  -n N     generated tokens per repetition (default 128), decoded twice: after the prompt\n"
         "           (tgN @ dP) and from an empty context (tgN, what llama-bench's tgN measures)\n"
         "  -r N     repetitions (default 5)\n"
         "  -b N     prefill batch in tokens (default min(-p, 512); generation's default is 64): the batch\n"
         "           sizes the logits, activation and attention-score buffers (see edge plan --batch)\n"
         "  -np N    N sequences decoded together (1..%u, default 1): aggregate tok/s and the latency per step\n"
         "  --act    GPU activation path (default f16 when the device has f16 arithmetic, else f32)\n"
         "  --cache-type  the KV cache (default: as edge run)\n"
         "  --json   one JSON object on stdout instead of the table\n"
         "  --profile  also the GPU time per op class and per op, prefill and decode apart, on stderr at the\n"
         "           end (timestamps after every op: the tok/s of that run are lower than without)\n", why, EDGE_MAX_SEQ);
    return EXIT_USAGE;
}

static bool bench_uint(const char *s, u32 lo, u32 hi, u32 *out) {
    char *end; long long v = strtoll(s, &end, 10);
    if (*s == 0 || *end || v < lo || v > hi) return false;
    *out = (u32)v; return true;
}

typedef struct BenchOpts { const char *path, *act_s, *kv_s; u32 n_p, n_g, reps, batch, np; bool json, allow_unlisted; } BenchOpts;

/* The command line into o; EXIT_OK to go on, else the exit code (help: -1). */
static int bench_parse(BenchOpts *o, int argc, char **argv) {
    *o = (BenchOpts){ .n_p = 512, .n_g = 128, .reps = 5, .np = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) o->json = true;
        else if (!strcmp(a, "--allow-unlisted")) o->allow_unlisted = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { bench_usage("help"); return -1; }
        else if (i + 1 < argc && (!strcmp(a, "-m") || !strcmp(a, "-p") || !strcmp(a, "-n") || !strcmp(a, "-r") || !strcmp(a, "-b") || !strcmp(a, "--act") ||
                               !strcmp(a, "-np") || !strcmp(a, "--cache-type"))) {
            const char *v = argv[++i];
            if (!strcmp(a, "-m")) o->path = v;
            else if (!strcmp(a, "--act")) o->act_s = v;
            else if (!strcmp(a, "--cache-type")) o->kv_s = v;
            else if (!strcmp(a, "-p") && !bench_uint(v, 0, EDGE_MAX_POS, &o->n_p)) return bench_usage("-p wants 0 or more tokens");
            else if (!strcmp(a, "-n") && !bench_uint(v, 1, EDGE_MAX_POS, &o->n_g)) return bench_usage("-n wants 1 or more tokens");
            else if (!strcmp(a, "-r") && !bench_uint(v, 1, 1000, &o->reps)) return bench_usage("-r wants 1..1000");
            else if (!strcmp(a, "-b") && !bench_uint(v, 1, 4096, &o->batch)) return bench_usage("-b wants 1..4096");
            else if (!strcmp(a, "-np") && !bench_uint(v, 1, EDGE_MAX_SEQ, &o->np)) return bench_usage("-np wants 1..EDGE_MAX_SEQ sequences");
        } else { char w[160]; fmt_buf(w, sizeof w, "unknown option or missing value '%s'", a); return bench_usage(w); }
    }
    if (o->act_s && strcmp(o->act_s, "f32") && strcmp(o->act_s, "f16")) return bench_usage("--act is f32 or f16");
    if (o->kv_s && strcmp(o->kv_s, "f32") && strcmp(o->kv_s, "f16") && strcmp(o->kv_s, "q8_0")) return bench_usage("--cache-type is f32, f16 or q8_0");
    return EXIT_OK;
}

typedef struct BenchRun {       /* what the repetitions measured */
    f64  t_start, t_loaded, ttft;
    f64 *pp, *tg, *tgd, *ft, *gpu;   /* (reps) prefill, decode tok/s from an empty context and after the prompt, seconds to the
                                        first token; (n_g) a decode step's GPU ns */
    u32  n_gpu;
} BenchRun;

/* Greedy decode steps first .. n_g - 1 from tok as edge run does it (eng_decode: on a GPU, the next
   step queued before the host waits); their tok/s in tps. */
static bool bench_decode(Engine *g, u32 n_g, u32 first, i32 tok, f64 *tps, Err *e) {
    f64 t0 = now_sec();
    for (u32 s = first; s < n_g; s++)
        if (!eng_decode(g, tok, s + 1 < n_g, &tok, e)) return false;
    eng_decode_end(g);
    *tps = (n_g - first) / (now_sec() - t0);
    return true;
}

/* One repetition from an empty context: prefill the prompt, decode after it, then decode from an
   empty context (llama-bench's tg; with -p 0 the first is that already); r == 0 is the cold run. */
static bool bench_repetition(Engine *g, const BenchOpts *o, const i32 *prompt, u32 r, BenchRun *b, Err *e) {
    u32 nv = g->n_vocab;
    eng_reset(g);
    f64 t0 = now_sec();
    i32 tok = 1 % (i32)nv;
    if (o->n_p) {
        if (!eng_feed(g, prompt, o->n_p, 0, e)) return false;
        tok = eng_last_argmax(g);
    } else if (!eng_decode(g, tok, true, &tok, e)) return false;
    f64 t1 = now_sec();
    if (r == 0) b->ttft = t1 - b->t_start;
    f64 tgd, tg;
    if (!bench_decode(g, o->n_g, o->n_p ? 0 : 1, tok, &tgd, e)) return false;
    tg = tgd;
    if (o->n_p) {                        /* every one of the -n steps timed, as llama-bench's tgN */
        eng_reset(g);
        if (!bench_decode(g, o->n_g, 0, 1 % (i32)nv, &tg, e)) return false;
    }
    if (r > 0) { b->pp[r - 1] = o->n_p ? o->n_p / (t1 - t0) : 0; b->tg[r - 1] = tg; b->tgd[r - 1] = tgd; b->ft[r - 1] = t1 - t0; }
    return true;
}

/* One repetition of -np N: the prompt into each sequence, then -n batched steps of all of them. */
static bool bench_repetition_np(Engine *g, const BenchOpts *o, const i32 *prompt, u32 r, BenchRun *b, Err *e) {
    u32 n = o->np, seqs[EDGE_MAX_SEQ];
    i32 tok[EDGE_MAX_SEQ], ids[EDGE_MAX_SEQ];
    f64 t0 = now_sec();
    for (u32 s = 0; s < n; s++) {
        seqs[s] = s;
        eng_select(g, s);
        eng_reset(g);
        tok[s] = 1 % (i32)g->n_vocab;
        if (o->n_p) { if (!eng_feed(g, prompt, o->n_p, 0, e)) return false; tok[s] = eng_last_argmax(g); }
    }
    f64 t1 = now_sec();
    if (r == 0) b->ttft = t1 - b->t_start;
    for (u32 step = 0; step < o->n_g; step++) {
        if (!eng_step(g, n, seqs, tok, ids, 0, e)) return false;
        memcpy(tok, ids, n * sizeof(i32));
    }
    f64 t2 = now_sec();
    if (r > 0) { b->pp[r - 1] = o->n_p ? (f64)n * o->n_p / (t1 - t0) : 0; b->tg[r - 1] = b->tgd[r - 1] = (f64)n * o->n_g / (t2 - t1); b->ft[r - 1] = t1 - t0; }
    return true;
}

/* One more repetition, not counted: each decode step's GPU time read back after it (a query read per
   token would perturb the timed runs), to set against the wall time per token. */
static bool bench_gpu_steps(Engine *g, const BenchOpts *o, const i32 *prompt, BenchRun *b, Err *e) {
    eng_reset(g);
    eng_set_chain(g, false);
    i32 tok = 1 % (i32)g->n_vocab;
    if (o->n_p) {
        if (!eng_feed(g, prompt, o->n_p, 0, e)) return false;    /* (the timed repetitions fed the same prompt) */
        tok = eng_last_argmax(g);
    }
    for (u32 s = 0; s < o->n_g && eng_decode(g, tok, false, &tok, e); s++) b->gpu[b->n_gpu++] = eng_decode_gpu_ns(g);
    return true;
}

static void bench_report(const BenchOpts *o, const Model *m, const Engine *g, BenchRun *b) {
    u32 reps = o->reps;
    f64 pps[1000], tgs[1000], tds[1000];
    memcpy(pps, b->pp, reps * sizeof(f64)); memcpy(tgs, b->tg, reps * sizeof(f64)); memcpy(tds, b->tgd, reps * sizeof(f64));
    qsort(pps, reps, sizeof(f64), bench_cmp); qsort(tgs, reps, sizeof(f64), bench_cmp); qsort(tds, reps, sizeof(f64), bench_cmp);
    qsort(b->gpu, b->n_gpu, sizeof(f64), bench_cmp); qsort(b->ft, reps, sizeof(f64), bench_cmp);
    f64 pp_med = pps[reps / 2], tg_med = tgs[reps / 2], td_med = tds[reps / 2], ft_med = b->ft[reps / 2];
    /* a decode step's GPU time (median, timed alone) beside the wall time per token of the chained steps */
    f64 gpu_us = b->n_gpu ? b->gpu[b->n_gpu / 2] * 1e-3 : 0, wall_us = tg_med > 0 ? 1e6 / tg_med : 0;
    f64 step_ms = tg_med > 0 ? 1e3 * o->np / tg_med : 0;        /* a decode step of all -np sequences: each one's latency per token */
    /* weight bytes a decode token reads: every matrix once (the embedding table: one row) */
    EngInfo gi = eng_info(g);
    u32 nv = m->cfg.n_vocab;
    u64 wbytes = gi.weight_bytes - gi.embd_bytes / nv * (nv - 1);
    if (m->cfg.tied_output) wbytes += gi.embd_bytes - gi.embd_bytes / nv;
    f64 gbs = (f64)wbytes * tg_med / o->np / 1e9;          /* (weights once per step) */
    u64 dev_alloc = gi.alloc_bytes, plan = gi.plan_bytes, tensors = gi.weight_bytes + gi.state_bytes;
    const char *actn = gi.act == DT_F16 ? "f16" : "f32", *file = o->path ? o->path : "(embedded)";
    if (o->json) {
        out("{\"model\":\"%s\",\"file\":\"%s\",\"device\":\"%s\",\"act\":\"%s\",\"n_prompt\":%u,\"n_gen\":%u,\"reps\":%u,"
            "\"load_s\":%.4f,\"ttft_s\":%.4f,\"ttft_warm_s\":%.4f,\"pp_tps\":%.2f,\"pp_min\":%.2f,\"pp_max\":%.2f,\"tg_tps\":%.2f,\"tg_min\":%.2f,\"tg_max\":%.2f,"
            "\"tg_depth_tps\":%.2f,\"tg_depth_min\":%.2f,\"tg_depth_max\":%.2f,"
            "\"np\":%u,\"tg_step_ms\":%.4f,\"decode_gpu_us\":%.2f,\"decode_wall_us\":%.2f,\"dispatches_per_token\":%u,\"device_bytes\":%llu,\"plan_bytes\":%llu,\"tensor_bytes\":%llu,\"decode_weight_bytes\":%llu,\"decode_gbs\":%.2f}\n",
            m->cfg.name, file, gi.device, actn, o->n_p, o->n_g, reps, b->t_loaded - b->t_start, b->ttft, ft_med,
            pp_med, pps[0], pps[reps - 1], tg_med, tgs[0], tgs[reps - 1], td_med, tds[0], tds[reps - 1], o->np, step_ms, gpu_us, wall_us, gi.dispatches,
            (unsigned long long)dev_alloc, (unsigned long long)plan, (unsigned long long)tensors, (unsigned long long)wbytes, gbs);
        return;
    }
    out("model: %s (%s)  device: %s  activations: %s\n", m->cfg.name, o->path ? o->path : "embedded", gi.device, actn);
    out("load %.3f s   time to first token (cold) %.3f s", b->t_loaded - b->t_start, b->ttft);
    if (o->n_p && o->np > 1) out("   %u prompts of %u tokens (warm, median) %.1f ms\n", o->np, o->n_p, 1e3 * ft_med);
    else if (o->n_p) out("   at %u prompt tokens (warm, median) %.1f ms\n", o->n_p, 1e3 * ft_med);
    else out("\n");
    out("device memory: %llu bytes allocated, plan %llu, tensors %llu (alignment overhead %.3f%%)\n",
        (unsigned long long)dev_alloc, (unsigned long long)plan, (unsigned long long)tensors,
        plan ? 100.0 * (f64)(plan - tensors) / (f64)plan : 0.0);
    out("| %-24s | %-6s | %-12s | %14s | %19s |\n", "model", "act", "test", "t/s (median)", "min .. max");
    out("| %-24s | %-6s | %-12s | %14s | %19s |\n", "------------------------", "------", "------------", "--------------", "-------------------");
    char tn[32];
    if (o->n_p) { fmt_buf(tn, sizeof tn, "pp%u", o->n_p); out("| %-24s | %-6s | %-12s | %14.2f | %8.2f .. %8.2f |\n", m->cfg.name, actn, tn, pp_med, pps[0], pps[reps - 1]); }
    if (o->np > 1) fmt_buf(tn, sizeof tn, "tg%u x%u", o->n_g, o->np); else fmt_buf(tn, sizeof tn, "tg%u", o->n_g);
    out("| %-24s | %-6s | %-12s | %14.2f | %8.2f .. %8.2f |\n", m->cfg.name, actn, tn, tg_med, tgs[0], tgs[reps - 1]);
    if (o->n_p && o->np == 1) {
        fmt_buf(tn, sizeof tn, "tg%u @ d%u", o->n_g, o->n_p);
        out("| %-24s | %-6s | %-12s | %14.2f | %8.2f .. %8.2f |\n", m->cfg.name, actn, tn, td_med, tds[0], tds[reps - 1]);
    }
    if (o->np > 1) out("decode: %u sequences together, %.3f ms per step (each sequence's latency per token), %.1f GB/s of weights\n", o->np, step_ms, gbs);
    else out("decode: %u dispatches per token, %.1f MB of weights per token, %.1f GB/s effective\n", gi.dispatches, (f64)wbytes / 1e6, gbs);
    if (gpu_us > 0) out("decode step: %.1f us of GPU time (a step timed alone), %.1f us wall per token (greedy steps queued back to back)\n", gpu_us, wall_us);
}

static int bench_cmd(int argc, char **argv) {
    BenchOpts o;
    int prc = bench_parse(&o, argc, argv);
    if (prc) return prc < 0 ? EXIT_OK : prc;
    BenchRun b = { .t_start = now_sec() };
    Arena a; arena_init(&a, "bench", (u64)EDGE_HOST_ARENA_MIB << 20);
    Err e = {0};
    Model m;
    if (!model_open(&m, o.path, o.allow_unlisted, &a, &e)) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    u32 n_ctx = o.n_p + o.n_g;
    if (n_ctx > m.cfg.n_ctx) { errf("edge bench: -p %u + -n %u exceed the context of %u for '%s'\n", o.n_p, o.n_g, m.cfg.n_ctx, m.cfg.name); model_close(&m); arena_free(&a); return EXIT_USAGE; }
    /* the default path: f16 where the device has f16 arithmetic (eng_open's DT_COUNT) */
    DType act = !o.act_s ? DT_COUNT : !strcmp(o.act_s, "f16") ? DT_F16 : DT_F32;
    Engine g;
    u32 batch = o.batch ? o.batch : MAX(1, MIN(o.n_p, 512));
    DType kv = !o.kv_s ? DT_COUNT : !strcmp(o.kv_s, "f16") ? DT_F16 : !strcmp(o.kv_s, "q8_0") ? DT_Q8_0 : DT_F32;
    if (!eng_open_gen(&g, &m, ENG_GPU, n_ctx, act, kv, batch, true, o.np, &e)) { errf("edge: %s\n", e.msg); model_close(&m); arena_free(&a); return e.code; }
    b.t_loaded = now_sec();
    eng_time_decode(&g, true);          /* the GPU time of a decode step beside the wall time */
    i32 *prompt = push_array(&a, i32, o.n_p ? o.n_p : 1);
    u64 seed = 0x9e3779b97f4a7c15ull;
    for (u32 i = 0; i < o.n_p; i++) { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; prompt[i] = (i32)(seed % m.cfg.n_vocab); }
    if (o.n_p) prompt[0] = 1 % (i32)m.cfg.n_vocab;
    b.pp = push_array(&a, f64, o.reps); b.tg = push_array(&a, f64, o.reps); b.tgd = push_array(&a, f64, o.reps); b.ft = push_array(&a, f64, o.reps); b.gpu = push_array(&a, f64, o.n_g);
    bool ok = true;
    for (u32 r = 0; r <= o.reps && ok; r++) {           /* r == 0: the cold run, not counted */
        ok = o.np > 1 ? bench_repetition_np(&g, &o, prompt, r, &b, &e) : bench_repetition(&g, &o, prompt, r, &b, &e);
        if (!o.json && isatty(2)) errf("\redge bench: repetition %u/%u", r, o.reps);
    }
    if (ok && eng_info(&g).timestamps && o.np == 1) ok = bench_gpu_steps(&g, &o, prompt, &b, &e);
    if (!o.json && isatty(2)) errf("\n");
    if (ok) bench_report(&o, &m, &g, &b);
    else errf("edge: %s\n", e.msg);
    eng_close(&g);
    model_close(&m);
    arena_free(&a);
    return ok ? EXIT_OK : e.code;
}

#define BENCH_COMMANDS { "bench", bench_cmd, "speed of a model on this device: load, time to first token, prefill and decode tok/s" },
