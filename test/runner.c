/* runner.c — one line per test, then "N passed, N failed, N skipped".
   Usage: build/edge_test [SUBSTRING...]  runs the tests whose names contain any SUBSTRING. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

static TestCase *tests_head, *tests_tail;
static int   cur_failed, cur_skipped;
static char  cur_skip_reason[512];
static jmp_buf cur_jmp;

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
    out("edge tests: shared fixtures %s\n", shared_fixtures_present()
        ? "found at ../shared/fixtures (running every fixture)"
        : "not found (running the copies in test/fixtures only)");
    for (TestCase *volatile t = tests_head; t; t = t->next) {
        if (argc > 1) {
            int hit = 0;
            for (int i = 1; i < argc; i++) if (strstr(t->name, argv[i])) hit = 1;
            if (!hit) continue;
        }
        cur_failed = 0; cur_skipped = 0;
        static double t0; t0 = now_s();
        if (setjmp(cur_jmp) == 0) t->fn();
        double dt = now_s() - t0;
        if (cur_skipped && !cur_failed) { skipped++; out("SKIP  %s  (%s)\n", t->name, cur_skip_reason); }
        else if (cur_failed)            { failed++;  out("FAIL  %s  (%d checks failed, %.2fs)\n", t->name, cur_failed, dt); }
        else                            { passed++;  out("PASS  %s  (%.2fs)\n", t->name, dt); }
        if (failed && getenv("EDGE_TEST_FAILFAST")) break;     /* test/mutants.sh: the first failure is enough */
    }
    skipped += (int)fixture_skips_report();
    out("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
