/* info.c — `edge info`: the Vulkan device, its capabilities, memory heaps and types, and the
   embedded kernel table (models/engine.h's eng_print_device and eng_print_kernels; the table is
   printed also when no device opens). */

static int cmd_info(int argc, char **argv) {
    (void)argc; (void)argv;
    Engine g; Err e;
    if (!eng_open_device(&g, &e)) { errf("edge: %s\n", e.msg); eng_print_kernels(); return e.code; }
    eng_print_device(&g);
    eng_print_kernels();
    eng_close(&g);
    return EXIT_OK;
}
#define INFO_COMMANDS { "info", cmd_info, "the Vulkan device, its limits and features, and the embedded kernel table" },
