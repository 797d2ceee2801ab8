/* edge.c — the only translation unit of edge: a single-binary LLM inference
   runner for ARM boards with Mali and Adreno GPUs (Vulkan compute).

   This file includes every module in dependency order (headers, then
   implementations), then holds the command line: `edge <command> [options]`.
   Layers, bottom to top: base -> config -> kernels (Vulkan, no model knowledge)
   and models/gguf -> models -> test/fat -> this file. docs/architecture.md draws it.

   Build: ./build.sh (see there); test builds define EDGE_TESTING and supply their own main. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifndef EDGE_VERSION
#define EDGE_VERSION "0.1.0"
#endif
#ifndef EDGE_GIT_HASH
#define EDGE_GIT_HASH "unknown"
#endif

/* ---- headers, bottom to top ------------------------------------------------- */
#include "base/base.h"
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
#include "test/fat.h"

/* ---- implementations, bottom to top ----------------------------------------- */
/* Each module that adds subcommands defines <MODULE>_COMMANDS: Command initializers. */
typedef struct Command {
    const char *name;
    int (*fn)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
} Command;

#include "base/base.c"
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
#include "test/fat_kernels.c"
#include "test/fat.c"

/* ---- command line ----------------------------------------------------------- */
static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const Command edge_commands[] = {
    { "help",    cmd_help,    "this text" },
    { "version", cmd_version, "version and git hash" },
    VK_COMMANDS
    GGUF_COMMANDS
    MODEL_COMMANDS
    ENGINE_COMMANDS
    TOK_COMMANDS
    CHAT_COMMANDS
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
        "usage: edge <command> [options]\n\ncommands:\n", EDGE_VERSION);
    for (u32 i = 0; i < ARRAY_COUNT(edge_commands); i++)
        out("  %-12s %s\n", edge_commands[i].name, edge_commands[i].summary);
    out("\nexit codes:\n"
        "  0 success   1 usage error   2 model file error   3 device error\n"
        "  4 numeric fault (NaN/Inf)   5 some prompts failed   130 interrupted\n"
        "  10 edge fat: a check failed   11 edge fat: the test could not run (docs/fat.md)\n");
    return EXIT_OK;
}

static int edge_main(int argc, char **argv) {
    if (argc < 2) return cmd_help(argc, argv);
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h")) return cmd_help(argc - 1, argv + 1);
    if (!strcmp(c, "--version")) return cmd_version(argc - 1, argv + 1);
    for (u32 i = 0; i < ARRAY_COUNT(edge_commands); i++)
        if (!strcmp(c, edge_commands[i].name)) return edge_commands[i].fn(argc - 1, argv + 1);
    errf("edge: unknown command '%s' (see edge --help)\n", c);
    return EXIT_USAGE;
}

#ifndef EDGE_TESTING
int main(int argc, char **argv) { return edge_main(argc, argv); }
#endif
