/* gguf_test.c — the GGUF reader and dequantization against the shared fixtures:
   bit-exact dequantization (fixtures/dequant, values from gguf-py / ggml), every model
   fixture's directory as the fixtures README lists it, every metadata type through a
   file built here, and robustness (truncations, mutated fields) on stories260K. */

#define GT_ARENA (64ull << 20)

static bool gt_load(Arena *a, const char *rel, u8 **data, u64 *size) {
    char p[512]; Err e;
    if (!fixture_path(p, sizeof p, rel)) return false;
    return read_file_all(a, p, data, size, &e);
}

/* Parses a private, exactly sized heap copy (so ASan sees any read past the end). */
static bool gt_parse_copy(const u8 *src, u64 n, Arena *a, Err *e) {
    u8 *buf = malloc(n ? n : 1);
    memcpy(buf, src, n);
    Gguf g; u64 pos = arena_pos(a);
    bool ok = gguf_parse(&g, buf, n, "mut.gguf", a, e);
    if (ok) {   /* touch every tensor's first and last byte */
        volatile u8 s = 0;
        for (u64 i = 0; i < g.n_tensors; i++) s ^= g.tensors[i].data[0] ^ g.tensors[i].data[g.tensors[i].nbytes - 1];
        (void)s;
    }
    arena_pop_to(a, pos);
    free(buf);
    return ok;
}

static void gt_put_u32(u8 *p, u32 v) { for (int i = 0; i < 4; i++) p[i] = (u8)(v >> (8 * i)); }
static void gt_put_u64(u8 *p, u64 v) { for (int i = 0; i < 8; i++) p[i] = (u8)(v >> (8 * i)); }

/* ---- dequantization -------------------------------------------------------------- */
TEST(gguf_dequant_bit_exact_against_fixtures) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    u8 *idx; u64 idx_n;
    if (!gt_load(&a, "dequant/INDEX.txt", &idx, &idx_n)) { arena_free(&a); SKIP_UNLESS_REQUIRED("no dequant fixtures (dequant/INDEX.txt)"); }
    char *line = (char *)push_array(&a, char, idx_n + 1);
    memcpy(line, idx, idx_n);
    int n_checked = 0, n_listed = 0;
    for (char *save = 0, *l = strtok_r(line, "\n", &save); l; l = strtok_r(0, "\n", &save)) {
        char file[128], name[128], type[16], f32file[160]; unsigned long long ne0, ne1;
        if (sscanf(l, "%127s tensor %127s [ne0 %llu, ne1 %llu] %15s -> %159s", file, name, &ne0, &ne1, type, f32file) != 6) {
            CHECKF(0, "cannot parse INDEX line '%s'", l); continue;
        }
        if (fixture_dequant_skipped(file)) continue;
        n_listed++;
        char rel[300]; u8 *gd, *want; u64 gn, wn;
        fmt_buf(rel, sizeof rel, "dequant/%s", file);
        REQUIRE(gt_load(&a, rel, &gd, &gn));
        fmt_buf(rel, sizeof rel, "dequant/%s", f32file);
        REQUIRE(gt_load(&a, rel, &want, &wn));
        Gguf g; Err e;
        REQUIRE(gguf_parse(&g, gd, gn, file, &a, &e));
        const GgufTensor *t = gguf_find_tensor(&g, name);
        REQUIRE(t);
        CHECKF(t->ne[0] == ne0 && t->ne[1] == ne1, "%s: shape %llu x %llu", name, (ull)t->ne[0], (ull)t->ne[1]);
        CHECKF(strcmp(ggml_type_name(t->type), type) == 0, "%s: type %s, want %s", name, ggml_type_name(t->type), type);
        REQUIRE(wn == ne0 * ne1 * 4 && t->nelem == ne0 * ne1);
        u64 rb; REQUIRE(ggml_row_bytes(t->type, ne0, &rb));
        CHECK(rb * ne1 == t->nbytes);
        f32 *got = push_array(&a, f32, ne0 * ne1);
        for (u64 r = 0; r < ne1; r++) dequant_row(t->type, t->data + r * rb, got + r * ne0, ne0);
        u64 mism = 0; f64 maxd = 0;
        for (u64 i = 0; i < ne0 * ne1; i++) {
            f32 w; memcpy(&w, want + 4 * i, 4);
            if (memcmp(&w, &got[i], 4) != 0) { mism++; f64 d = fabs((f64)w - (f64)got[i]); if (d > maxd) maxd = d; }
        }
        CHECKF(mism == 0, "%s %s (%s): %llu of %llu values differ, max difference %g", file, name, type,
               (ull)mism, (ull)(ne0 * ne1), maxd);
        n_checked++;
    }
    CHECKF(n_checked == n_listed && n_checked >= 14, "checked %d tensors, INDEX lists %d supported (at least 14)", n_checked, n_listed);
    arena_free(&a);
}

TEST(gguf_quant_geometry) {
    u64 b;
    CHECK(ggml_block_elems(GGML_TYPE_Q4_K) == 256 && ggml_block_bytes(GGML_TYPE_Q4_K) == 144);
    CHECK(ggml_block_elems(GGML_TYPE_Q6_K) == 256 && ggml_block_bytes(GGML_TYPE_Q6_K) == 210);
    CHECK(ggml_block_bytes(GGML_TYPE_Q8_0) == 34 && ggml_block_bytes(GGML_TYPE_Q4_0) == 18);
    CHECK(ggml_row_bytes(GGML_TYPE_Q8_0, 512, &b) && b == 16 * 34);
    CHECK(!ggml_row_bytes(GGML_TYPE_Q4_K, 100, &b));
    CHECK(!ggml_row_bytes(GGML_TYPE_Q8_1, 64, &b));
    CHECK(ggml_row_bytes(GGML_TYPE_Q5_1, 64, &b) && b == 2 * 24);
    CHECK(ggml_row_bytes(GGML_TYPE_IQ4_XS, 512, &b) && b == 2 * 136);
    CHECK(!ggml_row_bytes(GGML_TYPE_F32, 1ull << 62, &b));
    CHECK(strcmp(ggml_type_name(GGML_TYPE_Q5_1), "Q5_1") == 0 && strcmp(ggml_type_name(1000), "?") == 0);
    CHECK(ggml_type_supported(GGML_TYPE_BF16) && ggml_type_supported(GGML_TYPE_Q5_K) && !ggml_type_supported(GGML_TYPE_Q8_K));
    char list[160];   /* issue 32's fifteen weight types, in id order */
    CHECKF(strcmp(ggml_supported_list(list, sizeof list),
                  "F32 F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16") == 0, "supported: %s", list);
}

