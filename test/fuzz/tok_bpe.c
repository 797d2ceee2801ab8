/* tok_bpe.c — fuzz target: the byte-level BPE tokenizer ("gpt2" vocabularies: pre-tokenizer
   regex classes, merges) on the qwen2.5 vocabulary of test/fixtures/tokenizer, and the
   detokenizer on its output. Input: one flags byte (as tok_spm.c; bit7 unused), then the text. */
#include "fuzz.h"

static void fuzz_tok_bpe(const u8 *data, size_t n) { fuzz_encode(fuzz_vocab("qwen2.5"), data, n); }

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_tok_bpe(data, n); return 0; }
#endif
