/* args.c — fuzz target: the command line of the generation command: the debug options
   (xf_debug_parse: --trace, --trace-layers, --check-nan ...) and run_parse_args (every option,
   its value ranges, --sep escapes), called on an argv without running anything.
   Input: arguments separated by NUL bytes (at most 64); argv[0] is "edge". */
#include "fuzz.h"

static void fuzz_args(const u8 *data, size_t n) {
    char *copy = (char *)malloc(n + 1);
    memcpy(copy, data, n); copy[n] = 0;
    char *argv[66];
    int argc = 0;
    argv[argc++] = "edge";
    for (size_t i = 0; i < n && argc < 65;) { argv[argc++] = copy + i; i += strlen(copy + i) + 1; }
    argv[argc] = 0;
    Err e = {0};
    XfDebug saved = xf_debug;
    EdgeOptions saved_opt = edge_opt;           /* --device sets edge_opt.device */
    if (xf_debug_parse(&argc, argv, &e)) {
        FUZZ_ASSERT(argc >= 1 && argv[argc] == 0);
        RunOpts o;
        int rc = run_parse_args(&o, argc, argv);
        FUZZ_ASSERT(rc == -1 || rc == EXIT_OK || rc == EXIT_USAGE);
        if (rc == -1) {
            FUZZ_ASSERT(o.sep_len <= sizeof o.sep && o.n_stops <= EDGE_RUN_MAX_STOPS);
            FUZZ_ASSERT(o.n_predict >= 0 && o.n_predict <= EDGE_MAX_POS && o.n_ctx <= EDGE_MAX_POS);
        }
    } else {
        FUZZ_ASSERT(e.code == EXIT_USAGE && e.msg[0]);
    }
    xf_debug = saved;
    edge_opt = saved_opt;
    free(copy);
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_args(data, n); return 0; }
#endif
