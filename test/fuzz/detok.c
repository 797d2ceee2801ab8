/* detok.c — fuzz target: the streaming detokenizer on arbitrary id sequences (in and out of
   the vocabulary, control and byte tokens, split UTF-8) with small output buffers.
   Input: byte 0 picks the vocabulary (mod 3) and the flags (bit2 special, bit3 raw, bit4 at_start),
   byte 1 the output buffer size (1..256), then little-endian u16 pairs -> id (mod n_vocab + 8) - 4. */
#include "fuzz.h"

static void fuzz_detok(const u8 *data, size_t n) {
    if (n < 2) return;
    static const char *const names[] = { "llama2", "gemma", "qwen2.5" };
    Tokenizer *t = fuzz_vocab(names[(data[0] & 3) % 3]);
    if (!t) return;
    TokDecoder d;
    tok_decoder_init(&d);
    d.special = (data[0] & 4) != 0; d.raw = (data[0] & 8) != 0; d.at_start = (data[0] & 16) != 0;
    u32 cap = (u32)data[1] + 1;
    char *buf = (char *)malloc(cap);            /* exact size: ASan sees any write past it */
    u64 nv = tok_n_vocab(t);
    for (size_t i = 2; i + 1 < n; i += 2) {
        i64 id = (i64)((u32)data[i] | (u32)data[i + 1] << 8);
        if (nv > 65535) id = id * 5;            /* reach the whole of gemma's 256k vocabulary */
        id = id % (i64)(nv + 8) - 4;
        u32 k = tok_decode(t, &d, (i32)id, buf, cap);
        FUZZ_ASSERT(k <= cap);
        FUZZ_ASSERT(d.n_pending <= sizeof d.pending);
    }
    FUZZ_ASSERT(tok_decode_flush(t, &d, buf, cap) <= cap);
    free(buf);
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_detok(data, n); return 0; }
#endif
