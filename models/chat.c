/* chat.c — instruct prompt templates, one per model family, written out in C rather than
   parsed from the GGUF's Jinja (tokenizer.chat_template). `edge template` (cli/tokenize.c) renders one.

   Why: an instruct model fed raw text, or a template whose markers became ordinary text,
   answers nonsense. The family comes from the config table (config/models.def); until
   that exists `edge template` takes --family or infers it from the vocabulary.

   The templates (what each model's own Jinja template renders, without the BOS that
   the tokenizer adds):
     gemma   <start_of_turn>user\n{system\n\n}{user}<end_of_turn>\n ... <start_of_turn>model\n
             Gemma has no system role: the system text is folded into the first user turn as
             Gemma 3's template does. Message text is trimmed (| trim); role assistant -> model.
     chatml  <|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n
             <|im_start|>assistant\n — Qwen2.5's default system text when none is given.
     llama3  <|start_header_id|>{role}<|end_header_id|>\n\n{text, trimmed}<|eot_id|> ...
             <|start_header_id|>assistant<|end_header_id|>\n\n
     none    the user text as is (base models, TinyStories); a system text is prepended.
   End of turn: <end_of_turn>, <|im_end|>, <|eot_id|>, looked up in the vocabulary by text.

   API: models/chat.h. */
#define CHAT_QWEN_DEFAULT_SYSTEM "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

static const char *const chat_names[CHAT_COUNT] = { "none", "gemma", "chatml", "llama3" };
static const char *const chat_eot[CHAT_COUNT]   = { 0, "<end_of_turn>", "<|im_end|>", "<|eot_id|>" };

typedef struct ChatBuf { char *p; u64 cap, n; } ChatBuf;

static void chat_put(ChatBuf *b, const char *s, u64 n) {
    if (b->n < b->cap) memcpy(b->p + b->n, s, MIN(n, b->cap - b->n));
    b->n += n;
}
static void chat_puts(ChatBuf *b, const char *s) { chat_put(b, s, strlen(s)); }

static bool chat_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static void chat_put_trimmed(ChatBuf *b, const char *s) {
    u64 n = strlen(s);
    while (n && chat_space(*s)) { s++; n--; }
    while (n && chat_space(s[n - 1])) n--;
    chat_put(b, s, n);
}

u64 chat_render_turns(ChatFamily f, const Tokenizer *tok, const ChatTurn *turns, u32 n,
                      bool add_generation_prompt, char *buf, u64 cap) {
    (void)tok;
    ChatBuf b = { buf, cap, 0 };
    switch (f) {
    case CHAT_GEMMA: {
        const char *system = 0;
        for (u32 i = 0; i < n; i++) {
            const char *role = turns[i].role;
            if (!strcmp(role, "system")) { system = turns[i].text; continue; }
            bool model = !strcmp(role, "assistant") || !strcmp(role, "model");
            chat_puts(&b, "<start_of_turn>"); chat_puts(&b, model ? "model" : role); chat_puts(&b, "\n");
            if (system && !model) { chat_puts(&b, system); chat_puts(&b, "\n\n"); system = 0; }
            chat_put_trimmed(&b, turns[i].text);
            chat_puts(&b, "<end_of_turn>\n");
        }
        if (add_generation_prompt) chat_puts(&b, "<start_of_turn>model\n");
        break;
    }
    case CHAT_CHATML:
        if (n == 0 || strcmp(turns[0].role, "system"))
            chat_puts(&b, "<|im_start|>system\n" CHAT_QWEN_DEFAULT_SYSTEM "<|im_end|>\n");
        for (u32 i = 0; i < n; i++) {
            chat_puts(&b, "<|im_start|>"); chat_puts(&b, turns[i].role); chat_puts(&b, "\n");
            chat_puts(&b, turns[i].text); chat_puts(&b, "<|im_end|>\n");
        }
        if (add_generation_prompt) chat_puts(&b, "<|im_start|>assistant\n");
        break;
    case CHAT_LLAMA3:
        for (u32 i = 0; i < n; i++) {
            chat_puts(&b, "<|start_header_id|>"); chat_puts(&b, turns[i].role); chat_puts(&b, "<|end_header_id|>\n\n");
            chat_put_trimmed(&b, turns[i].text); chat_puts(&b, "<|eot_id|>");
        }
        if (add_generation_prompt) chat_puts(&b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    default:
        for (u32 i = 0; i < n; i++) {
            chat_puts(&b, turns[i].text);
            if (!strcmp(turns[i].role, "system") && i + 1 < n) chat_puts(&b, "\n\n");
        }
        break;
    }
    if (b.n < cap) buf[b.n] = 0;
    return b.n;
}

u64 chat_render(ChatFamily f, const Tokenizer *tok, const char *system, const char *user, char *buf, u64 cap) {
    ChatTurn t[2]; u32 n = 0;
    if (system) t[n++] = (ChatTurn){ "system", system };
    t[n++] = (ChatTurn){ "user", user };
    return chat_render_turns(f, tok, t, n, true, buf, cap);
}

bool chat_family_from_name(const char *name, ChatFamily *f) {
    for (u32 i = 0; i < CHAT_COUNT; i++) if (!strcmp(name, chat_names[i])) { *f = (ChatFamily)i; return true; }
    return false;
}
const char *chat_family_name(ChatFamily f) { return f < CHAT_COUNT ? chat_names[f] : "?"; }
const char *chat_eot_text(ChatFamily f) { return f < CHAT_COUNT ? chat_eot[f] : 0; }

i32 chat_eot_id(ChatFamily f, const Tokenizer *tok) {
    const char *s = chat_eot_text(f);
    return s && tok ? tok_find(tok, s, strlen(s)) : -1;
}

/* Until the config table exists: the family whose markers the vocabulary holds as control tokens.
   arch is accepted for the config table's later use. */
ChatFamily chat_family_infer(const Tokenizer *tok, const char *arch) {
    static const struct { const char *marker; ChatFamily f; } m[] = {
        { "<start_of_turn>", CHAT_GEMMA }, { "<|im_start|>", CHAT_CHATML }, { "<|start_header_id|>", CHAT_LLAMA3 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(m) && tok; i++) {
        i32 id = tok_find(tok, m[i].marker, strlen(m[i].marker));
        if (id >= 0 && tok_type(tok, id) == TOKT_CONTROL) return m[i].f;
    }
    (void)arch;                 /* a gemma2/3 architecture with a TinyStories vocabulary has no markers: none */
    return CHAT_NONE;
}
