/* chat_test.c — models/chat.c against the renderings of each family's own Jinja template
   (the .cases.jsonl files of ../shared/fixtures/chat, every one in the folder: a held-back file runs too), the
   families' stop tokens in the real vocabularies, and the reasoning/answer split of thinking output. */
#include <dirent.h>

#define CHAT_TEST_DATE "26 Jul 2024"          /* the fixtures' strftime_now (chat/README.md) */
#define CHAT_TEST_MAX_CASES 512

typedef struct ChatCase {
    const char *file, *messages;              /* messages: the JSON text of the line's "messages" (to pair cases) */
    ChatTurn    turns[16];
    u32         n_turns, line;
    bool        gen, rendered;
    ChatThink   think;
    const char *want, *bos;                   /* want: "rendered" or "error" */
} ChatCase;

/* gemma2/gemma3 -> gemma, qwen3 -> qwen3, qwen2.5 (and any other qwen) -> chatml, llama3.x -> llama3 */
static bool chat_test_family(const char *file, ChatFamily *f) {
    if (!strncmp(file, "gemma", 5)) { *f = CHAT_GEMMA; return true; }
    if (!strncmp(file, "qwen3", 5)) { *f = CHAT_QWEN3; return true; }
    if (!strncmp(file, "qwen", 4))  { *f = CHAT_CHATML; return true; }
    if (!strncmp(file, "llama3", 6)) { *f = CHAT_LLAMA3; return true; }
    return false;
}

/* the raw JSON text of the value of key in a line (the fixtures write "messages" first, as an array) */
static const char *chat_test_raw(Arena *a, const char *line, const char *key) {
    char pat[64]; fmt_buf(pat, sizeof pat, "\"%s\": [", key);
    const char *p = strstr(line, pat), *q = p ? strstr(p, "}], \"") : 0;
    if (!p || !q) return "";
    u64 n = (u64)(q + 2 - p);
    char *s = push_array(a, char, n + 1);
    memcpy(s, p, n); s[n] = 0;
    return s;
}

static bool chat_test_parse(Arena *a, const char *file, const char *line, u32 lineno, ChatCase *c) {
    JsonDoc doc;
    if (!json_parse(line, strlen(line), a, &doc)) return false;
    memset(c, 0, sizeof *c);
    c->file = file; c->line = lineno;
    c->messages = chat_test_raw(a, line, "messages");
    char err[256];
    if (!chat_turns_from_json(json_get(doc.root, "messages"), c->turns, ARRAY_COUNT(c->turns), &c->n_turns, err, sizeof err)) return false;
    const JsonVal *g = json_get(doc.root, "add_generation_prompt"), *t = json_get(doc.root, "enable_thinking");
    const JsonVal *r = json_get(doc.root, "rendered"), *e = json_get(doc.root, "error"), *b = json_get(doc.root, "bos_token");
    c->gen = g && g->type == JSON_TRUE;
    c->think = !t ? CHAT_THINK_DEFAULT : t->type == JSON_TRUE ? CHAT_THINK_ON : CHAT_THINK_OFF;
    c->rendered = r && r->type == JSON_STR;
    c->want = c->rendered ? r->str : e && e->type == JSON_STR ? e->str : 0;
    c->bos = b && b->type == JSON_STR ? b->str : "";
    return c->want != 0;
}

/* every case of every file in chat/ */
static u32 chat_test_load(Arena *a, ChatCase *cases, u32 cap) {
    char dir[1024];
    if (!fixture_path(dir, sizeof dir, "chat/README.md")) return 0;
    *strrchr(dir, '/') = 0;
    DIR *d = opendir(dir);
    u32 n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        u64 l = strlen(de->d_name);
        if (l < 12 || strcmp(de->d_name + l - 12, ".cases.jsonl")) continue;
        char path[1400]; fmt_buf(path, sizeof path, "%s/%s", dir, de->d_name);
        u8 *data; u64 size; Err e = {0};
        if (!read_file_all(a, path, &data, &size, &e)) { CHECKF(0, "%s", e.msg); continue; }
        char *name = push_array(a, char, l + 1); memcpy(name, de->d_name, l + 1);
        char *text = push_array(a, char, size + 1); memcpy(text, data, size); text[size] = 0;
        u32 lineno = 0;
        for (char *ln = strtok(text, "\n"); ln; ln = strtok(0, "\n")) {
            lineno++;
            if (n >= cap) { CHECKF(0, "more than %u chat cases", cap); break; }
            CHECKF(chat_test_parse(a, name, ln, lineno, &cases[n]), "%s:%u: not a chat case", name, lineno);
            n += cases[n].want != 0;
        }
    }
    if (d) closedir(d);
    return n;
}

