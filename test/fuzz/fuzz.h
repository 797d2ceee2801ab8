/* fuzz.h — shared by the libFuzzer harnesses (test/fuzz/TARGET.c) and the corpus replay test
   (test/fuzz_test.c).

   Each harness file holds fuzz_TARGET(data, n): the whole body, called by libFuzzer's
   LLVMFuzzerTestOneInput (built by `./build.sh fuzz TARGET SECONDS`) and, without libFuzzer, by
   the normal test suite on every file in test/corpus/TARGET/ (FUZZ_IN_TESTS defined: the test
   binary already includes edge.c and the harnesses are included after it).

   API:
     fuzz_scratch()           a 64 MiB arena, reset at every call (one per process)
     fuzz_vocab(name)         a tokenizer from test/fixtures/tokenizer (llama2, gemma, qwen2.5): read from
                              build/vocab/NAME-vocab.gguf (build.sh decompresses it) or through `xz -dc`;
                              loaded once, NULL when missing
     FUZZ_ASSERT(cond)        a property: abort() under libFuzzer (a crash it reports), CHECK in the tests */
#ifndef EDGE_FUZZ_H
#define EDGE_FUZZ_H

#ifndef FUZZ_IN_TESTS
#define EDGE_TESTING 1
#include "../../edge.c"
#define FUZZ_ASSERT(c) do { if (!(c)) { errf("fuzz: property failed: %s at %s\n", #c, SITE); abort(); } } while (0)
#else
#define FUZZ_ASSERT(c) CHECK(c)
#endif

static Arena fuzz_arena;

static Arena *fuzz_scratch(void) {
    if (!fuzz_arena.base) arena_init(&fuzz_arena, "fuzz scratch", 64ull << 20);
    arena_pop_to(&fuzz_arena, 0);
    return &fuzz_arena;
}

typedef struct FuzzVocab {
    const char *name;
    bool        tried;
    u8         *data;
    Arena       a;
    Gguf        g;
    Tokenizer  *t;
} FuzzVocab;

static FuzzVocab fuzz_vocabs[] = { { .name = "llama2" }, { .name = "gemma" }, { .name = "qwen2.5" } };

/* All of a file (or a command's stdout) into malloc'd memory. */
static u8 *fuzz_slurp(FILE *f, u64 *n) {
    u64 cap = 1 << 20, k = 0;
    u8 *b = (u8 *)malloc(cap);
    for (size_t r; b && (r = fread(b + k, 1, cap - k, f)) > 0;) {
        k += r;
        if (k == cap) { cap *= 2; u8 *nb = (u8 *)realloc(b, cap); if (!nb) { free(b); return 0; } b = nb; }
    }
    *n = k;
    return b;
}

/* fuzz_vocab and fuzz_encode are marked unused: a harness is built alone (./build.sh fuzz) and only
   the tokenizer harnesses call them; the test binary includes every harness and uses both. */
__attribute__((unused)) static Tokenizer *fuzz_vocab(const char *name) {
    FuzzVocab *v = 0;
    for (u32 i = 0; i < ARRAY_COUNT(fuzz_vocabs); i++) if (!strcmp(fuzz_vocabs[i].name, name)) v = &fuzz_vocabs[i];
    if (!v) return 0;
    if (v->tried) return v->t;
    v->tried = true;
    char path[256]; u64 n = 0;
    fmt_buf(path, sizeof path, "build/vocab/%s-vocab.gguf", name);
    FILE *f = fopen(path, "rb");
    if (f) { v->data = fuzz_slurp(f, &n); fclose(f); }
    else {
        char cmd[512];
        fmt_buf(cmd, sizeof cmd, "xz -dc test/fixtures/tokenizer/%s-vocab.gguf.xz 2>/dev/null", name);
        if (!(f = popen(cmd, "r"))) return 0;
        v->data = fuzz_slurp(f, &n);
        pclose(f);
    }
    if (!v->data || n == 0) { errf("fuzz: vocabulary %s not found (build/vocab or test/fixtures/tokenizer)\n", name); return 0; }
    Err e = {0};
    arena_init(&v->a, "fuzz vocabulary", 256ull << 20);
    if (!gguf_parse(&v->g, v->data, n, path, &v->a, &e) || !tok_load(&v->t, &v->g, &v->a, &e)) {
        errf("fuzz: vocabulary %s: %s\n", name, e.msg);
        v->t = 0;
    }
    return v->t;
}

/* Encodes data with t (flags: bit0 add_bos, bit1 parse_special, bits 2-4 a small cap), checks
   every id is in the vocabulary and that a small cap reports the same count, then decodes the
   ids through the streaming detokenizer. The tokenizer harnesses share it. */
__attribute__((unused)) static void fuzz_encode(Tokenizer *t, const u8 *data, size_t n) {
    if (!t || n < 1) return;
    u8 flags = data[0];
    const char *text = (const char *)data + 1;
    u64 len = n - 1;
    Arena *a = fuzz_scratch();
    u32 cap = (u32)(len * 2 + 16);
    i32 *ids = push_array(a, i32, cap);
    u32 k = tok_encode(t, text, len, flags & 1, (flags & 2) != 0, ids, cap);
    FUZZ_ASSERT(k <= cap);
    u32 nv = tok_n_vocab(t);
    for (u32 i = 0; i < k; i++) FUZZ_ASSERT(ids[i] >= 0 && (u32)ids[i] < nv);
    u32 small = (flags >> 2) & 7;
    i32 *few = push_array(a, i32, small + 1);
    u32 k2 = tok_encode(t, text, len, flags & 1, (flags & 2) != 0, few, small);
    FUZZ_ASSERT(k2 == k);
    for (u32 i = 0; i < MIN(small, k); i++) FUZZ_ASSERT(few[i] == ids[i]);
    TokDecoder d;
    tok_decoder_init(&d);
    d.special = (flags & 32) != 0; d.raw = (flags & 64) != 0;
    char buf[1024];
    for (u32 i = 0; i < k; i++) { u32 m = tok_decode(t, &d, ids[i], buf, sizeof buf); FUZZ_ASSERT(m <= sizeof buf); }
    FUZZ_ASSERT(tok_decode_flush(t, &d, buf, sizeof buf) <= sizeof buf);
}

#endif