/* ---- model fixtures ------------------------------------------------------------- */
typedef struct GtTensor { const char *file, *name, *type; u64 ne0, ne1; } GtTensor;
static const GtTensor gt_tensors[] = {
    /* file (models/…)         tensor                      type    ne0   ne1 (0: 1-D) */
    { "stories260K.gguf",       "token_embd.weight",        "F32",   64, 512 },
    { "stories260K.gguf",       "output.weight",            "F32",   64, 512 },
    { "stories260K.gguf",       "blk.0.attn_k.weight",      "F32",   64,  32 },
    { "stories260K.gguf",       "blk.4.ffn_gate.weight",    "F32",   64, 172 },
    { "stories260K.gguf",       "blk.4.ffn_down.weight",    "F32",  172,  64 },
    { "tiny-llama-F32.gguf",    "blk.1.attn_k.weight",      "F32",  256, 128 },
    { "tiny-llama-F32.gguf",    "blk.0.ffn_down.weight",    "F32",  512, 256 },
    { "tiny-llama-F16.gguf",    "blk.0.attn_q.weight",      "F16",  256, 256 },
    { "tiny-llama-F16.gguf",    "output_norm.weight",       "F32",  256,   0 },
    { "tiny-llama-Q8_0.gguf",   "token_embd.weight",        "Q8_0", 256, 512 },
    { "tiny-llama-Q8_0.gguf",   "output.weight",            "Q8_0", 256, 512 },
    { "tiny-llama-Q8_0.gguf",   "blk.0.attn_norm.weight",   "F32",  256,   0 },
    { "tiny-llama-Q4_K_M.gguf", "output.weight",            "Q6_K", 256, 512 },
    { "tiny-llama-Q4_K_M.gguf", "blk.1.attn_v.weight",      "Q6_K", 256, 128 },
    { "tiny-llama-Q4_K_M.gguf", "blk.1.ffn_down.weight",    "Q6_K", 512, 256 },
    { "tiny-llama-Q4_K_M.gguf", "token_embd.weight",        "Q4_K", 256, 512 },
    { "tiny-llama-Q4_K_M.gguf", "blk.0.attn_v.weight",      "Q4_K", 256, 128 },
    { "tiny-llama-Q4_K_M.gguf", "blk.0.ffn_down.weight",    "Q4_K", 512, 256 },
    { "tiny-qwen2-F16.gguf",    "blk.0.attn_q.bias",        "F32",  256,   0 },
    { "tiny-qwen2-F16.gguf",    "blk.0.attn_k.weight",      "F16",  256, 128 },
    { "tiny-qwen2-Q8_0.gguf",   "blk.1.ffn_up.weight",      "Q8_0", 256, 256 },
    { "tiny-qwen2-Q4_K_M.gguf", "token_embd.weight",        "Q6_K", 256, 512 },
    { "tiny-qwen2-Q4_K_M.gguf", "blk.1.attn_v.weight",      "Q6_K", 256, 128 },
    { "tiny-qwen2-Q4_K_M.gguf", "blk.0.attn_v.weight",      "Q4_K", 256, 128 },
    { "tiny-qwen2-Q4_K_M.gguf", "blk.1.attn_v.bias",        "F32",  128,   0 },
    { "tiny-gemma2-F16.gguf",   "blk.0.attn_q.weight",      "F16",  256, 512 },   /* head_dim 256: 512 != n_embd */
    { "tiny-gemma2-F16.gguf",   "blk.0.attn_k.weight",      "F16",  256, 256 },
    { "tiny-gemma2-F16.gguf",   "blk.1.attn_output.weight", "F16",  512, 256 },
    { "tiny-gemma2-F16.gguf",   "blk.1.post_ffw_norm.weight", "F32", 256,  0 },
    { "tiny-gemma2-Q4_K_M.gguf", "token_embd.weight",       "Q6_K", 256, 512 },
    { "tiny-gemma2-Q4_K_M.gguf", "blk.1.attn_v.weight",     "Q6_K", 256, 256 },
    { "tiny-gemma2-Q4_K_M.gguf", "blk.1.ffn_down.weight",   "Q6_K", 256, 256 },
    { "tiny-gemma2-Q4_K_M.gguf", "blk.0.attn_q.weight",     "Q4_K", 256, 512 },
    { "tiny-gemma2-Q4_K_M.gguf", "blk.0.attn_output.weight", "Q4_K", 512, 256 },
    { "tiny-gemma3-F16.gguf",   "blk.0.attn_q_norm.weight", "F32",  128,   0 },
    { "tiny-gemma3-F16.gguf",   "blk.5.attn_q.weight",      "F16",  256, 256 },
    { "tiny-gemma3-Q4_K_M.gguf", "token_embd.weight",       "Q6_K", 256, 512 },
    { "tiny-gemma3-Q4_K_M.gguf", "blk.2.attn_v.weight",     "Q6_K", 256, 128 },
    { "tiny-gemma3-Q4_K_M.gguf", "blk.5.ffn_down.weight",   "Q6_K", 256, 256 },
    { "tiny-gemma3-Q4_K_M.gguf", "blk.3.attn_v.weight",     "Q4_K", 256, 128 },
    { "tiny-gemma3-Q4_K_M.gguf", "blk.5.attn_k_norm.weight", "F32", 128,   0 },
};

