/* chat.h — chat templates chosen by the config table (not parsed from Jinja).

   API:
     chat_render(family, tok, system, user, buf, cap)   -> bytes of the rendered single-turn prompt
     chat_render_turns(family, tok, turns, n, add_generation_prompt, buf, cap)   multi-turn
         both return the full length, write at most cap bytes (call again with more room) and
         NUL-terminate when there is room; system may be NULL (ChatML then uses Qwen's default)
     chat_family_from_name("gemma"|"chatml"|"llama3"|"none", &f)
     chat_family_name(f)
     chat_family_infer(tok, arch)                       from the vocabulary's control tokens
     chat_eot_text(f) / chat_eot_id(f, tok)             the family's end-of-turn token (by text)
   The rendered text holds the control tokens as text; tokenize it with parse_special. */
#ifndef EDGE_CHAT_H
#define EDGE_CHAT_H

typedef enum ChatFamily { CHAT_NONE, CHAT_GEMMA, CHAT_CHATML, CHAT_LLAMA3, CHAT_COUNT } ChatFamily;

typedef struct ChatTurn {
    const char *role;   /* "system", "user" or "assistant" */
    const char *text;   /* NUL-terminated */
} ChatTurn;

u64         chat_render(ChatFamily f, const Tokenizer *tok, const char *system, const char *user, char *buf, u64 cap);
u64         chat_render_turns(ChatFamily f, const Tokenizer *tok, const ChatTurn *turns, u32 n,
                              bool add_generation_prompt, char *buf, u64 cap);
bool        chat_family_from_name(const char *name, ChatFamily *f);
const char *chat_family_name(ChatFamily f);
ChatFamily  chat_family_infer(const Tokenizer *tok, const char *arch);
const char *chat_eot_text(ChatFamily f);
i32         chat_eot_id(ChatFamily f, const Tokenizer *tok);

#endif
