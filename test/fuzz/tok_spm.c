/* tok_spm.c — fuzz target: the SentencePiece-BPE tokenizer ("llama" vocabularies) on the llama2
   and gemma vocabularies of test/fixtures/tokenizer, and the detokenizer on its output.
   Input: one flags byte (bit0 BOS, bit1 parse special tokens, bits 2-4 a small cap to re-encode
   with, bit5 decode specials, bit6 raw bytes, bit7 gemma instead of llama2), then the text. */
#include "fuzz.h"

static void fuzz_tok_spm(const u8 *data, size_t n) {
    if (n < 1) return;
    fuzz_encode(fuzz_vocab(data[0] & 128 ? "gemma" : "llama2"), data, n);
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_tok_spm(data, n); return 0; }
#endif