typedef struct GtFile { const char *file, *arch; u32 n_tensors, blocks; bool has_output; } GtFile;
static const GtFile gt_files[] = {
    { "stories260K.gguf",        "llama",  48, 5, true  },
    { "tiny-llama-F32.gguf",     "llama",  21, 2, true  },
    { "tiny-llama-F16.gguf",     "llama",  21, 2, true  },
    { "tiny-llama-Q8_0.gguf",    "llama",  21, 2, true  },
    { "tiny-llama-Q4_K_M.gguf",  "llama",  21, 2, true  },
    { "tiny-qwen2-F16.gguf",     "qwen2",  26, 2, false },
    { "tiny-qwen2-Q8_0.gguf",    "qwen2",  26, 2, false },
    { "tiny-qwen2-Q4_K_M.gguf",  "qwen2",  26, 2, false },
    { "tiny-gemma2-F16.gguf",    "gemma2", 24, 2, false },
    { "tiny-gemma2-Q4_K_M.gguf", "gemma2", 24, 2, false },
    { "tiny-gemma3-F16.gguf",    "gemma3", 80, 6, false },
    { "tiny-gemma3-Q4_K_M.gguf", "gemma3", 80, 6, false },
};

TEST(gguf_model_fixtures_directory) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    int seen = 0;
    for (u32 f = 0; f < ARRAY_COUNT(gt_files); f++) {
        char rel[128], p[512]; Err e; Gguf g;
        fmt_buf(rel, sizeof rel, "models/%s", gt_files[f].file);
        if (!fixture_path(p, sizeof p, rel)) continue;   /* test/fixtures holds only some */
        seen++;
        u64 pos = arena_pos(&a);
        if (!gguf_open(&g, p, &a, &e)) { CHECKF(0, "%s: %s", p, e.msg); continue; }
        CHECKF(g.version == 3 && g.alignment == 32, "%s: version %u alignment %llu", p, g.version, (ull)g.alignment);
        CHECKF(g.n_tensors == gt_files[f].n_tensors, "%s: %llu tensors", p, (ull)g.n_tensors);
        GgufStr arch; char key[96]; u32 v;
        CHECK(gguf_get_str(&g, "general.architecture", &arch) && gguf_str_eq(arch, gt_files[f].arch));
        fmt_buf(key, sizeof key, "%s.block_count", gt_files[f].arch);
        CHECKF(gguf_get_u32(&g, key, &v) && v == gt_files[f].blocks, "%s: %s", p, key);
        CHECK((gguf_find_tensor(&g, "output.weight") != 0) == gt_files[f].has_output);
        u64 end_max = 0;
        for (u64 i = 0; i < g.n_tensors; i++) {
            const GgufTensor *t = &g.tensors[i];
            CHECK(t->data == g.data + g.data_offset + t->offset && t->offset % 32 == 0);
            end_max = MAX(end_max, g.data_offset + t->offset + t->nbytes);
            if (t->ndim == 1) CHECKF(t->type == GGML_TYPE_F32, "%s: 1-D tensor not F32", p);
        }
        CHECK(end_max <= g.size);
        for (u32 i = 0; i < ARRAY_COUNT(gt_tensors); i++) {
            const GtTensor *w = &gt_tensors[i];
            if (strcmp(w->file, gt_files[f].file)) continue;
            const GgufTensor *t = gguf_find_tensor(&g, w->name);
            CHECKF(t, "%s: no tensor %s", p, w->name);
            if (!t) continue;
            CHECKF(strcmp(ggml_type_name(t->type), w->type) == 0, "%s %s: type %s want %s", p, w->name, ggml_type_name(t->type), w->type);
            CHECKF(t->ne[0] == w->ne0 && t->ndim == (w->ne1 ? 2u : 1u) && (!w->ne1 || t->ne[1] == w->ne1),
                   "%s %s: ndim %u shape [%llu, %llu], want [%llu, %llu]", p, w->name, t->ndim, (ull)t->ne[0], (ull)t->ne[1],
                   (ull)w->ne0, (ull)w->ne1);
        }
        /* the shared vocabulary keys, every metadata kind the models use */
        GgufStr *toks; u64 nt, n; u32 et; const u8 *d; f32 fv; i64 iv;
        u64 pos2 = arena_pos(&a);
        CHECK(gguf_get_str_array(&g, "tokenizer.ggml.tokens", &a, &toks, &nt) && nt == 512);
        if (nt == 512) CHECK(gguf_str_eq(toks[1], "<s>") && gguf_str_eq(toks[3], "<0x00>"));
        arena_pop_to(&a, pos2);
        CHECK(gguf_get_arr(&g, "tokenizer.ggml.scores", &et, &n, &d) && et == GGUF_F32 && n == 512);
        const GgufKV *sc = gguf_find_kv(&g, "tokenizer.ggml.scores");
        CHECK(sc && gguf_arr_f32(sc, 511, &fv) && fv == -252.0f && !gguf_arr_f32(sc, 512, &fv));
        const GgufKV *tt = gguf_find_kv(&g, "tokenizer.ggml.token_type");
        CHECK(tt && gguf_arr_i64(tt, 1, &iv) && iv == 3 && gguf_arr_i64(tt, 3, &iv) && iv == 6);
        CHECK(gguf_get_u32(&g, "tokenizer.ggml.seperator_token_id", &v) && v == 4294967295u);
        CHECK(gguf_get_u32(&g, "tokenizer.ggml.bos_token_id", &v) && v == 1);
        CHECK(!gguf_get_u32(&g, "tokenizer.ggml.model", &v) && !gguf_get_str(&g, "no.such.key", &arch));
        fmt_buf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", gt_files[f].arch);
        CHECK(gguf_get_f32(&g, key, &fv) && (fv == 1e-5f || fv == 1e-6f));
        if (!strcmp(gt_files[f].arch, "gemma2")) {
            CHECK(gguf_get_u32(&g, "gemma2.attention.key_length", &v) && v == 256);
            CHECK(gguf_get_f32(&g, "gemma2.final_logit_softcapping", &fv) && fv == 30.0f);
        }
        if (!strcmp(gt_files[f].file, "stories260K.gguf")) {
            CHECK(gguf_get_u32(&g, "llama.feed_forward_length", &v) && v == 172);
            CHECK(gguf_get_u32(&g, "llama.rope.dimension_count", &v) && v == 8);
            CHECK(gguf_get_u32(&g, "llama.context_length", &v) && v == 2048);
            CHECK(!gguf_get_f32(&g, "llama.rope.freq_base", &fv));
            CHECK(!gguf_find_tensor(&g, "blk.5.attn_q.weight") && gguf_find_tensor(&g, "blk.4.attn_q.weight"));
        }
        gguf_close(&g);
        arena_pop_to(&a, pos);
    }
    CHECKF(seen > 0, "no model fixture found");
    if (!shared_fixtures_present()) out("    (only the %d model fixtures in test/fixtures)\n", seen);
    arena_free(&a);
}

