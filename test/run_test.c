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
