/* chat.c — instruct prompt templates, one per model family, written out in C rather than
   parsed from the GGUF's Jinja (tokenizer.chat_template). `edge template` (cli/tokenize.c) renders one.

   Why: an instruct model fed raw text, or a template whose markers became ordinary text,
   answers nonsense; it was trained on its own template's exact bytes. The family comes from the
   config table (config/models.def); `edge template` also takes --family or infers it from the
   vocabulary. Each renders what the model's own Jinja template renders (Hugging Face's way:
   trim_blocks, lstrip_blocks), without the BOS that the tokenizer adds; the conversations of
   ../shared/fixtures/chat (its .cases.jsonl files) are the proof (test/chat_test.c, test/cli/chat_template.sh).

   The templates ({x|trim}: surrounding whitespace removed, as Jinja's trim):
     gemma   <start_of_turn>user\n{system\n\n}{user|trim}<end_of_turn>\n ... <start_of_turn>model\n
             Gemma 2 and 3. Role assistant -> model. Gemma has no system role: Gemma 3's template
             folds a leading system text into the first user turn; Gemma 2's refuses the
             conversation, and edge folds it the same way (documented in docs/usage.md).
     chatml  <|im_start|>{role}\n{text}<|im_end|>\n ... <|im_start|>assistant\n  (Qwen2.5 and its Coder);
             without a leading system message Qwen's default system text comes first.
     qwen3   ChatML without a default system text; the generation prompt of thinking OFF ends in an
             empty <think>\n\n</think>\n\n block. An assistant turn holding "</think>" keeps only
             its answer, except the turns after the last user message, which keep the reasoning as
             <think>\n{reasoning}\n</think>\n\n{answer} (the template's reasoning_content rule).
     llama3  Llama 3.1/3.2: always a system header first:
             <|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n
             Today Date: {date}\n\n{leading system text|trim}<|eot_id|>, then per message
             <|start_header_id|>{role}<|end_header_id|>\n\n{text|trim}<|eot_id|>, and the prompt
             <|start_header_id|>assistant<|end_header_id|>\n\n. The date is strftime("%d %b %Y") of
             today (the template's strftime_now) unless the caller gives one (--chat-date).
     none    the user text as is (base models, TinyStories); a system text is prepended.
   End of turn: <end_of_turn>, <|im_end|>, <|eot_id|>, looked up in the vocabulary by text; the stop
   set of each family is its generation_config.json's eos_token_id list, by text (chat_stop_texts).

   API: models/chat.h. */
#include <time.h>

#define CHAT_QWEN_DEFAULT_SYSTEM "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
#define CHAT_LLAMA3_CUTOFF       "Cutting Knowledge Date: December 2023\n"

static const char *const chat_names[CHAT_COUNT] = { "none", "gemma", "chatml", "llama3", "qwen3" };
static const char *const chat_eot[CHAT_COUNT]   = { 0, "<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|im_end|>" };

/* generation_config.json eos_token_id of the family's instruct models, as token texts */
static const char *const chat_stop_none[]   = { 0 };
static const char *const chat_stop_gemma[]  = { "<eos>", "<end_of_turn>", 0 };                  /* gemma-2: [1,107]; gemma-3: [1,106] */
static const char *const chat_stop_qwen[]   = { "<|im_end|>", "<|endoftext|>", 0 };             /* [151645, 151643] */
static const char *const chat_stop_llama3[] = { "<|end_of_text|>", "<|eom_id|>", "<|eot_id|>", 0 };  /* [128001, 128008, 128009] */
static const char *const *const chat_stops[CHAT_COUNT] = { chat_stop_none, chat_stop_gemma, chat_stop_qwen, chat_stop_llama3, chat_stop_qwen };

typedef struct ChatBuf { char *p; u64 cap, n; } ChatBuf;

static void chat_put(ChatBuf *b, const char *s, u64 n) {
    if (b->n < b->cap) memcpy(b->p + b->n, s, MIN(n, b->cap - b->n));
    b->n += n;
}
static void chat_puts(ChatBuf *b, const char *s) { chat_put(b, s, strlen(s)); }
static void chat_put3(ChatBuf *b, const char *x, const char *y, const char *z) { chat_puts(b, x); chat_puts(b, y); chat_puts(b, z); }