TEST(gguf_vocab_fixtures_parse) {
    static const struct { const char *xz; const char *model; u64 n_tokens; } vf[] = {
        { "tokenizer/qwen2.5-vocab.gguf.xz", "gpt2",  151936 },
        { "tokenizer/llama2-vocab.gguf.xz",  "llama", 32000 },
        { "tokenizer/gemma-vocab.gguf.xz",   "llama", 0 },
    };
    if (system("command -v xz >/dev/null 2>&1") != 0) SKIP_UNLESS_REQUIRED("xz not installed");
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    int seen = 0;
    for (u32 i = 0; i < ARRAY_COUNT(vf); i++) {
        char p[512], tmp[128], cmd[1200];
        if (!fixture_path(p, sizeof p, vf[i].xz)) continue;
        fmt_buf(tmp, sizeof tmp, "/tmp/edge-gguf-test-%d-%u.gguf", (int)getpid(), i);
        fmt_buf(cmd, sizeof cmd, "xz -dc '%s' > '%s'", p, tmp);
        REQUIRE(system(cmd) == 0);
        seen++;
        Gguf g; Err e; GgufStr s, *toks; u64 n;
        u64 pos = arena_pos(&a);
        bool ok = gguf_open(&g, tmp, &a, &e);
        CHECKF(ok, "%s", e.msg);
        if (ok) {
            CHECK(g.n_tensors == 0);
            CHECK(gguf_get_str(&g, "tokenizer.ggml.model", &s) && gguf_str_eq(s, vf[i].model));
            CHECK(gguf_get_str_array(&g, "tokenizer.ggml.tokens", &a, &toks, &n) && n > 1000);
            if (vf[i].n_tokens) CHECKF(n == vf[i].n_tokens, "%s: %llu tokens", vf[i].xz, (ull)n);
            for (u64 j = 0; j < n; j++) CHECK(toks[j].ptr + toks[j].len <= (const char *)g.data + g.size);
            gguf_close(&g);
        }
        arena_pop_to(&a, pos);
        unlink(tmp);
    }
    arena_free(&a);
    if (!seen) SKIP_UNLESS_REQUIRED("no tokenizer fixtures");
}

/* ---- every metadata type, through a small GGUF v2 built here ------------------------ */
typedef struct GtBuf { u8 b[4096]; u64 n; } GtBuf;
static void gt_w(GtBuf *w, const void *p, u64 n) { memcpy(w->b + w->n, p, n); w->n += n; }
static void gt_w32(GtBuf *w, u32 v) { gt_put_u32(w->b + w->n, v); w->n += 4; }
static void gt_w64(GtBuf *w, u64 v) { gt_put_u64(w->b + w->n, v); w->n += 8; }
static void gt_wstr(GtBuf *w, const char *s) { gt_w64(w, strlen(s)); gt_w(w, s, strlen(s)); }
static void gt_wkey(GtBuf *w, const char *k, u32 t) { gt_wstr(w, k); gt_w32(w, t); }

