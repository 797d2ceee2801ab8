/* models.c — `edge models`: the config table (config/models.def, models/model.h's
   model_table) as one line per supported config, then the weight types a file may hold
   (models/quant.c's table). */

static const char *const models_tok_names[] = { "spm", "bpe" };
static const char *const models_chat_names[CHAT_COUNT] = { "none", "gemma", "chatml", "llama3" };

static int models_cmd(int argc, char **argv) {
    (void)argc; (void)argv;
    out("%-28s %-7s %7s %5s %6s %5s %3s %5s %6s %7s %4s %-7s %-7s\n", "name", "arch", "vocab", "embd", "layers",
        "heads", "kv", "hdim", "ff", "ctx", "tok", "chat", "kernels");
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *t = &model_table[i];
        out("%-28s %-7s %7u %5u %6u %5u %3u %5u %6u %7u %4s %-7s %-7s\n", t->name, model_arch_name(t->arch), t->n_vocab,
            t->n_embd, t->n_layer, t->n_head, t->n_head_kv, t->head_dim, t->n_ff, t->ctx, models_tok_names[t->tok],
            models_chat_names[t->chat], t->kernel);
    }
    char types[160];
    out("\nweight types (matrices; norms, biases and rope_freqs are F32): %s\n", ggml_supported_list(types, sizeof types));
    return EXIT_OK;
}

#define MODELS_COMMANDS \
    { "models", models_cmd, "list the supported model configs" },
