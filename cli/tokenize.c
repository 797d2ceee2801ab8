/* tokenize.c — the tokenizer and chat-template commands over models/tokenizer.h and
   models/chat.h:
     edge tokenize   -m MODEL.gguf [--no-special] [--no-bos] [--pieces] < text   ids (and pieces)
     edge detokenize -m MODEL.gguf [--special] < ids                             text
     edge template   (-m MODEL.gguf | --config NAME | --family F) [--system TEXT] [--messages]
                     [--no-generation-prompt] [--think|--no-think] [--date D] < message   the rendered prompt
   Helpers: cli_read_stdin(&len) (all of stdin, malloc'd, NUL-terminated), cli_open_tokenizer
   (-m MODEL's GGUF and tokenizer, or an error printed and its exit code). */

static char *cli_read_stdin(u64 *len) {
    u64 cap = 1 << 16, n = 0;
    char *p = (char *)malloc(cap + 1);
    for (;;) {
        if (!p) die(EXIT_USAGE, "cannot allocate %llu bytes for stdin", (unsigned long long)cap);
        size_t k = fread(p + n, 1, (size_t)(cap - n), stdin);
        n += k;
        if (k == 0) break;
        if (n == cap) { cap *= 2; p = (char *)realloc(p, cap + 1); }
    }
    p[n] = 0; *len = n;
    return p;
}

/* Shared by tokenize/detokenize/template: open -m MODEL and load its tokenizer. */
static int cli_open_tokenizer(const char *path, Gguf *g, Arena *a, Tokenizer **t) {
    Err e = {0};
    arena_init(a, "tokenizer", (u64)EDGE_HOST_ARENA_MIB << 20 > (256ull << 20) ? (u64)EDGE_HOST_ARENA_MIB << 20 : 256ull << 20);
    if (!gguf_open(g, path, a, &e) || !tok_load(t, g, a, &e)) {
        errf("edge: %s\n", e.msg);
        return e.code ? e.code : EXIT_MODEL;
    }
    return EXIT_OK;
}

static void cli_print_escaped(const char *s, u32 n) {
    for (u32 i = 0; i < n; i++) {
        u8 c = (u8)s[i];
        if (c == '\n') out("\\n"); else if (c == '\t') out("\\t"); else if (c == '\r') out("\\r");
        else if (c == '\\') out("\\\\"); else if (c < 0x20 || c == 0x7f) out("\\x%02x", c);
        else out("%c", c);
    }
}

static int cmd_tokenize(int argc, char **argv) {
    const char *model = 0; bool special = true, bos = true, pieces = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "--no-special")) special = false;
        else if (!strcmp(argv[i], "--no-bos")) bos = false;
        else if (!strcmp(argv[i], "--pieces")) pieces = true;
        else { errf("edge tokenize: unknown option '%s'\nusage: edge tokenize -m MODEL.gguf [--no-special] [--no-bos] [--pieces] < text\n", argv[i]); return EXIT_USAGE; }
    }
    if (!model) { errf("edge tokenize: -m MODEL.gguf is required\nusage: edge tokenize -m MODEL.gguf [--no-special] [--no-bos] [--pieces] < text\n"); return EXIT_USAGE; }
    Arena a; Gguf g; Tokenizer *t;
    int rc = cli_open_tokenizer(model, &g, &a, &t);
    if (rc) return rc;
    u64 len; char *text = cli_read_stdin(&len);
    u32 cap = (u32)MIN(len + 16, 0xffffffffull);
    i32 *ids = (i32 *)malloc((u64)cap * sizeof(i32));
    u32 n = tok_encode(t, text, len, bos, special, ids, cap);
    if (n > cap) { cap = n; ids = (i32 *)realloc(ids, (u64)cap * sizeof(i32)); n = tok_encode(t, text, len, bos, special, ids, cap); }
    char *line = (char *)malloc((u64)n * 12 + 2); u64 k = 0;   /* ids as text without a printf per id */
    for (u32 i = 0; i < n; i++) {
        char d[12]; int nd = 0; u32 v = ids[i] < 0 ? 0 : (u32)ids[i];
        do { d[nd++] = (char)('0' + v % 10); v /= 10; } while (v);
        if (i) line[k++] = ' ';
        while (nd) line[k++] = d[--nd];
    }
    line[k++] = '\n';
    fflush(stdout); fwrite(line, 1, k, stdout); free(line);
    for (u32 i = 0; pieces && i < n; i++) {
        u32 pl; const char *p = tok_piece(t, ids[i], &pl);
        out("%d\t", ids[i]); cli_print_escaped(p, pl); out("\n");
    }
    free(ids); free(text); gguf_close(&g); arena_free(&a);
    return EXIT_OK;
}

