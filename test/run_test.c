/* run_test.c — cli/run.c's prompt tokenization on a real chat vocabulary (qwen2.5, from the tokenizer
   fixtures; no model weights needed): with a ChatML template the template's <|im_start|>/<|im_end|> are
   control tokens; text typed in the prompt is parsed as control tokens by default and never with
   --no-special, while the template's own markers stay control tokens. */

static u32 run_test_count(const i32 *t, u32 n, i32 id) { u32 c = 0; for (u32 i = 0; i < n; i++) c += t[i] == id; return c; }

TEST(run_no_special_keeps_template_markers_only) {
    Tokenizer *tok = tok_test_vocab(0);
    if (!tok) SKIP_UNLESS_REQUIRED("qwen2.5 vocabulary fixture not found or not loadable");
    i32 im_end = tok_find(tok, "<|im_end|>", 10), im_start = tok_find(tok, "<|im_start|>", 12);
    REQUIRE(im_end >= 0 && im_start >= 0);
    Run *r = (Run *)calloc(1, sizeof(Run));
    r->tok = tok;
    r->rend_cap = 4096; r->rend = (char *)malloc(r->rend_cap);
    r->toks_cap = 4096; r->toks = (i32 *)malloc(r->toks_cap * sizeof(i32));
    char err[256];
    for (int ns = 0; ns < 2; ns++) {
        r->o.no_special = ns;
        ChatTurn turns[2] = { { "system", "Be brief." }, { "user", "hi <|im_end|> there" } };
        u64 n_rend = chat_render_turns(CHAT_CHATML, turns, 2, 0, r->rend, r->rend_cap);
        u32 n = 0;
        REQUIRE(run_tokenize(r, CHAT_CHATML, 0, turns, 2, n_rend, &n, err, sizeof err));
        /* template: 3 <|im_start|> (system, user, assistant) and 2 <|im_end|>; the user text adds one unless --no-special */
        CHECKF(run_test_count(r->toks, n, im_start) == 3, "no_special %d: %u im_start", ns, run_test_count(r->toks, n, im_start));
        CHECKF(run_test_count(r->toks, n, im_end) == (ns ? 2u : 3u), "no_special %d: %u im_end", ns, run_test_count(r->toks, n, im_end));
        CHECK(!strcmp(turns[1].text, "hi <|im_end|> there"));   /* the turns are restored */
    }
    /* without --no-special the segments equal one whole tokenization when the prompt has no markers */
    ChatTurn t2[1] = { { "user", "Hello, world! 123" } };
    u64 n_rend = chat_render_turns(CHAT_CHATML, t2, 1, 0, r->rend, r->rend_cap);
    u32 n_whole = 0, n_seg = 0;
    r->o.no_special = false;
    REQUIRE(run_tokenize(r, CHAT_CHATML, 0, t2, 1, n_rend, &n_whole, err, sizeof err));
    i32 whole[256]; memcpy(whole, r->toks, MIN(n_whole, 256u) * sizeof(i32));
    r->o.no_special = true;
    REQUIRE(run_tokenize(r, CHAT_CHATML, 0, t2, 1, n_rend, &n_seg, err, sizeof err));
    CHECK(n_whole == n_seg && n_whole <= 256 && !memcmp(whole, r->toks, n_whole * sizeof(i32)));
    free(r->rend); free(r->toks); free(r);
}

/* --answer-only: the streamed bytes of a thinking model's output are its answer alone, whatever the
   pieces' boundaries (a tag split across tokens, an output that only looks like "<think>" at first). */
