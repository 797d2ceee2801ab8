/* fat.c — `edge fat`, the factory acceptance test (see fat.h and docs/fat.md): the report
   (result lines, JSON), identity, the floors, end to end on the default path (the embedded model;
   -m FILE: model_path, that file's own path), determinism, the memory test, throughput, the soak
   loop and the command line. Kernel and trap checks live in fat_kernels.c.

   Measured (lavapipe, 2 cores, --quick): 16-20 s in all, idle; see docs/fat.md. */
#include <time.h>
#include <setjmp.h>
#include <errno.h>

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
        if (op_kernel_optional(ki->name)) continue;      /* (attn_short's 512 invocations: else the split and merge) */
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

/* ---- floors ------------------------------------------------------------------------------------ */
/* --floors FILE: `KEY VALUE` lines (decode_tps, matvec_gbps), `#` comments and blank lines. An
   unknown key, a value that is not a number >= 0, a key given twice: false, naming the file, the
   line and the value (edge fat exits 11: it could not run). */
static bool fat_floors_line(Fat *f, const char *path, u32 ln, char *line, Err *e) {
    char *h = strchr(line, '#');
    if (h) *h = 0;
    char key[64], val[64], extra[8];
    int n = sscanf(line, "%63s %63s %7s", key, val, extra);
    if (n <= 0) return true;
    line[strcspn(line, "\r\n")] = 0;
    if (n != 2) return err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s' line %u: '%s': want KEY VALUE (decode_tps N, matvec_gbps N)", path, ln, line);
    FatFloor *fl = !strcmp(key, "decode_tps") ? &f->floor_tps : !strcmp(key, "matvec_gbps") ? &f->floor_gbps : NULL;
    if (!fl) return err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s' line %u: unknown key '%s' (known: decode_tps matvec_gbps)", path, ln, key);
    char *end;
    f64 v = strtod(val, &end);
    if (*end || end == val || !isfinite(v) || v < 0)
        return err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s' line %u: %s '%s' is not a number >= 0", path, ln, key, val);
    if (fl->set) return err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s' line %u: %s is given twice (%s)", path, ln, key, fl->from);
    fl->val = v; fl->set = true;
    fmt_buf(fl->from, sizeof fl->from, "--floors %s line %u", path, ln);
    return true;
}

static bool fat_floors_read(Fat *f, const char *path, Err *e) {
    FILE *fp = fopen(path, "r");
    if (!fp) return err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s': cannot open: %s", path, strerror(errno));
    char line[256];
    bool ok = true;
    for (u32 ln = 1; ok && fgets(line, sizeof line, fp); ln++) {
        if (!strchr(line, '\n') && !feof(fp)) ok = err_set(e, FAT_EXIT_CANNOT_RUN, "--floors '%s' line %u: longer than %d characters", path, ln, (int)sizeof line - 2);
        else ok = fat_floors_line(f, path, ln, line, e);
    }
    fclose(fp);
    return ok;
}

/* The floors of this device's class (VkPhysicalDeviceType), for those --floors did not set. */
#define FAT_CLASS(name, tps, gbps) { name, tps, gbps, #tps, #gbps }
static const struct { const char *name; f64 tps, gbps; const char *tps_knob, *gbps_knob; } fat_classes[3] = {
    FAT_CLASS("CPU or other", EDGE_FAT_FLOOR_DECODE_TPS_CPU,        EDGE_FAT_FLOOR_MATVEC_GBPS_CPU),
    FAT_CLASS("integrated GPU", EDGE_FAT_FLOOR_DECODE_TPS_INTEGRATED, EDGE_FAT_FLOOR_MATVEC_GBPS_INTEGRATED),
    FAT_CLASS("discrete GPU", EDGE_FAT_FLOOR_DECODE_TPS_DISCRETE,   EDGE_FAT_FLOOR_MATVEC_GBPS_DISCRETE),
};

static void fat_floors_default(Fat *f) {
    VkPhysicalDeviceType t = f->vk.props.deviceType;
    u32 i = t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 2 : t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1 : 0;
    if (!f->floor_tps.set) {
        f->floor_tps.val = fat_classes[i].tps;
        fmt_buf(f->floor_tps.from, sizeof f->floor_tps.from, "class default, %s: %s", fat_classes[i].name, fat_classes[i].tps_knob);
    }
    if (!f->floor_gbps.set) {
        f->floor_gbps.val = fat_classes[i].gbps;
        fmt_buf(f->floor_gbps.from, sizeof f->floor_gbps.from, "class default, %s: %s", fat_classes[i].name, fat_classes[i].gbps_knob);
    }
}

/* ---- determinism and end to end ---------------------------------------------------------------- */
#define FAT_TOKENS 64
#define FAT_RUNS   5

