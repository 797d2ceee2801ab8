/* tokenizer.c — the tokenizers of edge, read from a GGUF's tokenizer.* keys:
   SentencePiece-BPE ("llama" vocabularies: Llama 2, Gemma, TinyStories) and byte-level
   BPE ("gpt2" vocabularies: Qwen2.5, Llama 3, GPT-2; in tokenizer_bpe.c), special
   tokens, and a streaming detokenizer. The commands `edge tokenize` and `edge detokenize` are cli/tokenize.c.

   Why: a prompt is only understood when its ids are exactly the ids the model was
   trained on. The reference is llama.cpp (c392e50); its behaviours are listed in
   ../shared/fixtures/README.md "Tokenizer fixtures" and reproduced here:
     - special tokens are cut out of the text first: each CONTROL/UNKNOWN (when
       parse_special) and USER_DEFINED (always) token, longest text first, splits
       every text fragment at each of its occurrences;
     - SPM: " " -> "▁", a "▁" prefixed to the first fragment and to every fragment
       that follows a special token (add_space_prefix), UTF-8 "characters" grouped by
       their lead byte alone (so an invalid lead byte swallows what follows it), merges
       of the highest-scoring adjacent pair (leftmost on ties), unmatched symbols as
       <0xNN> byte tokens;
     - tokens whose text is an end-of-generation or FIM marker are CONTROL whatever
       their stored type ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", ...).

   API (models/tokenizer.h): tok_load, tok_encode, tok_piece, tok_n_vocab, tok_decoder_init,
   tok_decode, tok_decode_flush, tok_bos/eos/eot, tok_is_eog. Added here:
     tok_find(t, text, len)      id of a piece given its text, -1 when absent
     tok_type(t, id)             GGUF token type (TOKT_*)
   tok_encode adds BOS (when add_bos and the vocabulary's add_bos_token say so), never
   EOS, and uses malloc'd scratch that it frees before returning (thread-safe: the
   Tokenizer is read-only after tok_load).
   TokDecoder: tok_decoder_init gives at_start = true (llama_detokenize's rule: a
   leading BOS is skipped, else one leading space of the first piece is dropped for
   SPM vocabularies with add_space_prefix; set at_start = false to keep it, e.g. for
   generated text), special = false (CONTROL/UNKNOWN print nothing; true prints their
   text like unparse_special), raw = false (an invalid UTF-8 sequence becomes one
   U+FFFD once it is known to be invalid or at flush; raw = true passes bytes as they
   are). An incomplete sequence is always held back until it completes.

   Memory: tok_load takes from the arena about 60 bytes per token plus the merges
   (about 24 MiB for Qwen2.5's 151,936 tokens and 151,387 merges) and 256 KiB for the
   special texts' presence index.
   Speed (test/bench_tokenize.sh, 1 MiB of mixed text, load included, 2-core VM): Qwen2.5
   and Llama 3 about 0.1 s, Gemma 3 about 0.1-0.2 s (docs/perf-log.md, "Tokenizer"). */

/* GGUF token types (tokenizer.ggml.token_type). */
enum { TOKT_UNDEFINED = 0, TOKT_NORMAL = 1, TOKT_UNKNOWN = 2, TOKT_CONTROL = 3,
       TOKT_USER_DEFINED = 4, TOKT_UNUSED = 5, TOKT_BYTE = 6 };

typedef enum TokPre { TOK_PRE_NONE, TOK_PRE_GPT2, TOK_PRE_LLAMA3, TOK_PRE_QWEN2 } TokPre;

typedef struct TokMerge { u32 left, right, rank; i32 id; } TokMerge;   /* hash slot; id < 0: empty */

struct Tokenizer {
    TokKind kind;
    TokPre  pre;                /* BPE pre-tokenizer */
    u32     n_vocab;
    char  **text;               /* (n_vocab) pieces as stored, NUL-terminated copies */
    u32    *text_len;           /* (n_vocab) */
    f32    *score;              /* (n_vocab) SPM merge priority */
    u8     *type;               /* (n_vocab) TOKT_* after the text-based CONTROL override */
    char   *dec;                /* decoded bytes of every token, back to back */
    u32    *dec_off;            /* (n_vocab + 1) */
    i32    *map;                /* (map_mask + 1) piece hash -> id, -1 empty */
    u32     map_mask;
    i32     bos, eos, eot, unk; /* -1 when absent */
    bool    add_bos, add_space_prefix, ignore_merges;
    bool    clean_spaces;       /* whole-text detokenization drops spaces before ?!., and in contractions (BPE but qwen2) */
    i32    *special;            /* (n_special) CONTROL/USER_DEFINED/UNKNOWN ids, longest text first */
    u32     n_special;
    u32    *sp_off;             /* (65537) first two bytes of a special text -> its range in sp_len */
    u32    *sp_len;             /* distinct lengths (>= 2) of the special texts, ascending within a range */
    bool    sp_one[256];        /* some special text is this one byte */
    i32    *eog;                /* (n_eog) end-of-generation ids */
    u32     n_eog;
    i32     byte_id[256];       /* SPM: <0xNN>; BPE: the token of the byte's code point; -1 absent */
    TokMerge *merges;           /* (merge_mask + 1) BPE pair -> rank and merged id */
    u32     merge_mask;
};

