/* tests.c — the unity root of the test binary: edge.c without its main, the
   runner, then every test file. Add a test file here, one line each. */
#define EDGE_TESTING 1
#include "../edge.c"
#include "test.h"
#include "runner.c"
#include "fixtures.c"

#include "base_test.c"
#include "options_test.c"
#include "gguf_test.c"
#include "tokenizer_test.c"
#include "vk_test.c"
#include "matmul_test.c"
#include "attn_test.c"
#include "reference_test.c"
#include "gpu_test.c"
#include "profile_test.c"
#include "debug_test.c"
#include "json_test.c"
#include "sampler_test.c"
#include "run_test.c"
#include "gen_test.c"
#include "fuzz_test.c"