static bool fat_greedy(Engine *g, i32 *toks, f64 *secs, Err *e) {
    eng_reset(g);
    eng_set_chain(g, false);                      /* one step per command buffer */
    i32 tok = 1;                                  /* BOS */
    f64 t0 = fat_now();
    for (u32 s = 0; s < FAT_TOKENS; s++) {
        if (!eng_decode(g, tok, true, &toks[s], e)) return false;
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
    fat_num(c, "runs", FAT_RUNS); fat_num(c, "tokens", FAT_TOKENS); fat_num(c, "differing_run", bad_run >= 0 ? bad_run + 1 : 0);
    fat_num(c, "first_ref_mismatch", ref_at); fat_num(c, "decode_tps", FAT_TOKENS / best);
    if (bad_run >= 0)
        fat_check_end(f, c, FAT_FAIL, "GPU run %d differs from run 1 at token %d (%d vs %d): nondeterministic", bad_run + 1, bad_at + 1, run[bad_run][bad_at], run[0][bad_at]);
    else if (ref_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "GPU tokens differ from the reference at token %d (%d vs %d)", ref_at + 1, run[0][ref_at], ref[ref_at]);
    else if (drift_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "tokens differ from soak repetition 0 at token %d (drift)", drift_at + 1);
    else fat_check_end(f, c, FAT_PASS, "stories260K, f32 activations one step at a time, greedy, %d tokens x %d GPU runs identical and equal to the reference", FAT_TOKENS, FAT_RUNS);
done:
    model_close(&m);
    arena_free(&ha);
}

/* ---- end to end on the default path ------------------------------------------------------------ */
/* The path `edge run` takes on this device (cli/run.c): activations DT_COUNT (f16 where the device has
   shaderFloat16), the context run would give the model, the prompt in prefill batches, then chained
   greedy decode (eng_decode). Tolerances (docs/fat.md): f16 activations |got - want| <= 0.5% of the
   row's largest |logit| (measured on the fixtures: <= 0.24%), f32 activations 1e-3 absolute. Two
   subjects share it: end_to_end (the embedded model, a 36-token text prompt, 64 tokens, every greedy
   id equal to the reference's) and model_path (the -m file, FAT_M_PROMPT token ids, FAT_M_STEPS tokens;
   the reference follows the GPU's tokens and each GPU id must be its argmax or within 2x the tolerance
   of it: a real file's top logits may tie within the tolerance, and then its greedy ids may differ). */
#define FAT_E2E_RUNS    3
#define FAT_E2E_TOL_F16 5e-3
#define FAT_E2E_TOL_F32 1e-3
#define FAT_M_PROMPT    8
#define FAT_M_STEPS     8
static const char fat_e2e_text[] = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends.";

/* The f16 path's rounding accumulates layer by layer like a random walk: the bound measured on the
   5-layer embedded model and the fixtures scaled by sqrt(n_layer / 5) for deeper files (measured on
   an H100 with 8-token prompts of 16-28-layer gen-model files: 0.52-0.64% of the row's largest |logit|,
   under the 0.89-1.18% this gives). The f32 path's bound does not grow measurably with depth. */
static f64 fat_e2e_tol(const Model *m, bool f16) {
    return f16 ? FAT_E2E_TOL_F16 * MAX(1.0, sqrt(m->cfg.n_layer / 5.0)) : FAT_E2E_TOL_F32;
}
/* Where the prompt's products ran on int8 activations (matmul_q: a device with integer dot products and
   no matrix units), the f16 bound's rule with the int8 class's base (test/fixtures.c TOL_GPU_I8_REL:
   the fixtures measured 2.2-4.1% of the row's largest |logit|). */
#define FAT_E2E_TOL_I8  5e-2
static f64 fat_e2e_tol_i8(const Model *m) { return FAT_E2E_TOL_I8 * MAX(1.0, sqrt(m->cfg.n_layer / 5.0)); }

typedef struct FatE2eSpec {
    const char *label;          /* the model as the check's detail names it */
    const Model *m;
    FatE2e     *st;
    bool        follow;         /* greedy ids checked on the GPU's own tokens (fat_e2e_follow), not equal to the reference's */
} FatE2eSpec;

typedef struct FatE2eOut {
    i32  toks[FAT_E2E_RUNS][FAT_TOKENS];
    bool f16, i8;           /* i8: the prompt ran on matmul_q (int8 activations) */
    f64  tol;               /* the path's tolerance (fat_e2e_tol, fat_e2e_tol_i8) */
    f64  worst, err;        /* worst |got - want| / tolerance, and its error (relative for f16) */
    u32  run, row, col;     /* where */
    f64  best_s;            /* fastest decode of n_steps - 1 chained steps */
    u32  hits;              /* dispatches the EDGE_FAT_PERTURB hook perturbed */
    i32  ref_at;            /* follow: the first GPU id too far below the reference's argmax (-1: none) */
    f64  gap;               /* follow: worst (argmax logit - the GPU id's logit) / (2x tolerance) */
    u32  exact;             /* follow: GPU ids that are the reference's argmax */
} FatE2eOut;

/* The reference backend's progress on a terminal (a large -m file takes minutes on a board's CPU). */
static void fat_ref_progress(const char *label, const char *what, u32 i, u32 n) {
    if (!isatty(2)) return;
    if (n) errf("\redge fat: %s: the reference backend (CPU), %s %u of %u   ", label, what, i, n);
    else errf("\r%100s\r", "");
}

/* The reference backend on the prompt: every prompt row's logits, then (greedy) r->n_steps greedy ids.
   Without greedy (model_path) its engine is kept after the prompt for fat_e2e_follow (st->keep). */
static bool fat_e2e_reference(FatE2e *st, const char *label, const Model *m, bool greedy, Err *e) {
    FatE2eRef *r = &st->ref;
    u32 nv = m->cfg.n_vocab;
    Engine *g = calloc(1, sizeof *g);
    if (!eng_open(g, m, ENG_REF, r->n_prompt + r->n_steps, DT_F32, e)) { free(g); return false; }
    r->logits = malloc((u64)r->n_prompt * nv * sizeof(f32));
    fat_ref_progress(label, "the prompt's tokens", r->n_prompt, r->n_prompt);
    bool ok = eng_feed(g, r->prompt, r->n_prompt, r->logits, e);
    r->tokens[0] = (i32)ref_argmax(eng_last_logits(g), nv);
    for (u32 s = 1; ok && greedy && s < r->n_steps; s++) ok = eng_decode(g, r->tokens[s - 1], true, &r->tokens[s], e);
    fat_ref_progress(label, "", 0, 0);
    if (ok && !greedy) { st->keep = g; return true; }
    eng_close(g); free(g);
    if (!ok) { free(r->logits); r->logits = NULL; }
    return ok;
}
static void fat_e2e_free(FatE2e *st) {
    free(st->ref.logits); st->ref.logits = NULL;
    if (st->keep) { eng_close(st->keep); free(st->keep); st->keep = NULL; }
}

/* end_to_end's prompt: BOS and the story text through the embedded model's tokenizer. */
static bool fat_e2e_text_prompt(FatE2eRef *r, const Model *m, Arena *ha, Err *e) {
    Tokenizer *tok;
    if (!tok_load(&tok, &m->gguf, ha, e)) return false;
    r->n_prompt = tok_encode(tok, fat_e2e_text, sizeof fat_e2e_text - 1, true, false, r->prompt, ARRAY_COUNT(r->prompt));
    if (r->n_prompt < 2 || r->n_prompt > ARRAY_COUNT(r->prompt))
        return err_set(e, FAT_EXIT_CANNOT_RUN, "the prompt encodes to %u tokens (want 2..%u)", r->n_prompt, (u32)ARRAY_COUNT(r->prompt));
    r->n_steps = FAT_TOKENS;
    return true;
}

/* model_path's prompt: token ids, not text, so any vocabulary works: the file's BOS (when its tokenizer
   has one), then ids spread evenly over the vocabulary (k * n_vocab / FAT_M_PROMPT + 3, clamped). */
static void fat_e2e_id_prompt(FatE2eRef *r, const Model *m, Arena *ha) {
    u32 nv = m->cfg.n_vocab, n = 0;
    Tokenizer *tok; Err e;
    i32 bos = tok_load(&tok, &m->gguf, ha, &e) ? tok_bos(tok) : -1;
    if (bos >= 0 && (u32)bos < nv) r->prompt[n++] = bos;
    for (u32 k = 1; n < FAT_M_PROMPT; k++) r->prompt[n++] = (i32)MIN((u64)k * nv / FAT_M_PROMPT + 3, (u64)nv - 1);
    r->n_prompt = n;
    r->n_steps = FAT_M_STEPS;
}

/* One run as `edge run` makes it: the prompt (rows: every row's logits, else the LM head for the
   last row only, as run does), the first id from the last row, then chained greedy decode. */
static bool fat_e2e_run(Engine *g, const FatE2eRef *r, f32 *rows, i32 *toks, f64 *decode_s, Err *e) {
    eng_reset(g);
    if (!eng_feed(g, r->prompt, r->n_prompt, rows, e)) return false;
    toks[0] = (i32)ref_argmax(eng_last_logits(g), g->n_vocab);
    f64 t0 = fat_now();
    eng_set_chain(g, true);
    for (u32 s = 1; s < r->n_steps; s++)
        if (!eng_decode(g, toks[s - 1], s + 1 < r->n_steps, &toks[s], e)) { eng_decode_end(g); return false; }
    eng_decode_end(g);
    *decode_s = fat_now() - t0;
    return true;
}

/* Folds rows x n logits against the reference into o->worst (NaN/Inf: infinitely bad; o starts zeroed). */
static void fat_e2e_compare(FatE2eOut *o, u32 run, const f32 *got, const f32 *want, u32 row0, u32 rows, u32 n) {
    for (u32 r = 0; r < rows; r++) {
        const f32 *g = got + (u64)r * n, *w = want + (u64)r * n;
        f64 big = 0;
        for (u32 i = 0; i < n; i++) big = MAX(big, fabs((f64)w[i]));
        for (u32 i = 0; i < n; i++) {
            f64 err = isfinite(g[i]) ? fabs((f64)g[i] - w[i]) : INFINITY;
            if (o->f16) err /= big > 0 ? big : 1;
            f64 ratio = err / o->tol;
            if (ratio > o->worst) { o->worst = ratio; o->err = err; o->run = run; o->row = row0 + r; o->col = i; }
        }
    }
}

static bool fat_e2e_runs(Fat *f, const FatE2eSpec *sp, FatE2eOut *o, Err *e) {
    const FatE2eRef *r = &sp->st->ref;
    const Model *m = sp->m;
    u32 nv = m->cfg.n_vocab;
    Engine g;
    if (!eng_open(&g, m, ENG_GPU, MIN(m->cfg.n_ctx, RUN_DEFAULT_CTX), DT_COUNT, e)) return false;
    o->f16 = g.xf.act == DT_F16;
    o->tol = fat_e2e_tol(sp->m, o->f16);
    i32 pk = f->perturb ? vk_kernel_find(f->perturb) : -1;
    g.vk.perturb = pk + 1;                  /* testing aid: that kernel's results are wrong wherever it runs */
    f32 *rows = malloc((u64)r->n_prompt * nv * sizeof(f32));
    bool ok = true;
    o->best_s = 1e30;
    u64 n8 = op_q8t_products;
    for (u32 run = 0; ok && run < FAT_E2E_RUNS; run++) {
        f64 secs;
        ok = fat_e2e_run(&g, r, run == 0 ? rows : NULL, o->toks[run], &secs, e);
        if (!ok) { Err inner = *e; err_set(e, inner.code, "GPU run %u: %s", run + 1, inner.msg); break; }
        if (run == 0 && op_q8t_products > n8) { o->i8 = true; o->tol = fat_e2e_tol_i8(sp->m); }
        if (run == 0) fat_e2e_compare(o, run, rows, r->logits, 0, r->n_prompt, nv);
        else fat_e2e_compare(o, run, eng_last_logits(&g), r->logits + (u64)(r->n_prompt - 1) * nv, r->n_prompt - 1, 1, nv);
        o->best_s = MIN(o->best_s, secs);
    }
    o->hits = g.vk.perturb_hits;
    free(rows);
    eng_close(&g);
    return ok;
}

/* The first of n tokens where two sequences differ or an id is out of range (-1: none). */
static i32 fat_tokens_differ(const i32 *a, const i32 *b, u32 n, u32 nv) {
    for (u32 s = 0; s < n; s++) if (a[s] != b[s] || a[s] < 0 || (u32)a[s] >= nv) return (i32)s;
    return -1;
}

/* model_path's greedy check: the reference backend on the GPU's own tokens (the same context at every
   step); each GPU id must be the reference's argmax or within 2x the path's tolerance of its logit
   (two logits each off by the tolerance may swap). Fills o->ref_at, o->gap, o->exact. */
static bool fat_e2e_follow(const FatE2eSpec *sp, FatE2eOut *o, Err *e) {
    const FatE2eRef *r = &sp->st->ref;
    const i32 *toks = o->toks[0];
    u32 nv = sp->m->cfg.n_vocab;
    Engine *g = sp->st->keep;       /* after the prompt: rewound there, its last row's logits kept in r->logits */
    o->ref_at = -1;
    bool ok = eng_truncate(g, r->n_prompt, e);
    for (u32 s = 0; ok && s < r->n_steps && o->ref_at < 0; s++) {
        fat_ref_progress(sp->label, "token", s + 1, r->n_steps);
        const f32 *l = s == 0 ? r->logits + (u64)(r->n_prompt - 1) * nv : eng_last_logits(g);
        f64 top = -INFINITY, big = 0;
        for (u32 i = 0; i < nv; i++) { top = MAX(top, (f64)l[i]); big = MAX(big, fabs((f64)l[i])); }
        f64 tol = o->f16 ? o->tol * big : o->tol;
        f64 d = toks[s] >= 0 && (u32)toks[s] < nv ? top - l[toks[s]] : INFINITY;
        o->gap = MAX(o->gap, d / (2 * tol));
        o->exact += d == 0;
        if (!(d <= 2 * tol)) o->ref_at = (i32)s;
        else if (s + 1 < r->n_steps) ok = eng_feed(g, &toks[s], 1, NULL, e);
    }
    fat_ref_progress(sp->label, "", 0, 0);
    return ok;
}

static void fat_e2e_verdict(Fat *f, FatCheck *c, const FatE2eSpec *sp, const FatE2eOut *o, u32 nv) {
    const FatE2eRef *r = &sp->st->ref;
    u32 n = r->n_steps;
    i32 bad_run = -1, bad_at = -1;
    for (u32 run = 1; run < FAT_E2E_RUNS && bad_run < 0; run++)
        if ((bad_at = fat_tokens_differ(o->toks[run], o->toks[0], n, nv)) >= 0) bad_run = (i32)run;
    i32 ref_at = sp->follow ? o->ref_at : fat_tokens_differ(o->toks[0], r->tokens, n, nv), drift_at = -1;
    if (f->rep == 0) memcpy(sp->st->tokens0, o->toks[0], sizeof sp->st->tokens0);
    else drift_at = fat_tokens_differ(o->toks[0], sp->st->tokens0, n, nv);
    char pert[160] = "", ids[128] = "equal to the reference";
    if (f->perturb) fmt_buf(pert, sizeof pert, " [EDGE_FAT_PERTURB=%s: %u dispatches on this path perturbed]", f->perturb, o->hits);
    if (sp->follow) fmt_buf(ids, sizeof ids, "%u of %u the reference's argmax on the same tokens, the others within 2x the tolerance (worst %.2g of it)", o->exact, n, o->gap);
    char why[128] = "";     /* a greedy id that is not the reference's */
    if (ref_at >= 0 && sp->follow) fmt_buf(why, sizeof why, "%.3g x 2x the tolerance below the reference's argmax on the same tokens", o->gap);
    else if (ref_at >= 0) fmt_buf(why, sizeof why, "the reference's is %d", r->tokens[ref_at]);
    const char *act = o->i8 ? "f16 (int8 prefill)" : o->f16 ? "f16" : "f32";
    char tol[64];
    fmt_buf(tol, sizeof tol, o->f16 ? "%.2g%% of the row's largest |logit|" : "%.0e absolute", o->f16 ? o->tol * 100 : o->tol);
    fat_num(c, "f16", o->f16); fat_num(c, "int8_prefill", o->i8); fat_num(c, "prompt_tokens", r->n_prompt); fat_num(c, "runs", FAT_E2E_RUNS); fat_num(c, "tokens", n);
    fat_num(c, "max_logit_err", o->err); fat_num(c, "first_ref_mismatch", ref_at);
    if (sp->follow) fat_num(c, "ids_exact", o->exact); else fat_num(c, "decode_tps", f->decode_tps);
    if (bad_run >= 0)
        fat_check_end(f, c, FAT_FAIL, "%s, %s path: GPU run %d differs from run 1 at token %d (%d vs %d): nondeterministic%s", sp->label, act, bad_run + 1, bad_at + 1, o->toks[bad_run][bad_at], o->toks[0][bad_at], pert);
    else if (!(o->worst <= 1))
        fat_check_end(f, c, FAT_FAIL, "%s, %s path: logit %u of prompt row %u (run %u) is %.3g off the reference (tolerance %s)%s", sp->label, act, o->col, o->row, o->run + 1, o->err, tol, pert);
    else if (ref_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "%s, %s path: greedy token %d is %d, %s%s", sp->label, act, ref_at + 1, o->toks[0][ref_at], why, pert);
    else if (drift_at >= 0)
        fat_check_end(f, c, FAT_FAIL, "%s, %s path: tokens differ from soak repetition 0 at token %d (drift)%s", sp->label, act, drift_at + 1, pert);
    else fat_check_end(f, c, FAT_PASS, "%s, %s activations, %u-token prompt batched, %u chained greedy tokens x %d runs identical, %s; logits within tolerance (worst %.2g of %s)%s",
                       sp->label, act, r->n_prompt, n, FAT_E2E_RUNS, ids, o->worst, tol, pert);
}

/* Runs one subject: its reference once (the prompt filled by the caller), then the GPU runs and the verdict. */
static void fat_e2e_check(Fat *f, FatCheck *c, const FatE2eSpec *sp) {
    Err e = {0};
    FatE2eOut *o = calloc(1, sizeof *o);
    f64 t0 = fat_now(), t1 = 0, t2 = 0;     /* the reference backend's seconds go into the report */
    if (!sp->st->have && !(sp->st->have = fat_e2e_reference(sp->st, sp->label, sp->m, !sp->follow, &e))) {
        fat_check_end(f, c, FAT_FAIL, "%s: reference backend: %s", sp->label, e.msg); goto done;
    }
    t1 = fat_now();
    if (!fat_e2e_runs(f, sp, o, &e)) { fat_check_end(f, c, FAT_FAIL, "%s: GPU backend: %s", sp->label, e.msg); goto done; }
    t2 = fat_now();
    if (sp->follow && !fat_e2e_follow(sp, o, &e)) { fat_check_end(f, c, FAT_FAIL, "%s: reference backend on the GPU's tokens: %s", sp->label, e.msg); goto done; }
    if (!sp->follow) f->decode_tps = (sp->st->ref.n_steps - 1) / o->best_s;
    fat_num(c, "reference_s", (t1 - t0) + (fat_now() - t2));
    fat_e2e_verdict(f, c, sp, o, sp->m->cfg.n_vocab);
done:
    free(o);
}

static void fat_end_to_end(Fat *f) {
    FatCheck *c = fat_check_begin(f, "end_to_end");
    Arena ha; arena_init(&ha, "fat end to end", (u64)EDGE_HOST_ARENA_MIB << 20);
    Err e = {0};
    Model m;
    if (!model_open(&m, NULL, false, &ha, &e)) { fat_check_end(f, c, FAT_FAIL, "embedded model: %s", e.msg); arena_free(&ha); return; }
    FatE2eSpec sp = { "stories260K", &m, &f->e2e, false };
    if (!f->e2e.have && !fat_e2e_text_prompt(&f->e2e.ref, &m, &ha, &e)) fat_check_end(f, c, FAT_FAIL, "reference backend: %s", e.msg);
    else fat_e2e_check(f, c, &sp);
    model_close(&m);
    arena_free(&ha);
}

/* -m FILE (opened by fat_cmd before the device checks): the file's own kernel path. */
static void fat_model_path(Fat *f) {
    FatCheck *c = fat_check_begin(f, "model_path");
    FatE2eSpec sp = { f->model_path, &f->model, &f->me2e, true };
    if (!f->me2e.have) fat_e2e_id_prompt(&f->me2e.ref, &f->model, &f->model_arena);
    fat_e2e_check(f, c, &sp);
}

static void fat_throughput_decode(Fat *f) {
    FatCheck *t = fat_check_begin(f, "throughput.decode");
    f64 tps = f->decode_tps, fl = f->floor_tps.val;
    fat_num(t, "tokens_per_s", tps); fat_num(t, "floor", fl);
    if (tps <= 0) { fat_check_end(f, t, FAT_FAIL, "not measured: end_to_end did not finish"); return; }
    fat_check_end(f, t, tps >= fl ? FAT_PASS : FAT_FAIL, "%.1f tokens/s (stories260K, default path, chained greedy, best of %d runs), floor %.4g (%s)",
                  tps, FAT_E2E_RUNS, fl, f->floor_tps.from);
}

/* ---- memory ---------------------------------------------------------------------------------- */
/* Device bytes of the largest shipped config: weights (at EDGE_FAT_WEIGHT_MILLIBITS per
   weight, untied head counted) + f16 KV cache for its context (capped at EDGE_FAT_CTX) +
   activations for a 64-token batch. 64-bit arithmetic: gigabytes. */
static u64 fat_config_bytes(const ModelEntry *m) {
    u64 qd = (u64)m->n_head * m->head_dim, kvd = (u64)m->n_head_kv * m->head_dim, ctx = MIN(m->ctx, EDGE_FAT_CTX), tm = 64;
    u64 params = 2 * (u64)m->n_vocab * m->n_embd + (u64)m->n_layer * (2 * m->n_embd * qd + 2 * m->n_embd * kvd + 3 * (u64)m->n_embd * m->n_ff);
    u64 w = params * EDGE_FAT_WEIGHT_MILLIBITS / 8000;
    u64 kv = 2 * (u64)m->n_layer * kvd * ctx * 2;
    u64 act = ((u64)m->n_vocab * 2 + ctx * m->n_head + 6 * (u64)m->n_embd + 3 * (u64)m->n_ff + 4 * qd) * tm * 4;
    return w + kv + act;
}

/* The tested region: one arena, the error counters, the two kernels. Words are numbered across the
   arena's blocks in order (a block's floor(size / 4) words): the address memtest.wgsl's values use. */
typedef struct FatMem {
    Vk       *vk;
    DevArena  a, ea;
    Tensor    te;               /* (2) [bad words, lowest bad address] */
    VkPipe   *pw, *pv;
    u64       chunk, words;     /* bytes per dispatch window; words in the arena */
} FatMem;

/* What memtest.wgsl writes at word address a: the host's copy of mt_value. */
static u32 fat_mt_value(u32 a, u32 pattern, u32 seed) {
    u32 v = a, kind = pattern % 3;
    if (kind == 1) v = 1u << (a & 31u);
    if (kind == 2) {
        u32 h = (a * 0x9e3779b1u) ^ seed;
        h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
        v = h;
    }
    return pattern >= 3 ? ~v : v;
}

/* A view of up to n words from word w (clipped at the end of w's block). */
static Tensor fat_mem_view(FatMem *m, u64 w, u64 n) {
    u32 b = 0;
    while (b + 1 < m->a.n_blocks && w >= m->a.blocks[b].size / 4) w -= m->a.blocks[b++].size / 4;
    n = MIN(n, m->a.blocks[b].size / 4 - w);
    return (Tensor){ .name = "memtest sample", .dtype = DT_U32, .ndim = 1, .ne = { n, 1, 1, 1 }, .nelem = n, .nbytes = n * 4,
                     .arena = &m->a, .block = b, .offset = w * 4 };
}

/* Writes (or verifies: counts into te) pattern over the first `limit` words, in one submit. */
static void fat_mem_pass(FatMem *m, u64 limit, u32 pat, u32 seed, bool verify) {
    vk_begin(m->vk);
    u64 word = 0;
    for (u32 b = 0; b < m->a.n_blocks; b++) for (u64 off = 0; off < m->a.blocks[b].size && word < limit; off += m->chunk) {
        u64 nw = MIN(MIN(m->chunk, m->a.blocks[b].size - off) / 4, limit - word);
        Tensor v = { .name = "memtest window", .dtype = DT_U32, .ndim = 1, .ne = { nw, 1, 1, 1 }, .nelem = nw,
                     .nbytes = nw * 4, .arena = &m->a, .block = b, .offset = off };
        struct { u32 n, base, pattern, seed; } push = { (u32)nw, (u32)word, pat, seed };
        const Tensor *ts[2] = { &v, &m->te };
        u32 groups = (u32)MIN((nw + 255) / 256, 4096);
        vk_dispatch(m->vk, verify ? m->pv : m->pw, ts, verify ? 2 : 1, &push, sizeof push, groups, 1, 1);
        word += nw;
    }
    vk_submit_wait(m->vk);
}

/* Host readback: EDGE_FAT_MEM_SAMPLES words in runs of EDGE_FAT_MEM_SAMPLE_RUN at seeded offsets over
   the first `limit` words (the first run covers word `must` when must < limit), compared with what
   the host computes. Returns the bad words; *first: the lowest bad word address. */
static u64 fat_mem_sample(FatMem *m, u64 limit, u32 pat, u32 seed, u64 must, u64 *first, u64 *seen) {
    u32 run = EDGE_FAT_MEM_SAMPLE_RUN, buf[EDGE_FAT_MEM_SAMPLE_RUN];
    u64 bad = 0;
    fat_seed(seed * 31 + pat);
    for (u32 s = 0; s < EDGE_FAT_MEM_SAMPLES / run; s++) {
        u64 w = (((u64)fat_u32() << 32) | fat_u32()) % (limit > run ? limit - run : 1);
        if (s == 0 && must < limit) w = must >= run / 2 ? must - run / 2 : 0;
        Tensor v = fat_mem_view(m, w, MIN(run, limit - w));
        vk_download(m->vk, &v, buf);
        for (u64 i = 0; i < v.nelem; i++)
            if (buf[i] != fat_mt_value((u32)(w + i), pat, seed)) { bad++; *first = MIN(*first, w + i); }
        *seen += v.nelem;
    }
    return bad;
}

/* Writes word w as its expected value with one bit flipped (a fault the test must see). */
static void fat_mem_corrupt(FatMem *m, u64 w, u32 pat, u32 seed) {
    Tensor v = fat_mem_view(m, w, 1);
    u32 bad = fat_mt_value((u32)w, pat, seed) ^ 0x00010000u;
    vk_upload(m->vk, &v, &bad);
}

static void fat_mem_counts(FatMem *m, u32 got[2]) { vk_download(m->vk, &m->te, got); }
static void fat_mem_reset(FatMem *m) { u32 zero[2] = { 0, ~0u }; vk_upload(m->vk, &m->te, zero); }

/* The self-check: over the first 4 MiB, write, corrupt one word from the host, then the GPU compare
   must count exactly that word and the host readback must see it. False (why says what missed). */
static bool fat_mem_selfcheck(FatMem *m, char *why, int n) {
    u64 limit = MIN(m->words, (u64)1 << 20);
    u32 pat = 2, seed = 0x5e1fc4ecu;
    fat_seed(77);
    u64 w = fat_u32() % limit, first = ~0ull, seen = 0;
    fat_mem_pass(m, limit, pat, seed, false);
    fat_mem_corrupt(m, w, pat, seed);
    fat_mem_reset(m);
    fat_mem_pass(m, limit, pat, seed, true);
    u32 got[2]; fat_mem_counts(m, got);
    u64 host = fat_mem_sample(m, limit, pat, seed, w, &first, &seen);
    if (got[0] == 1 && got[1] == (u32)w && host >= 1 && first == w) return true;
    fmt_buf(why, n, "the memory test cannot see errors: one bad word injected at byte %llu; the GPU compare counted %u (lowest at byte %llu), "
            "the host readback saw %llu of %llu words bad%s", (unsigned long long)w * 4, got[0], got[0] ? (unsigned long long)got[1] * 4 : 0ull,
            (unsigned long long)host, (unsigned long long)seen, host && first != w ? " (not the injected one)" : "");
    return false;
}

/* Bytes to test and why (the largest shipped config's arena, --mem, or the software-device default). */
static u64 fat_mem_bytes(Fat *f, char *why, int n) {
    Vk *vk = &f->vk;
    const ModelEntry *big = &model_table[0];
    for (u32 i = 0; i < MODEL_COUNT; i++) if (fat_config_bytes(&model_table[i]) > fat_config_bytes(big)) big = &model_table[i];
    u64 bytes = fat_config_bytes(big);
    fmt_buf(why, n, "the arena of %s", big->name);
    bool cpu = vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (f->mem_mib) { bytes = f->mem_mib << 20; fmt_buf(why, n, "--mem %llu", (unsigned long long)f->mem_mib); }
    else if (cpu && !f->full) { bytes = (u64)EDGE_FAT_MEM_CPU_QUICK_MIB << 20; fmt_buf(why, n, "software device in --quick: %d MiB default instead of the %llu MiB arena of %s (--full or --mem for more)", EDGE_FAT_MEM_CPU_QUICK_MIB, (unsigned long long)(fat_config_bytes(big) >> 20), big->name); }
    else {
        u64 heap = 0;
        for (u32 i = 0; i < vk->mem.memoryHeapCount; i++) if (vk->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) heap = MAX(heap, vk->mem.memoryHeaps[i].size);
        if (heap && bytes > heap / 4 * 3) { bytes = heap / 4 * 3; fmt_buf(why, n, "3/4 of the %llu MiB device heap (the arena of %s is larger)", (unsigned long long)(heap >> 20), big->name); }
    }
    return bytes / 256 * 256;
}

static bool fat_mem_open(Fat *f, FatMem *m, u64 bytes, char *err, int n) {
    memset(m, 0, sizeof *m);
    m->vk = &f->vk;
    i32 kw = vk_kernel_find("memtest_write"), kv = vk_kernel_find("memtest_verify");
    if (kw < 0 || kv < 0) { fmt_buf(err, n, "kernels/memtest.wgsl is not embedded"); return false; }
    Err e;
    if (!vk_arena_init(m->vk, &m->a, "fat memory", bytes, &e)) { fmt_buf(err, n, "%s", e.msg); return false; }
    if (!vk_arena_init(m->vk, &m->ea, "fat memory errors", 256, &e)) { vk_arena_free(&m->a); fmt_buf(err, n, "%s", e.msg); return false; }
    u64 ne[1] = { 2 };
    m->te = vk_tensor(&m->ea, "memtest errors", DT_U32, 1, ne);
    m->pw = vk_pipeline(m->vk, kw); m->pv = vk_pipeline(m->vk, kv);
    m->chunk = MIN(m->vk->caps.max_storage_range, (u64)64 << 20) / 256 * 256;
    for (u32 b = 0; b < m->a.n_blocks; b++) m->words += m->a.blocks[b].size / 4;
    return true;
}

static void fat_mem_close(FatMem *m) { vk_arena_free(&m->ea); vk_arena_free(&m->a); }

static void fat_memory(Fat *f) {
    FatCheck *c = fat_check_begin(f, "memory");
    char why[192], err[320];
    u64 bytes = fat_mem_bytes(f, why, sizeof why);
    FatMem m;
    if (!fat_mem_open(f, &m, bytes, err, sizeof err)) { fat_check_end(f, c, FAT_FAIL, "%s", err); return; }
    bool self = fat_mem_selfcheck(&m, err, sizeof err);
    u32 n_pat = f->full ? 6 : 3, passes = f->full ? 2 : 1;
    u64 errors = 0, host_bad = 0, host_seen = 0, host_first = ~0ull; u32 first = ~0u;
    const char *pname[6] = { "address", "walking-ones", "random", "~address", "~walking-ones", "~random" };
    char failed[128] = ""; int fl = 0;
    for (u32 pass = 0; pass < passes; pass++) for (u32 pat = 0; pat < n_pat; pat++) {
        u32 seed = 0x5eed0000u + pass, got[2];
        fat_mem_reset(&m);
        fat_mem_pass(&m, m.words, pat, seed, false);     /* the whole arena is written before any of it is verified */
        if (f->memfault && pass == 0 && pat == 0) { fat_seed(78); fat_mem_corrupt(&m, fat_u32() % m.words, pat, seed); }
        fat_mem_pass(&m, m.words, pat, seed, true);
        fat_mem_counts(&m, got);
        host_bad += fat_mem_sample(&m, m.words, pat, seed, ~0ull, &host_first, &host_seen);
        if (got[0] && fl < 100) fl += fmt_buf(failed + fl, (int)sizeof failed - fl, " %s:%u", pname[pat], got[0]);
        errors += got[0]; first = MIN(first, got[1]);
    }
    fat_mem_close(&m);
    fat_num(c, "bytes", (f64)bytes); fat_num(c, "patterns", n_pat); fat_num(c, "passes", passes); fat_num(c, "errors", (f64)errors);
    fat_num(c, "host_words", (f64)host_seen); fat_num(c, "host_errors", (f64)host_bad); fat_num(c, "self_check", self);
    const char *mf = f->memfault ? " [EDGE_FAT_MEMFAULT: one word corrupted]" : "";
    if (!self) fat_check_end(f, c, FAT_FAIL, "%s%s", err, mf);
    else if (errors) fat_check_end(f, c, FAT_FAIL, "%llu bad words over %llu MiB (first at byte %llu):%s%s", (unsigned long long)errors,
                                   (unsigned long long)(bytes >> 20), (unsigned long long)first * 4, failed, mf);
    else if (host_bad) fat_check_end(f, c, FAT_FAIL, "host readback: %llu of %llu sampled words bad (first at byte %llu), the GPU compare counted none%s",
                                     (unsigned long long)host_bad, (unsigned long long)host_seen, (unsigned long long)host_first * 4, mf);
    else fat_check_end(f, c, FAT_PASS, "%llu MiB (%s), %u patterns x %u passes, 0 errors on the GPU compare and in %llu words read back to the host; "
                       "self-check: an injected bad word was seen by both%s", (unsigned long long)(bytes >> 20), why, n_pat, passes, (unsigned long long)host_seen, mf);
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
    Tensor tw = vk_weight(&a, "W", wt, 2, nw), tx = vk_tensor(&a, "x", DT_F32, 1, nx), ty = vk_tensor(&a, "y", DT_F32, 1, ny);
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
    f64 fl = f->floor_gbps.val;
    fat_num(c, "gb_per_s", gbps); fat_num(c, "floor", fl); fat_num(c, "rows", (f64)M); fat_num(c, "cols", (f64)K);
    fat_check_end(f, c, gbps >= fl ? FAT_PASS : FAT_FAIL, "%.2f GB/s (%s q8_0 %llux%llu, best of %u), floor %.4g (%s)",
                  gbps, big->name, (unsigned long long)M, (unsigned long long)K, reps, fl, f->floor_gbps.from);
}

/* ---- the run ------------------------------------------------------------------------------------ */
/* Runs fn with die() trapped: a device error (fence timeout, lost device, allocation failure
   inside an op) fails the check that was running, names it, and ends the device checks (the
   device may be hung: it is not shut down). A model error (EXIT_MODEL: the -m file has a weight type
   without GPU kernels, say) is no device fault: it fails model_path, naming the file, and the others run. */
static bool fat_guard(Fat *f, void (*fn)(Fat *)) {
    jmp_buf jb;
    die_trap = &jb;
    if (setjmp(jb) == 0) { fn(f); die_trap = 0; return true; }
    die_trap = 0;
    f->vk.recording = false;
    FatCheck *c = f->open ? &f->checks[f->open - 1] : fat_check_begin(f, "device");
    if (die_trap_code == EXIT_MODEL && fn == fat_model_path) {
        fat_check_end(f, c, FAT_FAIL, "%s: this device's GPU path cannot run the file: %s", f->model_path, die_trap_msg);
        return false;
    }
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
    bool decode_tps = f->rep == 0 && fat_want(f, "throughput");
    if (fat_want(f, "end_to_end") || decode_tps) fat_guard(f, fat_end_to_end);
    if (decode_tps && !f->broken) fat_throughput_decode(f);
    if (fat_want(f, "determinism") && !f->broken) fat_guard(f, fat_determinism);
    if (f->model_path && fat_want(f, "model_path") && !f->broken) fat_guard(f, fat_model_path);
}

/* -m FILE: a file that does not load cannot be tested (exit 11), named before the device is touched. */
static bool fat_model_open(Fat *f, Err *e) {
    arena_init(&f->model_arena, "fat model file", (u64)EDGE_HOST_ARENA_MIB << 20);
    if (model_open(&f->model, f->model_path, f->allow_unlisted, &f->model_arena, e)) return true;
    arena_free(&f->model_arena);
    errf("edge fat: -m %s: %s\n", f->model_path, e->msg);
    out("RESULT  could not run: -m %s does not load: %s (exit %d)\n", f->model_path, e->msg, FAT_EXIT_CANNOT_RUN);
    f->model_path = NULL;
    return false;
}

static void fat_model_close(Fat *f) {
    if (!f->model_path) return;
    fat_e2e_free(&f->me2e);
    model_close(&f->model);
    arena_free(&f->model_arena);
}

static int fat_usage(const char *why) {
    errf("edge fat: %s\n"
         "usage: edge fat [-m FILE] [--quick | --full] [--soak SECONDS] [--json FILE] [--mem MiB] [--floors FILE]\n"
         "  -m, --model FILE  also run that model file's own kernel path (model_path: %u token ids, %u greedy tokens\n"
         "                 on the device's default path against the reference backend, 3 runs identical)\n"
         "  --allow-unlisted  load -m FILE even when it is not a listed config (as edge run's)\n"
         "  --quick        the default: every kernel variant, traps, end to end, determinism, a memory pass, throughput\n"
         "  --full         every shipped shape, 6 memory patterns x 2 passes over the whole arena\n"
         "  --soak S       repeat the kernel, end_to_end, model_path and determinism checks for S seconds; any drift fails\n"
         "  --json FILE    write the report (device, versions, every check with its numbers, verdict)\n"
         "  --mem MiB      memory test size instead of the largest shipped config's arena\n"
         "  --floors FILE  this board's throughput floors, lines 'decode_tps N' and 'matvec_gbps N' ('#' comments);\n"
         "                 default: the device class's (CPU, integrated GPU, discrete GPU: config/edge_config.h)\n"
         "  --only LIST    developer option: only these groups (kernels traps end_to_end determinism memory throughput model_path) or kernel names\n"
         "exit codes: 0 all checks passed, 10 a check failed, 11 the test could not run (also: -m FILE does not load)\n", why, FAT_M_PROMPT, FAT_M_STEPS);
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
        else if (!strcmp(a, "--allow-unlisted")) f->allow_unlisted = true;
        else if (!strcmp(a, "--soak") || !strcmp(a, "--json") || !strcmp(a, "--mem") || !strcmp(a, "--only") || !strcmp(a, "--floors") || !strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (i + 1 >= argc) { char w[64]; fmt_buf(w, sizeof w, "%s needs a value", a); return fat_usage(w); }
            const char *v = argv[++i];
            char *end;
            if (!strcmp(a, "--json")) f->json = v;
            else if (!strcmp(a, "--only")) f->only = v;
            else if (!strcmp(a, "--floors")) f->floors_path = v;
            else if (!strcmp(a, "-m") || !strcmp(a, "--model")) f->model_path = v;
            else if (!strcmp(a, "--soak")) { f->soak_s = strtod(v, &end); if (*end || !(f->soak_s >= 0) || f->soak_s > 1e7) return fat_usage("--soak wants seconds"); }
            else { long long m = strtoll(v, &end, 10); if (*end || m <= 0 || m > (1ll << 24)) return fat_usage("--mem wants MiB > 0"); f->mem_mib = (u64)m; }
        } else { char w[160]; fmt_buf(w, sizeof w, "unknown option '%s'", a); return fat_usage(w); }
    }
    f->perturb = edge_opt.fat_perturb;
    f->nondet = edge_opt.fat_nondet;
    f->memfault = edge_opt.fat_memfault;
    f64 t0 = fat_now();
    out("edge fat %s (git %s): %s%s%s%s\n", EDGE_VERSION, EDGE_GIT_HASH, f->full ? "--full" : "--quick",
        f->perturb ? " [EDGE_FAT_PERTURB set: testing aid]" : "", f->nondet ? " [EDGE_FAT_NONDET set: testing aid]" : "",
        f->memfault ? " [EDGE_FAT_MEMFAULT set: testing aid]" : "");
    Err e;
    int code;
    if (f->floors_path && !fat_floors_read(f, f->floors_path, &e)) {
        errf("edge fat: %s\n", e.msg);
        out("RESULT  could not run: %s (exit %d)\n", e.msg, FAT_EXIT_CANNOT_RUN);
        return FAT_EXIT_CANNOT_RUN;
    }
    if (f->model_path && !fat_model_open(f, &e)) return FAT_EXIT_CANNOT_RUN;
    if (!vk_init(&f->vk, &e)) {
        FatCheck *c = fat_check_begin(f, "identity");
        fat_check_end(f, c, FAT_FAIL, "cannot run: %s", e.msg);
        code = FAT_EXIT_CANNOT_RUN;
        out("RESULT  could not run (exit %d)\n", code);
        if (f->json) fat_json_write(f, false, "could not run", code);
        free(f->checks); fat_model_close(f);
        return code;
    }
    if (!fat_identity(f)) {
        code = FAT_EXIT_CANNOT_RUN;
        out("RESULT  could not run: a required feature is missing (exit %d)\n", code);
        if (f->json) fat_json_write(f, true, "could not run", code);
        vk_shutdown(&f->vk); free(f->checks); fat_model_close(f);
        return code;
    }
    fat_floors_default(f);
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
        fat_check_end(f, c, drift ? FAT_FAIL : FAT_PASS, "%u repetitions of the kernel, end_to_end%s and determinism checks in %.0f s, %u failed or drifted",
                      ok_rep, f->model_path ? ", model_path" : "", f->soak_s, drift);
    }
    if (edge_opt.validation) {                          /* under the Khronos layer: its errors fail the run */
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
    free(f->checks); fat_e2e_free(&f->e2e);
    fat_model_close(f);
    return code;
}

#define FAT_COMMANDS { "fat", fat_cmd, "factory acceptance test: prove this board's GPU computes correctly (docs/fat.md)" },