/* Output of tok_encode: ids past cap are counted, not written. */
typedef struct TokOut { i32 *ids; u32 cap, n; } TokOut;
static inline void tok_emit(TokOut *o, i32 id) { if (o->n < o->cap) o->ids[o->n] = id; o->n++; }

/* implemented in tokenizer_bpe.c */
static bool tok_bpe_load(Tokenizer *t, const Gguf *g, Arena *a, Err *e);
static void tok_bpe_encode(const Tokenizer *t, const u8 *text, u64 len, TokOut *o);
static u32  tok_bpe_decode_piece(const Tokenizer *t, const char *s, u32 n, char *dst);

/* ---- piece hash ------------------------------------------------------------- */
/* FNV-1a, one byte at a time (tok_fnv), finished by tok_hash_end: the hash of every prefix of a
   text comes out of one pass (tok_mark_present). */
#define TOK_FNV_SEED 2166136261u
static inline u32 tok_fnv(u32 h, u8 c) { return (h ^ c) * 16777619u; }
static inline u32 tok_hash_end(u32 h) { return h ^ (h >> 15); }
static u32 tok_hash(const void *p, u64 n) {
    const u8 *s = (const u8 *)p; u32 h = TOK_FNV_SEED;
    for (u64 i = 0; i < n; i++) h = tok_fnv(h, s[i]);
    return tok_hash_end(h);
}

static i32 tok_find_hashed(const Tokenizer *t, const char *s, u64 n, u32 hash) {
    for (u32 i = hash & t->map_mask;; i = (i + 1) & t->map_mask) {
        i32 id = t->map[i];
        if (id < 0) return -1;
        if (t->text_len[id] == n && !memcmp(t->text[id], s, n)) return id;
    }
}

i32 tok_find(const Tokenizer *t, const char *s, u64 n) { return tok_find_hashed(t, s, n, tok_hash(s, n)); }

static i32 tok_find_cstr(const Tokenizer *t, const char *s) { return tok_find(t, s, strlen(s)); }

u32 tok_type(const Tokenizer *t, i32 id) { return (id >= 0 && (u32)id < t->n_vocab) ? t->type[id] : TOKT_UNDEFINED; }

/* ---- loading ------------------------------------------------------------------ */
static i32 tok_get_id(const Gguf *g, const char *key, i32 dflt, u32 n_vocab) {
    u32 v;
    if (!gguf_get_u32(g, key, &v)) return dflt;
    return v < n_vocab ? (i32)v : -1;          /* 0xFFFFFFFF means "none" */
}