TEST(gguf_every_metadata_type_and_getter) {
    GtBuf w = { .n = 0 };
    gt_w32(&w, 0x46554747u); gt_w32(&w, 2); gt_w64(&w, 1); gt_w64(&w, 13);
    u8 u8v = 200; i8 i8v = -5; u16 u16v = 60000; i16 i16v = -300; i32 i32v = -7; f32 f32v = 1.5f;
    f64 f64v = 0.25; i64 i64v = -(1ll << 40); u64 u64v = 1ull << 63;
    gt_wkey(&w, "a.u8", GGUF_U8);   gt_w(&w, &u8v, 1);
    gt_wkey(&w, "a.i8", GGUF_I8);   gt_w(&w, &i8v, 1);
    gt_wkey(&w, "a.u16", GGUF_U16); gt_w(&w, &u16v, 2);
    gt_wkey(&w, "a.i16", GGUF_I16); gt_w(&w, &i16v, 2);
    gt_wkey(&w, "a.u32", GGUF_U32); gt_w32(&w, 4000000000u);
    gt_wkey(&w, "a.i32", GGUF_I32); gt_w(&w, &i32v, 4);
    gt_wkey(&w, "a.f32", GGUF_F32); gt_w(&w, &f32v, 4);
    gt_wkey(&w, "a.bool", GGUF_BOOL); gt_w(&w, "\x01", 1);
    gt_wkey(&w, "a.str", GGUF_STRING); gt_wstr(&w, "hello");
    gt_wkey(&w, "a.u64", GGUF_U64); gt_w64(&w, u64v);
    gt_wkey(&w, "a.i64", GGUF_I64); gt_w(&w, &i64v, 8);
    gt_wkey(&w, "a.f64", GGUF_F64); gt_w(&w, &f64v, 8);
    gt_wkey(&w, "a.arr", GGUF_ARRAY); gt_w32(&w, GGUF_I16); gt_w64(&w, 3);
    for (i16 k = -1; k < 2; k++) gt_w(&w, &k, 2);
    gt_wstr(&w, "t"); gt_w32(&w, 1); gt_w64(&w, 8); gt_w32(&w, GGML_TYPE_F32); gt_w64(&w, 0);
    while (w.n % 32) w.b[w.n++] = 0;
    for (int k = 0; k < 8; k++) { f32 x = (f32)k; gt_w(&w, &x, 4); }

    Arena a; arena_init(&a, "gguf-test", 1 << 20);
    Gguf g; Err e; u32 u; i64 i; f32 f; bool b; GgufStr s; u32 et; u64 n; const u8 *d;
    REQUIRE(gguf_parse(&g, w.b, w.n, "built.gguf", &a, &e));
    CHECK(g.version == 2 && g.n_kv == 13 && g.data_offset % 32 == 0);
    CHECK(gguf_get_u32(&g, "a.u8", &u) && u == 200);
    CHECK(!gguf_get_u32(&g, "a.i8", &u) && gguf_get_i64(&g, "a.i8", &i) && i == -5);
    CHECK(gguf_get_u32(&g, "a.u16", &u) && u == 60000);
    CHECK(gguf_get_i64(&g, "a.i16", &i) && i == -300);
    CHECK(gguf_get_u32(&g, "a.u32", &u) && u == 4000000000u);
    CHECK(!gguf_get_u32(&g, "a.i32", &u) && gguf_get_i64(&g, "a.i32", &i) && i == -7);
    CHECK(gguf_get_f32(&g, "a.f32", &f) && f == 1.5f && !gguf_get_u32(&g, "a.f32", &u));
    CHECK(gguf_get_bool(&g, "a.bool", &b) && b && !gguf_get_bool(&g, "a.u8", &b));
    CHECK(gguf_get_str(&g, "a.str", &s) && gguf_str_eq(s, "hello") && !gguf_str_eq(s, "hell"));
    CHECK(!gguf_get_u32(&g, "a.u64", &u) && !gguf_get_i64(&g, "a.u64", &i));
    CHECK(gguf_get_i64(&g, "a.i64", &i) && i == -(1ll << 40) && !gguf_get_u32(&g, "a.i64", &u));
    CHECK(gguf_get_f32(&g, "a.f64", &f) && f == 0.25f);
    CHECK(gguf_get_arr(&g, "a.arr", &et, &n, &d) && et == GGUF_I16 && n == 3);
    const GgufKV *kv = gguf_find_kv(&g, "a.arr");
    CHECK(kv && gguf_arr_i64(kv, 0, &i) && i == -1 && gguf_arr_i64(kv, 2, &i) && i == 1 && !gguf_arr_i64(kv, 3, &i));
    const GgufTensor *t = gguf_find_tensor(&g, "t");
    REQUIRE(t && t->nbytes == 32 && t->nelem == 8);
    f32 row[8]; dequant_row(t->type, t->data, row, 8);
    CHECK(row[7] == 7.0f);
    /* a nested array is rejected */
    GtBuf w2 = { .n = 0 };
    gt_w32(&w2, 0x46554747u); gt_w32(&w2, 3); gt_w64(&w2, 0); gt_w64(&w2, 1);
    gt_wkey(&w2, "nest", GGUF_ARRAY); gt_w32(&w2, GGUF_ARRAY); gt_w64(&w2, 0); gt_w64(&w2, 0);
    CHECK(!gguf_parse(&g, w2.b, w2.n, "nest.gguf", &a, &e) && e.code == EXIT_MODEL && strstr(e.msg, "nested"));
    /* a duplicate key is rejected; a bad alignment is rejected */
    GtBuf w3 = { .n = 0 };
    gt_w32(&w3, 0x46554747u); gt_w32(&w3, 3); gt_w64(&w3, 0); gt_w64(&w3, 2);
    gt_wkey(&w3, "k", GGUF_U8); gt_w(&w3, "\x01", 1); gt_wkey(&w3, "k", GGUF_U8); gt_w(&w3, "\x01", 1);
    CHECK(!gguf_parse(&g, w3.b, w3.n, "dup.gguf", &a, &e) && strstr(e.msg, "duplicate metadata key 'k'"));
    GtBuf w4 = { .n = 0 };
    gt_w32(&w4, 0x46554747u); gt_w32(&w4, 3); gt_w64(&w4, 0); gt_w64(&w4, 1);
    gt_wkey(&w4, "general.alignment", GGUF_U32); gt_w32(&w4, 24);
    CHECK(!gguf_parse(&g, w4.b, w4.n, "align.gguf", &a, &e) && strstr(e.msg, "general.alignment"));
    arena_free(&a);
}

/* ---- robustness on stories260K ----------------------------------------------------- */
static bool gt_stories(Arena *a, u8 **d, u64 *n, Gguf *g) {
    Err e;
    if (!gt_load(a, "models/stories260K.gguf", d, n)) return false;
    return gguf_parse(g, *d, *n, "stories260K.gguf", a, &e);
}

static u64 gt_ti_off(const Gguf *g, const GgufTensor *t) { return (u64)((const u8 *)t->name.ptr - g->data) - 8; }
static u64 gt_ti_ndim(const Gguf *g, const GgufTensor *t) { return gt_ti_off(g, t) + 8 + t->name.len; }
static u64 gt_ti_ne(const Gguf *g, const GgufTensor *t, u32 d) { return gt_ti_ndim(g, t) + 4 + 8ull * d; }
static u64 gt_ti_type(const Gguf *g, const GgufTensor *t) { return gt_ti_ne(g, t, t->ndim); }
static u64 gt_ti_offset(const Gguf *g, const GgufTensor *t) { return gt_ti_type(g, t) + 4; }

