/* gguf.c — `edge gguf FILE`: a GGUF's header, metadata (values printed by models/gguf.h's
   gguf_print_value) and tensor directory with the total tensor bytes. */

typedef unsigned long long ull;

static int cmd_gguf(int argc, char **argv) {
    if (argc != 2) { errf("usage: edge gguf FILE\n"); return EXIT_USAGE; }
    Arena a; arena_init(&a, "gguf", 64ull << 20);
    Gguf g; Err e;
    if (!gguf_open(&g, argv[1], &a, &e)) { errf("edge: %s\n", e.msg); arena_free(&a); return e.code; }
    out("%s: GGUF version %u, %llu bytes, %llu metadata entries, %llu tensors, alignment %llu, data at offset %llu\n",
        g.path, g.version, (ull)g.size, (ull)g.n_kv, (ull)g.n_tensors, (ull)g.alignment, (ull)g.data_offset);
    out("\nmetadata:\n");
    for (u64 i = 0; i < g.n_kv; i++) {
        const GgufKV *kv = &g.kv[i];
        out("  %-44.*s ", (int)MIN(kv->key.len, 200), kv->key.ptr);
        gguf_print_value(kv);
        out("\n");
    }
    out("\ntensors:\n  %-40s %-6s %-25s %12s %12s\n", "name", "type", "shape", "offset", "bytes");
    u64 total = 0;
    for (u64 i = 0; i < g.n_tensors; i++) {
        const GgufTensor *t = &g.tensors[i];
        char shape[96]; int n = fmt_buf(shape, sizeof shape, "[%llu", (ull)t->ne[0]);
        for (u32 d = 1; d < t->ndim; d++) n += fmt_buf(shape + n, (int)sizeof shape - n, ", %llu", (ull)t->ne[d]);
        fmt_buf(shape + n, (int)sizeof shape - n, "]");
        out("  %-40.*s %-6s %-25s %12llu %12llu\n", (int)MIN(t->name.len, 200), t->name.ptr, ggml_type_name(t->type),
            shape, (ull)t->offset, (ull)t->nbytes);
        total += t->nbytes;
    }
    out("%llu tensors, %llu bytes of tensor data\n", (ull)g.n_tensors, (ull)total);
    gguf_close(&g);
    arena_free(&a);
    return EXIT_OK;
}

#define GGUF_COMMANDS { "gguf", cmd_gguf, "print a GGUF file's metadata and tensor directory" },