/* Texts llama.cpp (c392e50) treats as end of generation, and as FIM markers; both forced to CONTROL. */
static const char *const tok_eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
};
static const char *const tok_eot_texts[] = {   /* EOT when no tokenizer.ggml.eot_token_id, in this order */
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
    "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>",
};
static const char *const tok_fim_texts[][5] = {  /* the first present of each group becomes CONTROL */
    { "<|fim_prefix|>", "<fim-prefix>", "<PRE>", "\xe2\x96\x81<PRE>", 0 },
    { "<|fim_suffix|>", "<fim-suffix>", "<SUF>", "\xe2\x96\x81<SUF>", 0 },
    { "<|fim_middle|>", "<fim-middle>", "<MID>", "\xe2\x96\x81<MID>", 0 },
    { "<|fim_pad|>", "<fim-pad>", "<PAD>", 0, 0 },
    { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", 0 },
    { "<|file_sep|>", "<|fim_sep|>", "<fim-sep>", 0, 0 },
};

static int tok_cmp_u64(const void *a, const void *b) {
    u64 x = *(const u64 *)a, y = *(const u64 *)b;
    return x < y ? -1 : x > y;
}

static void tok_set_control(Tokenizer *t, i32 id) { if (id >= 0) t->type[id] = TOKT_CONTROL; }

static u32 tok_spm_decode_piece(const Tokenizer *t, i32 id, char *dst) {
    const char *s = t->text[id]; u32 n = t->text_len[id], k = 0;
    switch (t->type[id]) {
    case TOKT_NORMAL:
        for (u32 i = 0; i < n; i++) {
            if (i + 2 < n && (u8)s[i] == 0xe2 && (u8)s[i + 1] == 0x96 && (u8)s[i + 2] == 0x81) { dst[k++] = ' '; i += 2; }
            else dst[k++] = s[i];
        }
        return k;
    case TOKT_BYTE:
        if (n == 6 && s[0] == '<' && s[1] == '0' && s[2] == 'x' && s[5] == '>') {
            dst[0] = (char)strtoul(s + 3, 0, 16); return 1;
        }
        return 0;
    case TOKT_CONTROL: case TOKT_UNKNOWN: case TOKT_USER_DEFINED:
        memcpy(dst, s, n); return n;
    default: return 0;
    }
}

/* tokenizer.ggml.tokens (texts copied into the arena), .scores and .token_type. */
static bool tok_load_vocab(Tokenizer *t, const Gguf *g, Arena *a, Err *e) {
    GgufStr *toks; u64 n;
    if (!gguf_get_str_array(g, "tokenizer.ggml.tokens", a, &toks, &n))
        return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.tokens is missing or not an array of strings", g->path);
    if (n == 0 || n > (1u << 24))
        return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.tokens has %llu entries (supported 1..16777216)", g->path, (unsigned long long)n);
    t->n_vocab = (u32)n;
    t->text = push_array(a, char *, n);
    t->text_len = push_array(a, u32, n);
    t->score = push_array(a, f32, n);
    t->type = push_array(a, u8, n);
    u64 total = 0;
    for (u64 i = 0; i < n; i++) {
        if (toks[i].len > (1u << 20))
            return err_set(e, EXIT_MODEL, "%s: token %llu is %llu bytes long (limit 1 MiB)", g->path,
                           (unsigned long long)i, (unsigned long long)toks[i].len);
        total += toks[i].len + 1;
    }
    char *blob = push_array(a, char, total);
    for (u64 i = 0; i < n; i++) {
        memcpy(blob, toks[i].ptr, toks[i].len); blob[toks[i].len] = 0;
        t->text[i] = blob; t->text_len[i] = (u32)toks[i].len; blob += toks[i].len + 1;
        t->type[i] = TOKT_NORMAL;
    }
    u32 et; u64 na; const u8 *d;
    if (gguf_get_arr(g, "tokenizer.ggml.scores", &et, &na, &d)) {
        if (et != GGUF_F32 || na != n)
            return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.scores: %llu values of type %u (expected %llu f32)",
                           g->path, (unsigned long long)na, et, (unsigned long long)n);
        for (u64 i = 0; i < n; i++) memcpy(&t->score[i], d + 4 * i, 4);
    }
    if (gguf_get_arr(g, "tokenizer.ggml.token_type", &et, &na, &d)) {
        if ((et != GGUF_I32 && et != GGUF_U32) || na != n)
            return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.token_type: %llu values of type %u (expected %llu i32)",
                           g->path, (unsigned long long)na, et, (unsigned long long)n);
        for (u64 i = 0; i < n; i++) {
            i32 v; memcpy(&v, d + 4 * i, 4);
            t->type[i] = (v >= 0 && v <= TOKT_BYTE) ? (u8)v : TOKT_UNDEFINED;
        }
    }
    return true;
}

/* piece -> id; with duplicate pieces the last id wins, as in llama.cpp */
static void tok_build_map(Tokenizer *t, Arena *a) {
    u32 n = t->n_vocab;
    u32 cap = 1024; while (cap < 2 * n) cap <<= 1;
    t->map_mask = cap - 1;
    t->map = push_array(a, i32, cap);
    memset(t->map, 0xff, (size_t)cap * sizeof(i32));
    for (u32 id = 0; id < n; id++) {
        u32 i = tok_hash(t->text[id], t->text_len[id]) & t->map_mask;
        for (;; i = (i + 1) & t->map_mask) {
            i32 o = t->map[i];
            if (o < 0 || (t->text_len[o] == t->text_len[id] && !memcmp(t->text[o], t->text[id], t->text_len[id]))) break;
        }
        t->map[i] = (i32)id;
    }
}

