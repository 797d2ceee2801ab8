/* edge.c — the only translation unit of edge: a single-binary LLM inference
   runner for ARM boards with Mali and Adreno GPUs (Vulkan compute).

   This file includes every module in dependency order (headers, then
   implementations), then holds the command line: `edge <command> [options]`.
   Layers, bottom to top: base -> config -> kernels (Vulkan, no model knowledge)
   and models/gguf -> models -> cli (each command's options and output) and fat/
   -> this file. docs/architecture.md draws it.

   Build: ./build.sh (see there); test builds define EDGE_TESTING and supply their own main. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#ifndef EDGE_VERSION
#define EDGE_VERSION "0.1.0"
#endif
#ifndef EDGE_GIT_HASH
#define EDGE_GIT_HASH "unknown"
#endif

/* ---- headers, bottom to top ------------------------------------------------- */
#include "base/base.h"
#include "base/options.h"
#include "base/json.h"
#include "config/edge_config.h"
#include "kernels/kernel.h"
#include "kernels.gen.h"            /* build/: SPIR-V arrays + reflected signatures */
#include "kernels/vk.h"
#include "kernels/ops.h"
#include "models/gguf.h"
#include "models/quant.h"
#include "models/tokenizer.h"
#include "models/chat.h"
#include "models/model.h"
#include "models/reference.h"
#include "models/transformer.h"
#include "models/engine.h"
#include "models/sampler.h"
#include "models/gguf_write.h"
#include "models/genmodel.h"
#include "models/plan.h"
#include "fat/fat.h"

/* ---- implementations, bottom to top ----------------------------------------- */
/* Each module that adds subcommands defines <MODULE>_COMMANDS: Command initializers. */
typedef struct Command {
    const char *name;
    int (*fn)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
} Command;

#include "base/base.c"
#include "base/options.c"
#include "base/json.c"
#include "kernels/vk.c"
#include "kernels/ops.c"
#include "kernels/ops_matmul.c"
#include "kernels/ops_attn.c"
#include "models/gguf.c"
#include "models/quant.c"
#include "models/tokenizer.c"
#include "models/tokenizer_bpe.c"
#include "models/chat.c"
#include "models/model.c"
#include "models/reference.c"
#include "models/transformer.c"
#include "models/engine.c"
#include "models/xf_debug.c"
#include "cli/bench.c"
#include "models/sampler.c"
#include "cli/run.c"
#include "cli/run_par.c"
#include "models/gguf_write.c"
#include "models/genmodel.c"
#include "models/plan.c"
#include "cli/eval.c"
#include "cli/plan.c"
#include "cli/gen.c"
#include "cli/models.c"
#include "cli/tokenize.c"
#include "cli/gguf.c"
#include "cli/paths.c"
#include "cli/info.c"
#include "fat/fat_kernels.c"
#include "fat/fat.c"

/* ---- command line ----------------------------------------------------------- */
static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const Command edge_commands[] = {
    { "help",    cmd_help,    "this text" },
    RUN_COMMANDS
    { "version", cmd_version, "version and git hash" },
    INFO_COMMANDS
    GGUF_COMMANDS
    MODELS_COMMANDS
    EVAL_COMMANDS
    BENCH_COMMANDS
    PATHS_COMMANDS
    TOKENIZE_COMMANDS
    GEN_COMMANDS
    PLAN_COMMANDS
    FAT_COMMANDS
};

static int cmd_version(int argc, char **argv) {
    (void)argc; (void)argv;
    out("edge %s (git %s)\n", EDGE_VERSION, EDGE_GIT_HASH);
    return EXIT_OK;
}

static int cmd_help(int argc, char **argv) {
    (void)argc; (void)argv;
    out("edge %s — LLM inference on Vulkan GPUs, and the board's factory acceptance test\n\n"
        "usage: edge [options]          generate (the run command; prompts on stdin or -p)\n"
        "       edge <command> [options]\n\ncommands:\n", EDGE_VERSION);
    for (u32 i = 0; i < ARRAY_COUNT(edge_commands); i++)
        out("  %-12s %s\n", edge_commands[i].name, edge_commands[i].summary);
    out("\n");
    run_print_help();
    out("\ndebug options (any command that runs the GPU forward pass):\n"
        "  --trace[=CATS]      per op on stderr: phase, layer, op, kernel (WGSL file:entry), dtypes, shape and\n"
        "                      statistics over exactly the output's elements (min max mean |max|@(pos, dim) NaN Inf);\n"
        "                      submits op by op. CATS (comma list, default all): embed attn ffn norm logits sample;\n"
        "                      kernels = every op's kernel line without statistics\n"
        "  --trace-layers LIST only these layers (e.g. 0,3-5)\n"
        "  --trace-pos LIST    only these token positions\n"
        "  --trace-warn X      flag values with |x| > X\n"
        "  --check-nan         submit op by op; at the first op whose output holds a NaN or Inf print the op, layer,\n"
        "                      positions, kernel and the statistics of its inputs and output, and exit 4\n"
        "  --profile           GPU timestamps per op; at the end a table per phase: time and share per op class,\n"
        "                      dispatches per token, tokens per second\n"
        "  (NaN/Inf in the final logits always exits 4.) Testing aid: EDGE_INJECT_NAN=OP:LAYER[:prefill|decode] writes a\n"
        "  NaN into that op's output (OP: embed norm matmul rope kv attn add glu ffn logits softcap, or a site name; LAYER: n or -)\n");
    out("\n");
    run_print_exit_codes();
    out("  10 edge fat: a check failed   11 edge fat: the test could not run (docs/fat.md)\n");
    return EXIT_OK;
}

#ifndef EDGE_TESTING   /* test builds (test/tests.c) supply their own main: test/runner.c */
static int edge_main(int argc, char **argv) {
    Err e = {0};
    if (!xf_debug_parse(&argc, argv, &e)) { errf("edge: %s\n", e.msg); return e.code; }
    if (argc < 2) return run_main(argc, argv);
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h")) return cmd_help(argc - 1, argv + 1);
    if (!strcmp(c, "--version")) return cmd_version(argc - 1, argv + 1);
    if (c[0] == '-') return run_main(argc, argv);           /* edge [options]: the run command */
    for (u32 i = 0; i < ARRAY_COUNT(edge_commands); i++)
        if (!strcmp(c, edge_commands[i].name)) return edge_commands[i].fn(argc - 1, argv + 1);
    errf("edge: unknown command '%s' (see edge --help)\n", c);
    return EXIT_USAGE;
}

int main(int argc, char **argv) {
    options_load();             /* the environment, read once (base/options.h) */
    return edge_main(argc, argv);
}
#endif
