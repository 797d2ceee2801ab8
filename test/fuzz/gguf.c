/* gguf.c — fuzz target: the GGUF reader (header, metadata, tensor directory, tensor data
   bounds, the first row of every tensor through its CPU decoder), then what the loader reads
   from a file that parsed: the model config, the weight directory and the tokenizer tables.
   Seeds: build/fuzz-corpus/gguf (see build.sh fuzz) and test/corpus/gguf (every-weight-type: one
   tensor of each supported type). */
#include "fuzz.h"

static void fuzz_gguf(const u8 *data, size_t n) {
    Arena *a = fuzz_scratch();
    Gguf g;
    Err e = {0};
    if (!gguf_parse(&g, data, n, "fuzz.gguf", a, &e)) { FUZZ_ASSERT(e.code == EXIT_MODEL && e.msg[0]); return; }
    for (u64 i = 0; i < g.n_tensors; i++) {             /* every tensor lies inside the input */
        const GgufTensor *t = &g.tensors[i];
        u64 off = (u64)(t->data - data);
        FUZZ_ASSERT(t->data >= data && off <= n && t->nbytes <= n - off);
        if (t->ne[0] <= 4096 && t->nbytes) {            /* its first row decodes (any bit pattern is a block) */
            static f32 row[4096];
            u64 rb;
            FUZZ_ASSERT(ggml_row_bytes(t->type, t->ne[0], &rb) && rb <= t->nbytes);
            dequant_row(t->type, t->data, row, t->ne[0]);
        }
    }
    for (u64 i = 0; i < g.n_kv; i++) {                  /* every getter on every key */
        const GgufKV *kv = &g.kv[i];
        char key[128];
        u64 kl = MIN(kv->key.len, sizeof key - 1);
        memcpy(key, kv->key.ptr, kl); key[kl] = 0;
        if (memchr(key, 0, kl)) continue;
        u32 u; i64 x; f32 f; bool b; GgufStr s; u32 et; u64 an; const u8 *ad;
        (void)gguf_get_u32(&g, key, &u); (void)gguf_get_i64(&g, key, &x); (void)gguf_get_f32(&g, key, &f);
        (void)gguf_get_bool(&g, key, &b); (void)gguf_get_str(&g, key, &s);
        if (gguf_get_arr(&g, key, &et, &an, &ad) && an) {
            (void)gguf_arr_i64(kv, 0, &x); (void)gguf_arr_i64(kv, an - 1, &x);
            (void)gguf_arr_f32(kv, 0, &f); (void)gguf_arr_f32(kv, an - 1, &f);
        }
        GgufStr *strs; u64 ns;
        Temp tmp = temp_begin(a);
        if (kv->type == GGUF_ARRAY && kv->arr_type == GGUF_STRING) (void)gguf_get_str_array(&g, key, a, &strs, &ns);
        temp_end(tmp);
    }
    ModelConfig cfg;
    if (model_config_from_gguf(&g, true, &cfg, &e)) {
        ModelWeights w;
        (void)model_weights_load(&w, &cfg, &g, a, &e);
    }
    Tokenizer *t;
    if (tok_load(&t, &g, a, &e)) {
        static const u8 text[] = "\x03Hello world, <s> 12345 \xc3\xa9\xe4\xb8\xad <|im_end|>\xff";
        fuzz_encode(t, text, sizeof text - 1);
    }
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_gguf(data, n); return 0; }
#endif