TEST(gguf_truncated_at_every_section_boundary_and_random_offsets) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    u8 *d; u64 n; Gguf g;
    if (!gt_stories(&a, &d, &n, &g)) { arena_free(&a); SKIP_UNLESS_REQUIRED("no stories260K.gguf"); }
    u64 *cut = push_array(&a, u64, 4096), nc = 0;
    u64 fixed[] = { 0, 3, 4, 8, 16, 23, 24 };
    for (u32 i = 0; i < ARRAY_COUNT(fixed); i++) cut[nc++] = fixed[i];
    for (u64 i = 0; i < g.n_kv; i++) {
        u64 k = (u64)((const u8 *)g.kv[i].key.ptr - d) - 8;
        cut[nc++] = k; cut[nc++] = k + 4; cut[nc++] = k + 8; cut[nc++] = k + 8 + g.kv[i].key.len;
        cut[nc++] = k + 8 + g.kv[i].key.len + 4;
        if (g.kv[i].type == GGUF_ARRAY) cut[nc++] = (u64)(g.kv[i].val - d) + 1;
    }
    u64 end_max = 0;
    for (u64 i = 0; i < g.n_tensors; i++) {
        const GgufTensor *t = &g.tensors[i];
        cut[nc++] = gt_ti_off(&g, t); cut[nc++] = gt_ti_ndim(&g, t); cut[nc++] = gt_ti_ne(&g, t, 0);
        cut[nc++] = gt_ti_type(&g, t); cut[nc++] = gt_ti_offset(&g, t); cut[nc++] = gt_ti_offset(&g, t) + 8;
        cut[nc++] = g.data_offset + t->offset + t->nbytes / 2;
        cut[nc++] = g.data_offset + t->offset + t->nbytes - 1;
        end_max = MAX(end_max, g.data_offset + t->offset + t->nbytes);
    }
    u64 infos_end = gt_ti_offset(&g, &g.tensors[g.n_tensors - 1]) + 8;
    CHECKF(g.data_offset > infos_end, "stories260K has no padding (%llu / %llu): the padding case is not exercised",
           (ull)infos_end, (ull)g.data_offset);
    cut[nc++] = infos_end + (g.data_offset - infos_end) / 2;
    cut[nc++] = g.data_offset; cut[nc++] = g.data_offset + 1; cut[nc++] = end_max - 1;
    u32 seed = 0x9e3779b9u;
    for (int i = 0; i < 200; i++) { seed = seed * 1664525u + 1013904223u; cut[nc++] = (u64)seed % n; }
    /* the message names the section the cut falls in (or, for a short file, the header count
       that the rest of the file cannot hold) */
    u64 ti0 = gt_ti_off(&g, &g.tensors[0]);
    u64 fails = 0;
    for (u64 i = 0; i < nc; i++) {
        Err e = { 0 };
        u64 m = cut[i];
        if (m > n) continue;
        bool ok = gt_parse_copy(d, m, &a, &e);
        bool want_ok = m >= end_max;
        const char *section = m < 24 ? "mut.gguf: header: file truncated" : m < ti0 ? "metadata" :
                              m < infos_end ? "tensor directory: file truncated" :
                              m < g.data_offset ? "mut.gguf: tensor data: file truncated: the data section starts at offset" :
                              "exceeds the data section";
        bool named = strstr(e.msg, section) || strstr(e.msg, "exceeds what the file can hold");
        if (ok != want_ok || (!ok && (e.code != EXIT_MODEL || !strstr(e.msg, "mut.gguf") || !named ||
                                      !(strstr(e.msg, "truncated") || strstr(e.msg, "exceeds"))))) {
            if (fails++ < 5) CHECKF(0, "cut at %llu: ok=%d code=%d msg='%s' (want '%s')", (ull)m, ok, e.code, e.msg, section);
        }
    }
    CHECKF(fails == 0, "%llu of %llu truncations misbehaved", (ull)fails, (ull)nc);
    Err e;
    CHECK(gt_parse_copy(d, n, &a, &e));
    arena_free(&a);
}

/* Applies one mutation to a fresh copy of stories260K and expects a failure naming `field`. */
#define GT_EXPECT_FAIL(label, mutate, field) do {                                                     \
        memcpy(m, d, n); u8 *p_ = m; (void)p_; mutate;                                                \
        Err e_ = { 0 };                                                                               \
        bool ok_ = gt_parse_copy(m, n, &a, &e_);                                                      \
        CHECKF(!ok_ && e_.code == EXIT_MODEL && strstr(e_.msg, field) && strstr(e_.msg, "mut.gguf"),  \
               "%s: ok=%d code=%d msg='%s' (want '%s')", label, ok_, e_.code, e_.msg, field);         \
    } while (0)