/* Appends n bytes to a growing buffer; returns the new length. */
static u64 cli_append(char **buf, u64 *cap, u64 k, const char *s, u32 n) {
    while (k + n > *cap) {
        *cap *= 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) die(EXIT_USAGE, "edge detokenize: cannot allocate %llu bytes for the text", (unsigned long long)*cap);
    }
    memcpy(*buf + k, s, n);
    return k + n;
}

static int cmd_detokenize(int argc, char **argv) {
    const char *model = 0; bool special = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "--special")) special = true;
        else { errf("edge detokenize: unknown option '%s'\nusage: edge detokenize -m MODEL.gguf [--special] < ids\n", argv[i]); return EXIT_USAGE; }
    }
    if (!model) { errf("edge detokenize: -m MODEL.gguf is required\nusage: edge detokenize -m MODEL.gguf [--special] < ids\n"); return EXIT_USAGE; }
    Arena a; Gguf g; Tokenizer *t;
    int rc = cli_open_tokenizer(model, &g, &a, &t);
    if (rc) return rc;
    u64 len; char *text = cli_read_stdin(&len);
    TokDecoder d; tok_decoder_init(&d); d.special = special;
    /* the whole text first (llama_detokenize's clean-up of spaces reads it all; tok_clean_spaces) */
    static char piece[1 << 16];
    u64 cap = 1 << 16, k = 0;
    char *outb = malloc(cap);
    char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r' || *p == ',') p++;
        if (!*p) break;
        char *end; long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= (long)tok_n_vocab(t)) {
            errf("edge detokenize: '%.20s' is not a token id (0..%u)\n", p, tok_n_vocab(t) - 1);
            free(outb); free(text); gguf_close(&g); arena_free(&a);
            return EXIT_USAGE;
        }
        p = end;
        k = cli_append(&outb, &cap, k, piece, tok_decode(t, &d, (i32)v, piece, sizeof piece));
    }
    k = cli_append(&outb, &cap, k, piece, tok_decode_flush(t, &d, piece, sizeof piece));
    k = tok_clean_spaces(t, outb, (u32)k);
    fwrite(outb, 1, k, stdout);
    fflush(stdout);
    free(outb); free(text); gguf_close(&g); arena_free(&a);
    return EXIT_OK;
}

/* edge template: the family from --family, else --config NAME's row or -m MODEL's vocabulary; stdin is
   one user message, or with --messages a JSON array of {"role", "content"}. */
typedef struct TemplateArgs {
    const char *model, *config, *system, *family;
    bool        messages;
    ChatOpts    o;
} TemplateArgs;

static const char *const template_usage =
    "usage: edge template (-m MODEL.gguf | --config NAME) [--family gemma|chatml|qwen3|llama3|none] [--system TEXT]\n"
    "                     [--messages] [--no-generation-prompt] [--think|--no-think] [--date \"DD Mon YYYY\"] < input\n"
    "  stdin: one user message (its final newline dropped), or with --messages a JSON array of\n"
    "  {\"role\": \"system\"|\"user\"|\"assistant\", \"content\": TEXT}; --date: Llama 3's header date (default today)\n";

