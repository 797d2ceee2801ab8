/* tokenizer_bpe.c — byte-level BPE ("gpt2" vocabularies: Qwen2.5, Llama 3, GPT-2), the
   second half of models/tokenizer.c (included right after it by edge.c).

   Why: these vocabularies spell every byte as a printable code point (GPT-2's
   bytes_to_unicode: the bytes 0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF stand for themselves,
   the other 68 bytes become U+0100.. in byte order), cut the text into words with a
   regex (tokenizer.ggml.pre), and merge byte pairs by rank (tokenizer.ggml.merges).

   What llama.cpp (c392e50) does, reproduced here:
     - the text is decoded to code points first; a byte that does not start a
       well-formed sequence (lead and continuation bits only, as llama.cpp checks)
       becomes U+FFFD, and the words are re-encoded from the code points;
     - pre-tokenizers, hand-written from their regexes (leftmost alternative wins):
         qwen2     (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}
                   | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
         llama-bpe the same with \p{N}{1,3}; a word that is a whole token is not merged (ignore_merges)
         gpt-2     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
       \p{L}, \p{N} and \s come from build/unicode.gen.h (tools/unigen.c: UnicodeData.txt
       general categories, PropList.txt White_Space);
     - per word: start from its bytes, repeatedly merge the adjacent pair of lowest rank
       (leftmost on ties). A heap of candidate pairs over a linked list of symbols.

   Not reproduced: a merge whose result is not a token (never the case in real vocabularies)
   is ignored; a 4-byte sequence above U+10FFFF (llama.cpp aborts) becomes U+FFFD. */
#include "unicode.gen.h"

/* ---- Unicode classes ------------------------------------------------------------------ */
static u8 tok_uni(u32 c) {
    if (c < 128) return tok_uni_ascii[c];
    u32 lo = 0, hi = TOK_UNI_NRANGES;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (c < tok_uni_ranges[mid].lo) hi = mid;
        else if (c > tok_uni_ranges[mid].hi) lo = mid + 1;
        else return tok_uni_ranges[mid].flags;
    }
    return 0;
}
static inline bool tok_is_l(u32 c)  { return tok_uni(c) & TOK_UNI_L; }
static inline bool tok_is_n(u32 c)  { return tok_uni(c) & TOK_UNI_N; }
static inline bool tok_is_ws(u32 c) { return tok_uni(c) & TOK_UNI_WS; }
static inline bool tok_is_other(u32 c) { return !(tok_uni(c) & (TOK_UNI_L | TOK_UNI_N | TOK_UNI_WS)); }   /* [^\s\p{L}\p{N}] */
static inline bool tok_is_nl(u32 c) { return c == '\r' || c == '\n'; }

/* llama.cpp's lenient decoder: lead and continuation bits are checked, overlong forms and
   surrogates pass; each byte that does not start a sequence gives U+FFFD. */
static u64 tok_cpts_from_utf8(const u8 *s, u64 n, u32 *out) {
    u64 k = 0;
    for (u64 i = 0; i < n;) {
        u8 c = s[i];
        u32 len = c < 0x80 ? 1 : c < 0xc0 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf8 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (u32 j = 1; ok && j < len; j++) ok = (s[i + j] & 0xc0) == 0x80;
        if (!ok) { out[k++] = 0xfffd; i++; continue; }
        u32 cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (u32 j = 1; j < len; j++) cp = (cp << 6) | (s[i + j] & 0x3f);
        out[k++] = cp > 0x10ffff ? 0xfffd : cp;
        i += len;
    }
    return k;
}

static u32 tok_utf8_put(u32 cp, u8 *o) {
    if (cp < 0x80) { o[0] = (u8)cp; return 1; }
    if (cp < 0x800) { o[0] = (u8)(0xc0 | cp >> 6); o[1] = (u8)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) { o[0] = (u8)(0xe0 | cp >> 12); o[1] = (u8)(0x80 | ((cp >> 6) & 0x3f)); o[2] = (u8)(0x80 | (cp & 0x3f)); return 3; }
    o[0] = (u8)(0xf0 | cp >> 18); o[1] = (u8)(0x80 | ((cp >> 12) & 0x3f)); o[2] = (u8)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (u8)(0x80 | (cp & 0x3f));
    return 4;
}

/* ---- GPT-2 byte <-> code point ---------------------------------------------------------- */
static inline bool tok_byte_is_printable(u32 b) { return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff); }