/* llama.cpp's text-based detection: EOT, EOG and FIM tokens become CONTROL; fills t->eog. */
static void tok_mark_control(Tokenizer *t, Arena *a) {
    if (t->eot < 0)
        for (u32 i = 0; i < ARRAY_COUNT(tok_eot_texts) && t->eot < 0; i++) t->eot = tok_find_cstr(t, tok_eot_texts[i]);
    tok_set_control(t, t->eot);
    t->eog = push_array(a, i32, ARRAY_COUNT(tok_eog_texts) + 2);
    for (u32 i = 0; i < ARRAY_COUNT(tok_eog_texts); i++) {
        i32 id = tok_find_cstr(t, tok_eog_texts[i]);
        if (id >= 0) { tok_set_control(t, id); t->eog[t->n_eog++] = id; }
    }
    if (t->eos >= 0 && !tok_is_eog(t, t->eos)) t->eog[t->n_eog++] = t->eos;
    if (t->eot >= 0 && !tok_is_eog(t, t->eot)) t->eog[t->n_eog++] = t->eot;
    for (u32 gi = 0; gi < ARRAY_COUNT(tok_fim_texts); gi++)
        for (u32 k = 0; k < 5 && tok_fim_texts[gi][k]; k++) {
            i32 id = tok_find_cstr(t, tok_fim_texts[gi][k]);
            if (id >= 0) { tok_set_control(t, id); break; }
        }
}

/* special tokens (CONTROL, USER_DEFINED, UNKNOWN with text), longest text first */
static void tok_sort_special(Tokenizer *t, Arena *a) {
    u32 n = t->n_vocab;
    Temp tmp = temp_begin(a);
    u64 *key = push_array(a, u64, n);             /* (~length, id): longest first, then by id */
    u32 ns = 0;
    for (u32 id = 0; id < n; id++) {
        u8 ty = t->type[id];
        if ((ty == TOKT_CONTROL || ty == TOKT_USER_DEFINED || ty == TOKT_UNKNOWN) && t->text_len[id] > 0)
            key[ns++] = (u64)(0xffffffffu - t->text_len[id]) << 32 | id;
    }
    qsort(key, ns, sizeof(u64), tok_cmp_u64);
    i32 *special = (i32 *)malloc((u64)ns * sizeof(i32) + 1);
    for (u32 i = 0; i < ns; i++) special[i] = (i32)(key[i] & 0xffffffffu);
    temp_end(tmp);
    t->special = push_array(a, i32, ns ? ns : 1);
    memcpy(t->special, special, (u64)ns * sizeof(i32));
    t->n_special = ns;
    free(special);
}

/* The presence index of the special texts: one-byte texts in sp_one; longer ones by their first two
   bytes, each bucket the distinct lengths ascending (tok_mark_present probes one hash per length). */
static void tok_index_special(Tokenizer *t, Arena *a) {
    u64 *key = (u64 *)malloc((u64)t->n_special * sizeof(u64) + 8), nk = 0;   /* (first two bytes, length) */
    if (!key) die(EXIT_USAGE, "tokenizer: out of memory for %u special tokens", t->n_special);
    for (u32 s = 0; s < t->n_special; s++) {
        const u8 *p = (const u8 *)t->text[t->special[s]]; u32 n = t->text_len[t->special[s]];
        if (n == 1) t->sp_one[p[0]] = true;
        else key[nk++] = (u64)(p[0] << 8 | p[1]) << 32 | n;
    }
    qsort(key, nk, sizeof(u64), tok_cmp_u64);
    u64 nu = 0;
    for (u64 i = 0; i < nk; i++) if (!nu || key[i] != key[nu - 1]) key[nu++] = key[i];
    t->sp_off = push_array(a, u32, 65537);
    t->sp_len = push_array(a, u32, nu ? nu : 1);
    for (u64 i = 0; i < nu; i++) { t->sp_len[i] = (u32)key[i]; t->sp_off[(key[i] >> 32) + 1]++; }
    for (u32 b = 0; b < 65536; b++) t->sp_off[b + 1] += t->sp_off[b];
    free(key);
}

/* decoded bytes of every token: t->dec, indexed by t->dec_off */
static bool tok_build_decoded(Tokenizer *t, const Gguf *g, Arena *a, Err *e) {
    u32 n = t->n_vocab;
    bool is_spm = t->kind == TOK_SPM;
    t->dec_off = push_array(a, u32, (u64)n + 1);
    u64 dec_total = 0;
    for (u32 id = 0; id < n; id++) dec_total += t->text_len[id];
    if (dec_total >= (1ull << 32)) return err_set(e, EXIT_MODEL, "%s: vocabulary text exceeds 4 GiB", g->path);
    t->dec = push_array(a, char, dec_total + 1);
    u32 pos = 0;
    for (u32 id = 0; id < n; id++) {
        t->dec_off[id] = pos;
        if (is_spm) pos += tok_spm_decode_piece(t, (i32)id, t->dec + pos);
        else if (t->type[id] == TOKT_NORMAL) pos += tok_bpe_decode_piece(t, t->text[id], t->text_len[id], t->dec + pos);
        else if (t->type[id] == TOKT_CONTROL || t->type[id] == TOKT_UNKNOWN || t->type[id] == TOKT_USER_DEFINED) {
            memcpy(t->dec + pos, t->text[id], t->text_len[id]); pos += t->text_len[id];
        }
    }
    t->dec_off[n] = pos;
    return true;
}

