/* paths.c — `edge paths`: the kernel path of a model on this device. Options, the device's
   features (eng_caps) and the activation dtype, then both phases as the engine describes them
   (eng_print_paths; with -np N a batched step of N rows too) and the dtype-chain check (EXIT_USAGE when broken, EXIT_DEVICE when
   --act f16 meets a device without shaderFloat16). The default activation dtype is edge run's. */

static int paths_usage(const char *why) {
    errf("edge paths: %s\n"
         "usage: edge paths [-m MODEL.gguf] [--act f32|f16] [-np N] [--allow-unlisted]\n"
         "  --act: the activation path (default: edge run's, f16 where the device has shaderFloat16)\n"
         "  -np, --parallel N: also a batched decode step of N sequences (edge run -np N; 1..%u)\n"
         "  the kernel path of the GPU forward pass for MODEL on this device: every op's kernel (WGSL file and\n"
         "  entry point), its dtypes and why it was chosen, per kind of layer, for prefill and decode, and the\n"
         "  dtype-chain check (every op reads a tensor with the dtype the op before it wrote). Without -m the\n"
         "  embedded stories260K model is used.\n", why, (unsigned)EDGE_MAX_SEQ);
    return EXIT_USAGE;
}

static int paths_cmd(int argc, char **argv) {
    const char *path = 0, *act_s = 0;
    bool allow_unlisted = false;
    u32 n_seq = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { paths_usage("help"); return EXIT_OK; }
        else if (!strcmp(a, "--allow-unlisted")) allow_unlisted = true;
        else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && i + 1 < argc) path = argv[++i];
        else if (!strcmp(a, "--act") && i + 1 < argc) act_s = argv[++i];
        else if ((!strcmp(a, "-np") || !strcmp(a, "--parallel")) && i + 1 < argc) {
            char *end; unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || v < 1 || v > EDGE_MAX_SEQ) {
                char w[160]; fmt_buf(w, sizeof w, "-np '%s': a whole number 1..%u", argv[i], (unsigned)EDGE_MAX_SEQ); return paths_usage(w);
            }
            n_seq = (u32)v;
        }
        else { char w[160]; fmt_buf(w, sizeof w, "unknown option or missing value '%s'", a); return paths_usage(w); }
    }
    if (act_s && strcmp(act_s, "f32") && strcmp(act_s, "f16")) return paths_usage("--act is f32 or f16");
    Arena a; arena_init(&a, "paths", (u64)EDGE_HOST_ARENA_MIB << 20);
    Err e = {0};
    Model m;
    if (!model_open(&m, path, allow_unlisted, &a, &e)) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    Engine g;
    if (!eng_open_device(&g, &e)) { errf("edge: %s\n", e.msg); model_close(&m); arena_free(&a); return e.code; }
    int rc = EXIT_OK;
    const ModelConfig *c = &m.cfg;
    EngCaps k = eng_caps(&g);
    DType act = act_s ? (!strcmp(act_s, "f16") ? DT_F16 : DT_F32) : k.f16_arith ? DT_F16 : DT_F32;   /* (edge run's default) */
    out("kernel path of %s (%s, %u layers) on %s\n", c->name, model_arch_name(c->arch), c->n_layer, k.device);
    out("device features: f16 arithmetic %s, 16-bit storage %s, cooperative matrices %s, subgroup arithmetic %s, timestamps %s, maxStorageBufferRange %llu\n",
        k.f16_arith ? "yes" : "no", k.storage16 ? "yes" : "no", k.coopmat ? "yes" : "no",
        k.subgroup_arith ? "yes" : "no", k.timestamps ? "yes" : "no", (unsigned long long)k.max_storage_range);
    if (act == DT_F16 && !k.f16_arith) {
        errf("edge paths: --act f16 needs shaderFloat16, which '%s' lacks (use --act f32)\n", k.device);
        rc = EXIT_DEVICE;
    } else {
        out("activations %s, KV cache %s: %s\n", dtype_name[act], dtype_name[act],
            act_s ? (act == DT_F16 ? "--act f16 (the device has shaderFloat16)" : "--act f32") :
            k.f16_arith ? "edge run's default (the device has shaderFloat16; --act f32 shows the f32 path)" :
                          "edge run's default (f16 needs shaderFloat16, which this device lacks)");
        if (!eng_print_paths(&g, &m, act, n_seq)) rc = EXIT_USAGE;
    }
    eng_close(&g);
    model_close(&m);
    arena_free(&a);
    return rc;
}

#define PATHS_COMMANDS \
    { "paths", paths_cmd, "the kernel path (kernels, dtypes, why) of a model on this device, and its dtype-chain check" },