/* The code point that stands for byte b: itself when printable, else U+0100 + its rank
   among the 68 others. */
static u32 tok_cp_from_byte(u8 b) {
    static u16 map[256];
    if (!map['A']) {                              /* idempotent: racing threads write the same values */
        u32 k = 0;
        for (u32 x = 0; x < 256; x++) map[x] = (u16)(tok_byte_is_printable(x) ? x : 0x100 + k++);
    }
    return map[b];
}

static i32 tok_byte_from_cp(u32 cp) {
    if (cp < 0x100) return tok_byte_is_printable(cp) ? (i32)cp : -1;
    if (cp >= 0x100 + 68) return -1;
    u32 k = cp - 0x100;                           /* the k-th non-printable byte */
    for (u32 x = 0; x < 256; x++) if (!tok_byte_is_printable(x) && k-- == 0) return (i32)x;
    return -1;
}

/* A NORMAL token's text back to bytes; a code point outside the map stays as its UTF-8. */
static u32 tok_bpe_decode_piece(const Tokenizer *t, const char *s, u32 n, char *dst) {
    (void)t;
    u32 k = 0;
    for (u32 i = 0; i < n;) {
        u32 cp; u64 one = tok_cpts_from_utf8((const u8 *)s + i, MIN((u64)tok_utf8_len((u8)s[i]), (u64)(n - i)), &cp);
        u32 len = MIN(tok_utf8_len((u8)s[i]), n - i);
        i32 b = one == 1 ? tok_byte_from_cp(cp) : -1;
        if (b >= 0) dst[k++] = (char)b;
        else { memcpy(dst + k, s + i, len); k += len; }
        i += len;
    }
    return k;
}

/* ---- merges ------------------------------------------------------------------------------- */
static inline u32 tok_pair_hash(u32 l, u32 r) { u64 x = ((u64)l << 32 | r) * 0x9e3779b97f4a7c15ull; return (u32)(x >> 32); }

static const TokMerge *tok_merge_find(const Tokenizer *t, i32 l, i32 r) {
    for (u32 i = tok_pair_hash((u32)l, (u32)r) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        const TokMerge *m = &t->merges[i];
        if (m->id < 0) return 0;
        if (m->left == (u32)l && m->right == (u32)r) return m;
    }
}

static bool tok_bpe_load(Tokenizer *t, const Gguf *g, Arena *a, Err *e) {
    GgufStr pre = { "", 0 };
    gguf_get_str(g, "tokenizer.ggml.pre", &pre);
    if (gguf_str_eq(pre, "qwen2") || gguf_str_eq(pre, "deepseek-r1-qwen")) t->pre = TOK_PRE_QWEN2;
    else if (gguf_str_eq(pre, "llama-bpe") || gguf_str_eq(pre, "llama3") || gguf_str_eq(pre, "llama-v3")) {
        t->pre = TOK_PRE_LLAMA3; t->ignore_merges = true; t->add_bos = true;
    } else if (gguf_str_eq(pre, "gpt-2")) t->pre = TOK_PRE_GPT2;
    else return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.pre '%.*s' is not supported (supported: qwen2, llama-bpe, gpt-2)",
                        g->path, (int)MIN(pre.len, 64), pre.ptr);
    t->clean_spaces = t->pre != TOK_PRE_QWEN2;     /* llama.cpp: every BPE pre-tokenizer but qwen2's (and a few others) */

    for (u32 b = 0; b < 256; b++) {
        u8 s[4]; u32 n = tok_utf8_put(tok_cp_from_byte((u8)b), s);
        t->byte_id[b] = tok_find(t, (const char *)s, n);
    }

    GgufStr *ms; u64 nm;
    if (!gguf_get_str_array(g, "tokenizer.ggml.merges", a, &ms, &nm))
        return err_set(e, EXIT_MODEL, "%s: tokenizer.ggml.merges is missing or not an array of strings (needed by a gpt2 tokenizer)", g->path);
    if (nm >= (1u << 30)) return err_set(e, EXIT_MODEL, "%s: %llu merges (limit 2^30)", g->path, (unsigned long long)nm);
    u32 cap = 1024; while (cap < 2 * nm) cap <<= 1;
    t->merge_mask = cap - 1;
    t->merges = push_array(a, TokMerge, cap);
    for (u32 i = 0; i < cap; i++) t->merges[i].id = -1;
    Temp tmp = temp_begin(a);
    u64 maxlen = 0;
    for (u64 i = 0; i < nm; i++) maxlen = MAX(maxlen, ms[i].len);
    char *cat = push_array(a, char, maxlen + 1);
    for (u64 i = 0; i < nm; i++) {
        const char *s = ms[i].ptr; u64 n = ms[i].len, sp = 1;
        while (sp < n && s[sp] != ' ') sp++;
        if (sp >= n) return err_set(e, EXIT_MODEL, "%s: merge %llu '%.*s' has no space", g->path, (unsigned long long)i, (int)MIN(n, 64), s);
        i32 l = tok_find(t, s, sp), r = tok_find(t, s + sp + 1, n - sp - 1);
        memcpy(cat, s, sp); memcpy(cat + sp, s + sp + 1, n - sp - 1);
        i32 id = tok_find(t, cat, n - 1);
        if (l < 0 || r < 0 || id < 0) continue;
        u32 k = tok_pair_hash((u32)l, (u32)r) & t->merge_mask;
        while (t->merges[k].id >= 0 && !(t->merges[k].left == (u32)l && t->merges[k].right == (u32)r)) k = (k + 1) & t->merge_mask;
        if (t->merges[k].id >= 0) continue;                 /* a repeated pair keeps its first rank */
        t->merges[k] = (TokMerge){ (u32)l, (u32)r, (u32)i, id };
    }
    temp_end(tmp);
    return true;
}