/* Kind, vocabulary, piece map, special ids and flags (BPE: merges), CONTROL detection,
   the sorted special list, SPM byte tokens, decoded pieces. */
bool tok_load(Tokenizer **out, const Gguf *g, Arena *a, Err *e) {
    GgufStr model;
    if (!gguf_get_str(g, "tokenizer.ggml.model", &model))
        return err_set(e, EXIT_MODEL, "%s: no tokenizer (metadata key 'tokenizer.ggml.model' is missing)", g->path);
    Tokenizer *t = push_array(a, Tokenizer, 1);
    if (gguf_str_eq(model, "llama")) t->kind = TOK_SPM;
    else if (gguf_str_eq(model, "gpt2")) t->kind = TOK_BPE;
    else return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.model '%.*s' is not supported (supported: llama, gpt2)",
                        g->path, (int)MIN(model.len, 64), model.ptr);
    if (!tok_load_vocab(t, g, a, e)) return false;
    tok_build_map(t, a);

    u32 n = t->n_vocab;
    bool is_spm = t->kind == TOK_SPM;
    t->bos = tok_get_id(g, "tokenizer.ggml.bos_token_id", is_spm && n > 1 ? 1 : -1, t->n_vocab);
    t->eos = tok_get_id(g, "tokenizer.ggml.eos_token_id", is_spm && n > 2 ? 2 : -1, t->n_vocab);
    t->unk = tok_get_id(g, "tokenizer.ggml.unknown_token_id", is_spm ? 0 : -1, t->n_vocab);
    t->eot = tok_get_id(g, "tokenizer.ggml.eot_token_id", -1, t->n_vocab);
    t->add_bos = is_spm;
    t->add_space_prefix = is_spm;
    if (!is_spm && !tok_bpe_load(t, g, a, e)) return false;
    bool b;
    if (gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b)) t->add_bos = b;
    if (gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &b)) t->add_space_prefix = b;
    if (t->bos < 0) t->add_bos = false;

    tok_mark_control(t, a);
    tok_sort_special(t, a);
    tok_index_special(t, a);
    for (u32 c = 0; c < 256 && is_spm; c++) {     /* byte tokens: <0xNN>, else the one-byte piece */
        char buf[8]; fmt_buf(buf, sizeof buf, "<0x%02X>", c);
        t->byte_id[c] = tok_find_cstr(t, buf);
        if (t->byte_id[c] < 0) { char one[1] = { (char)c }; t->byte_id[c] = tok_find(t, one, 1); }
    }
    if (!tok_build_decoded(t, g, a, e)) return false;
    *out = t;
    return true;
}

const char *tok_piece(const Tokenizer *t, i32 id, u32 *len) {
    if (id < 0 || (u32)id >= t->n_vocab) { *len = 0; return ""; }
    *len = t->text_len[id];
    return t->text[id];
}
u32  tok_n_vocab(const Tokenizer *t) { return t->n_vocab; }
i32  tok_bos(const Tokenizer *t) { return t->bos; }
i32  tok_eos(const Tokenizer *t) { return t->eos; }
i32  tok_eot(const Tokenizer *t) { return t->eot; }
bool tok_is_eog(const Tokenizer *t, i32 id) {
    if (id < 0) return false;
    for (u32 i = 0; i < t->n_eog; i++) if (t->eog[i] == id) return true;
    return false;
}

/* ---- special-token partition ---------------------------------------------------- */
typedef struct TokFrag { u64 off, len; i32 id; } TokFrag;   /* id < 0: raw text [off, off+len) */
typedef struct TokFrags { TokFrag *v; u64 n, cap; } TokFrags;

static void tok_frags_push(TokFrags *f, u64 off, u64 len, i32 id) {
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->v = (TokFrag *)realloc(f->v, f->cap * sizeof(TokFrag));
        if (!f->v) die(EXIT_USAGE, "tokenizer: out of memory for %llu fragments", (unsigned long long)f->cap);
    }
    f->v[f->n++] = (TokFrag){ off, len, id };
}

static inline void tok_bit_set(u64 *bits, i32 id) { if (id >= 0) bits[(u32)id >> 6] |= 1ull << (id & 63); }
static inline bool tok_bit(const u64 *bits, i32 id) { return id >= 0 && (bits[(u32)id >> 6] >> (id & 63) & 1); }

