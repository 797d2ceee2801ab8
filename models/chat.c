/* models/chat.c — filled in by the tokenizer issue. */
#define CHAT_COMMANDS
