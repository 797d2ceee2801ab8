/* chat.h — chat templates chosen by the config table (not parsed from Jinja), the families'
   stop tokens, and the split of a thinking model's output into reasoning and answer.

   API:
     chat_render(family, tok, system, user, buf, cap)   -> bytes of the rendered single-turn prompt
                                                           (generation prompt, the template's defaults)
     chat_render_turns(family, turns, n, opts, buf, cap)  a conversation; opts NULL: chat_opts_default()
         both return the full length, write at most cap bytes (call again with more room) and
         NUL-terminate when there is room; system may be NULL (ChatML then uses Qwen's default)
     chat_opts_default()                                generation prompt on, thinking as the template's, today's date
     chat_today(buf, cap) / chat_date_valid(s)          "%d %b %Y" of the local date ("26 Jul 2024")
     chat_turns_from_json(arr, turns, cap, &n, err, errcap)   a JSON array of {role, content}
     chat_family_from_name("gemma"|"chatml"|"qwen3"|"llama3"|"none", &f) / chat_family_name(f)
     chat_family_infer(tok, arch)                       from the vocabulary's control tokens
     chat_family_thinks(f)                              the template has a thinking switch (qwen3)
     chat_eot_text(f) / chat_eot_id(f, tok)             the family's end-of-turn token (by text)
     chat_stop_texts(f)                                 its generation config's end tokens, 0-terminated
     chat_is_stop(f, tok, id)                           id is one of them (or the vocabulary's EOG)
     chat_split(text, n)                                -> ChatSplit: reasoning and answer of the output
     chat_message_span(f, &s, &n)                       the part of a user text the family's template writes (trimmed or whole)
   The rendered text holds the control tokens as text; tokenize it with parse_special. */
#ifndef EDGE_CHAT_H
#define EDGE_CHAT_H

typedef enum ChatFamily { CHAT_NONE, CHAT_GEMMA, CHAT_CHATML, CHAT_LLAMA3, CHAT_QWEN3, CHAT_COUNT } ChatFamily;

typedef enum ChatThink { CHAT_THINK_DEFAULT, CHAT_THINK_OFF, CHAT_THINK_ON } ChatThink;

typedef struct ChatTurn {
    const char *role;   /* "system", "user" or "assistant" */
    const char *text;   /* NUL-terminated */
} ChatTurn;

typedef struct ChatOpts {
    bool        add_generation_prompt;  /* end with the assistant's header (a prompt to answer) */
    ChatThink   think;                  /* qwen3: OFF writes the empty <think></think> block */
    const char *date;                   /* llama3's "Today Date": "26 Jul 2024"; NULL: today (local time) */
} ChatOpts;

/* A thinking model's output, "<think>REASONING</think>ANSWER" (llama.cpp's deepseek reasoning
   format): spans of the text. Output that does not open with <think> is all answer. */
typedef struct ChatSplit {
    u64  reason_at, reason_n;   /* the reasoning, surrounding whitespace stripped */
    u64  answer_at, answer_n;   /* the answer, leading whitespace stripped */
    bool closed;                /* </think> was seen (or there was no <think>) */
    bool undecided;             /* the text so far could still become "<think>": nothing is known yet */
} ChatSplit;

#define CHAT_DATE_MAX 16        /* bytes: "26 Jul 2024" and its NUL */

u64         chat_render(ChatFamily f, const Tokenizer *tok, const char *system, const char *user, char *buf, u64 cap);
u64         chat_render_turns(ChatFamily f, const ChatTurn *turns, u32 n, const ChatOpts *o, char *buf, u64 cap);
ChatOpts    chat_opts_default(void);
void        chat_today(char *buf, u32 cap);
bool        chat_date_valid(const char *s);
bool        chat_turns_from_json(const JsonVal *arr, ChatTurn *turns, u32 cap, u32 *n, char *err, u32 errcap);
bool        chat_family_from_name(const char *name, ChatFamily *f);
const char *chat_family_name(ChatFamily f);
ChatFamily  chat_family_infer(const Tokenizer *tok, const char *arch);
bool        chat_family_thinks(ChatFamily f);
const char *chat_eot_text(ChatFamily f);
i32         chat_eot_id(ChatFamily f, const Tokenizer *tok);
const char *const *chat_stop_texts(ChatFamily f);
bool        chat_is_stop(ChatFamily f, const Tokenizer *tok, i32 id);
ChatSplit   chat_split(const char *text, u64 n);
void        chat_message_span(ChatFamily f, const char **s, u64 *n);

#endif