/* Sets the bit (by tok_find's id of the text) of every special text that occurs in s, in one pass:
   at each byte, one hash probe per length of its two-byte bucket, the hashes of the prefixes
   extended byte by byte. Gemma 3's 6,414 special texts, searched one by one, cost 0.4 s per MiB. */
static void tok_mark_present(const Tokenizer *t, const u8 *s, u64 len, u64 *seen) {
    for (u64 i = 0; i < len; i++) {
        if (t->sp_one[s[i]]) tok_bit_set(seen, tok_find(t, (const char *)s + i, 1));
        if (i + 1 >= len) break;
        u32 b = (u32)s[i] << 8 | s[i + 1], h = TOK_FNV_SEED;
        u64 k = 0;
        for (u32 j = t->sp_off[b]; j < t->sp_off[b + 1] && t->sp_len[j] <= len - i; j++) {
            for (; k < t->sp_len[j]; k++) h = tok_fnv(h, s[i + k]);
            tok_bit_set(seen, tok_find_hashed(t, (const char *)s + i, k, tok_hash_end(h)));
        }
    }
}

/* llama.cpp's tokenizer_st_partition: every special token in turn (longest first) cuts
   every raw fragment at each of its occurrences. Tokens absent from the whole text are
   skipped at once (tok_mark_present). */
static TokFrags tok_partition(const Tokenizer *t, const char *text, u64 len, bool parse_special) {
    TokFrags cur = {0}, nxt = {0};
    if (len == 0) return cur;
    tok_frags_push(&cur, 0, len, -1);
    u64 *seen = (u64 *)calloc(t->n_vocab / 64 + 1, sizeof(u64));
    if (!seen) die(EXIT_USAGE, "tokenizer: out of memory for %u bits", t->n_vocab);
    tok_mark_present(t, (const u8 *)text, len, seen);
    for (u32 s = 0; s < t->n_special; s++) {
        i32 id = t->special[s];
        if (!parse_special && t->type[id] != TOKT_USER_DEFINED) continue;
        const char *pat = t->text[id]; u32 pl = t->text_len[id];
        if (!tok_bit(seen, tok_find(t, pat, pl))) continue;
        bool hit = false;
        for (u64 i = 0; i < cur.n && !hit; i++)
            hit = cur.v[i].id < 0 && cur.v[i].len >= pl && memmem(text + cur.v[i].off, cur.v[i].len, pat, pl);
        if (!hit) continue;
        nxt.n = 0;
        for (u64 i = 0; i < cur.n; i++) {
            TokFrag f = cur.v[i];
            if (f.id >= 0) { tok_frags_push(&nxt, f.off, f.len, f.id); continue; }
            u64 p = f.off, end = f.off + f.len;
            while (p < end) {
                const char *m = end - p >= pl ? (const char *)memmem(text + p, end - p, pat, pl) : 0;
                if (!m) { tok_frags_push(&nxt, p, end - p, -1); break; }
                u64 mo = (u64)(m - text);
                if (mo > p) tok_frags_push(&nxt, p, mo - p, -1);
                tok_frags_push(&nxt, mo, pl, id);
                p = mo + pl;
            }
        }
        TokFrags tmp = cur; cur = nxt; nxt = tmp;
    }
    free(nxt.v); free(seen);
    return cur;
}

/* ---- SentencePiece BPE ----------------------------------------------------------- */
/* Max-heap of candidate merges: higher key first, then the leftmost. SPM keys are
   token scores; BPE keys are -rank. */
typedef struct TokPair { f32 key; i32 left; u32 size; } TokPair;
typedef struct TokHeap { TokPair *v; u64 n; } TokHeap;

static inline bool tok_pair_before(TokPair a, TokPair b) { return a.key > b.key || (a.key == b.key && a.left < b.left); }

static void tok_heap_push(TokHeap *h, TokPair p) {
    u64 i = h->n++;
    while (i > 0) {
        u64 up = (i - 1) / 2;
        if (!tok_pair_before(p, h->v[up])) break;
        h->v[i] = h->v[up]; i = up;
    }
    h->v[i] = p;
}

static TokPair tok_heap_pop(TokHeap *h) {
    TokPair top = h->v[0], last = h->v[--h->n];
    u64 i = 0;
    for (;;) {
        u64 c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && tok_pair_before(h->v[c + 1], h->v[c])) c++;
        if (!tok_pair_before(h->v[c], last)) break;
        h->v[i] = h->v[c]; i = c;
    }
    if (h->n) h->v[i] = last;
    return top;
}

/* llama.cpp's unicode_len_utf8: the length a lead byte announces (continuation bytes: 1). */
static inline u32 tok_utf8_len(u8 c) { static const u8 l[16] = { 1,1,1,1,1,1,1,1,1,1,1,1,2,2,3,4 }; return l[c >> 4]; }

