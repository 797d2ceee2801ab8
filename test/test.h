/* test.h — the test runner's API. Test files define EDGE_TESTING (via
   test/tests.c, which includes edge.c and then every test file ending in _test.c).

     TEST(name) { ... }        registers a test (in file order)
     CHECK(cond)               records file, line and the expression text on failure; the test goes on
     CHECKF(cond, fmt, ...)    the same with a formatted detail
     REQUIRE(cond)             like CHECK but ends the test at the first failure
     SKIP(fmt, ...)            marks the test skipped with its reason and ends it (for reasons true
                               everywhere: a device without f16, EDGE_VALIDATION not set)
     SKIP_UNLESS_REQUIRED(fmt, ...)  for what CI always has (the Vulkan device, a fixture or vocabulary
                               file, a tool): skips with the reason, or fails with it under
                               EDGE_TEST_REQUIRE=1 (.ci/run sets it)
     test_save(p, n)           the n bytes at p are put back when the test ends, however it ends
                               (saving the same bytes again in that test keeps the first copy)
                               (test_vk() saves the shared device's caps this way)
     TEST_OPTION(field, value) sets edge_opt.field (base/options.h: the environment as read at start)
                               until the test ends, however it ends (test_save of edge_opt)
     opt_int(v)                an OptInt that is set to v, for TEST_OPTION (EDGE_SPLITK=4: opt_int(4))
     fixture_path(buf, rel)    finds a file in ../shared/fixtures (preferred) or test/fixtures; false if neither */
#ifndef EDGE_TEST_H
#define EDGE_TEST_H
#include <setjmp.h>

typedef struct TestCase {
    const char *name;
    const char *file;
    void (*fn)(void);
    struct TestCase *next;
} TestCase;

void test_register(TestCase *t);
void test_fail(const char *file, int line, const char *expr, const char *detail);
_Noreturn void test_skip(const char *reason);
_Noreturn void test_abort(void);
_Noreturn void test_skip_unless_required(const char *file, int line, const char *reason);
void test_save(void *p, size_t n);
bool fixture_path(char *buf, int n, const char *rel);
bool shared_fixtures_present(void);
u32 fixture_skips_report(void);        /* test/fixtures.c: the fixtures config/fixtures.def skips */

#define TEST(name)                                                              \
    static void test_##name(void);                                              \
    __attribute__((constructor)) static void test_reg_##name(void) {            \
        static TestCase t = { #name, __FILE__, test_##name, 0 };                \
        test_register(&t);                                                      \
    }                                                                           \
    static void test_##name(void)

#define TEST_OPTION(field, value) do { test_save(&edge_opt, sizeof edge_opt); edge_opt.field = (value); } while (0)
static inline OptInt opt_int(i64 v) { OptInt o = { true, v }; return o; }

#define CHECK(cond) do { if (!(cond)) test_fail(__FILE__, __LINE__, #cond, 0); } while (0)
#define CHECKF(cond, ...) do { if (!(cond)) { char d_[512]; fmt_buf(d_, sizeof d_, __VA_ARGS__); \
                               test_fail(__FILE__, __LINE__, #cond, d_); } } while (0)
#define REQUIRE(cond) do { if (!(cond)) { test_fail(__FILE__, __LINE__, #cond, 0); test_abort(); } } while (0)
#define SKIP(...) do { char r_[512]; fmt_buf(r_, sizeof r_, __VA_ARGS__); test_skip(r_); } while (0)
#define SKIP_UNLESS_REQUIRED(...) do { char r_[512]; fmt_buf(r_, sizeof r_, __VA_ARGS__);     \
                                       test_skip_unless_required(__FILE__, __LINE__, r_); } while (0)

/* Run code that is expected to call die(): returns true if it did, with the code and message. */
#define EXPECT_DIE(code_out, stmt) ({                                           \
    jmp_buf jb_; bool died_ = false;                                            \
    die_trap = &jb_;                                                            \
    if (setjmp(jb_) == 0) { stmt; } else { died_ = true; *(code_out) = die_trap_code; } \
    die_trap = 0; died_; })

#endif