/* A conversation the template refuses gets edge's documented behaviour: the rendering of the same
   conversation by a template of the same family that accepts it (Gemma 2's system text folded as
   Gemma 3's template does). */
static const ChatCase *chat_test_fallback(const ChatCase *cases, u32 n, const ChatCase *c, ChatFamily f) {
    for (u32 i = 0; i < n; i++) {
        ChatFamily g;
        if (cases[i].rendered && chat_test_family(cases[i].file, &g) && g == f && cases[i].gen == c->gen &&
            cases[i].think == c->think && !strcmp(cases[i].messages, c->messages)) return &cases[i];
    }
    return 0;
}

TEST(chat_fixtures_render_like_the_jinja_templates) {
    Arena a; arena_init(&a, "chat cases", 16u << 20);
    ChatCase *cases = push_array(&a, ChatCase, CHAT_TEST_MAX_CASES);
    u32 n = chat_test_load(&a, cases, CHAT_TEST_MAX_CASES);
    if (n == 0) { arena_free(&a); SKIP_UNLESS_REQUIRED("chat fixtures (../shared/fixtures/chat) not found"); }
    u32 checked = 0, folded = 0;
    char *buf = push_array(&a, char, 1 << 16);
    for (u32 i = 0; i < n; i++) {
        const ChatCase *c = &cases[i], *want = c;
        ChatFamily f;
        CHECKF(chat_test_family(c->file, &f), "%s: no chat family for this fixture file", c->file);
        if (!c->rendered) {
            want = chat_test_fallback(cases, n, c, f);
            CHECKF(want, "%s:%u: the template refuses it (%s) and no template of its family renders it", c->file, c->line, c->want);
            if (!want) continue;
            folded++;
        }
        u64 bl = strlen(want->bos);
        CHECKF(!strncmp(want->want, want->bos, bl), "%s:%u: the rendering does not start with its BOS text", want->file, want->line);
        ChatOpts o = { .add_generation_prompt = c->gen, .think = c->think, .date = CHAT_TEST_DATE };
        u64 k = chat_render_turns(f, c->turns, c->n_turns, &o, buf, 1 << 16);
        bool same = k == strlen(want->want) - bl && !memcmp(buf, want->want + bl, k);
        CHECKF(same, "%s:%u (%s): rendered\n%.*s\nwant\n%s", c->file, c->line, chat_family_name(f), (int)MIN(k, 2000u), buf, want->want + bl);
        checked++;
    }
    CHECKF(checked >= 96 && folded >= 6, "%u cases checked, %u folded", checked, folded);   /* the shared fixtures: 96, gemma2's 6 refused */
    arena_free(&a);
}

TEST(chat_render_buffers_and_names) {
    /* too small a buffer: the full length comes back, nothing past cap is written */
    char small[8]; memset(small, 'x', sizeof small);
    u64 n = chat_render(CHAT_GEMMA, 0, 0, "Hi", small, 4);
    CHECK(n == strlen("<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n") && small[4] == 'x');
    ChatFamily f;
    CHECK(chat_family_from_name("chatml", &f) && f == CHAT_CHATML && !chat_family_from_name("jinja", &f));
    CHECK(chat_family_from_name("qwen3", &f) && f == CHAT_QWEN3 && chat_family_thinks(f) && !chat_family_thinks(CHAT_CHATML));
    /* the date: strftime("%d %b %Y"); today's is valid */
    char today[CHAT_DATE_MAX]; chat_today(today, sizeof today);
    CHECKF(chat_date_valid(today), "today '%s'", today);
    CHECK(chat_date_valid("26 Jul 2024") && chat_date_valid("05 Jan 2025"));
    CHECK(!chat_date_valid("5 Jan 2025") && !chat_date_valid("26 July 2024") && !chat_date_valid("32 Jul 2024") && !chat_date_valid("26 Jul 24"));
    ChatTurn t = { "user", "Hi" };
    ChatOpts o = chat_opts_default();
    u64 k = chat_render_turns(CHAT_LLAMA3, &t, 1, &o, 0, 0);
    char *buf = (char *)malloc(k + 1);
    chat_render_turns(CHAT_LLAMA3, &t, 1, &o, buf, k + 1);
    char want[64]; fmt_buf(want, sizeof want, "Today Date: %s\n\n", today);
    CHECKF(strstr(buf, want) != 0, "%s", buf);      /* no date given: today's */
    free(buf);
}

/* Qwen3's template keeps a history turn's answer only, and the reasoning of the turns after the
   last user message (its reasoning_content rule; the fixtures' assistant turns hold no <think>). */
