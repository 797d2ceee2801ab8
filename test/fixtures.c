/* fixtures.c — which fixtures of ../shared/fixtures the code claims to run (config/fixtures.def),
   for every test that enumerates them.

     fixture_skipped(kind, name)   true (and the skip printed, and kept for the summary) when the
                                   table says the code cannot run it yet; unlisted files are run
     fixture_skips_report()        prints the skipped fixtures with their reasons; returns their count */

typedef enum FixtureKind { FIXTURE_MODEL, FIXTURE_DEQUANT, FIXTURE_DETOK } FixtureKind;
typedef struct FixtureRow { FixtureKind kind; const char *name; const char *why; } FixtureRow;
static const FixtureRow fixture_rows[] = {
#define FIXTURE(kind, name, why) { FIXTURE_##kind, name, why },
#include "../config/fixtures.def"
};

static const FixtureRow *fixture_skips[ARRAY_COUNT(fixture_rows)];
static u32 fixture_n_skips;

/* The table's reason when it lists `name` as not runnable; 0 when supported or not listed. */
static const char *fixture_why(FixtureKind kind, const char *name) {
    for (u32 i = 0; i < ARRAY_COUNT(fixture_rows); i++)
        if (fixture_rows[i].kind == kind && !strcmp(fixture_rows[i].name, name))
            return fixture_rows[i].why[0] ? fixture_rows[i].why : 0;
    return 0;
}

bool fixture_skipped(FixtureKind kind, const char *name) {
    const char *why = fixture_why(kind, name);
    if (!why) return false;
    out("    skip fixture %s: %s (config/fixtures.def)\n", name, why);
    for (u32 i = 0; i < fixture_n_skips; i++) if (!strcmp(fixture_skips[i]->name, name)) return true;
    for (u32 i = 0; i < ARRAY_COUNT(fixture_rows); i++)
        if (fixture_rows[i].kind == kind && !strcmp(fixture_rows[i].name, name)) fixture_skips[fixture_n_skips++] = &fixture_rows[i];
    return true;
}

u32 fixture_skips_report(void) {
    for (u32 i = 0; i < fixture_n_skips; i++)
        out("skipped: fixture %s  (%s)\n", fixture_skips[i]->name, fixture_skips[i]->why);
    return fixture_n_skips;
}

/* fixture_skipped for a file of dequant/ named with its extension (INDEX.txt's first column). */
bool fixture_dequant_skipped(const char *file) {
    char name[128];
    fmt_buf(name, sizeof name, "%s", file);
    u64 n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".gguf")) name[n - 5] = 0;
    return fixture_skipped(FIXTURE_DEQUANT, name);
}

/* ---- tolerances, from the fixtures README and what edge measures on every shared and held-back
   fixture (the margin over the measurement is what a real bug cannot hide in) ----------------- */
#define TOL_REF_EXACT     2e-4   /* reference.c vs *.exact.logits.f32, absolute (measured <= 1.2e-5) */
#define TOL_REF_LLAMACPP  2e-4   /* reference.c vs llama.cpp on F32 files, absolute (README: ~1e-5) */
#define TOL_REF_LLAMACPP_GELU 3e-2 /* the same for gemma: llama.cpp's fp16 GELU table (README: 1e-2) */
#define TOL_GPU_F32       1e-3   /* GPU --act f32 vs exact, absolute (measured <= 1.2e-4) */
#define TOL_GPU_F16_REL   5e-3   /* GPU --act f16 vs exact, of the row's largest |logit| (measured <= 0.24%) */
#define TOL_GPU_Q8_REL    8e-2   /* GPU --cache-type q8_0 (either --act) vs exact, of the row's largest |logit| (measured <= 2.8% on the tiny fixtures, 5.4% on stories260K, whose q8_0 blocks span 4 heads of 8 dims) */
#define TOL_GPU_I8_REL    8e-2   /* GPU --act f16 on int8 activations (EDGE_IDOT=1: matmul_q's prefill, the int8 decode lanes) vs exact, of the row's largest |logit| */
#define GREEDY_MARGIN_I8  0.5    /* greedy on int8 activations: steps whose exact top1-top2 margin is at least this must agree */
#define GREEDY_MARGIN_Q8  0.5    /* greedy with a q8_0 cache: steps whose exact top1-top2 margin is at least this must agree */
