/* tokenizer_test.c — tokenizers and chat templates against llama.cpp's own output.

   The vocabularies and case files are fixtures/tokenizer/ (../shared, or the copies in
   test/fixtures/tokenizer): vocab-only GGUFs, xz-compressed (decompressed here through
   `xz -dc`), and their cases with the ids llama.cpp gives (add_special = true,
   parse_special = true) and llama_detokenize's bytes: qwen2.5, llama2 and gemma (75 cases each,
   c392e50), llama3 and gemma3 (107 and 106 cases, 3f545be; only in ../shared). */

typedef struct TokVocab {
    const char *name;
    bool loaded, failed;
    u8 *data; u64 size;
    Arena arena;
    Gguf g;
    Tokenizer *t;
} TokVocab;

static TokVocab tok_vocabs[5] = { { .name = "qwen2.5" }, { .name = "llama2" }, { .name = "gemma" },
                                  { .name = "llama3" }, { .name = "gemma3" } };

/* Decompress and load a vocabulary once per test run; NULL when the fixture is absent or does not load
   (the callers skip, or fail under EDGE_TEST_REQUIRE=1). */
static Tokenizer *tok_test_vocab(int which) {
    TokVocab *v = &tok_vocabs[which];
    if (v->failed) return 0;
    if (v->loaded) return v->t;
    char rel[128], path[512], cmd[700];
    fmt_buf(rel, sizeof rel, "tokenizer/%s-vocab.gguf.xz", v->name);
    if (!fixture_path(path, sizeof path, rel)) { v->failed = true; return 0; }
    fmt_buf(cmd, sizeof cmd, "xz -dc '%s'", path);
    FILE *p = popen(cmd, "r");
    if (!p) { v->failed = true; return 0; }
    u64 cap = 1 << 20, n = 0; u8 *d = (u8 *)malloc(cap);
    for (;;) {
        size_t k = fread(d + n, 1, (size_t)(cap - n), p);
        n += k;
        if (k == 0) break;
        if (n == cap) { cap *= 2; d = (u8 *)realloc(d, cap); }
    }
    int rc = pclose(p);
    if (rc != 0 || n == 0) { v->failed = true; free(d); return 0; }
    v->data = d; v->size = n;
    arena_init(&v->arena, "tokenizer-test", 256ull << 20);
    Err e = {0};
    if (!gguf_parse(&v->g, d, n, path, &v->arena, &e) || !tok_load(&v->t, &v->g, &v->arena, &e)) {
        out("    %s: %s\n", v->name, e.msg);
        v->failed = true; return 0;
    }
    v->loaded = true;
    return v->t;
}

