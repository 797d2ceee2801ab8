/* info.c — `edge info`: the Vulkan device, its capabilities, memory heaps and types, and the
   embedded kernel table (kernels/vk.c's vk_print_info and kernel_print_table; the table is
   printed also when no device opens). */

static int cmd_info(int argc, char **argv) {
    (void)argc; (void)argv;
    Vk vk; Err e;
    if (!vk_init(&vk, &e)) { errf("edge: %s\n", e.msg); kernel_print_table(); return e.code; }
    vk_print_info(&vk);
    kernel_print_table();
    vk_shutdown(&vk);
    return EXIT_OK;
}

#define INFO_COMMANDS { "info", cmd_info, "the Vulkan device, its limits and features, and the embedded kernel table" },
