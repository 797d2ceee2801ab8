/* gen.c — `edge gen-model`: options, then models/genmodel.h's gen_model_write, and one line
   that says what was written (size, time) and whether it matches a listed config. */
#include <sys/stat.h>

static int gen_usage(const char *why) {
    char presets[256], types[160];
    errf("edge gen-model: %s\n"
         "usage: edge gen-model --config NAME --type PRESET -o FILE [--seed N] [--layers N]\n"
         "                      [--token-embedding-type T] [--output-tensor-type T]\n"
         "  a GGUF with random weights and the tensor names, shapes, order and per-tensor types that\n"
         "  llama.cpp's converter (F16) and llama-quantize without an imatrix (the other presets, their\n"
         "  fallbacks for rows that are not whole blocks included) write for the config (`edge models`)\n"
         "  --type PRESET               %s\n"
         "  --token-embedding-type T    token_embd.weight's type, as llama-quantize's option\n"
         "  --output-tensor-type T      output.weight's (a tied embedding's too, unless the option above)\n"
         "                              T: %s\n"
         "  --layers N  fewer layers than the config: load the file with --allow-unlisted\n", why,
         gen_preset_list(presets, sizeof presets), ggml_supported_list(types, sizeof types));
    return EXIT_USAGE;
}

static int gen_cmd(int argc, char **argv) {
    const char *cfg = 0, *type = 0, *path = 0, *tok_t = 0, *out_t = 0;
    u64 seed = 1, layers = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { gen_usage("help"); return EXIT_OK; }
        if (i + 1 >= argc) { char wy[96]; fmt_buf(wy, sizeof wy, "unknown option or missing value: '%s'", a); return gen_usage(wy); }
        const char *v = argv[++i];
        char *end = 0;
        if (!strcmp(a, "--config")) cfg = v;
        else if (!strcmp(a, "--type")) type = v;
        else if (!strcmp(a, "-o")) path = v;
        else if (!strcmp(a, "--token-embedding-type")) tok_t = v;
        else if (!strcmp(a, "--output-tensor-type")) out_t = v;
        else if (!strcmp(a, "--seed")) { seed = strtoull(v, &end, 10); if (*end || !*v) return gen_usage("--seed wants a number"); }
        else if (!strcmp(a, "--layers")) { layers = strtoull(v, &end, 10); if (*end || !*v || layers == 0 || layers > 4096) return gen_usage("--layers wants 1..4096"); }
        else { char wy[96]; fmt_buf(wy, sizeof wy, "unknown option '%s'", a); return gen_usage(wy); }
    }
    if (!cfg || !type || !path) return gen_usage("--config, --type and -o are required");
    const ModelEntry *t = gen_find_config(cfg);
    if (!t) return gen_usage("unknown --config (see `edge models`)");
    GenType gt;
    if (!gen_type_parse(type, &gt)) return gen_usage("unknown --type preset");
    if (tok_t && !gen_tensor_type_parse(tok_t, &gt.tok_embd)) return gen_usage("unknown --token-embedding-type");
    if (out_t && !gen_tensor_type_parse(out_t, &gt.output)) return gen_usage("unknown --output-tensor-type");
    u32 nl = layers ? (u32)layers : t->n_layer;
    Err e = {0};
    f64 t0 = now_sec();
    if (!gen_model_write(path, t, nl, &gt, seed, &e)) { errf("edge gen-model: %s\n", e.msg); return e.code; }
    f64 dt = now_sec() - t0;
    struct stat st;
    u64 size = stat(path, &st) == 0 ? (u64)st.st_size : 0;
    out("wrote %s: %s %s, %u layers, seed %llu, %llu bytes (%.2f MiB) in %.2f s\n", path, t->name, gen_ftype_name(gt.ftype), nl,
        (unsigned long long)seed, (unsigned long long)size, (f64)size / 1048576.0, dt);
    if (nl != t->n_layer)
        out("note: %u layers instead of %u: the file matches no listed config; load it with --allow-unlisted\n", nl, t->n_layer);
    return EXIT_OK;
}

#define GEN_COMMANDS { "gen-model", gen_cmd, "write a random-weight GGUF of a listed config (benchmarks, tests)" },
