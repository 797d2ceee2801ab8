/* tokenize.c — the tokenizer and chat-template commands over models/tokenizer.h and
   models/chat.h:
     edge tokenize   -m MODEL.gguf [--no-special] [--no-bos] [--pieces] < text   ids (and pieces)
     edge detokenize -m MODEL.gguf [--special] < ids                             text
     edge template   -m MODEL.gguf [--system TEXT] [--family F] < message        the rendered prompt
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

static int cmd_template(int argc, char **argv) {
    const char *model = 0, *system = 0, *family = 0;
    const char *usage = "usage: edge template -m MODEL.gguf [--system TEXT] [--family gemma|chatml|llama3|none] < user-message\n";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "--system") && i + 1 < argc) system = argv[++i];
        else if (!strcmp(argv[i], "--family") && i + 1 < argc) family = argv[++i];
        else { errf("edge template: unknown option '%s'\n%s", argv[i], usage); return EXIT_USAGE; }
    }
    ChatFamily f = CHAT_NONE;
    if (family && !chat_family_from_name(family, &f)) { errf("edge template: unknown family '%s'\n%s", family, usage); return EXIT_USAGE; }
    if (!model) { errf("edge template: -m MODEL.gguf is required\n%s", usage); return EXIT_USAGE; }
    Arena a; Gguf g; Tokenizer *t;
    int rc = cli_open_tokenizer(model, &g, &a, &t);
    if (rc) return rc;
    if (!family) {
        GgufStr as = { "", 0 }; char arch[64] = "";
        if (gguf_get_str(&g, "general.architecture", &as)) fmt_buf(arch, sizeof arch, "%.*s", (int)MIN(as.len, 63), as.ptr);
        f = chat_family_infer(t, arch);
    }
    u64 len; char *user = cli_read_stdin(&len);
    if (len && user[len - 1] == '\n') user[--len] = 0;     /* the newline of `echo` is not part of the message */
    u64 n = chat_render(f, t, system, user, 0, 0);
    char *buf = (char *)malloc(n + 1);
    chat_render(f, t, system, user, buf, n + 1);
    fwrite(buf, 1, n, stdout);
    fflush(stdout);
    free(buf); free(user); gguf_close(&g); arena_free(&a);
    return EXIT_OK;
}

#define TOKENIZE_COMMANDS \
    { "tokenize",   cmd_tokenize,   "text on stdin -> token ids (-m MODEL.gguf [--no-special] [--no-bos] [--pieces])" }, \
    { "detokenize", cmd_detokenize, "token ids on stdin -> text (-m MODEL.gguf [--special])" }, \
    { "template", cmd_template, "user message on stdin -> rendered chat prompt (-m MODEL.gguf [--system TEXT] [--family F])" },
