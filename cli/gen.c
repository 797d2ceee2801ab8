/* gen.c — `edge gen-model`: options, then models/genmodel.h's gen_model_write, and one line
   that says what was written (size, time) and whether it matches a listed config. */
#include <sys/stat.h>

static int gen_usage(const char *why) {
    errf("edge gen-model: %s\n"
         "usage: edge gen-model --config NAME --type F16|Q8_0|Q4_K_M -o FILE [--seed N] [--layers N]\n"
         "  a GGUF with random weights and the tensor names, shapes, order and types that llama.cpp's\n"
         "  converter and quantizer produce for the config (`edge models` lists the names)\n"
         "  --layers N  fewer layers than the config: load the file with --allow-unlisted\n", why);
    return EXIT_USAGE;
}

static int gen_cmd(int argc, char **argv) {
    const char *cfg = 0, *type = 0, *path = 0;
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
        else if (!strcmp(a, "--seed")) { seed = strtoull(v, &end, 10); if (*end || !*v) return gen_usage("--seed wants a number"); }
        else if (!strcmp(a, "--layers")) { layers = strtoull(v, &end, 10); if (*end || !*v || layers == 0 || layers > 4096) return gen_usage("--layers wants 1..4096"); }
        else { char wy[96]; fmt_buf(wy, sizeof wy, "unknown option '%s'", a); return gen_usage(wy); }
    }
    if (!cfg || !type || !path) return gen_usage("--config, --type and -o are required");
    const ModelEntry *t = gen_find_config(cfg);
    if (!t) return gen_usage("unknown --config (see `edge models`)");
    u32 ftype;
    if (!gen_type_parse(type, &ftype)) return gen_usage("--type is F16, Q8_0 or Q4_K_M");
    u32 nl = layers ? (u32)layers : t->n_layer;
    Err e = {0};
    f64 t0 = now_sec();
    if (!gen_model_write(path, t, nl, ftype, seed, &e)) { errf("edge gen-model: %s\n", e.msg); return e.code; }
    f64 dt = now_sec() - t0;
    struct stat st;
    u64 size = stat(path, &st) == 0 ? (u64)st.st_size : 0;
    out("wrote %s: %s %s, %u layers, seed %llu, %llu bytes (%.2f MiB) in %.2f s\n", path, t->name, gen_ftype_name(ftype), nl,
        (unsigned long long)seed, (unsigned long long)size, (f64)size / 1048576.0, dt);
    if (nl != t->n_layer)
        out("note: %u layers instead of %u: the file matches no listed config; load it with --allow-unlisted\n", nl, t->n_layer);
    return EXIT_OK;
}

#define GEN_COMMANDS { "gen-model", gen_cmd, "write a random-weight GGUF of a listed config (benchmarks, tests)" },