/* What a strip removes: newlines (the Qwen3 template's strip('\n')), C's isspace (llama.cpp's
   string_strip), or Python's str.isspace() (Jinja's trim): Unicode White_Space and U+001C..U+001F. */
typedef enum ChatWs { CHAT_WS_NEWLINE, CHAT_WS_ASCII, CHAT_WS_PYTHON } ChatWs;

static bool chat_is_ws(u32 c, ChatWs ws) {
    if (ws == CHAT_WS_NEWLINE) return c == '\n';
    if (c == ' ' || (c >= 0x09 && c <= 0x0d)) return true;
    if (ws == CHAT_WS_ASCII) return false;
    return (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
           c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* the code point of the UTF-8 sequence s[0..l) (l 1..3, as the whitespace needs), or -1 */
static i64 chat_cp(const u8 *s, u32 l) {
    if (l == 1) return s[0] < 0x80 ? s[0] : -1;
    if (l == 2) return (s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80 ? ((s[0] & 0x1f) << 6) | (s[1] & 0x3f) : -1;
    return (s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 ? ((s[0] & 0x0f) << 12) | ((s[1] & 0x3f) << 6) | (s[2] & 0x3f) : -1;
}

/* bytes of the whitespace character at the start (back: the end) of s[0..n), 0 if none */
static u32 chat_ws_len(const char *s, u64 n, ChatWs ws, bool back) {
    for (u32 l = 1; l <= 3 && l <= n; l++) {
        i64 c = chat_cp((const u8 *)(back ? s + n - l : s), l);
        if (c >= 0) return chat_is_ws((u32)c, ws) ? l : 0;
    }
    return 0;
}

/* the span of s[0..n) without leading (lead) and trailing (trail) whitespace of kind ws */
static void chat_strip(const char **s, u64 *n, ChatWs ws, bool lead, bool trail) {
    for (u32 l; lead && (l = chat_ws_len(*s, *n, ws, false)); ) { *s += l; *n -= l; }
    for (u32 l; trail && (l = chat_ws_len(*s, *n, ws, true)); ) *n -= l;
}
static void chat_put_trimmed(ChatBuf *b, const char *s) {
    u64 n = strlen(s);
    chat_strip(&s, &n, CHAT_WS_PYTHON, true, true);
    chat_put(b, s, n);
}

/* gemma and llama3 write a message trimmed (Jinja's trim), the others as it is */
void chat_message_span(ChatFamily f, const char **s, u64 *n) {
    if (f == CHAT_GEMMA || f == CHAT_LLAMA3) chat_strip(s, n, CHAT_WS_PYTHON, true, true);
}

static bool chat_is(const ChatTurn *t, const char *role) { return !strcmp(t->role, role); }

/* ---- the families ---------------------------------------------------------------------- */
static void chat_gemma(ChatBuf *b, const ChatTurn *turns, u32 n, const ChatOpts *o) {
    const char *system = 0;
    for (u32 i = 0; i < n; i++) {
        if (chat_is(&turns[i], "system")) { system = turns[i].text; continue; }
        bool model = chat_is(&turns[i], "assistant") || chat_is(&turns[i], "model");
        chat_put3(b, "<start_of_turn>", model ? "model" : turns[i].role, "\n");
        if (system && !model) { chat_put3(b, system, "\n\n", ""); system = 0; }
        chat_put_trimmed(b, turns[i].text);
        chat_puts(b, "<end_of_turn>\n");
    }
    if (o->add_generation_prompt) chat_puts(b, "<start_of_turn>model\n");
}

static void chat_chatml(ChatBuf *b, const ChatTurn *turns, u32 n, const ChatOpts *o) {
    if (n == 0 || !chat_is(&turns[0], "system"))
        chat_puts(b, "<|im_start|>system\n" CHAT_QWEN_DEFAULT_SYSTEM "<|im_end|>\n");
    for (u32 i = 0; i < n; i++) chat_put3(b, "<|im_start|>", turns[i].role, "\n"), chat_put3(b, turns[i].text, "<|im_end|>\n", "");
    if (o->add_generation_prompt) chat_puts(b, "<|im_start|>assistant\n");
}

/* the last occurrence of needle in s, or NULL */
static const char *chat_last(const char *s, const char *needle) {
    const char *last = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) last = p;
    return last;
}

/* Qwen3's assistant turn, as its template: with a "</think>", the reasoning is the text before the
   first one, after its last "<think>", and the content what follows the last one (newlines around
   both stripped). Turns after the last user message (keep) show the reasoning when they have one
   or are the last turn: <think>\n{reasoning}\n</think>\n\n{content}; the others only the content. */
static void chat_qwen3_assistant(ChatBuf *b, const char *text, bool keep, bool last) {
    const char *rs = text, *ans = text, *first = strstr(text, "</think>");
    u64 rn = 0, an = strlen(text);
    if (first) {
        rn = (u64)(first - text);
        chat_strip(&rs, &rn, CHAT_WS_NEWLINE, false, true);
        for (const char *p = strstr(rs, "<think>"); p && p + 7 <= rs + rn; p = strstr(rs, "<think>")) { rn -= (u64)(p + 7 - rs); rs = p + 7; }
        chat_strip(&rs, &rn, CHAT_WS_NEWLINE, true, true);
        ans = chat_last(text, "</think>") + 8; an = strlen(ans);
        chat_strip(&ans, &an, CHAT_WS_NEWLINE, true, false);
    }
    chat_puts(b, "<|im_start|>assistant\n");
    if (keep && (last || rn)) {
        chat_puts(b, "<think>\n"); chat_put(b, rs, rn); chat_puts(b, "\n</think>\n\n");
        chat_strip(&ans, &an, CHAT_WS_NEWLINE, true, false);
    }
    chat_put(b, ans, an);
    chat_puts(b, "<|im_end|>\n");
}

static void chat_qwen3(ChatBuf *b, const ChatTurn *turns, u32 n, const ChatOpts *o) {
    u32 last_query = n ? n - 1 : 0;
    for (u32 i = n; i-- > 0;) {                 /* the last user message that is not a tool's response */
        const char *t = turns[i].text;
        u64 l = strlen(t);
        bool tool = !strncmp(t, "<tool_response>", 15) && l >= 31 && !strcmp(t + l - 16, "</tool_response>");
        if (chat_is(&turns[i], "user") && !tool) { last_query = i; break; }
    }
    for (u32 i = 0; i < n; i++) {
        if (chat_is(&turns[i], "assistant")) chat_qwen3_assistant(b, turns[i].text, i > last_query, i + 1 == n);
        else chat_put3(b, "<|im_start|>", turns[i].role, "\n"), chat_put3(b, turns[i].text, "<|im_end|>\n", "");
    }
    if (o->add_generation_prompt) {
        chat_puts(b, "<|im_start|>assistant\n");
        if (o->think == CHAT_THINK_OFF) chat_puts(b, "<think>\n\n</think>\n\n");
    }
}

static void chat_llama3(ChatBuf *b, const ChatTurn *turns, u32 n, const ChatOpts *o) {
    char today[CHAT_DATE_MAX];
    const char *date = o->date;
    if (!date) { chat_today(today, sizeof today); date = today; }
    chat_put3(b, "<|start_header_id|>system<|end_header_id|>\n\n" CHAT_LLAMA3_CUTOFF "Today Date: ", date, "\n\n");
    u32 i = 0;
    if (n && chat_is(&turns[0], "system")) chat_put_trimmed(b, turns[i++].text);
    chat_puts(b, "<|eot_id|>");
    for (; i < n; i++) {
        chat_put3(b, "<|start_header_id|>", turns[i].role, "<|end_header_id|>\n\n");
        chat_put_trimmed(b, turns[i].text);
        chat_puts(b, "<|eot_id|>");
    }
    if (o->add_generation_prompt) chat_puts(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

static void chat_plain(ChatBuf *b, const ChatTurn *turns, u32 n) {
    for (u32 i = 0; i < n; i++) {
        chat_puts(b, turns[i].text);
        if (chat_is(&turns[i], "system") && i + 1 < n) chat_puts(b, "\n\n");
    }
}

/* ---- rendering ----------------------------------------------------------------------------- */
ChatOpts chat_opts_default(void) { return (ChatOpts){ .add_generation_prompt = true, .think = CHAT_THINK_DEFAULT, .date = 0 }; }

u64 chat_render_turns(ChatFamily f, const ChatTurn *turns, u32 n, const ChatOpts *o, char *buf, u64 cap) {
    ChatOpts d = chat_opts_default();
    if (!o) o = &d;
    ChatBuf b = { buf, cap, 0 };
    switch (f) {
    case CHAT_GEMMA:  chat_gemma(&b, turns, n, o); break;
    case CHAT_CHATML: chat_chatml(&b, turns, n, o); break;
    case CHAT_QWEN3:  chat_qwen3(&b, turns, n, o); break;
    case CHAT_LLAMA3: chat_llama3(&b, turns, n, o); break;
    default:          chat_plain(&b, turns, n); break;
    }
    if (b.n < cap) buf[b.n] = 0;
    return b.n;
}

u64 chat_render(ChatFamily f, const Tokenizer *tok, const char *system, const char *user, char *buf, u64 cap) {
    (void)tok;
    ChatTurn t[2]; u32 n = 0;
    if (system) t[n++] = (ChatTurn){ "system", system };
    t[n++] = (ChatTurn){ "user", user };
    return chat_render_turns(f, t, n, 0, buf, cap);
}

/* ---- dates ---------------------------------------------------------------------------------- */
static const char chat_months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* strftime("%d %b %Y") in the C locale (the templates' strftime_now is Python's, English names) */
void chat_today(char *buf, u32 cap) {
    time_t now = time(0);
    struct tm tm;
    if (!localtime_r(&now, &tm)) { fmt_buf(buf, (int)cap, "26 Jul 2024"); return; }
    fmt_buf(buf, (int)cap, "%02d %s %04d", tm.tm_mday, chat_months[tm.tm_mon], tm.tm_year + 1900);
}

/* "DD Mon YYYY": two digits 01..31, an English month abbreviation, four digits */
bool chat_date_valid(const char *s) {
    if (strlen(s) != 11 || s[2] != ' ' || s[6] != ' ') return false;
    for (int i = 0; i < 11; i++) if ((i < 2 || i > 6) && !(s[i] >= '0' && s[i] <= '9')) return false;
    int day = (s[0] - '0') * 10 + (s[1] - '0');
    bool month = false;
    for (int m = 0; m < 12; m++) month |= !memcmp(s + 3, chat_months[m], 3);
    return month && day >= 1 && day <= 31;
}

/* ---- conversations from JSON ------------------------------------------------------------------ */
bool chat_turns_from_json(const JsonVal *arr, ChatTurn *turns, u32 cap, u32 *n, char *err, u32 errcap) {
    *n = 0;
    if (!arr || arr->type != JSON_ARR) { fmt_buf(err, (int)errcap, "the messages must be a JSON array of {\"role\", \"content\"}"); return false; }
    for (const JsonVal *m = arr->child; m; m = m->next) {
        const JsonVal *role = m->type == JSON_OBJ ? json_get(m, "role") : 0, *content = m->type == JSON_OBJ ? json_get(m, "content") : 0;
        if (!role || role->type != JSON_STR || !content || content->type != JSON_STR) {
            fmt_buf(err, (int)errcap, "message %u: want {\"role\": string, \"content\": string}", *n + 1); return false;
        }
        if (strcmp(role->str, "system") && strcmp(role->str, "user") && strcmp(role->str, "assistant")) {
            fmt_buf(err, (int)errcap, "message %u: role '%.32s' is not supported (supported: system user assistant)", *n + 1, role->str); return false;
        }
        if (memchr(content->str, 0, content->len)) { fmt_buf(err, (int)errcap, "message %u: content holds a NUL byte", *n + 1); return false; }
        if (*n >= cap) { fmt_buf(err, (int)errcap, "more than %u messages", cap); return false; }
        turns[(*n)++] = (ChatTurn){ role->str, content->str };
    }
    return true;
}

/* ---- families, stop tokens ---------------------------------------------------------------------- */
bool chat_family_from_name(const char *name, ChatFamily *f) {
    for (u32 i = 0; i < CHAT_COUNT; i++) if (!strcmp(name, chat_names[i])) { *f = (ChatFamily)i; return true; }
    return false;
}
const char *chat_family_name(ChatFamily f) { return f < CHAT_COUNT ? chat_names[f] : "?"; }
const char *chat_eot_text(ChatFamily f) { return f < CHAT_COUNT ? chat_eot[f] : 0; }
bool chat_family_thinks(ChatFamily f) { return f == CHAT_QWEN3; }
const char *const *chat_stop_texts(ChatFamily f) { return chat_stops[f < CHAT_COUNT ? f : CHAT_NONE]; }

i32 chat_eot_id(ChatFamily f, const Tokenizer *tok) {
    const char *s = chat_eot_text(f);
    return s && tok ? tok_find(tok, s, strlen(s)) : -1;
}

/* The vocabulary's end-of-generation set (llama.cpp's, by text), the family's end of turn, and
   its generation config's end tokens. */
bool chat_is_stop(ChatFamily f, const Tokenizer *tok, i32 id) {
    if (tok_is_eog(tok, id) || id == chat_eot_id(f, tok)) return true;
    for (const char *const *s = chat_stop_texts(f); *s; s++) if (tok_find(tok, *s, strlen(*s)) == id) return true;
    return false;
}

/* Until the config table exists: the family whose markers the vocabulary holds as control tokens.
   A vocabulary with <think> (Qwen3's) is qwen3. arch is accepted for the config table's later use. */
ChatFamily chat_family_infer(const Tokenizer *tok, const char *arch) {
    static const struct { const char *marker; ChatFamily f; } m[] = {
        { "<start_of_turn>", CHAT_GEMMA }, { "<|im_start|>", CHAT_CHATML }, { "<|start_header_id|>", CHAT_LLAMA3 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(m) && tok; i++) {
        i32 id = tok_find(tok, m[i].marker, strlen(m[i].marker));
        if (id < 0 || tok_type(tok, id) != TOKT_CONTROL) continue;
        if (m[i].f == CHAT_CHATML && tok_find(tok, "<think>", 7) >= 0) return CHAT_QWEN3;
        return m[i].f;
    }
    (void)arch;                 /* a gemma2/3 architecture with a TinyStories vocabulary has no markers: none */
    return CHAT_NONE;
}

/* ---- reasoning and answer ---------------------------------------------------------------------- */
/* llama.cpp's deepseek reasoning format: output that opens with "<think>" is reasoning up to
   "</think>" (whitespace around it stripped), then the answer (leading whitespace stripped); an
   unclosed <think> is all reasoning. On a prefix of the output (streaming) the spans only grow:
   the answer's start, once known, never moves. */
ChatSplit chat_split(const char *text, u64 n) {
    ChatSplit s = {0};
    static const char open[] = "<think>", close[] = "</think>";
    if (n < 7 && !memcmp(text, open, n)) { s.undecided = true; return s; }
    if (memcmp(text, open, 7)) { s.closed = true; s.answer_n = n; return s; }
    const char *r = text + 7, *end = memmem(r, n - 7, close, 8);
    u64 rn = end ? (u64)(end - r) : n - 7;
    chat_strip(&r, &rn, CHAT_WS_ASCII, true, true);
    s.reason_at = (u64)(r - text); s.reason_n = rn;
    if (!end) { s.answer_at = n; return s; }
    const char *a = end + 8;
    u64 an = n - (u64)(a - text);
    chat_strip(&a, &an, CHAT_WS_ASCII, true, false);
    s.closed = true; s.answer_at = (u64)(a - text); s.answer_n = an;
    return s;
}