TEST(gguf_mutated_fields_are_rejected_with_messages) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    u8 *d; u64 n; Gguf g;
    if (!gt_stories(&a, &d, &n, &g)) { arena_free(&a); SKIP_UNLESS_REQUIRED("no stories260K.gguf"); }
    u8 *m = push_array(&a, u8, n);
    const GgufTensor *t0 = &g.tensors[0], *t1 = &g.tensors[1];
    const GgufTensor *q1 = gguf_find_tensor(&g, "blk.1.attn_q.weight"), *q3 = gguf_find_tensor(&g, "blk.3.attn_q.weight");
    const GgufKV *toks = gguf_find_kv(&g, "tokenizer.ggml.tokens");
    REQUIRE(q1 && q3 && toks && q3->ndim == 2);

    char want[512];
    GT_EXPECT_FAIL("bad magic", p_[0] = 'X', "bad magic 0x46554758 at offset 0 (expected 0x46554747");
    GT_EXPECT_FAIL("version 1", gt_put_u32(p_ + 4, 1), "GGUF version 1 at offset 4 is not supported (supported: 2, 3)");
    GT_EXPECT_FAIL("version 4", gt_put_u32(p_ + 4, 4), "GGUF version 4 at offset 4 is not supported (supported: 2, 3)");
    GT_EXPECT_FAIL("huge n_tensors", gt_put_u64(p_ + 8, 1ull << 32), "tensor count 4294967296");
    GT_EXPECT_FAIL("max n_tensors", gt_put_u64(p_ + 8, ~0ull), "tensor count");
    GT_EXPECT_FAIL("huge n_kv", gt_put_u64(p_ + 16, 1ull << 40), "metadata count (n_kv) 1099511627776");
    GT_EXPECT_FAIL("huge key length", gt_put_u64(p_ + 24, 1ull << 62), "metadata: key of metadata entry 0 length 4611686018427387904 at offset 24 exceeds");
    GT_EXPECT_FAIL("max key length", gt_put_u64(p_ + 24, ~0ull), "key of metadata entry 0 length");
    GT_EXPECT_FAIL("huge array length", gt_put_u64(p_ + (toks->val - d) - 8, 1ull << 61), "array length 2305843009213693952");
    GT_EXPECT_FAIL("max array length", gt_put_u64(p_ + (toks->val - d) - 8, ~0ull), "array length");
    GT_EXPECT_FAIL("huge string in array", gt_put_u64(p_ + (toks->val - d), 1ull << 50), "metadata: string 0 of array 'tokenizer.ggml.tokens' length 1125899906842624");
    GT_EXPECT_FAIL("bad value type", gt_put_u32(p_ + (toks->val - d) - 16, 99), "value type 99");
    GT_EXPECT_FAIL("bad array elem type", gt_put_u32(p_ + (toks->val - d) - 12, 13), "array element type 13");
    GT_EXPECT_FAIL("huge tensor name", gt_put_u64(p_ + gt_ti_off(&g, t0), 1ull << 60), "tensor directory: name of tensor 0 length 1152921504606846976");
    fmt_buf(want, sizeof want, "tensor 'token_embd.weight': data offset %llu + size %llu = %llu exceeds the data section (%llu bytes from file offset %llu",
            (ull)align_up(n, 32), (ull)t0->nbytes, (ull)(align_up(n, 32) + t0->nbytes), (ull)(n - g.data_offset), (ull)g.data_offset);
    GT_EXPECT_FAIL("tensor offset beyond file", gt_put_u64(p_ + gt_ti_offset(&g, t0), align_up(n, 32)), want);
    fmt_buf(want, sizeof want, "tensor 'blk.3.attn_q.weight': data offset %llu + size %llu overflows 64 bits", (ull)(~0ull - 31), (ull)q3->nbytes);
    GT_EXPECT_FAIL("offset+size overflow", gt_put_u64(p_ + gt_ti_offset(&g, q3), ~0ull - 31), want);
    fmt_buf(want, sizeof want, "tensor 'blk.3.attn_q.weight': data offset %llu is not a multiple of the alignment 32", (ull)(q3->offset + 4));
    GT_EXPECT_FAIL("misaligned offset", gt_put_u64(p_ + gt_ti_offset(&g, q3), q3->offset + 4), want);
    fmt_buf(want, sizeof want, "tensor '%.*s' (data offset %llu, %llu bytes) overlaps tensor '%.*s' (data offset %llu, %llu bytes)",
            (int)t1->name.len, t1->name.ptr, (ull)t0->offset, (ull)t1->nbytes, (int)t0->name.len, t0->name.ptr, (ull)t0->offset, (ull)t0->nbytes);
    GT_EXPECT_FAIL("overlap", gt_put_u64(p_ + gt_ti_offset(&g, t1), t0->offset), want);
    GT_EXPECT_FAIL("ne product overflow", (gt_put_u64(p_ + gt_ti_ne(&g, q3, 0), 1ull << 40), gt_put_u64(p_ + gt_ti_ne(&g, q3, 1), 1ull << 40)),
                   "element count (product of ne) overflows");
    GT_EXPECT_FAIL("byte size overflow", (gt_put_u64(p_ + gt_ti_ne(&g, q3, 0), 1ull << 62), gt_put_u64(p_ + gt_ti_ne(&g, q3, 1), 1)),
                   "tensor 'blk.3.attn_q.weight': byte size of shape [4611686018427387904, 1, 1, 1] (F32) overflows 64 bits");
    GT_EXPECT_FAIL("ne 0", gt_put_u64(p_ + gt_ti_ne(&g, q3, 1), 0), "dimension 1");
    GT_EXPECT_FAIL("ne negative", gt_put_u64(p_ + gt_ti_ne(&g, q3, 1), ~0ull), "dimension 1");
    GT_EXPECT_FAIL("ndims 0", gt_put_u32(p_ + gt_ti_ndim(&g, q3), 0), "n_dims 0");
    GT_EXPECT_FAIL("ndims 5", gt_put_u32(p_ + gt_ti_ndim(&g, q3), 5), "n_dims 5");
    fmt_buf(want, sizeof want, "duplicate tensor name 'blk.3.attn_q.weight' (tensors %llu and %llu)",
            (ull)MIN(q1 - g.tensors, q3 - g.tensors), (ull)MAX(q1 - g.tensors, q3 - g.tensors));
    GT_EXPECT_FAIL("duplicate name", ((char *)p_)[(const u8 *)q1->name.ptr - d + 4] = '3', want);
    GT_EXPECT_FAIL("unsupported type", gt_put_u32(p_ + gt_ti_type(&g, q3), GGML_TYPE_Q8_1),
                   "tensor 'blk.3.attn_q.weight': type Q8_1 is not supported (supported: F32 F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16;");
    GT_EXPECT_FAIL("no decoder: IQ2_XXS", gt_put_u32(p_ + gt_ti_type(&g, q3), 16), "tensor 'blk.3.attn_q.weight': type IQ2_XXS is not supported (supported:");
    GT_EXPECT_FAIL("no decoder: MXFP4", gt_put_u32(p_ + gt_ti_type(&g, q3), 39), "tensor 'blk.3.attn_q.weight': type MXFP4 is not supported (supported:");
    GT_EXPECT_FAIL("unknown type", gt_put_u32(p_ + gt_ti_type(&g, q3), 1234), "tensor 'blk.3.attn_q.weight': type id 1234 (unknown) is not supported");
    GT_EXPECT_FAIL("row not a block multiple", gt_put_u32(p_ + gt_ti_type(&g, q3), GGML_TYPE_Q4_K), "not a multiple of the Q4_K block size 256");
    /* the unmutated copy still parses */
    Err e; memcpy(m, d, n);
    CHECK(gt_parse_copy(m, n, &a, &e));
    arena_free(&a);
}