static int tok_hexval(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

static u32 tok_unhex(const char *s, u32 n, char *outb) {
    u32 k = 0;
    for (u32 i = 0; i + 1 < n; i += 2) outb[k++] = (char)(tok_hexval(s[i]) * 16 + tok_hexval(s[i + 1]));
    return k;
}

typedef struct TokCase {
    char text[4096]; u32 text_len;
    i32  ids[1024];  u32 n_ids;
    char detok[4096]; u32 detok_len;
    char name[160];
} TokCase;

/* Parse one case line (input_hex TAB ids TAB detok_hex TAB escaped); false for comments. */
static bool tok_parse_case(const char *line, u32 len, TokCase *c) {
    if (len == 0 || line[0] == '#') return false;
    const char *f[4]; u32 fl[4]; u32 nf = 0, start = 0;
    for (u32 i = 0; i <= len && nf < 4; i++)
        if (i == len || line[i] == '\t') { f[nf] = line + start; fl[nf] = (nf == 3 ? len : i) - start; nf++; start = i + 1; if (nf == 3) { f[3] = line + start; fl[3] = len > start ? len - start : 0; nf = 4; } }
    if (nf < 4 || fl[0] / 2 >= sizeof c->text || fl[2] / 2 >= sizeof c->detok) return false;
    c->text_len = tok_unhex(f[0], fl[0], c->text);
    c->detok_len = tok_unhex(f[2], fl[2], c->detok);
    c->n_ids = 0;
    const char *p = f[1], *end = f[1] + fl[1];
    while (p < end && c->n_ids < ARRAY_COUNT(c->ids)) {
        while (p < end && *p == ' ') p++;
        if (p >= end) break;
        c->ids[c->n_ids++] = (i32)strtol(p, (char **)&p, 10);
    }
    fmt_buf(c->name, sizeof c->name, "%.*s", (int)MIN(fl[3], 120u), f[3]);
    return true;
}

static bool tok_valid_utf8(const char *s, u32 n) {
    TokDecoder d; tok_decoder_init(&d);
    for (u32 i = 0; i < n;) {
        u8 c = (u8)s[i]; u32 l = c < 0x80 ? 1 : (c >= 0xc2 && c <= 0xdf) ? 2 : (c >= 0xe0 && c <= 0xef) ? 3 : (c >= 0xf0 && c <= 0xf4) ? 4 : 0;
        if (!l || i + l > n) return false;
        for (u32 j = 1; j < l; j++) if (((u8)s[i + j] & 0xc0) != 0x80) return false;
        if ((c == 0xe0 && (u8)s[i + 1] < 0xa0) || (c == 0xed && (u8)s[i + 1] > 0x9f) ||
            (c == 0xf0 && (u8)s[i + 1] < 0x90) || (c == 0xf4 && (u8)s[i + 1] > 0x8f)) return false;
        i += l;
    }
    return true;
}

/* Decode ids one at a time (streaming) with the given decoder settings. */
static u32 tok_test_detok(const Tokenizer *t, const i32 *ids, u32 n, bool special, bool raw, bool at_start, char *o, u32 cap) {
    TokDecoder d; tok_decoder_init(&d); d.special = special; d.raw = raw; d.at_start = at_start;
    u32 k = 0;
    for (u32 i = 0; i < n; i++) k += tok_decode(t, &d, ids[i], o + k, cap - k);
    k += tok_decode_flush(t, &d, o + k, cap - k);
    return k;
}

static void tok_hexstr(const char *s, u32 n, char *o, u32 cap) {
    u32 k = 0;
    for (u32 i = 0; i < n && k + 3 < cap; i++) k += (u32)fmt_buf(o + k, (int)(cap - k), "%02x", (u8)s[i]);
    o[k] = 0;
}

/* Every case of one vocabulary: exact ids, detokenizer == detok_hex, round trip. */
static void tok_run_cases(int which) {
    Tokenizer *t = tok_test_vocab(which);
    if (!t) SKIP_UNLESS_REQUIRED("vocabulary fixture tokenizer/%s-vocab.gguf.xz not found or not loadable", tok_vocabs[which].name);
    char rel[128], path[512]; Err e = {0};
    fmt_buf(rel, sizeof rel, "tokenizer/%s.cases.txt", tok_vocabs[which].name);
    REQUIRE(fixture_path(path, sizeof path, rel));
    Arena a; arena_init(&a, "cases", 1 << 20);
    u8 *data; u64 size;
    REQUIRE(read_file_all(&a, path, &data, &size, &e));
    static TokCase c;
    static i32 ids[4096];
    static char dec[16384];
    u32 n_cases = 0, n_lines = 0, n_ok = 0, n_detok_ok = 0, n_rt = 0, n_rt_ok = 0;
    bool spm_prefix = t->kind == TOK_SPM && t->add_space_prefix;
    bool detok = !fixture_skipped(FIXTURE_DETOK, tok_vocabs[which].name);
    for (u64 p = 0; p < size;) {
        u64 q = p; while (q < size && data[q] != '\n') q++;
        bool is_case = tok_parse_case((const char *)data + p, (u32)(q - p), &c);
        n_lines += q > p && data[p] != '#';
        p = q + 1;
        if (!is_case) continue;
        n_cases++;
        u32 n = tok_encode(t, c.text, c.text_len, true, true, ids, ARRAY_COUNT(ids));
        bool same = n == c.n_ids && !memcmp(ids, c.ids, n * sizeof(i32));
        n_ok += same;
        if (!same) {
            char got[512] = "", want[512] = ""; u32 kg = 0, kw = 0;
            for (u32 i = 0; i < n && kg + 12 < sizeof got; i++) kg += (u32)fmt_buf(got + kg, (int)(sizeof got - kg), " %d", ids[i]);
            for (u32 i = 0; i < c.n_ids && kw + 12 < sizeof want; i++) kw += (u32)fmt_buf(want + kw, (int)(sizeof want - kw), " %d", c.ids[i]);
            CHECKF(same, "%s '%s': got%s, want%s", tok_vocabs[which].name, c.name, got, want);
        }
        /* llama_detokenize(remove_special, unparse_special): streaming, raw bytes, control text shown */
        u32 k = tok_test_detok(t, c.ids, c.n_ids, true, true, true, dec, sizeof dec);
        k = tok_clean_spaces(t, dec, k);                 /* the whole-text clean-up of llama_detokenize (Llama 3) */
        bool dsame = !detok || (k == c.detok_len && !memcmp(dec, c.detok, k));
        n_detok_ok += dsame;
        if (!dsame) {
            char hx[600]; tok_hexstr(dec, k, hx, sizeof hx);
            CHECKF(dsame, "%s '%s': detokenized to %s", tok_vocabs[which].name, c.name, hx);
        }
        if (!tok_valid_utf8(c.text, c.text_len)) continue;
        /* round trip, terminal-safe decoder: == text (SPM with a space prefix: one leading
           space with BOS; without BOS none, for texts without special tokens) */
        bool has_special = false;
        for (u32 i = 0; i < c.n_ids; i++) has_special |= tok_type(t, c.ids[i]) != TOKT_NORMAL && tok_type(t, c.ids[i]) != TOKT_BYTE && c.ids[i] != t->bos;
        n_rt++;
        k = tok_test_detok(t, ids, n, true, false, true, dec, sizeof dec);
        bool ok;
        if (!spm_prefix) ok = k == c.text_len && !memcmp(dec, c.text, k);
        else if (has_special) ok = k == c.detok_len && !memcmp(dec, c.detok, k);
        else {
            ok = c.text_len == 0 ? k == 0 : (k == c.text_len + 1 && dec[0] == ' ' && !memcmp(dec + 1, c.text, c.text_len));
            u32 n2 = tok_encode(t, c.text, c.text_len, false, true, ids, ARRAY_COUNT(ids));
            u32 k2 = tok_test_detok(t, ids, n2, true, false, true, dec, sizeof dec);
            ok = ok && k2 == c.text_len && !memcmp(dec, c.text, k2);
        }
        n_rt_ok += ok;
        CHECKF(ok, "%s '%s': detokenize(tokenize(text)) != text", tok_vocabs[which].name, c.name);
    }
    out("    %s: %u/%u cases give llama.cpp's ids, %u/%u detokenize to llama.cpp's bytes%s, %u/%u valid-UTF-8 round trips\n",
        tok_vocabs[which].name, n_ok, n_cases, n_detok_ok, n_cases, detok ? "" : " (not compared)", n_rt_ok, n_rt);
    CHECKF(n_cases == n_lines && n_cases >= 75, "%u cases parsed of %u case lines", n_cases, n_lines);
    arena_free(&a);
}

TEST(tok_cases_qwen25) { tok_run_cases(0); }
TEST(tok_cases_llama2) { tok_run_cases(1); }
TEST(tok_cases_gemma)  { tok_run_cases(2); }
TEST(tok_cases_llama3) { tok_run_cases(3); }   /* the real Llama 3 vocabulary (llama-bpe), ids from llama.cpp 3f545be */
TEST(tok_cases_gemma3) { tok_run_cases(4); }   /* the real Gemma 3 vocabulary (262,144 tokens) */

TEST(tok_specials_and_flags) {
    Tokenizer *q = tok_test_vocab(0), *l = tok_test_vocab(1), *g = tok_test_vocab(2);
    if (!q || !l || !g) SKIP_UNLESS_REQUIRED("vocabulary fixtures not found or not loadable");
    /* values stated in fixtures/README.md */
    CHECK(tok_n_vocab(q) == 151936 && tok_n_vocab(l) == 32000 && tok_n_vocab(g) == 256000);
    CHECK(tok_bos(q) == 151643 && tok_eos(q) == 151643);
    CHECK(tok_bos(l) == 1 && tok_eos(l) == 2);
    CHECK(tok_bos(g) == 2 && tok_eos(g) == 1);
    CHECK(tok_eot(q) == tok_find(q, "<|im_end|>", 10) && tok_eot(q) == 151645);
    CHECK(tok_eot(g) == 107);
    CHECK(tok_is_eog(q, 151645) && tok_is_eog(q, 151643) && !tok_is_eog(q, 151644));
    CHECK(tok_is_eog(g, 107) && tok_is_eog(g, 1) && !tok_is_eog(g, 106));
    CHECK(tok_is_eog(l, 2) && !tok_is_eog(l, 1));
    CHECK(tok_type(q, 151657) == TOKT_USER_DEFINED);
    /* --no-special: control tokens are text; USER_DEFINED still matched */
    i32 ids[64];
    u32 n = tok_encode(q, "<|im_start|>", 12, true, false, ids, 64);
    CHECK(n > 1 && ids[0] != 151644);
    n = tok_encode(q, "<tool_call>", 11, true, false, ids, 64);
    CHECK(n == 1 && ids[0] == 151657);
    n = tok_encode(l, "<s>", 3, false, false, ids, 64);
    CHECKF(n >= 1 && ids[0] != 1, "n=%u ids[0]=%d", n, ids[0]);
    /* cap smaller than the result: counted, not written past cap */
    ids[2] = -7;
    n = tok_encode(q, "Hello world, this is a test", 27, true, true, ids, 2);
    CHECK(n > 2 && ids[2] == -7);
    /* piece access */
    u32 pl; const char *p = tok_piece(q, 9707, &pl);
    CHECK(pl == 5 && !memcmp(p, "Hello", 5));
    p = tok_piece(q, -1, &pl);
    CHECK(pl == 0);
}

/* llama.cpp's tokenizer_st_partition written plainly, as the reference of tok_partition (which skips the
   special texts its presence pass did not find): each special text in t->special's order claims, left to
   right, every occurrence that lies wholly in bytes no earlier text claimed. owner[i]: the id claiming
   byte i (-1: raw text); start[i]: an occurrence begins there. Returns the fragment count written. */
static u32 tok_ref_partition(const Tokenizer *t, const char *s, u32 n, bool parse_special, TokFrag *out) {
    i32 owner[512]; bool start[512];
    for (u32 i = 0; i < n; i++) { owner[i] = -1; start[i] = false; }
    for (u32 k = 0; k < t->n_special; k++) {
        i32 id = t->special[k];
        if (!parse_special && t->type[id] != TOKT_USER_DEFINED) continue;
        const char *pat = t->text[id]; u32 pl = t->text_len[id];
        for (u32 p = 0; p + pl <= n;) {
            if (s[p] != pat[0]) { p++; continue; }
            bool free_run = true;
            for (u32 j = 0; j < pl && free_run; j++) free_run = owner[p + j] < 0;
            if (!free_run || memcmp(s + p, pat, pl)) { p++; continue; }
            for (u32 j = 0; j < pl; j++) owner[p + j] = id;
            start[p] = true; p += pl;
        }
    }
    u32 nf = 0;
    for (u32 i = 0; i < n;) {
        u32 j = i + 1;
        if (owner[i] >= 0) { while (j < n && owner[j] == owner[i] && !start[j]) j++; }
        else { while (j < n && owner[j] < 0) j++; }
        out[nf++] = (TokFrag){ i, j - i, owner[i] };
        i = j;
    }
    return nf;
}

/* Random texts of special texts, pieces of them and plain bytes, on every vocabulary: tok_partition's
   fragments equal the plain partition's, with and without parse_special. */
TEST(tok_partition_equals_plain_search) {
    static const char *const plain[] = { "a", " ", "\n", "\n\n", "   ", "\t", "<", ">", "|", "x y", "<|", "<u", "\xe2\x96\x81" };
    u64 rng = 0x9e3779b97f4a7c15ull;
    u32 vocabs = 0, texts = 0, specials_hit = 0;
    for (int w = 0; w < 5; w++) {
        Tokenizer *t = tok_test_vocab(w);
        if (!t) continue;
        vocabs++;
        for (u32 c = 0; c < 60; c++) {
            char s[512]; u32 n = 0;
            while (n < 400) {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                const char *p; u32 pl;
                if (rng % 3 == 0 && t->n_special) {                  /* a special text, whole or cut */
                    i32 id = t->special[(rng >> 8) % t->n_special];
                    p = t->text[id]; pl = t->text_len[id];
                    if ((rng >> 40) % 3 == 0 && pl > 1) pl = 1 + (u32)((rng >> 44) % (pl - 1));
                } else { p = plain[(rng >> 8) % ARRAY_COUNT(plain)]; pl = (u32)strlen(p); }
                if (n + pl > 500) break;
                memcpy(s + n, p, pl); n += pl;
            }
            for (int ps = 0; ps < 2; ps++) {
                TokFrag want[512];
                u32 nw = tok_ref_partition(t, s, n, ps, want);
                TokFrags got = tok_partition(t, s, n, ps);
                bool same = got.n == nw;
                for (u32 i = 0; i < nw && same; i++)
                    same = got.v[i].off == want[i].off && got.v[i].len == want[i].len && got.v[i].id == want[i].id;
                for (u32 i = 0; i < nw; i++) specials_hit += want[i].id >= 0;
                CHECKF(same, "%s, text %u, parse_special %d: %llu fragments, the plain search gives %u",
                       tok_vocabs[w].name, c, ps, (unsigned long long)got.n, nw);
                free(got.v);
                texts++;
            }
        }
    }
    if (!vocabs) SKIP_UNLESS_REQUIRED("vocabulary fixtures not found or not loadable");
    CHECKF(specials_hit > 1000, "only %u special fragments in the random texts", specials_hit);
    out("    %u texts on %u vocabularies, %u special fragments: the same partition\n", texts, vocabs, specials_hit);
}

TEST(tok_decoder_streams_utf8) {
    Tokenizer *l = tok_test_vocab(1), *q = tok_test_vocab(0);
    if (!l || !q) SKIP_UNLESS_REQUIRED("vocabulary fixtures not found or not loadable");
    /* the llama emoji is four byte tokens in Llama 2: nothing comes out until the last */
    i32 b[4]; const u8 bytes[4] = { 0xf0, 0x9f, 0xa6, 0x99 };
    for (int i = 0; i < 4; i++) { char s[8]; fmt_buf(s, sizeof s, "<0x%02X>", bytes[i]); b[i] = tok_find(l, s, 6); CHECK(b[i] >= 0); }
    TokDecoder d; tok_decoder_init(&d); d.at_start = false;
    char o[64];
    CHECK(tok_decode(l, &d, b[0], o, 64) == 0);
    CHECK(tok_decode(l, &d, b[1], o, 64) == 0);
    CHECK(tok_decode(l, &d, b[2], o, 64) == 0);
    CHECK(tok_decode(l, &d, b[3], o, 64) == 4 && !memcmp(o, bytes, 4));
    CHECK(tok_decode_flush(l, &d, o, 64) == 0);
    /* incomplete at the end: U+FFFD at flush only */
    tok_decoder_init(&d); d.at_start = false;
    CHECK(tok_decode(l, &d, b[0], o, 64) == 0 && tok_decode(l, &d, b[1], o, 64) == 0);
    CHECK(tok_decode_flush(l, &d, o, 64) == 3 && !memcmp(o, "\xef\xbf\xbd", 3));
    /* broken by an ASCII token: U+FFFD then the text */
    tok_decoder_init(&d); d.at_start = false;
    i32 a = tok_find(l, "a", 1);
    CHECK(tok_decode(l, &d, b[0], o, 64) == 0);
    u32 k = tok_decode(l, &d, a, o, 64);
    CHECK(k == 4 && !memcmp(o, "\xef\xbf\xbd" "a", 4));
    /* control tokens print nothing by default; BOS at the start keeps the SPM space */
    tok_decoder_init(&d);
    CHECK(tok_decode(l, &d, 1, o, 64) == 0);
    k = tok_decode(l, &d, tok_find(l, "\xe2\x96\x81Hello", 8), o, 64);
    CHECK(k == 6 && !memcmp(o, " Hello", 6));
    CHECK(tok_decode(l, &d, 2, o, 64) == 0);
    tok_decoder_init(&d);
    k = tok_decode(l, &d, tok_find(l, "\xe2\x96\x81Hello", 8), o, 64);
    CHECK(k == 5 && !memcmp(o, "Hello", 5));
    /* BPE: byte-level pieces back to bytes ("Ġworld" -> " world"), im_end silent */
    tok_decoder_init(&d);
    k = tok_decode(q, &d, 1879, o, 64);
    CHECK(k == 6 && !memcmp(o, " world", 6));
    CHECK(tok_decode(q, &d, 151645, o, 64) == 0);
}

/* ---- chat templates (their renderings: test/chat_test.c) ------------------------------ */
/* Rendered prompts tokenize to the family's control tokens (by text), not to pieces of '<'. */
TEST(chat_templates_tokenize_to_control_tokens) {
    Tokenizer *q = tok_test_vocab(0), *g = tok_test_vocab(2);
    if (!q || !g) SKIP_UNLESS_REQUIRED("vocabulary fixtures not found or not loadable");
    char buf[1024]; i32 ids[512];
    CHECK(chat_family_infer(q, "qwen2") == CHAT_CHATML && chat_family_infer(g, "gemma2") == CHAT_GEMMA);
    i32 im_start = tok_find(q, "<|im_start|>", 12), im_end = chat_eot_id(CHAT_CHATML, q);
    CHECK(im_start >= 0 && tok_type(q, im_start) == TOKT_CONTROL && tok_is_eog(q, im_end));
    chat_render(CHAT_CHATML, q, "Be brief.", "Hi", buf, sizeof buf);
    u32 n = tok_encode(q, buf, strlen(buf), true, true, ids, 512);
    CHECK(n > 4 && ids[0] == im_start);
    u32 n_start = 0, n_end = 0;
    for (u32 i = 0; i < n; i++) { n_start += ids[i] == im_start; n_end += ids[i] == im_end; }
    CHECK(n_start == 3 && n_end == 2);

    i32 sot = tok_find(g, "<start_of_turn>", 15), eot = chat_eot_id(CHAT_GEMMA, g);
    CHECK(sot >= 0 && tok_type(g, sot) == TOKT_CONTROL && tok_is_eog(g, eot) && eot == tok_eot(g));
    chat_render(CHAT_GEMMA, g, "Be brief.", "Hi", buf, sizeof buf);
    n = tok_encode(g, buf, strlen(buf), true, true, ids, 512);
    CHECK(n > 4 && ids[0] == tok_bos(g) && ids[1] == sot);
    n = tok_encode(g, buf, strlen(buf), false, true, ids, 512);
    CHECK(n > 4 && ids[0] == sot);
    n_start = n_end = 0;
    for (u32 i = 0; i < n; i++) { n_start += ids[i] == sot; n_end += ids[i] == eot; }
    CHECK(n_start == 2 && n_end == 1);
    /* with --no-special the markers are text: the first id is a piece of '<' */
    n = tok_encode(g, buf, strlen(buf), false, false, ids, 512);
    CHECK(n > 4 && ids[0] != sot);
}

/* ---- llama.cpp's greedy goldens: prompt ids and streamed text of real model files ----------- */
#include <dirent.h>

static const char *tok_golden_field(const char *data, const char *name, u32 *len) {
    const char *p = strstr(data, name);
    if (!p) return 0;
    p += strlen(name);
    while (*p == ' ') p++;
    const char *e = strchr(p, '\n');
    *len = e ? (u32)(e - p) : (u32)strlen(p);
    return p;
}

/* prompt (add_special, no parse_special) -> prompt_tokens; generated tokens streamed one at a
   time (a continuation: no leading-space rule, control tokens silent, bytes raw as llama.cpp
   concatenates them) -> generated_text_hex. */
TEST(tok_greedy_goldens_of_model_files) {
    if (!shared_fixtures_present()) SKIP("the greedy goldens are in ../shared/fixtures only");
    DIR *dir = opendir("../shared/fixtures/golden");
    REQUIRE(dir);
    struct dirent *de; u32 n_files = 0;
    static char names[64][128]; u32 n_dirs = 0;
    while ((de = readdir(dir)) && n_dirs < 64) if (de->d_name[0] != '.') fmt_buf(names[n_dirs++], 128, "%s", de->d_name);
    closedir(dir);
    for (u32 di = 0; di < n_dirs; di++) {
        char mpath[512]; fmt_buf(mpath, sizeof mpath, "../shared/fixtures/models/%s.gguf", names[di]);
        FILE *mf = fopen(mpath, "rb");
        if (!mf) continue;                        /* goldens of variants that do not ship */
        fclose(mf);
        if (fixture_skipped(FIXTURE_MODEL, names[di])) continue;
        Arena a; arena_init(&a, "golden", 64ull << 20);
        Gguf g; Tokenizer *t; Err e = {0};
        REQUIRE(gguf_open(&g, mpath, &a, &e) && tok_load(&t, &g, &a, &e));
        char gdir[512]; fmt_buf(gdir, sizeof gdir, "../shared/fixtures/golden/%s", names[di]);
        DIR *d2 = opendir(gdir);
        REQUIRE(d2);
        struct dirent *fe;
        while ((fe = readdir(d2))) {
            u64 fl = strlen(fe->d_name);
            if (fl < 11 || strcmp(fe->d_name + fl - 11, ".greedy.txt") || strstr(fe->d_name, ".exact.")) continue;
            char fpath[800]; fmt_buf(fpath, sizeof fpath, "%s/%s", gdir, fe->d_name);
            u8 *data; u64 size;
            REQUIRE(read_file_all(&a, fpath, &data, &size, &e));
            u32 pl, tl, gl, hl;
            const char *prompt = tok_golden_field((const char *)data, "prompt:", &pl);
            const char *ptoks = tok_golden_field((const char *)data, "prompt_tokens:", &tl);
            const char *gtoks = tok_golden_field((const char *)data, "generated_tokens:", &gl);
            const char *ghex = tok_golden_field((const char *)data, "generated_text_hex:", &hl);
            REQUIRE(prompt && ptoks && gtoks && ghex);
            n_files++;
            i32 ids[256], want[256]; u32 nw = 0;
            for (const char *p = ptoks; p < ptoks + tl && nw < 256;) { char *end; want[nw++] = (i32)strtol(p, &end, 10); p = end; while (*p == ' ') p++; }
            u32 n = tok_encode(t, prompt, pl, true, false, ids, 256);
            CHECKF(n == nw && !memcmp(ids, want, n * sizeof(i32)), "%s: prompt '%.*s' gives %u ids (want %u)", fpath, (int)pl, prompt, n, nw);
            TokDecoder dec; tok_decoder_init(&dec); dec.at_start = false; dec.raw = true;   /* random weights emit invalid UTF-8 */
            static char text[8192], wtext[8192]; u32 k = 0;
            for (const char *p = gtoks; p < gtoks + gl;) {
                char *end; i32 id = (i32)strtol(p, &end, 10); p = end; while (*p == ' ') p++;
                k += tok_decode(t, &dec, id, text + k, sizeof text - k);
            }
            k += tok_decode_flush(t, &dec, text + k, sizeof text - k);
            u32 wk = tok_unhex(ghex, hl, wtext);
            CHECKF(k == wk && !memcmp(text, wtext, k), "%s: generated text differs (%u bytes, want %u)", fpath, k, wk);
        }
        closedir(d2);
        gguf_close(&g); arena_free(&a);
    }
    out("    %u greedy goldens checked\n", n_files);
    CHECK(n_files >= 7);
}
