/* fat.c — `edge fat`, the factory acceptance test (see fat.h and docs/fat.md): the report
   (result lines, JSON), identity, determinism and end to end, the memory test, throughput,
   the soak loop and the command line. Kernel and trap checks live in fat_kernels.c.

   Measured (lavapipe, 2 cores, --quick): about 30 s in all; see docs/fat.md. */
#include <time.h>
#include <setjmp.h>

static f64 fat_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (f64)t.tv_sec + (f64)t.tv_nsec * 1e-9; }

static const char *const fat_status_name[3] = { "PASS", "FAIL", "SKIP" };

/* ---- report -------------------------------------------------------------------------------- */
FatCheck *fat_check_begin(Fat *f, const char *name) {
    if (f->n_checks == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 128;
        f->checks = realloc(f->checks, f->cap * sizeof *f->checks);
        if (!f->checks) die(EXIT_DEVICE, "edge fat: out of host memory for %u check results", f->cap);
    }
    FatCheck *c = &f->checks[f->n_checks++];
    memset(c, 0, sizeof *c);
    fmt_buf(c->name, sizeof c->name, "%s", name);
    c->t0 = fat_now();
    c->rep = f->rep;
    f->open = f->n_checks;
    return c;
}

void fat_check_end(Fat *f, FatCheck *c, FatStatus st, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    fmt_vbuf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
    c->st = st;
    c->secs = fat_now() - c->t0;
    f->open = 0;
    if (st == FAT_FAIL) f->n_fail++;
    if (f->rep > 0 && st != FAT_FAIL) { f->n_checks--; return; }      /* soak: keep only failures after the first pass */
    if (f->rep > 0) out("%s  %s  [soak repetition %u] %s  %.2fs\n", fat_status_name[st], c->name, c->rep, c->detail, c->secs);
    else out("%s  %s  %s  %.2fs\n", fat_status_name[st], c->name, c->detail, c->secs);
}

void fat_num(FatCheck *c, const char *key, f64 v) {
    if (c->n_nums == ARRAY_COUNT(c->nums)) return;
    FatNum *n = &c->nums[c->n_nums++];
    fmt_buf(n->key, sizeof n->key, "%s", key);
    n->val = v;
}