typedef struct TokSym { u32 start, n; i32 prev, next; } TokSym;

static void tok_spm_try_pair(const Tokenizer *t, const char *buf, TokSym *sym, TokHeap *h, i32 l, i32 r) {
    if (l < 0 || r < 0) return;
    i32 id = tok_find(t, buf + sym[l].start, sym[l].n + sym[r].n);
    if (id < 0) return;
    tok_heap_push(h, (TokPair){ t->score[id], l, sym[l].n + sym[r].n });
}

static void tok_spm_encode(const Tokenizer *t, const char *text, u64 len, bool prefix, TokOut *o) {
    u64 m = prefix ? 3 : 0, cap = m;
    for (u64 i = 0; i < len; i++) cap += text[i] == ' ' ? 3 : 1;
    if (cap >= (1u << 31)) die(EXIT_USAGE, "tokenizer: a text fragment of %llu bytes is too long (limit 2 GiB)", (unsigned long long)len);
    char *buf = (char *)malloc(cap + 1);
    if (!buf) die(EXIT_USAGE, "tokenizer: out of memory for %llu bytes of text", (unsigned long long)len);
    if (prefix) memcpy(buf, "\xe2\x96\x81", 3);
    for (u64 i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(buf + m, "\xe2\x96\x81", 3); m += 3; }
        else buf[m++] = text[i];
    }
    u64 nsym = 0;                                 /* symbols, then at most 3 candidate pairs per symbol */
    for (u64 off = 0; off < m; nsym++) off += MIN((u64)tok_utf8_len((u8)buf[off]), m - off);
    TokSym *sym = (TokSym *)malloc((nsym + 1) * sizeof(TokSym));
    TokHeap h = { (TokPair *)malloc((3 * nsym + 4) * sizeof(TokPair)), 0 };
    if (!sym || !h.v) die(EXIT_USAGE, "tokenizer: out of memory for %llu bytes of text", (unsigned long long)len);
    i32 ns = 0;
    for (u64 off = 0; off < m;) {
        u32 l = (u32)MIN((u64)tok_utf8_len((u8)buf[off]), m - off);
        sym[ns] = (TokSym){ (u32)off, l, ns - 1, -1 };
        if (ns > 0) sym[ns - 1].next = ns;
        ns++; off += l;
    }
    for (i32 i = 1; i < ns; i++) tok_spm_try_pair(t, buf, sym, &h, i - 1, i);
    while (h.n) {
        TokPair p = tok_heap_pop(&h);
        TokSym *l = &sym[p.left];
        if (l->n == 0 || l->next < 0) continue;
        TokSym *r = &sym[l->next];
        if (r->n == 0 || l->n + r->n != p.size) continue;
        l->n += r->n; r->n = 0;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = p.left;
        tok_spm_try_pair(t, buf, sym, &h, l->prev, p.left);
        tok_spm_try_pair(t, buf, sym, &h, p.left, l->next);
    }
    for (i32 i = ns ? 0 : -1; i >= 0; i = sym[i].next) {
        i32 id = tok_find(t, buf + sym[i].start, sym[i].n);
        if (id >= 0) { tok_emit(o, id); continue; }
        for (u32 k = 0; k < sym[i].n; k++) {
            i32 b = t->byte_id[(u8)buf[sym[i].start + k]];
            if (b >= 0) tok_emit(o, b); else if (t->unk >= 0) tok_emit(o, t->unk);
        }
    }
    free(buf); free(sym); free(h.v);
}

u32 tok_encode(const Tokenizer *t, const char *text, u64 len, bool add_bos, bool parse_special, i32 *out, u32 cap) {
    TokOut o = { out, cap, 0 };
    if (add_bos && t->add_bos) tok_emit(&o, t->bos);
    TokFrags f = tok_partition(t, text, len, parse_special);
    bool prev_special = true;
    for (u64 i = 0; i < f.n; i++) {
        if (f.v[i].id >= 0) { tok_emit(&o, f.v[i].id); prev_special = true; continue; }
        if (t->kind == TOK_SPM) tok_spm_encode(t, text + f.v[i].off, f.v[i].len, t->add_space_prefix && prev_special, &o);
        else tok_bpe_encode(t, (const u8 *)text + f.v[i].off, f.v[i].len, &o);
        prev_special = false;
    }
    free(f.v);
    return o.n;
}

/* ---- streaming detokenizer ----------------------------------------------------------- */
typedef struct TokBuf { char *p; u32 cap, n; } TokBuf;
static void tok_put(TokBuf *b, const void *s, u32 n) {
    u32 k = MIN(n, b->cap - b->n);   /* past cap: dropped (pieces are short; callers pass >= 256) */
    memcpy(b->p + b->n, s, k); b->n += k;
}