TEST(chat_qwen3_history_reasoning) {
    ChatTurn t[] = { { "user", "2+2?" }, { "assistant", "<think>\nadd\n</think>\n\n4" }, { "user", "3+3?" },
                     { "assistant", "<think>\nadd again\n</think>\n\n6" } };
    ChatOpts o = { .add_generation_prompt = false, .think = CHAT_THINK_DEFAULT };
    char buf[1024];
    chat_render_turns(CHAT_QWEN3, t, 4, &o, buf, sizeof buf);
    CHECKF(!strcmp(buf, "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\n3+3?<|im_end|>\n"
                        "<|im_start|>assistant\n<think>\nadd again\n</think>\n\n6<|im_end|>\n"), "%s", buf);
    /* the last turn without reasoning still gets the (empty) block; an earlier one without </think> stays as is */
    ChatTurn u[] = { { "user", "hi" }, { "assistant", "\nhello" } };
    chat_render_turns(CHAT_QWEN3, u, 2, &o, buf, sizeof buf);
    CHECKF(!strcmp(buf, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nhello<|im_end|>\n"), "%s", buf);
    /* a user message that is a tool's response is not a query: the turn before it keeps its reasoning */
    ChatTurn v[] = { { "user", "q" }, { "assistant", "<think>r</think>a" }, { "user", "<tool_response>\nx\n</tool_response>" } };
    chat_render_turns(CHAT_QWEN3, v, 3, &o, buf, sizeof buf);
    CHECKF(!strcmp(buf, "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\na<|im_end|>\n"
                        "<|im_start|>user\n<tool_response>\nx\n</tool_response><|im_end|>\n"), "%s", buf);
}

/* ---- stop tokens --------------------------------------------------------------------------- */
/* generation_config.json's eos_token_id of each family's instruct models, by id in the real vocabularies:
   gemma-2-2b-it [1, 107], gemma-3 [1, 106], qwen2.5/qwen3 [151645, 151643], llama-3.2 [128001, 128008, 128009] (the llama3
   vocabulary fixture carries Llama 3.0's names: 128008 is a reserved token there, so it is not required). */
TEST(chat_stop_tokens_of_each_family) {
    static const struct { int vocab; ChatFamily f; i32 ids[3]; } want[] = {
        { 2, CHAT_GEMMA, { 1, 107, -1 } }, { 4, CHAT_GEMMA, { 1, 106, -1 } }, { 0, CHAT_CHATML, { 151645, 151643, -1 } },
        { 0, CHAT_QWEN3, { 151645, 151643, -1 } }, { 3, CHAT_LLAMA3, { 128009, 128001, -1 } },
    };
    for (u32 i = 0; i < ARRAY_COUNT(want); i++) {
        Tokenizer *t = tok_test_vocab(want[i].vocab);
        if (!t) SKIP_UNLESS_REQUIRED("vocabulary fixture %d not found or not loadable", want[i].vocab);
        for (u32 k = 0; k < 3 && want[i].ids[k] >= 0; k++)
            CHECKF(chat_is_stop(want[i].f, t, want[i].ids[k]), "%s: id %d does not stop", chat_family_name(want[i].f), want[i].ids[k]);
        CHECK(!chat_is_stop(want[i].f, t, 100));
        i32 eot = chat_eot_id(want[i].f, t);
        CHECKF(eot == want[i].ids[want[i].f == CHAT_GEMMA ? 1 : 0], "%s: end of turn %d", chat_family_name(want[i].f), eot);
    }
    /* a text listed for a family is one of its tokens' texts */
    CHECK(!strcmp(chat_stop_texts(CHAT_LLAMA3)[2], "<|eot_id|>") && chat_stop_texts(CHAT_NONE)[0] == 0);
}

/* ---- reasoning and answer ------------------------------------------------------------------- */
static void chat_split_check(const char *text, const char *reason, const char *answer) {
    u64 n = strlen(text);
    ChatSplit s = chat_split(text, n);
    CHECKF(s.reason_n == strlen(reason) && !memcmp(text + s.reason_at, reason, s.reason_n), "'%s': reasoning '%.*s'", text, (int)s.reason_n, text + s.reason_at);
    CHECKF(s.answer_n == strlen(answer) && !memcmp(text + s.answer_at, answer, s.answer_n), "'%s': answer '%.*s'", text, (int)s.answer_n, text + s.answer_at);
    /* streaming: on every prefix, the answer so far is a prefix of the final answer, at the same place */
    u64 printed = 0;
    for (u64 k = 0; k <= n; k++) {
        ChatSplit p = chat_split(text, k);
        if (p.undecided || p.answer_n == 0) continue;
        CHECKF(p.answer_at == s.answer_at && p.answer_at + p.answer_n <= s.answer_at + s.answer_n, "'%s': prefix %llu moves the answer", text, (unsigned long long)k);
        printed = p.answer_at + p.answer_n;
    }
    CHECK(printed == s.answer_at + s.answer_n || s.answer_n == 0);
}

TEST(chat_split_reasoning_from_answer) {
    chat_split_check("<think>\nThe sky scatters blue light.\n</think>\n\nRayleigh scattering.", "The sky scatters blue light.", "Rayleigh scattering.");
    chat_split_check("<think>\n\n</think>\n\nHello", "", "Hello");           /* thinking off: the template's empty block */
    chat_split_check("Hello <think>not reasoning</think>", "", "Hello <think>not reasoning</think>");   /* no opening tag: all answer */
    chat_split_check("<think>\nstill thinking", "still thinking", "");      /* cut off by -n: all reasoning */
    chat_split_check("<think>a</think>b</think>c", "a", "b</think>c");     /* the first </think> closes */
    chat_split_check("", "", "");
    chat_split_check("<thin", "", "");                                    /* could still be <think> */
    ChatSplit s = chat_split("<thin", 5);
    CHECK(s.undecided && !s.closed);
    s = chat_split("<thinx", 6);
    CHECK(!s.undecided && s.closed && s.answer_n == 6);
}

/* The renderings tokenize to the families' markers as single control tokens in the real Llama 3 and
   Gemma 3 vocabularies (BOS from the tokenizer, then the template's first marker). */
TEST(chat_renderings_tokenize_to_markers) {
    static const struct { int vocab; ChatFamily f; const char *marker; u32 count; } c[] = {
        { 3, CHAT_LLAMA3, "<|start_header_id|>", 3 }, { 4, CHAT_GEMMA, "<start_of_turn>", 2 },
    };
    ChatTurn t[] = { { "system", "Be brief." }, { "user", "Hi" } };
    ChatOpts o = { .add_generation_prompt = true, .date = "26 Jul 2024" };
    char buf[1024]; i32 ids[512];
    for (u32 i = 0; i < ARRAY_COUNT(c); i++) {
        Tokenizer *tok = tok_test_vocab(c[i].vocab);
        if (!tok) SKIP_UNLESS_REQUIRED("vocabulary fixture %d not found or not loadable", c[i].vocab);
        i32 m = tok_find(tok, c[i].marker, strlen(c[i].marker));
        REQUIRE(m >= 0 && tok_type(tok, m) == TOKT_CONTROL);
        u64 k = chat_render_turns(c[i].f, t, 2, &o, buf, sizeof buf);
        u32 n = tok_encode(tok, buf, k, true, true, ids, 512), count = 0;
        for (u32 j = 0; j < n; j++) count += ids[j] == m;
        CHECKF(n > 3 && ids[0] == tok_bos(tok) && ids[1] == m && count == c[i].count, "%s: %u tokens, %u markers", chat_family_name(c[i].f), n, count);
        CHECK(chat_is_stop(c[i].f, tok, chat_eot_id(c[i].f, tok)));
    }
}

/* Jinja's trim is Python's str.strip(): Unicode White_Space and U+001C..U+001F go, U+200B (not
   whitespace to Python) stays; gemma and llama3 trim, chatml and qwen3 keep the text whole. */
TEST(chat_trim_is_pythons_strip) {
    ChatTurn t = { "user", "\xc2\xa0\xe3\x80\x80\x1c Hi\xe2\x80\xa9\t\xc2\x85" };
    ChatOpts o = { .add_generation_prompt = false };
    char buf[256];
    chat_render_turns(CHAT_GEMMA, &t, 1, &o, buf, sizeof buf);
    CHECKF(!strcmp(buf, "<start_of_turn>user\nHi<end_of_turn>\n"), "%s", buf);
    ChatTurn z = { "user", "\xe2\x80\x8bHi " };
    chat_render_turns(CHAT_GEMMA, &z, 1, &o, buf, sizeof buf);
    CHECKF(!strcmp(buf, "<start_of_turn>user\n\xe2\x80\x8bHi<end_of_turn>\n"), "%s", buf);
    const char *s = t.text; u64 n = strlen(s);
    chat_message_span(CHAT_LLAMA3, &s, &n);
    CHECK(n == 2 && !memcmp(s, "Hi", 2));
    s = t.text; n = strlen(s);
    chat_message_span(CHAT_QWEN3, &s, &n);
    CHECK(s == t.text && n == strlen(t.text));
}