bool fat_want(const Fat *f, const char *group) {
    if (!f->only) return true;
    u64 n = strlen(group);
    for (const char *p = f->only; *p;) {
        const char *e = strchr(p, ',');
        u64 len = e ? (u64)(e - p) : strlen(p);
        if (len == n && !strncmp(p, group, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

static void fat_json_str(FILE *fp, const char *s) {
    fout(fp, "\"");
    for (const u8 *p = (const u8 *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fout(fp, "\\%c", *p);
        else if (*p == '\n') fout(fp, "\\n");
        else if (*p == '\t') fout(fp, "\\t");
        else if (*p < 0x20) fout(fp, "\\u%04x", *p);
        else fout(fp, "%c", *p);
    }
    fout(fp, "\"");
}

static void fat_json_num(FILE *fp, f64 v) { if (isfinite(v)) fout(fp, "%.9g", v); else fout(fp, "null"); }

static bool fat_json_write(Fat *f, bool vk_up, const char *verdict, int code) {
    FILE *fp = fopen(f->json, "w");
    if (!fp) { errf("edge fat: cannot write '%s'\n", f->json); return false; }
    fout(fp, "{\n  \"edge\": "); fat_json_str(fp, EDGE_VERSION " (git " EDGE_GIT_HASH ")");
    fout(fp, ",\n  \"mode\": \"%s\",\n  \"soak_seconds\": ", f->full ? "full" : "quick"); fat_json_num(fp, f->soak_s);
    fout(fp, ",\n  \"device\": ");
    if (vk_up) {
        VkPhysicalDeviceProperties *p = &f->vk.props;
        fout(fp, "{ \"name\": "); fat_json_str(fp, p->deviceName);
        fout(fp, ", \"vendor_id\": %u, \"device_id\": %u, \"driver_name\": ", p->vendorID, p->deviceID); fat_json_str(fp, f->vk.driver_name);
        fout(fp, ", \"driver_info\": "); fat_json_str(fp, f->vk.driver_info);
        fout(fp, ", \"driver_version\": %u, \"vulkan\": \"%u.%u.%u\", \"f16\": %s, \"subgroup_size\": %u, \"max_storage_range\": %llu }",
             p->driverVersion, VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion),
             f->f16 ? "true" : "false", f->vk.caps.subgroup_size, (unsigned long long)f->vk.caps.max_storage_range);
    } else fout(fp, "null");
    fout(fp, ",\n  \"checks\": [\n");
    for (u32 i = 0; i < f->n_checks; i++) {
        FatCheck *c = &f->checks[i];
        fout(fp, "    { \"name\": "); fat_json_str(fp, c->name);
        fout(fp, ", \"status\": \"%s\", \"detail\": ", fat_status_name[c->st]); fat_json_str(fp, c->detail);
        fout(fp, ", \"seconds\": "); fat_json_num(fp, c->secs);
        fout(fp, ", \"repetition\": %u, \"numbers\": {", c->rep);
        for (u32 j = 0; j < c->n_nums; j++) { fout(fp, "%s", j ? ", " : " "); fat_json_str(fp, c->nums[j].key); fout(fp, ": "); fat_json_num(fp, c->nums[j].val); }
        fout(fp, "%s} }%s\n", c->n_nums ? " " : "", i + 1 < f->n_checks ? "," : "");
    }
    fout(fp, "  ],\n  \"failed\": %u,\n  \"verdict\": \"%s\",\n  \"exit_code\": %d\n}\n", f->n_fail, verdict, code);
    return fclose(fp) == 0;
}

/* ---- identity ------------------------------------------------------------------------------ */
/* Returns false when a feature edge needs is missing (the test cannot run: exit 11). */
static bool fat_identity(Fat *f) {
    FatCheck *c = fat_check_begin(f, "identity");
    Vk *vk = &f->vk;
    VkPhysicalDeviceProperties *p = &vk->props;
    VkCaps *k = &vk->caps;
    f->f16 = k->f16_arith && k->storage16;
    char miss[256] = ""; int ml = 0;
    u32 push = 0, inv = 0;
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
        const KernelInfo *ki = &kernel_table[i];
        push = MAX(push, ki->push_size);
        inv = MAX(inv, ki->wg[0] * ki->wg[1] * ki->wg[2]);
        for (int d = 0; d < 3; d++)
            if (ki->wg[d] > k->max_wg_size[d] && ml < 200) ml += fmt_buf(miss + ml, (int)sizeof miss - ml, "; kernel %s workgroup dim %d is %u > %u", ki->name, d, ki->wg[d], k->max_wg_size[d]);
    }
    if (push > k->max_push && ml < 200) ml += fmt_buf(miss + ml, (int)sizeof miss - ml, "; maxPushConstantsSize %u < %u", k->max_push, push);
    if (inv > k->max_wg_invocations && ml < 200) ml += fmt_buf(miss + ml, (int)sizeof miss - ml, "; maxComputeWorkGroupInvocations %u < %u", k->max_wg_invocations, inv);
    if (k->max_shared < 16384 && ml < 200) ml += fmt_buf(miss + ml, (int)sizeof miss - ml, "; maxComputeSharedMemorySize %u < 16384", k->max_shared);
    if (k->max_storage_range < (1u << 24) && ml < 200) ml += fmt_buf(miss + ml, (int)sizeof miss - ml, "; maxStorageBufferRange %llu < 16 MiB", (unsigned long long)k->max_storage_range);
    fat_num(c, "vendor_id", p->vendorID); fat_num(c, "device_id", p->deviceID); fat_num(c, "driver_version", p->driverVersion);
    fat_num(c, "f16", f->f16); fat_num(c, "subgroup_size", k->subgroup_size); fat_num(c, "max_storage_range", (f64)k->max_storage_range);
    char id[200];
    fmt_buf(id, sizeof id, "%s [%04x:%04x] driver %s %s (0x%x), Vulkan %u.%u.%u, f16 %s, subgroup %u",
            p->deviceName, p->vendorID, p->deviceID, vk->driver_name[0] ? vk->driver_name : "?", vk->driver_info, p->driverVersion,
            VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion),
            f->f16 ? "yes" : "no (f32 kernels only)", k->subgroup_size);
    if (ml) { fat_check_end(f, c, FAT_FAIL, "%s: missing what edge needs%s", id, miss); return false; }
    fat_check_end(f, c, FAT_PASS, "%s", id);
    return true;
}

/* ---- determinism and end to end ---------------------------------------------------------------- */
#define FAT_TOKENS 64
#define FAT_RUNS   5

static bool fat_greedy(Engine *g, i32 *toks, f64 *secs, Err *e) {
    eng_reset(g);
    i32 tok = 1;                                  /* BOS */
    f64 t0 = fat_now();
    for (u32 s = 0; s < FAT_TOKENS; s++) {
        if (!eng_step_argmax(g, tok, &toks[s], e)) return false;
        tok = toks[s];
    }
    *secs = fat_now() - t0;
    return true;
}

static void fat_determinism(Fat *f) {
    FatCheck *c = fat_check_begin(f, "determinism");
    Arena ha; arena_init(&ha, "fat model", (u64)EDGE_HOST_ARENA_MIB << 20);
    Err e = {0};
    Model m; Engine g;
    i32 ref[FAT_TOKENS], run[FAT_RUNS][FAT_TOKENS];
    f64 secs, best = 1e30;
    if (!model_open(&m, NULL, false, &ha, &e)) { fat_check_end(f, c, FAT_FAIL, "embedded model: %s", e.msg); arena_free(&ha); return; }
    if (f->have_ref) memcpy(ref, f->ref_tokens, sizeof ref);      /* soak: the reference ran once */
    else {
        if (!eng_open(&g, &m, ENG_REF, FAT_TOKENS + 1, DT_F32, &e) || !fat_greedy(&g, ref, &secs, &e)) {
            eng_close(&g); fat_check_end(f, c, FAT_FAIL, "reference backend: %s", e.msg); goto done;
        }
        eng_close(&g);
        memcpy(f->ref_tokens, ref, sizeof ref); f->have_ref = true;
    }
    if (!eng_open(&g, &m, ENG_GPU, FAT_TOKENS + 1, DT_F32, &e)) { fat_check_end(f, c, FAT_FAIL, "GPU backend: %s", e.msg); goto done; }
    for (u32 r = 0; r < FAT_RUNS; r++) {
        if (!fat_greedy(&g, run[r], &secs, &e)) { eng_close(&g); fat_check_end(f, c, FAT_FAIL, "GPU run %u: %s", r + 1, e.msg); goto done; }
        best = MIN(best, secs);
        if (f->nondet && r == 2) run[r][9] ^= 1;  /* fault injector: run 3 differs at its 10th token */
    }
    eng_close(&g);
    i32 bad_run = -1, bad_at = -1, ref_at = -1;
    for (u32 r = 1; r < FAT_RUNS && bad_run < 0; r++)
        for (u32 s = 0; s < FAT_TOKENS; s++) if (run[r][s] != run[0][s]) { bad_run = (i32)r; bad_at = (i32)s; break; }
    for (u32 s = 0; s < FAT_TOKENS; s++) if (run[0][s] != ref[s]) { ref_at = (i32)s; break; }
    i32 drift_at = -1;
    if (f->rep == 0) memcpy(f->tokens0, run[0], sizeof f->tokens0);
    else for (u32 s = 0; s < FAT_TOKENS; s++) if (run[0][s] != f->tokens0[s]) { drift_at = (i32)s; break; }
    f64 tps = FAT_TOKENS / best;
    fat_num(c, "runs", FAT_RUNS); fat_num(c, "tokens", FAT_TOKENS); fat_num(c, "differing_run", bad_run >= 0 ? bad_run + 1 : 0);
    fat_num(c, "first_ref_mismatch", ref_at); fat_num(c, "decode_tps", tps);
    if (bad_run >= 0)
        fat_check_end(f, c, FAT_FAIL, "GPU run %d differs from run 1 at token %d (%d vs %d): nondeterministic", bad_run + 1, bad_at + 1, run[bad_run][bad_at], run[0][bad_at]);
    else if (ref_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "GPU tokens differ from the reference at token %d (%d vs %d)", ref_at + 1, run[0][ref_at], ref[ref_at]);
    else if (drift_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "tokens differ from soak repetition 0 at token %d (drift)", drift_at + 1);
    else fat_check_end(f, c, FAT_PASS, "stories260K, greedy, %d tokens x %d GPU runs identical and equal to the reference", FAT_TOKENS, FAT_RUNS);
    if (f->rep == 0 && fat_want(f, "throughput")) {
        FatCheck *t = fat_check_begin(f, "throughput.decode");
        fat_num(t, "tokens_per_s", tps); fat_num(t, "floor", EDGE_FAT_MIN_DECODE_TPS);
        fat_check_end(f, t, tps >= EDGE_FAT_MIN_DECODE_TPS ? FAT_PASS : FAT_FAIL, "%.1f tokens/s (stories260K, best of %d runs), floor %.1f (EDGE_FAT_MIN_DECODE_TPS)",
                      tps, FAT_RUNS, (f64)EDGE_FAT_MIN_DECODE_TPS);
    }
done:
    model_close(&m);
    arena_free(&ha);
}

/* ---- memory ---------------------------------------------------------------------------------- */
/* Device bytes of the largest shipped config: weights (at EDGE_FAT_WEIGHT_MILLIBITS per
   weight, untied head counted) + f16 KV cache for its context (capped at EDGE_MAX_CTX) +
   activations for a 64-token batch. 64-bit arithmetic: gigabytes. */
static u64 fat_config_bytes(const ModelEntry *m) {
    u64 qd = (u64)m->n_head * m->head_dim, kvd = (u64)m->n_head_kv * m->head_dim, ctx = MIN(m->ctx, EDGE_MAX_CTX), tm = 64;
    u64 params = 2 * (u64)m->n_vocab * m->n_embd + (u64)m->n_layer * (2 * m->n_embd * qd + 2 * m->n_embd * kvd + 3 * (u64)m->n_embd * m->n_ff);
    u64 w = params * EDGE_FAT_WEIGHT_MILLIBITS / 8000;
    u64 kv = 2 * (u64)m->n_layer * kvd * ctx * 2;
    u64 act = ((u64)m->n_vocab * 2 + ctx * m->n_head + 6 * (u64)m->n_embd + 3 * (u64)m->n_ff + 4 * qd) * tm * 4;
    return w + kv + act;
}

static void fat_memory(Fat *f) {
    FatCheck *c = fat_check_begin(f, "memory");
    Vk *vk = &f->vk;
    const ModelEntry *big = &model_table[0];
    for (u32 i = 0; i < MODEL_COUNT; i++) if (fat_config_bytes(&model_table[i]) > fat_config_bytes(big)) big = &model_table[i];
    u64 bytes = fat_config_bytes(big);
    char why[160];
    fmt_buf(why, sizeof why, "the arena of %s", big->name);
    bool cpu = vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (f->mem_mib) { bytes = f->mem_mib << 20; fmt_buf(why, sizeof why, "--mem %llu", (unsigned long long)f->mem_mib); }
    else if (cpu && !f->full) { bytes = (u64)EDGE_FAT_MEM_CPU_QUICK_MIB << 20; fmt_buf(why, sizeof why, "software device in --quick: %d MiB default instead of the %llu MiB arena of %s (--full or --mem for more)", EDGE_FAT_MEM_CPU_QUICK_MIB, (unsigned long long)(fat_config_bytes(big) >> 20), big->name); }
    else {
        u64 heap = 0;
        for (u32 i = 0; i < vk->mem.memoryHeapCount; i++) if (vk->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) heap = MAX(heap, vk->mem.memoryHeaps[i].size);
        if (heap && bytes > heap / 4 * 3) { bytes = heap / 4 * 3; fmt_buf(why, sizeof why, "3/4 of the %llu MiB device heap (the arena of %s is larger)", (unsigned long long)(heap >> 20), big->name); }
    }
    bytes = bytes / 256 * 256;
    i32 kw = vk_kernel_find("memtest_write"), kv = vk_kernel_find("memtest_verify");
    if (kw < 0 || kv < 0) { fat_check_end(f, c, FAT_FAIL, "kernels/memtest.wgsl is not embedded"); return; }
    DevArena a, ea; Err e;
    if (!vk_arena_init(vk, &a, "fat memory", bytes, &e)) { fat_check_end(f, c, FAT_FAIL, "%s", e.msg); return; }
    if (!vk_arena_init(vk, &ea, "fat memory errors", 256, &e)) { vk_arena_free(&a); fat_check_end(f, c, FAT_FAIL, "%s", e.msg); return; }
    u64 ne[1] = { 2 };
    Tensor te = vk_tensor(&ea, "memtest errors", DT_U32, 1, ne);
    VkPipe *pw = vk_pipeline(vk, kw), *pv = vk_pipeline(vk, kv);
    u64 chunk = MIN(vk->caps.max_storage_range, (u64)64 << 20) / 256 * 256;
    u32 n_pat = f->full ? 6 : 3, passes = f->full ? 2 : 1;
    u64 errors = 0; u32 first = ~0u;
    const char *pname[6] = { "address", "walking-ones", "random", "~address", "~walking-ones", "~random" };
    char failed[128] = ""; int fl = 0;
    for (u32 pass = 0; pass < passes; pass++) for (u32 pat = 0; pat < n_pat; pat++) {
        u32 zero[2] = { 0, ~0u };
        vk_upload(vk, &te, zero);
        for (int verify = 0; verify < 2; verify++) {
            vk_begin(vk);
            u64 word = 0;
            for (u32 b = 0; b < a.n_blocks; b++) for (u64 off = 0; off < a.blocks[b].size; off += chunk) {
                u64 nb = MIN(chunk, a.blocks[b].size - off) / 4 * 4;
                Tensor v = { .name = "memtest window", .dtype = DT_U32, .ndim = 1, .ne = { nb / 4, 1, 1, 1 }, .nelem = nb / 4,
                             .nbytes = nb, .arena = &a, .block = b, .offset = off };
                struct { u32 n, base, pattern, seed; } push = { (u32)(nb / 4), (u32)word, pat, 0x5eed0000u + pass };
                const Tensor *ts[2] = { &v, &te };
                u32 groups = (u32)MIN((nb / 4 + 255) / 256, 4096);
                vk_dispatch(vk, verify ? pv : pw, ts, verify ? 2 : 1, &push, sizeof push, groups, 1, 1);
                word += nb / 4;
            }
            vk_submit_wait(vk);       /* the whole arena is written before any of it is verified */
        }
        u32 got[2]; vk_download(vk, &te, got);
        if (got[0] && fl < 100) fl += fmt_buf(failed + fl, (int)sizeof failed - fl, " %s:%u", pname[pat], got[0]);
        errors += got[0]; first = MIN(first, got[1]);
    }
    vk_arena_free(&ea); vk_arena_free(&a);
    fat_num(c, "bytes", (f64)bytes); fat_num(c, "patterns", n_pat); fat_num(c, "passes", passes); fat_num(c, "errors", (f64)errors);
    if (errors) fat_check_end(f, c, FAT_FAIL, "%llu bad words over %llu MiB (first at byte %llu):%s", (unsigned long long)errors,
                              (unsigned long long)(bytes >> 20), (unsigned long long)first * 4, failed);
    else fat_check_end(f, c, FAT_PASS, "%llu MiB (%s), %u patterns x %u passes, 0 errors", (unsigned long long)(bytes >> 20), why, n_pat, passes);
}

/* ---- matvec bandwidth -------------------------------------------------------------------------- */
static void fat_bandwidth(Fat *f) {
    FatCheck *c = fat_check_begin(f, "throughput.matvec");
    Vk *vk = &f->vk;
    const ModelEntry *big = &model_table[0];          /* the largest FFN matrix; --full: the largest vocabulary projection */
    u64 M = 0, K = 0;
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *m = &model_table[i];
        u64 mm = f->full ? m->n_vocab : m->n_ff, kk = m->n_embd;
        if (mm * kk > M * K && kk % 32 == 0) { M = mm; K = kk; big = m; }
    }
    DType wt = DT_Q8_0;
    i32 di = kdef_find(OP_MATMUL, PH_DECODE, wt, DT_F32, DT_F32);
    DevArena a; Err e;
    u64 wb = dtype_bytes(wt, M * K);
    if (di < 0 || !vk_arena_init(vk, &a, "fat bandwidth", wb + K * 4 + M * 4 + 1024, &e)) { fat_check_end(f, c, FAT_FAIL, "%s", di < 0 ? "no q8_0 matvec kernel" : e.msg); return; }
    u64 nw[2] = { K, M }, nx[1] = { K }, ny[1] = { M };
    Tensor tw = vk_tensor(&a, "W", wt, 2, nw), tx = vk_tensor(&a, "x", DT_F32, 1, nx), ty = vk_tensor(&a, "y", DT_F32, 1, ny);
    u8 *w = malloc(wb); f32 *x = malloc(K * 4);
    fat_seed(99); fat_weights(wt, M, K, w);
    for (u64 i = 0; i < K; i++) x[i] = fat_normal();
    vk_upload(vk, &tw, w); vk_upload(vk, &tx, x);
    free(w); free(x);
    vk_begin(vk); op_matmul(vk, PH_DECODE, &tw, &tx, &ty); vk_submit_wait(vk);      /* warm-up */
    f64 best = 1e30, t_end = fat_now() + 0.5;
    u32 reps = 0;
    while (reps < 3 || (fat_now() < t_end && reps < 50)) {
        f64 t0 = fat_now();
        vk_begin(vk); op_matmul(vk, PH_DECODE, &tw, &tx, &ty); vk_submit_wait(vk);
        best = MIN(best, fat_now() - t0); reps++;
    }
    vk_arena_free(&a);
    f64 gbps = (f64)(wb + K * 4 + M * 4) / best / 1e9;
    fat_num(c, "gb_per_s", gbps); fat_num(c, "floor", EDGE_FAT_MIN_MATVEC_GBPS); fat_num(c, "rows", (f64)M); fat_num(c, "cols", (f64)K);
    fat_check_end(f, c, gbps >= EDGE_FAT_MIN_MATVEC_GBPS ? FAT_PASS : FAT_FAIL, "%.2f GB/s (%s q8_0 %llux%llu, best of %u), floor %.2f (EDGE_FAT_MIN_MATVEC_GBPS)",
                  gbps, big->name, (unsigned long long)M, (unsigned long long)K, reps, (f64)EDGE_FAT_MIN_MATVEC_GBPS);
}

/* ---- the run ------------------------------------------------------------------------------------ */
/* Runs fn with die() trapped: a device error (fence timeout, lost device, allocation failure
   inside an op) fails the check that was running, names it, and ends the device checks (the
   device may be hung: it is not shut down). */
static bool fat_guard(Fat *f, void (*fn)(Fat *)) {
    jmp_buf jb;
    die_trap = &jb;
    if (setjmp(jb) == 0) { fn(f); die_trap = 0; return true; }
    die_trap = 0;
    f->vk.recording = false;
    FatCheck *c = f->open ? &f->checks[f->open - 1] : fat_check_begin(f, "device");
    fat_check_end(f, c, FAT_FAIL, "device error: %s (the remaining checks did not run)", die_trap_msg);
    f->broken = true;
    return false;
}

static void fat_device_checks(Fat *f) {
    if (fat_want(f, "kernels") || f->only) fat_kernel_checks(f);
    if (f->rep == 0 && fat_want(f, "traps")) fat_trap_checks(f);
    if (f->rep == 0 && fat_want(f, "memory")) fat_memory(f);
    if (f->rep == 0 && fat_want(f, "throughput")) fat_bandwidth(f);
}

/* One repetition: device checks on f->vk, then the model runs (the engine opens its own device). */
static void fat_repetition(Fat *f) {
    if (f->rep > 0) {
        Err e;
        if (!vk_init(&f->vk, &e)) {
            FatCheck *c = fat_check_begin(f, "identity");
            fat_check_end(f, c, FAT_FAIL, "device lost during the soak: %s", e.msg);
            f->broken = true;
            return;
        }
    }
    if (!fat_guard(f, fat_device_checks)) return;
    vk_shutdown(&f->vk);
    if (fat_want(f, "determinism") || (f->rep == 0 && fat_want(f, "throughput"))) fat_guard(f, fat_determinism);
}

static int fat_usage(const char *why) {
    errf("edge fat: %s\n"
         "usage: edge fat [--quick | --full] [--soak SECONDS] [--json FILE] [--mem MiB]\n"
         "  --quick        the default: every kernel variant, traps, determinism, a memory pass, throughput (< 60 s on lavapipe)\n"
         "  --full         every shipped shape, 6 memory patterns x 2 passes over the whole arena\n"
         "  --soak S       repeat the kernel and determinism checks for S seconds; any drift fails\n"
         "  --json FILE    write the report (device, versions, every check with its numbers, verdict)\n"
         "  --mem MiB      memory test size instead of the largest shipped config's arena\n"
         "  --only LIST    developer option: only these groups (kernels traps determinism memory throughput) or kernel names\n"
         "exit codes: 0 all checks passed, 10 a check failed, 11 the test could not run\n", why);
    return EXIT_USAGE;
}

static int fat_cmd(int argc, char **argv) {
    static Fat fs;
    Fat *f = &fs;
    memset(f, 0, sizeof *f);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) f->full = false;
        else if (!strcmp(a, "--full")) f->full = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fat_usage("help"); return EXIT_OK; }
        else if (!strcmp(a, "--soak") || !strcmp(a, "--json") || !strcmp(a, "--mem") || !strcmp(a, "--only")) {
            if (i + 1 >= argc) { char w[64]; fmt_buf(w, sizeof w, "%s needs a value", a); return fat_usage(w); }
            const char *v = argv[++i];
            char *end;
            if (!strcmp(a, "--json")) f->json = v;
            else if (!strcmp(a, "--only")) f->only = v;
            else if (!strcmp(a, "--soak")) { f->soak_s = strtod(v, &end); if (*end || !(f->soak_s >= 0) || f->soak_s > 1e7) return fat_usage("--soak wants seconds"); }
            else { long long m = strtoll(v, &end, 10); if (*end || m <= 0 || m > (1ll << 24)) return fat_usage("--mem wants MiB > 0"); f->mem_mib = (u64)m; }
        } else { char w[160]; fmt_buf(w, sizeof w, "unknown option '%s'", a); return fat_usage(w); }
    }
    const char *pe = getenv("EDGE_FAT_PERTURB"), *nd = getenv("EDGE_FAT_NONDET");
    f->perturb = pe && *pe ? pe : NULL;
    f->nondet = nd && *nd && strcmp(nd, "0");
    f64 t0 = fat_now();
    out("edge fat %s (git %s): %s%s%s\n", EDGE_VERSION, EDGE_GIT_HASH, f->full ? "--full" : "--quick",
        f->perturb ? " [EDGE_FAT_PERTURB set: testing aid]" : "", f->nondet ? " [EDGE_FAT_NONDET set: testing aid]" : "");
    Err e;
    int code;
    if (!vk_init(&f->vk, &e)) {
        FatCheck *c = fat_check_begin(f, "identity");
        fat_check_end(f, c, FAT_FAIL, "cannot run: %s", e.msg);
        code = FAT_EXIT_CANNOT_RUN;
        out("RESULT  could not run (exit %d)\n", code);
        if (f->json) fat_json_write(f, false, "could not run", code);
        free(f->checks);
        return code;
    }
    if (!fat_identity(f)) {
        code = FAT_EXIT_CANNOT_RUN;
        out("RESULT  could not run: a required feature is missing (exit %d)\n", code);
        if (f->json) fat_json_write(f, true, "could not run", code);
        vk_shutdown(&f->vk); free(f->checks);
        return code;
    }
    Vk ident = f->vk;           /* device identity for the JSON report (handles are gone after shutdown) */
    fat_repetition(f);
    if (f->soak_s > 0 && !f->broken) {
        u32 fail0 = f->n_fail;
        f64 start = fat_now(), end = start + f->soak_s;
        u32 ok_rep = 0;
        for (f->rep = 1; fat_now() < end && !f->broken; f->rep++) {
            fat_repetition(f);
            ok_rep += !f->broken;
        }
        f->rep = 0;
        u32 drift = f->n_fail - fail0;
        FatCheck *c = fat_check_begin(f, "soak");     /* begun after the loop: the results array may move during it */
        c->t0 = start;
        fat_num(c, "repetitions", ok_rep); fat_num(c, "failures", drift);
        fat_check_end(f, c, drift ? FAT_FAIL : FAT_PASS, "%u repetitions of the kernel and determinism checks in %.0f s, %u failed or drifted",
                      ok_rep, f->soak_s, drift);
    }
    const char *val = getenv("EDGE_VALIDATION");
    if (val && *val && strcmp(val, "0")) {              /* under the Khronos layer: its errors fail the run */
        FatCheck *c = fat_check_begin(f, "validation");
        fat_num(c, "errors", vk_validation_errors());
        fat_check_end(f, c, vk_validation_errors() ? FAT_FAIL : FAT_PASS, "%u errors from VK_LAYER_KHRONOS_validation", vk_validation_errors());
    }
    f->vk = ident;
    code = f->n_fail ? FAT_EXIT_FAILED : EXIT_OK;
    u32 np = 0, ns = 0;
    for (u32 i = 0; i < f->n_checks; i++) { np += f->checks[i].st == FAT_PASS; ns += f->checks[i].st == FAT_SKIP; }
    out("RESULT  %s: %u passed, %u failed, %u skipped in %.1f s (exit %d)\n", code ? "FAIL" : "PASS", np, f->n_fail, ns, fat_now() - t0, code);
    if (f->json && !fat_json_write(f, true, code ? "fail" : "pass", code)) code = FAT_EXIT_CANNOT_RUN;
    free(f->checks);
    return code;
}

#define FAT_COMMANDS { "fat", fat_cmd, "factory acceptance test: prove this board's GPU computes correctly (docs/fat.md)" },