static void run_test_stream(bool answer_only, ChatFamily fam, const char *const *pieces, const char *want) {
    Run *r = (Run *)calloc(1, sizeof(Run));
    r->o.answer_only = answer_only; r->m.cfg.chat = fam;
    r->out.cap = 1024; r->out.buf = (char *)malloc(r->out.cap);
    RunReq q; memset(&q, 0, sizeof q);
    FILE *f = tmpfile();
    fflush(stdout);
    int saved = dup(1);
    dup2(fileno(f), 1);
    for (const char *const *p = pieces; *p; p++) run_emit(r, &r->out, &q, *p, strlen(*p), true);
    run_stream(r, &r->out, r->out.n, true);
    dup2(saved, 1); close(saved);
    char got[1024] = {0};
    rewind(f);
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    CHECKF(n == strlen(want) && !memcmp(got, want, n), "answer_only %d %s: streamed '%s', want '%s'", answer_only, chat_family_name(fam), got, want);
    free(r->out.buf); free(r);
}

TEST(run_answer_only_streams_the_answer) {
    static const char *const think[] = { "<th", "ink>\nThe sky", " scatters.\n</th", "ink>\n", "\nRayleigh", " scattering.", 0 };
    run_test_stream(true, CHAT_QWEN3, think, "Rayleigh scattering.");
    run_test_stream(false, CHAT_QWEN3, think, "<think>\nThe sky scatters.\n</think>\n\nRayleigh scattering.");
    run_test_stream(true, CHAT_CHATML, think, "<think>\nThe sky scatters.\n</think>\n\nRayleigh scattering.");   /* no thinking family */
    static const char *const plain[] = { "<thi", "s is", " not a tag", 0 }, *const short_[] = { "<t", 0 };
    run_test_stream(true, CHAT_QWEN3, plain, "<this is not a tag");
    run_test_stream(true, CHAT_QWEN3, short_, "<t");                       /* the whole output was undecided */
    static const char *const unclosed[] = { "<think>", "still thinking", 0 };
    run_test_stream(true, CHAT_QWEN3, unclosed, "");
}

/* The request's thinking switch and the run's date reach the template (run_prepare): qwen3 with
   thinking off ends in the empty block, llama3's header carries r->date. */
TEST(run_prepare_passes_think_and_date) {
    Tokenizer *tok = tok_test_vocab(0);
    if (!tok) SKIP_UNLESS_REQUIRED("qwen2.5 vocabulary fixture not found or not loadable");
    Run *r = (Run *)calloc(1, sizeof(Run));
    r->tok = tok; r->n_ctx = 4096;
    r->clean_cap = 4096; r->clean = (char *)malloc(r->clean_cap);
    r->rend_cap = 4096; r->rend = (char *)malloc(r->rend_cap);
    r->toks_cap = 4096; r->toks = (i32 *)malloc(r->toks_cap * sizeof(i32));
    fmt_buf(r->date, sizeof r->date, "05 Jan 2025");
    RunReq q; memset(&q, 0, sizeof q);
    q.text = "Hi"; q.len = 2; q.max_tokens = 4;
    RunResult res; u32 n;
    static const struct { ChatFamily f; ChatThink think; const char *tail; } c[] = {
        { CHAT_QWEN3, CHAT_THINK_OFF, "<|im_start|>assistant\n<think>\n\n</think>\n\n" },
        { CHAT_QWEN3, CHAT_THINK_DEFAULT, "<|im_end|>\n<|im_start|>assistant\n" },
        { CHAT_LLAMA3, CHAT_THINK_DEFAULT, "Today Date: 05 Jan 2025\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                                           "<|start_header_id|>assistant<|end_header_id|>\n\n" },
    };
    for (u32 i = 0; i < ARRAY_COUNT(c); i++) {
        r->m.cfg.chat = c[i].f; q.think = c[i].think;
        memset(&res, 0, sizeof res);
        REQUIRE(run_prepare(r, &q, 1, &res, &n));
        u64 k = strlen(r->rend), t = strlen(c[i].tail);
        CHECKF(k >= t && !strcmp(r->rend + k - t, c[i].tail), "%s think %d: rendered '%s'", chat_family_name(c[i].f), c[i].think, r->rend);
    }
    free(r->clean); free(r->rend); free(r->toks); free(r);
}
