/* model.c — filled in by the models issue (config table, GGUF matching, eval). */
#define MODEL_COMMANDS
