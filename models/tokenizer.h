/* tokenizer.h — SentencePiece-BPE ("llama" vocabularies) and byte-level BPE ("gpt2"
   vocabularies) read from a GGUF's tokenizer.* keys; special tokens; streaming detokenizer.

   API (the contract other modules code against):
     tok_load(&t, gguf, arena, err)                    build a Tokenizer from the GGUF (vocab-only files too)
     tok_encode(t, text, len, add_bos, parse_special, out, cap)  -> number of ids (may exceed cap: then call again)
     tok_piece(t, id, &len)                            the raw stored piece of a token
     tok_decoder_init(&d) / tok_decode(t, &d, id, buf, cap) -> bytes ready to print (UTF-8 safe, held back mid-sequence)
     tok_decode_flush(t, &d, buf, cap)                 end of stream: pending invalid bytes -> U+FFFD
     tok_clean_spaces(t, text, n)                      llama_detokenize's clean-up of a whole text (Llama 3 / gpt-2 BPE)
     tok_bos(t) / tok_eos(t) / tok_eot(t)              ids, -1 when absent
     tok_is_eog(t, id)                                 end of generation (EOS, EOT, <end_of_turn>, <|im_end|>, <|eot_id|>...) */
#ifndef EDGE_TOKENIZER_H
#define EDGE_TOKENIZER_H

typedef enum TokKind { TOK_SPM, TOK_BPE } TokKind;

typedef struct Tokenizer Tokenizer;

typedef struct TokDecoder {
    u8  pending[8];     /* bytes of an incomplete UTF-8 sequence */
    u32 n_pending;
    bool at_start;      /* for the SPM leading-space rule (see tokenizer.c) */
    bool special;       /* print CONTROL/UNKNOWN tokens' text (default: nothing) */
    bool raw;           /* pass invalid UTF-8 bytes through (default: U+FFFD) */
} TokDecoder;

bool        tok_load(Tokenizer **t, const Gguf *g, Arena *a, Err *e);
u32         tok_encode(const Tokenizer *t, const char *text, u64 len, bool add_bos, bool parse_special, i32 *out, u32 cap);
const char *tok_piece(const Tokenizer *t, i32 id, u32 *len);
u32         tok_n_vocab(const Tokenizer *t);
void        tok_decoder_init(TokDecoder *d);
u32         tok_decode(const Tokenizer *t, TokDecoder *d, i32 id, char *buf, u32 cap);
u32         tok_decode_flush(const Tokenizer *t, TokDecoder *d, char *buf, u32 cap);
u32         tok_clean_spaces(const Tokenizer *t, char *text, u32 n);
i32         tok_bos(const Tokenizer *t);
i32         tok_eos(const Tokenizer *t);
i32         tok_eot(const Tokenizer *t);
bool        tok_is_eog(const Tokenizer *t, i32 id);
i32         tok_find(const Tokenizer *t, const char *text, u64 len);   /* id of a piece by its text, -1 absent */
u32         tok_type(const Tokenizer *t, i32 id);                      /* GGUF token type (1 normal .. 6 byte) */

#endif
