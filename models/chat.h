/* chat.h — chat templates chosen by the config table (not parsed from Jinja).

   API:
     chat_render(family, tok, system, user, buf, cap)  -> bytes of the rendered single-turn prompt
     (multi-turn: chat_render_turns, see chat.c)                                                  */
#ifndef EDGE_CHAT_H
#define EDGE_CHAT_H

typedef enum ChatFamily { CHAT_NONE, CHAT_GEMMA, CHAT_CHATML, CHAT_LLAMA3, CHAT_COUNT } ChatFamily;

#endif