static int template_args(int argc, char **argv, TemplateArgs *t) {
    memset(t, 0, sizeof *t);
    t->o = chat_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { out("%s", template_usage); return EXIT_OK; }
        if (!strcmp(a, "--messages")) t->messages = true;
        else if (!strcmp(a, "--no-generation-prompt")) t->o.add_generation_prompt = false;
        else if (!strcmp(a, "--think")) t->o.think = CHAT_THINK_ON;
        else if (!strcmp(a, "--no-think")) t->o.think = CHAT_THINK_OFF;
        else if (!v) { errf("edge template: unknown option '%s' or no value\n%s", a, template_usage); return EXIT_USAGE; }
        else if (!strcmp(a, "-m")) t->model = argv[++i];
        else if (!strcmp(a, "--config")) t->config = argv[++i];
        else if (!strcmp(a, "--system")) t->system = argv[++i];
        else if (!strcmp(a, "--family")) t->family = argv[++i];
        else if (!strcmp(a, "--date")) t->o.date = argv[++i];
        else { errf("edge template: unknown option '%s'\n%s", a, template_usage); return EXIT_USAGE; }
    }
    if ((!t->model && !t->config && !t->family) || (t->model && t->config)) {
        errf("edge template: give -m or --config (they exclude each other), or --family\n%s", template_usage); return EXIT_USAGE;
    }
    if (t->o.date && !chat_date_valid(t->o.date)) { errf("edge template: --date '%s': want DD Mon YYYY, e.g. \"26 Jul 2024\"\n", t->o.date); return EXIT_USAGE; }
    if (t->messages && t->system) { errf("edge template: --system and --messages exclude each other (put a system message in the array)\n"); return EXIT_USAGE; }
    return -1;
}

/* --family wins over -m's vocabulary and --config's row */
static int template_family(const TemplateArgs *t, ChatFamily *f) {
    if (t->family) {
        if (chat_family_from_name(t->family, f)) return -1;
        errf("edge template: unknown family '%s'\n%s", t->family, template_usage); return EXIT_USAGE;
    }
    if (t->config) {
        const ModelEntry *m = gen_find_config(t->config);
        if (!m) { errf("edge template: unknown --config '%s' (see `edge models`)\n", t->config); return EXIT_USAGE; }
        *f = m->chat;
    }
    if (t->model) {
        Arena a; Gguf g; Tokenizer *tok;
        int rc = cli_open_tokenizer(t->model, &g, &a, &tok);
        if (rc) return rc;
        GgufStr as = { "", 0 }; char arch[64] = "";
        if (gguf_get_str(&g, "general.architecture", &as)) fmt_buf(arch, sizeof arch, "%.*s", (int)MIN(as.len, 63), as.ptr);
        *f = chat_family_infer(tok, arch);
        gguf_close(&g); arena_free(&a);
    }
    return -1;
}

static int cmd_template(int argc, char **argv) {
    TemplateArgs t;
    ChatFamily f = CHAT_NONE;
    int rc = template_args(argc, argv, &t);
    if (rc < 0) rc = template_family(&t, &f);
    if (rc >= 0) return rc;
    char today[CHAT_DATE_MAX];
    if (!t.o.date) { chat_today(today, sizeof today); t.o.date = today; }   /* one date for both passes */
    u64 len; char *in = cli_read_stdin(&len);
    ChatTurn turns[256]; u32 n = 0;
    Arena a; arena_init(&a, "template json", 8 * len + (1u << 20));
    if (t.messages) {
        JsonDoc doc; char err[256];
        if (!json_parse(in, len, &a, &doc)) { errf("edge template: stdin: invalid JSON at byte %llu: %s\n", (unsigned long long)doc.err_at + 1, doc.err); rc = EXIT_USAGE; }
        else if (!chat_turns_from_json(doc.root, turns, ARRAY_COUNT(turns), &n, err, sizeof err)) { errf("edge template: stdin: %s\n", err); rc = EXIT_USAGE; }
    } else {
        if (len && in[len - 1] == '\n') in[--len] = 0;     /* the newline of `echo` is not part of the message */
        if (t.system) turns[n++] = (ChatTurn){ "system", t.system };
        turns[n++] = (ChatTurn){ "user", in };
    }
    if (rc < 0) {
        u64 k = chat_render_turns(f, turns, n, &t.o, 0, 0);
        char *buf = (char *)malloc(k + 1);
        chat_render_turns(f, turns, n, &t.o, buf, k + 1);
        fwrite(buf, 1, k, stdout);
        fflush(stdout);
        free(buf);
        rc = EXIT_OK;
    }
    arena_free(&a); free(in);
    return rc;
}

#define TOKENIZE_COMMANDS \
    { "tokenize",   cmd_tokenize,   "text on stdin -> token ids (-m MODEL.gguf [--no-special] [--no-bos] [--pieces])" }, \
    { "detokenize", cmd_detokenize, "token ids on stdin -> text (-m MODEL.gguf [--special])" }, \
    { "template", cmd_template, "user message (or --messages: a JSON conversation) on stdin -> rendered chat prompt "\
                                "(-m MODEL.gguf | --config NAME | --family F; edge template --help)" },
