/* runner.c — one line per test, then a line "skipped: NAME  (REASON)" per skipped test, then
   "N passed, N failed, N skipped" (always the last line).
   Usage: build/edge_test [SUBSTRING...]  runs the tests whose names contain any SUBSTRING.
   Environment: EDGE_TEST_REQUIRE=1 turns SKIP_UNLESS_REQUIRED (no Vulkan device, a fixture,
   vocabulary or tool missing) into a failure with the reason; .ci/run sets it. EDGE_TEST_SHARD=I/N
   runs every N-th of the selected tests from the I-th (0-based): build.sh runs N such processes side
   by side (EDGE_TEST_JOBS).
   The options (base/options.h) are read from the environment once, before the first test.
   After each test: what it saved (test_save, TEST_OPTION) is put back, and a test during which
   the Khronos validation layer reported errors (EDGE_VALIDATION=1) fails. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

static TestCase *tests_head, *tests_tail;
static int   cur_failed, cur_skipped;
static char  cur_skip_reason[512];
static jmp_buf cur_jmp;
static bool  test_required;     /* EDGE_TEST_REQUIRE=1, read once in main */

/* What the current test asked to be put back when it ends (test_save, TEST_OPTION), newest last. */
typedef struct TestSaved { void *p; size_t n; void *copy; } TestSaved;
static TestSaved test_saved[32];
static u32       test_n_saved;

void test_register(TestCase *t) {
    if (tests_tail) tests_tail->next = t; else tests_head = t;
    tests_tail = t;
}

void test_fail(const char *file, int line, const char *expr, const char *detail) {
    if (cur_failed < 8)
        out("    %s:%d: CHECK(%s) failed%s%s\n", file, line, expr, detail ? ": " : "", detail ? detail : "");
    cur_failed++;
}

_Noreturn void test_skip(const char *reason) {
    fmt_buf(cur_skip_reason, sizeof cur_skip_reason, "%s", reason);
    cur_skipped = 1;
    longjmp(cur_jmp, 1);
}

_Noreturn void test_abort(void) { longjmp(cur_jmp, 1); }

_Noreturn void test_skip_unless_required(const char *file, int line, const char *reason) {
    if (!test_required) test_skip(reason);
    out("    %s:%d: cannot run (EDGE_TEST_REQUIRE=1 makes this a failure): %s\n", file, line, reason);
    cur_failed++;
    test_abort();
}

static TestSaved *test_saved_slot(void) {
    if (test_n_saved == ARRAY_COUNT(test_saved)) { errf("test runner: more than %u saved states in one test\n", (u32)ARRAY_COUNT(test_saved)); abort(); }
    TestSaved *s = &test_saved[test_n_saved++];
    memset(s, 0, sizeof *s);
    return s;
}

void test_save(void *p, size_t n) {
    for (u32 i = 0; i < test_n_saved; i++) if (test_saved[i].p == p && test_saved[i].n == n) return;   /* the first copy stays */
    TestSaved *s = test_saved_slot();
    s->p = p; s->n = n; s->copy = malloc(n);
    memcpy(s->copy, p, n);
}

/* Puts back what the test saved, newest first. */
static void test_restore_saved(void) {
    while (test_n_saved > 0) {
        TestSaved *s = &test_saved[--test_n_saved];
        memcpy(s->p, s->copy, s->n);
        free(s->copy);
    }
}

bool shared_fixtures_present(void) { return access("../shared/fixtures/README.md", R_OK) == 0; }

bool fixture_path(char *buf, int n, const char *rel) {
    fmt_buf(buf, n, "../shared/fixtures/%s", rel);
    if (access(buf, R_OK) == 0) return true;
    fmt_buf(buf, n, "test/fixtures/%s", rel);
    return access(buf, R_OK) == 0;
}

static double now_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + t.tv_nsec * 1e-9; }

int main(int argc, char **argv) {
    setvbuf(stdout, 0, _IOLBF, 0);
    static int passed, failed, skipped;
    static struct { const char *name; char *reason; } skips[512];
    const char *req = getenv("EDGE_TEST_REQUIRE");
    test_required = req && !strcmp(req, "1");
    options_load();
    static u32 shard, shards = 1, selected;     /* static: kept across the tests' longjmp */
    const char *sh = getenv("EDGE_TEST_SHARD");
    if (sh && (sscanf(sh, "%u/%u", &shard, &shards) != 2 || shards == 0 || shard >= shards)) {
        errf("EDGE_TEST_SHARD=%s: want I/N with 0 <= I < N\n", sh);
        return 2;
    }
    out("edge tests: shared fixtures %s\n", shared_fixtures_present()
        ? "found at ../shared/fixtures (running every fixture)"
        : "not found (running the copies in test/fixtures only)");
    for (TestCase *volatile t = tests_head; t; t = t->next) {
        if (argc > 1) {
            int hit = 0;
            for (int i = 1; i < argc; i++) if (strstr(t->name, argv[i])) hit = 1;
            if (!hit) continue;
        }
        if (selected++ % shards != shard) continue;
        cur_failed = 0; cur_skipped = 0;
        static double t0; t0 = now_s();
        static u32 verr0; verr0 = vk_validation_errors();
        if (setjmp(cur_jmp) == 0) t->fn();
        test_restore_saved();
        double dt = now_s() - t0;
        u32 verr = vk_validation_errors() - verr0;
        if (verr) { out("    %u errors from the Khronos validation layer during this test (see stderr)\n", verr); cur_failed++; }
        if (cur_skipped && !cur_failed) {
            if (skipped < (int)ARRAY_COUNT(skips)) { skips[skipped].name = t->name; skips[skipped].reason = strdup(cur_skip_reason); }
            skipped++;
            out("SKIP  %s  (%s)\n", t->name, cur_skip_reason);
        }
        else if (cur_failed)            { failed++;  out("FAIL  %s  (%d checks failed, %.2fs)\n", t->name, cur_failed, dt); }
        else                            { passed++;  out("PASS  %s  (%.2fs)\n", t->name, dt); }
        if (failed && getenv("EDGE_TEST_FAILFAST")) break;     /* test/mutants.sh: the first failure is enough */
    }
    for (int i = 0; i < skipped && i < (int)ARRAY_COUNT(skips); i++) out("skipped: %s  (%s)\n", skips[i].name, skips[i].reason);
    skipped += (int)fixture_skips_report();
    out("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