/* ---- pre-tokenizers: the end of the word that starts at c[i] -------------------------------- */
static u64 tok_run(const u32 *c, u64 n, u64 j, bool (*pred)(u32)) { while (j < n && pred(c[j])) j++; return j; }
static inline u32 tok_lower(u32 c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static u64 tok_ws_end(const u32 *c, u64 n, u64 i, bool nl_rule) {
    u64 j = tok_run(c, n, i, tok_is_ws);
    if (j == i) return i + 1;                                   /* not reached: every class is covered */
    if (nl_rule)                                                /* \s*[\r\n]+ */
        for (u64 k = j; k > i; k--) if (tok_is_nl(c[k - 1])) return k;
    if (j == n || j - i < 2) return j;                          /* \s+(?!\S) at the end, or \s+ */
    return j - 1;                                               /* \s+(?!\S): leave one for the next word */
}

static u64 tok_pre_llama3(const u32 *c, u64 n, u64 i, u32 max_digits) {
    u32 x = c[i];
    if (x == '\'' && i + 1 < n) {
        u32 a = tok_lower(c[i + 1]);
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if (i + 2 < n) {
            u32 b = tok_lower(c[i + 2]);
            if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
        }
    }
    if (tok_is_l(x)) return tok_run(c, n, i + 1, tok_is_l);
    if (!tok_is_nl(x) && !tok_is_n(x) && i + 1 < n && tok_is_l(c[i + 1])) return tok_run(c, n, i + 2, tok_is_l);
    if (tok_is_n(x)) { u64 j = i + 1; while (j < n && j - i < max_digits && tok_is_n(c[j])) j++; return j; }
    u64 j = (x == ' ' && i + 1 < n && tok_is_other(c[i + 1])) ? i + 1 : i;
    if (tok_is_other(c[j])) return tok_run(c, n, tok_run(c, n, j + 1, tok_is_other), tok_is_nl);
    return tok_ws_end(c, n, i, true);
}

static u64 tok_pre_gpt2(const u32 *c, u64 n, u64 i) {
    u32 x = c[i];
    if (x == '\'' && i + 1 < n) {
        u32 a = c[i + 1];
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if (i + 2 < n) {
            u32 b = c[i + 2];
            if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
        }
    }
    if (x == ' ' && i + 1 < n) {                                /* ' ?' forms with the space */
        u32 y = c[i + 1];
        if (tok_is_l(y)) return tok_run(c, n, i + 2, tok_is_l);
        if (tok_is_n(y)) return tok_run(c, n, i + 2, tok_is_n);
        if (tok_is_other(y)) return tok_run(c, n, i + 2, tok_is_other);
    }
    if (tok_is_l(x)) return tok_run(c, n, i + 1, tok_is_l);
    if (tok_is_n(x)) return tok_run(c, n, i + 1, tok_is_n);
    if (tok_is_other(x)) return tok_run(c, n, i + 1, tok_is_other);
    return tok_ws_end(c, n, i, false);
}

/* ---- BPE merging of one word ---------------------------------------------------------------- */
typedef struct TokBpeScratch { i32 *id, *prev, *next; TokHeap h; u8 *enc; u32 cap; } TokBpeScratch;

/* Room for a word of n bytes: n symbols, 3n heap entries, 2n bytes of mapped text. */
static void tok_bpe_reserve(TokBpeScratch *s, u32 n) {
    if (n <= s->cap) return;
    u32 c = MAX(n, 2 * s->cap); c = MAX(c, 64u);
    s->id = (i32 *)realloc(s->id, (u64)c * sizeof(i32));
    s->prev = (i32 *)realloc(s->prev, (u64)c * sizeof(i32));
    s->next = (i32 *)realloc(s->next, (u64)c * sizeof(i32));
    s->h.v = (TokPair *)realloc(s->h.v, (3 * (u64)c + 3) * sizeof(TokPair));
    s->enc = (u8 *)realloc(s->enc, 2 * (u64)c + 2);
    if (!s->id || !s->prev || !s->next || !s->h.v || !s->enc) die(EXIT_USAGE, "tokenizer: out of memory for a word of %u bytes", n);
    s->cap = c;
}

static void tok_bpe_try_pair(const Tokenizer *t, TokBpeScratch *s, i32 l, i32 r) {
    if (l < 0 || r < 0) return;
    const TokMerge *m = tok_merge_find(t, s->id[l], s->id[r]);
    if (m) tok_heap_push(&s->h, (TokPair){ -(f32)m->rank, l, m->rank });
}

static void tok_bpe_word(const Tokenizer *t, const u8 *w, u32 n, TokBpeScratch *s, TokOut *o) {
    if (n == 1) { if (t->byte_id[w[0]] >= 0) tok_emit(o, t->byte_id[w[0]]); return; }
    if (t->ignore_merges) {
        u32 k = 0;
        for (u32 i = 0; i < n; i++) k += tok_utf8_put(tok_cp_from_byte(w[i]), s->enc + k);
        i32 id = tok_find(t, (const char *)s->enc, k);
        if (id >= 0) { tok_emit(o, id); return; }
    }
    for (u32 i = 0; i < n; i++) { s->id[i] = t->byte_id[w[i]]; s->prev[i] = (i32)i - 1; s->next[i] = i + 1 < n ? (i32)i + 1 : -1; }
    s->h.n = 0;
    for (u32 i = 1; i < n; i++) if (s->id[i - 1] >= 0 && s->id[i] >= 0) tok_bpe_try_pair(t, s, (i32)i - 1, (i32)i);
    while (s->h.n) {
        TokPair p = tok_heap_pop(&s->h);
        i32 l = p.left, r = s->next[l];
        if (s->id[l] < 0 || r < 0) continue;                  /* merged away, or no right neighbour */
        const TokMerge *m = tok_merge_find(t, s->id[l], s->id[r]);
        if (!m || m->rank != p.size) continue;                  /* stale: the pair changed */
        s->id[l] = m->id; s->id[r] = -1;
        s->next[l] = s->next[r];
        if (s->next[r] >= 0) s->prev[s->next[r]] = l;
        tok_bpe_try_pair(t, s, s->prev[l], l);
        tok_bpe_try_pair(t, s, l, s->next[l]);
    }
    for (i32 i = 0; i >= 0; i = s->next[i]) if (s->id[i] >= 0) tok_emit(o, s->id[i]);
}

static void tok_bpe_encode(const Tokenizer *t, const u8 *text, u64 len, TokOut *o) {
    u32 *cp = (u32 *)malloc((len + 1) * sizeof(u32));
    u8 *word = (u8 *)malloc(4 * len + 4);
    if (!cp || !word) die(EXIT_USAGE, "tokenizer: out of memory for %llu bytes of text", (unsigned long long)len);
    TokBpeScratch s = {0};
    u64 n = tok_cpts_from_utf8(text, len, cp);
    for (u64 i = 0; i < n;) {
        u64 j = t->pre == TOK_PRE_GPT2 ? tok_pre_gpt2(cp, n, i) : tok_pre_llama3(cp, n, i, t->pre == TOK_PRE_QWEN2 ? 1 : 3);
        u32 wn = 0;
        for (u64 k = i; k < j; k++) wn += tok_utf8_put(cp[k], word + wn);
        tok_bpe_reserve(&s, wn);
        tok_bpe_word(t, word, wn, &s, o);
        i = j;
    }
    free(cp); free(word); free(s.id); free(s.prev); free(s.next); free(s.h.v); free(s.enc);
}