static void tok_put_invalid(const TokDecoder *d, TokBuf *b, const u8 *s, u32 n) {
    if (d->raw) tok_put(b, s, n); else tok_put(b, "\xef\xbf\xbd", 3);
}

/* One byte through the UTF-8 checker: complete sequences go out, an incomplete one waits. */
static void tok_dec_byte(TokDecoder *d, TokBuf *b, u8 c) {
    if (d->n_pending) {
        u8 lead = d->pending[0];
        bool ok = (c & 0xc0) == 0x80;
        if (ok && d->n_pending == 1)
            ok = !((lead == 0xe0 && c < 0xa0) || (lead == 0xed && c > 0x9f) || (lead == 0xf0 && c < 0x90) || (lead == 0xf4 && c > 0x8f));
        if (ok) {
            d->pending[d->n_pending++] = c;
            if (d->n_pending == tok_utf8_len(lead)) { tok_put(b, d->pending, d->n_pending); d->n_pending = 0; }
            return;
        }
        tok_put_invalid(d, b, d->pending, d->n_pending);
        d->n_pending = 0;
    }
    if (c < 0x80) tok_put(b, &c, 1);
    else if (c >= 0xc2 && c <= 0xf4) { d->pending[0] = c; d->n_pending = 1; }
    else tok_put_invalid(d, b, &c, 1);
}

void tok_decoder_init(TokDecoder *d) { memset(d, 0, sizeof *d); d->at_start = true; }

u32 tok_decode(const Tokenizer *t, TokDecoder *d, i32 id, char *buf, u32 cap) {
    if (id < 0 || (u32)id >= t->n_vocab) return 0;
    bool strip = false;
    if (d->at_start) {
        d->at_start = false;
        if (id == t->bos && t->add_bos) return 0;
        strip = t->kind == TOK_SPM && t->add_space_prefix;
    }
    u8 ty = t->type[id];
    if ((ty == TOKT_CONTROL || ty == TOKT_UNKNOWN) && !d->special) return 0;
    const u8 *s = (const u8 *)t->dec + t->dec_off[id];
    u32 n = t->dec_off[id + 1] - t->dec_off[id];
    if (strip && n && s[0] == ' ') { s++; n--; }
    TokBuf b = { buf, cap, 0 };
    for (u32 i = 0; i < n; i++) tok_dec_byte(d, &b, s[i]);
    return b.n;
}

u32 tok_decode_flush(const Tokenizer *t, TokDecoder *d, char *buf, u32 cap) {
    (void)t;
    TokBuf b = { buf, cap, 0 };
    if (d->n_pending) tok_put_invalid(d, &b, d->pending, d->n_pending);
    d->n_pending = 0;
    return b.n;
}

/* llama.cpp's clean-up of a whole detokenized text (llama_detokenize with clean_spaces, the BPE
   vocabularies but qwen2's): " ?", " !", " .", " ," lose the space; a lone apostrophe between spaces
   loses both; " 's", " 'm", " 're", " 've" lose the space. In place; returns the new length. */
/* One pass: each byte copied down, the space before it dropped where drop(s, i, n) says so. */
static u32 tok_clean_pass(char *s, u32 n, bool (*drop)(const char *s, u32 i, u32 n)) {
    u32 k = n ? 1 : 0;
    for (u32 i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && drop(s, i, n)) k--;
        s[k++] = x;
    }
    return k;
}

static bool tok_clean_punct(const char *s, u32 i, u32 n) {       /* " ?", " !", " .", " ," */
    (void)n;
    return s[i] == '?' || s[i] == '!' || s[i] == '.' || s[i] == ',';
}

static bool tok_clean_contraction(const char *s, u32 i, u32 n) { /* " 's", " 'm", " 're", " 've" */
    if (s[i] != '\'' || i + 1 >= n) return false;
    char x1 = s[i + 1], x2 = i + 2 < n ? s[i + 2] : 0;
    return x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e');
}

/* " ' " -> "'": both spaces around a lone apostrophe go */
static u32 tok_clean_apostrophe(char *s, u32 n) {
    u32 k = n ? 1 : 0;
    for (u32 i = 1; i < n; i++) {
        char x = s[i];
        if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') { k--; s[++i] = 0; }
        s[k++] = x;
    }
    return k;
}

u32 tok_clean_spaces(const Tokenizer *t, char *s, u32 n) {
    if (!t->clean_spaces) return n;
    n = tok_clean_pass(s, n, tok_clean_punct);
    n = tok_clean_apostrophe(s, n);
    return tok_clean_pass(s, n, tok_clean_contraction);
}
