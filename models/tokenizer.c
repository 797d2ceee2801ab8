/* models/tokenizer.c — filled in by the tokenizer issue. */
#define TOK_COMMANDS