/* The types a tensor may have depend on what it is (models/model.c, model_weight_kinds): a norm
   of a supported type that no kernel reads (Q8_0, F16, BF16) parses but is refused at load,
   naming the tensor, the type and the allowed types; a matrix may have any supported type. */
TEST(gguf_tensor_type_not_allowed_for_its_kind) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    u8 *d; u64 n; Gguf g;
    if (!gt_stories(&a, &d, &n, &g)) { arena_free(&a); SKIP_UNLESS_REQUIRED("no stories260K.gguf"); }
    u8 *m = push_array(&a, u8, n);
    static const struct { const char *tensor; u32 type; bool ok; const char *want; } cases[] = {
        { "blk.0.attn_norm.weight", GGML_TYPE_Q8_0, false, "tensor 'blk.0.attn_norm.weight': type Q8_0 is not allowed for a norm, bias or rope_freqs vector (allowed: F32)" },
        { "blk.2.ffn_norm.weight",  GGML_TYPE_F16,  false, "tensor 'blk.2.ffn_norm.weight': type F16 is not allowed for a norm, bias or rope_freqs vector (allowed: F32)" },
        { "output_norm.weight",     GGML_TYPE_BF16, false, "tensor 'output_norm.weight': type BF16 is not allowed for a norm, bias or rope_freqs vector (allowed: F32)" },
        { "blk.1.attn_q.weight",    GGML_TYPE_F16,  true,  0 },   /* fewer bytes than the F32 slot: still inside the file */
        { "blk.1.ffn_up.weight",    GGML_TYPE_Q8_0, true,  0 },
        { "output.weight",          GGML_TYPE_BF16, true,  0 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(cases); i++) {
        const GgufTensor *t = gguf_find_tensor(&g, cases[i].tensor);
        REQUIRE(t && t->type == GGML_TYPE_F32);
        memcpy(m, d, n);
        gt_put_u32(m + gt_ti_type(&g, t), cases[i].type);
        Gguf h; Err e = { 0 }; ModelConfig cfg; ModelWeights w; u64 pos = arena_pos(&a);
        REQUIRE(gguf_parse(&h, m, n, "mut.gguf", &a, &e));
        REQUIRE(model_config_from_gguf(&h, false, &cfg, &e));
        bool ok = model_weights_load(&w, &cfg, &h, &a, &e);
        if (cases[i].ok) CHECKF(ok, "%s as %s: %s", cases[i].tensor, ggml_type_name(cases[i].type), e.msg);
        else CHECKF(!ok && e.code == EXIT_MODEL && strstr(e.msg, "mut.gguf: ") == e.msg && strstr(e.msg, cases[i].want),
                    "%s as %s: ok=%d code=%d msg='%s'", cases[i].tensor, ggml_type_name(cases[i].type), ok, e.code, e.msg);
        arena_pop_to(&a, pos);
    }
    arena_free(&a);
}

TEST(gguf_open_errors_name_the_file) {
    Arena a; arena_init(&a, "gguf-test", 1 << 20);
    Gguf g; Err e;
    CHECK(!gguf_open(&g, "/nonexistent/x.gguf", &a, &e) && e.code == EXIT_MODEL && strstr(e.msg, "/nonexistent/x.gguf"));
    CHECK(!gguf_open(&g, "/tmp", &a, &e) && e.code == EXIT_MODEL);
    CHECK(!gguf_parse(&g, (const u8 *)"GGUF", 4, "short.gguf", &a, &e) && strstr(e.msg, "version") && strstr(e.msg, "truncated"));
    CHECK(!gguf_parse(&g, (const u8 *)"", 0, "empty.gguf", &a, &e) && strstr(e.msg, "magic"));
    arena_free(&a);
}

/* Seeded random byte mutations of the header and directory: any outcome but a crash, an
   out-of-bounds read (ASan) or an error without code 2 and the file name is a failure. */
TEST(gguf_random_directory_mutations_never_crash) {
    Arena a; arena_init(&a, "gguf-test", GT_ARENA);
    u8 *d; u64 n; Gguf g;
    if (!gt_stories(&a, &d, &n, &g)) { arena_free(&a); SKIP_UNLESS_REQUIRED("no stories260K.gguf"); }
    u8 *m = malloc(n);
    u32 seed = 12345, bad = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(m, d, n);
        int flips = 1 + it % 4;
        for (int k = 0; k < flips; k++) {
            seed = seed * 1664525u + 1013904223u;
            u64 at = (seed >> 8) % g.data_offset;
            seed = seed * 1664525u + 1013904223u;
            m[at] = (it & 1) ? (u8)(seed >> 24) : (u8)(m[at] ^ (1u << ((seed >> 24) & 7)));
        }
        Err e = { 0 }; Gguf h; u64 pos = arena_pos(&a);
        bool ok = gguf_parse(&h, m, n, "mut.gguf", &a, &e);
        if (!ok) { rejected++; if (e.code != EXIT_MODEL || !strstr(e.msg, "mut.gguf")) bad++; }
        else for (u64 i = 0; i < h.n_tensors; i++)
            if (h.tensors[i].data < m || h.tensors[i].data + h.tensors[i].nbytes > m + n) bad++;
        arena_pop_to(&a, pos);
    }
    CHECKF(bad == 0, "%u mutations misbehaved", bad);
    CHECKF(rejected > 100, "only %u of 3000 mutations were rejected", rejected);
    free(m);
    arena_free(&a);
}
