/* run.c — the generation command, the one people pipe into: `edge [options]` or `edge run
   [options]`. Prompts come from -p or stdin (modes line, all, nul, jsonl; an interactive loop on
   a terminal); completions are streamed to stdout per token, each followed by a separator;
   everything else (diagnostics, timings) goes to stderr. docs/usage.md is the user's manual.

   Why: shell scripts drive edge. They need predictable bytes (seeded sampling, greedy equal to
   the golden fixtures), errors that name the prompt and continue with the next one, exit codes
   they can branch on, and a process that can answer thousands of prompts in flat memory.

   Memory: every buffer is sized once at start from the context and EDGE_RUN_MAX_PROMPT_BYTES
   (one "run buffers" arena); the Engine is opened once and eng_reset between prompts; a
   JSON line is parsed in a scratch arena that is reset per line. Nothing grows per prompt.

   Flow per prompt: read a record -> replace invalid UTF-8 -> chat template (cfg.chat unless
   --raw) -> tokenize (BOS as the vocabulary says) -> fit the context (--truncate keeps the end)
   -> prefill (eng_feed) -> decode: greedy on the GPU through eng_decode (the id is the only
   readback; the next step is queued before the host reads it), otherwise the logits row through the sampler -> stop on an end-of-generation
   token (the vocabulary's and the chat family's: chat_is_stop), -n, a stop string (held back, never printed), a full context, or SIGINT.
   A thinking model's output (qwen3: "<think>...</think>answer") is split by chat_split: jsonl answers
   carry "reasoning" beside "text"; --answer-only streams the answer alone.

   Exit code: the most serious class met wins: a device error (3) ends the run; a numeric fault (4,
   NaN/Inf in the logits) fails its prompt and the run goes on; failed prompts (5).

   API: run_main(argc, argv) (argv[0] is the command name or "edge"); run_print_help(); run_print_exit_codes(). */

#include <signal.h>
#include <unistd.h>
#include <errno.h>
#include <time.h>

#define RUN_DEFAULT_CTX 4096                    /* tokens: -c default, capped by the model's limit */
#define RUN_PAR_MIN_CTX 1024                    /* tokens: -c default with -np N is max(RUN_DEFAULT_CTX / N, this) */
#define EXIT_INTERRUPTED 130

typedef enum RunInput { RUN_IN_LINE, RUN_IN_ALL, RUN_IN_NUL, RUN_IN_JSONL, RUN_IN_TTY, RUN_IN_PROMPT } RunInput;
typedef enum RunStop { RUN_STOP_EOS, RUN_STOP_LENGTH, RUN_STOP_STRING, RUN_STOP_CONTEXT, RUN_STOP_ERROR, RUN_STOP_INTERRUPT } RunStop;
static const char *const run_stop_names[] = { "eos", "length", "stop", "context", "error", "interrupted" };

typedef struct RunOpts {
    const char *model, *prompt, *system;
    char        sep[64];
    u32         sep_len;
    bool        sep_set;
    RunInput    input;
    bool        input_set;
    i64         n_predict;
    u32         n_ctx;              /* 0: default */
    SampParams  sp;
    const char *stops[EDGE_RUN_MAX_STOPS];
    u32         n_stops;
    bool        raw, chat, truncate, allow_unlisted, no_special, quiet, verbose;
    ChatThink   think;              /* --think / --no-think / --reasoning-budget (default: the template's) */
    bool        answer_only;        /* --answer-only: text modes print a thinking model's answer alone */
    const char *chat_date;          /* --chat-date "26 Jul 2024" (llama3's header); NULL: today */
    u32         stats_every;        /* --stats-every N: memory positions on stderr every N prompts (0: off) */
    EngBackend  backend;
    DType       act;                /* DT_COUNT: f16 where the device has shaderFloat16 */
    DType       kv;                 /* KV cache (K and V alike); DT_COUNT: eng_kv_default */
    u32         np;                 /* -np: prompts decoded together (line, nul, jsonl input; 1: one at a time) */
    u32         batch;              /* -b: GPU prefill batch in tokens (0: EDGE_PREFILL_BATCH) */
    bool        no_cache_prompt;    /* --no-cache-prompt: never reuse a shared system prefix's KV cache */
} RunOpts;

/* One prompt and its settings (a JSON line may override the command line's). */
typedef struct RunReq {
    const char *text;
    u64         len;
    const char *system;
    ChatThink   think;
    i64         max_tokens;
    SampParams  sp;
    const char *stops[EDGE_RUN_MAX_STOPS];
    u32         stop_len[EDGE_RUN_MAX_STOPS];
    u32         n_stops;
} RunReq;

typedef struct RunResult {
    u32     n_prompt, n_gen;
    u32     n_prefix, n_reused;     /* the prompt's system prefix (tokens, 0: none) and the prompt tokens taken from a cache */
    RunStop stop;
    f64     prefill_ms, decode_ms;
    char    err[512];
} RunResult;

typedef struct RunReader {
    int  fd;
    u8   buf[1 << 16];
    u32  at, n;
    bool eof;
} RunReader;

/* A completion being written: its bytes, and how many of them were written or passed over. */
typedef struct RunText {
    char *buf;
    u64   cap, n, printed;
} RunText;

/* The system prefix of the last system text seen (run_prefix): the tokens a template renders before
   the user's text; a new value of gen each time it changes (the slots that hold it name its gen). */
typedef struct RunPrefix {
    char     *system;               /* its system text (NULL: the template's default) */
    ChatThink think;
    bool      valid;
    u32       n, gen;
    i32      *toks;                 /* (n) */
} RunPrefix;

typedef struct Run {
    RunOpts    o;
    Arena      a;               /* model and tokenizer tables */
    Arena      bufs;            /* every per-run buffer, sized at start */
    Arena      scratch;         /* JSON parse, reset per line */
    Model      m;
    bool       m_up, g_up;
    Tokenizer *tok;
    Engine     g;
    Sampler    samp;
    u32        n_ctx, max_piece;
    char      *rec;   u64 rec_cap;      /* (rec_cap+1) raw record */
    char      *clean; u64 clean_cap;    /* (3*rec_cap+1) the prompt with U+FFFD for invalid bytes */
    char      *rend;  u64 rend_cap;     /* rendered (templated) prompt */
    i32       *toks;  u32 toks_cap;     /* prompt tokens */
    i32       *kv;    u32 n_kv;         /* tokens held by the engine (--chat reuses a matching prefix) */
    RunText    out;                     /* the completion (-np: each slot has its own, cli/run_par.c) */
    char      *jout;  u64 jout_cap;     /* one JSON output line */
    char      *conv;  u64 conv_cap, conv_n;            /* --chat: the turns' texts */
    ChatTurn   turns[EDGE_RUN_MAX_TURNS];
    u32        n_turns;
    u32        n_failed, n_answered;
    int        worst;                   /* the most serious fault met: EXIT_DEVICE (ends the run), EXIT_NUMERIC, 0 */
    bool       pipe_closed;
    char       date[CHAT_DATE_MAX];     /* llama3's "Today Date": --chat-date or today at start */
    RunReader  rd;
    RunPrefix  pre;
} Run;

static volatile sig_atomic_t run_interrupted;

static void run_on_sigint(int sig) { (void)sig; run_interrupted = 1; signal(SIGINT, SIG_DFL); }

static f64 run_now_ms(void) { return now_sec() * 1e3; }

static u64 run_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256]; u64 kib = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) { kib = strtoull(line + 6, 0, 10); break; }
    fclose(f);
    return kib;
}

/* stdout, unbuffered; a closed pipe ends the run quietly. */
static void run_write(Run *r, const char *s, u64 n) {
    while (n && !r->pipe_closed) {
        ssize_t k = write(1, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { r->pipe_closed = true; return; }
        s += k; n -= (u64)k;
    }
}

/* ---- options ----------------------------------------------------------------------------- */
void run_print_help(void) {
    out("generation (the default command): edge [options]   or   edge run [options]\n"
        "  prompts from -p or stdin; completions to stdout, diagnostics to stderr\n"
        "  -m, --model FILE        GGUF model (default: the embedded stories260K)\n"
        "  -p, --prompt TEXT       one prompt; stdin is not read\n"
        "  --input MODE            line | all | nul | jsonl (default: line; a terminal gets an interactive loop)\n"
        "  --sep TEXT              written after each completion; escapes \\n \\t \\0 \\\\ \\xHH\n"
        "                          (default: \"\\n\\n\" line, \"\\0\" nul, \"\\n\" all, -p and interactive)\n"
        "  -n, --max-tokens N      tokens to generate at most (default 256)\n"
        "  -c, --ctx N             context in tokens of each prompt, up to the model's limit (default: min(model limit, %u);\n"
        "                          with -np N: min(model limit, max(%u / N, %u)))\n"
        "  -b, --batch-size N      prompt tokens per GPU prefill batch (1..%u, default %u): larger batches read\n"
        "                          long prompts faster and take more device memory (edge plan --batch N)\n"
        "  -np, --parallel N       decode up to N prompts together (line, nul and jsonl input; 1..%u, default 1): answers\n"
        "                          are written in input order (jsonl: as each finishes, with its id); each has its own\n"
        "                          context of -c tokens; --chat and -p take one prompt at a time\n"
        "  --temp T                temperature; 0 = greedy (default 0.8)\n"
        "  --top-k K               keep the K most likely tokens; 0 = off (default 40)\n"
        "  --top-p P               nucleus sampling; 1 = off (default 0.95)\n"
        "  --min-p P               drop tokens below P x the best probability; 0 = off (default 0.05)\n"
        "  --repeat-penalty X      penalty on the last --repeat-last-n tokens; 1 = off (default 1.0)\n"
        "  --repeat-last-n N       tokens the penalty looks back (default 64)\n"
        "  --seed S                PRNG seed, reset for every prompt (default 0: runs are reproducible)\n"
        "  --stop TEXT             stop when TEXT is generated; not printed; repeatable (at most %u)\n"
        "  --system TEXT           system message for the chat template\n"
        "  --raw                   no chat template: the prompt text is fed as it is\n"
        "  --think, --no-think     thinking models (qwen3): reason before answering or not (default: the template's, on)\n"
        "  --reasoning-budget N    llama.cpp's spelling: -1 = --think, 0 = --no-think\n"
        "  --answer-only           text modes: print a thinking model's answer without its <think> reasoning\n"
        "  --chat-date DATE        the date in Llama 3's system header, \"DD Mon YYYY\" (default: today)\n"
        "  --chat                  keep one multi-turn conversation across inputs (default: each prompt starts empty)\n"
        "  --truncate              keep the end of a prompt that does not fit (default: report it and go on)\n"
        "  --no-special            never parse control-token text (e.g. <|im_end|>) inside prompts\n"
        "  --no-cache-prompt       prefill each prompt's system prefix anew (default: computed once, its KV cache reused)\n"
        "  --backend gpu|ref       Vulkan, or the scalar CPU reference (default gpu)\n"
        "  --act f16|f32           GPU activation path (default: f16 where the device has shaderFloat16)\n"
        "  --cache-type TYPE       GPU KV cache, keys and values alike: f32, f16 or q8_0 (llama.cpp's blocks of\n"
        "                          32 int8 values and an f16 scale: about half of f16); default: as --act\n"
        "  -ctk, -ctv TYPE         llama.cpp's names (also --cache-type-k, --cache-type-v): both must name one type\n"
        "  --device N              Vulkan physical device (overrides EDGE_DEVICE)\n"
        "  --allow-unlisted        load a GGUF that is not in config/models.def (developer option)\n"
        "  -q, --quiet             no diagnostics or timings on stderr (errors still print)\n"
        "  -v, --verbose           per-prompt timings and resident memory on stderr\n"
        "  --stats-every N         every N prompts: host and device arena positions and resident memory on stderr\n"
        "  -h, --help              this text\n"
        "  JSON lines (--input jsonl): {\"prompt\":..., \"system\", \"think\", \"max_tokens\", \"temperature\", \"top_k\", \"top_p\",\n"
        "  \"min_p\", \"seed\", \"stop\" (string or array), \"id\"} -> {\"id\", \"text\", \"reasoning\" (thinking models),\n"
        "  \"tokens\", \"stop_reason\", timings}\n",
        RUN_DEFAULT_CTX, RUN_DEFAULT_CTX, RUN_PAR_MIN_CTX, EDGE_MAX_PREFILL_BATCH, EDGE_PREFILL_BATCH, EDGE_MAX_SEQ, EDGE_RUN_MAX_STOPS);
}

void run_print_exit_codes(void) {
    out("exit codes:\n"
        "  0 success (all prompts answered; also when stdout was closed early)   1 usage error\n"
        "  2 model file error   3 device error   4 numeric fault (NaN/Inf in logits)\n"
        "  5 some prompts failed (the others were answered)   130 interrupted (SIGINT)\n"
        "  with several prompts the most serious wins: 3, then 4, then 5\n");
}

__attribute__((format(printf, 1, 2)))
static int run_usage(const char *fmt, ...) {
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    fmt_vbuf(m, sizeof m, fmt, ap);
    va_end(ap);
    errf("edge: %s (see edge --help)\n", m);
    return EXIT_USAGE;
}

static bool run_parse_i64(const char *s, i64 lo, i64 hi, i64 *v) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi) return false;
    *v = x;
    return true;
}

static bool run_parse_f32(const char *s, f64 lo, f64 hi, f32 *v) {
    char *end;
    f64 x = strtod(s, &end);
    if (!*s || *end || !(x >= lo && x <= hi)) return false;
    *v = (f32)x;
    return true;
}

static bool run_parse_sep(const char *s, char *o, u32 cap, u32 *n) {
    u32 k = 0;
    for (; *s; s++) {
        if (k >= cap) return false;
        if (*s != '\\') { o[k++] = *s; continue; }
        s++;
        switch (*s) {
        case 'n': o[k++] = '\n'; break;  case 't': o[k++] = '\t'; break;
        case 'r': o[k++] = '\r'; break;  case '0': o[k++] = 0; break;
        case '\\': o[k++] = '\\'; break;
        case 'x': {
            int v = 0;
            for (int j = 0; j < 2; j++) {
                char c = *++s;
                if (c >= '0' && c <= '9') v = v * 16 + (c - '0');
                else if (c >= 'a' && c <= 'f') v = v * 16 + (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F') v = v * 16 + (c - 'A' + 10);
                else return false;
            }
            o[k++] = (char)v; break;
        }
        default: return false;
        }
    }
    *n = k;
    return true;
}

/* The options without a value; false when a is not one of them. */
static bool run_parse_switch(RunOpts *o, const char *a) {
    if (!strcmp(a, "--raw")) o->raw = true;
    else if (!strcmp(a, "--chat")) o->chat = true;
    else if (!strcmp(a, "--think")) o->think = CHAT_THINK_ON;
    else if (!strcmp(a, "--no-think")) o->think = CHAT_THINK_OFF;
    else if (!strcmp(a, "--answer-only")) o->answer_only = true;
    else if (!strcmp(a, "--truncate")) o->truncate = true;
    else if (!strcmp(a, "--allow-unlisted")) o->allow_unlisted = true;
    else if (!strcmp(a, "--no-special")) o->no_special = true;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = true;
    else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o->verbose = true;
    else if (!strcmp(a, "--no-cache-prompt")) o->no_cache_prompt = true;
    else return false;
    return true;
}

/* Returns -1 when parsed, else an exit code (0 for --help). */
/* The sampling options (--temp ... --seed) into sp: 0 when a was one of them and its value is good,
   the usage exit code when the value is bad, RUN_OPT_OTHER when a is another option. */
#define RUN_OPT_OTHER (-2)
static int run_parse_sampling(SampParams *sp, const char *a, const char *v) {
    i64 x; f32 f;
    if (!strcmp(a, "--temp")) {
        if (!run_parse_f32(v, 0, 100, &f)) return run_usage("--temp '%s': want 0..100", v);
        sp->temp = f;
    } else if (!strcmp(a, "--top-k")) {
        if (!run_parse_i64(v, 0, 1 << 30, &x)) return run_usage("--top-k '%s': want 0 or more", v);
        sp->top_k = (u32)x;
    } else if (!strcmp(a, "--top-p")) {
        if (!run_parse_f32(v, 0, 1, &f) || f <= 0) return run_usage("--top-p '%s': want 0 < P <= 1", v);
        sp->top_p = f;
    } else if (!strcmp(a, "--min-p")) {
        if (!run_parse_f32(v, 0, 1, &f)) return run_usage("--min-p '%s': want 0..1", v);
        sp->min_p = f;
    } else if (!strcmp(a, "--repeat-penalty")) {
        if (!run_parse_f32(v, 0.01, 100, &f)) return run_usage("--repeat-penalty '%s': want 0.01..100", v);
        sp->repeat_penalty = f;
    } else if (!strcmp(a, "--repeat-last-n")) {
        if (!run_parse_i64(v, 0, EDGE_MAX_POS, &x)) return run_usage("--repeat-last-n '%s': want 0 or more tokens", v);
        sp->repeat_last_n = (u32)x;
    } else if (!strcmp(a, "--seed")) {
        char *end; errno = 0;
        unsigned long long s = strtoull(v, &end, 10);
        if (!*v || *end || errno || *v == '-') return run_usage("--seed '%s': want 0..2^64-1", v);
        sp->seed = s;
    } else return RUN_OPT_OTHER;
    return 0;
}

static int run_parse_args(RunOpts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->n_predict = 256;
    o->sp = (SampParams){ .temp = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f,
                          .repeat_penalty = 1.0f, .repeat_last_n = 64, .seed = 0 };
    o->backend = ENG_GPU; o->act = DT_COUNT; o->kv = DT_COUNT; o->np = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { run_print_help(); out("\n"); run_print_exit_codes(); return EXIT_OK; }
        if (run_parse_switch(o, a)) continue;
        static const char *const with_value[] = { "-m", "--model", "-p", "--prompt", "--input", "--sep", "-n", "--max-tokens",
            "-c", "--ctx", "--temp", "--top-k", "--top-p", "--min-p", "--repeat-penalty", "--repeat-last-n", "--seed",
            "--stop", "--system", "--backend", "--act", "--cache-type", "-ctk", "--cache-type-k", "-ctv", "--cache-type-v", "--device", "--stats-every", "--reasoning-budget", "--chat-date",
            "-np", "--parallel", "-b", "--batch-size" };
        bool known = false;
        for (u32 k = 0; k < ARRAY_COUNT(with_value); k++) known |= !strcmp(a, with_value[k]);
        if (!known) return run_usage("unknown option '%s'", a);
        if (i + 1 >= argc) return run_usage("%s needs a value", a);
        const char *v = argv[++i];
        i64 x; int rc;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->prompt = v;
        else if (!strcmp(a, "--system")) o->system = v;
        else if (!strcmp(a, "--reasoning-budget")) {
            if (strcmp(v, "-1") && strcmp(v, "0")) return run_usage("--reasoning-budget '%s': want -1 (think) or 0 (no thinking)", v);
            o->think = !strcmp(v, "0") ? CHAT_THINK_OFF : CHAT_THINK_ON;
        } else if (!strcmp(a, "--chat-date")) {
            if (!chat_date_valid(v)) return run_usage("--chat-date '%s': want DD Mon YYYY, e.g. \"26 Jul 2024\"", v);
            o->chat_date = v;
        } else if (!strcmp(a, "--input")) {
            o->input_set = true;
            if (!strcmp(v, "line")) o->input = RUN_IN_LINE;
            else if (!strcmp(v, "all")) o->input = RUN_IN_ALL;
            else if (!strcmp(v, "nul")) o->input = RUN_IN_NUL;
            else if (!strcmp(v, "jsonl")) o->input = RUN_IN_JSONL;
            else return run_usage("--input '%s': want line, all, nul or jsonl", v);
        } else if (!strcmp(a, "--sep")) {
            if (!run_parse_sep(v, o->sep, sizeof o->sep, &o->sep_len))
                return run_usage("--sep '%s': bad escape or longer than 64 bytes", v);
            o->sep_set = true;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--max-tokens")) {
            if (!run_parse_i64(v, 0, EDGE_MAX_POS, &x)) return run_usage("%s '%s': want 0 or more tokens", a, v);
            o->n_predict = x;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--ctx")) {
            if (!run_parse_i64(v, 1, EDGE_MAX_POS, &x)) return run_usage("%s '%s': want 1 or more tokens (at most the model's limit)", a, v);
            o->n_ctx = (u32)x;
        } else if ((rc = run_parse_sampling(&o->sp, a, v)) != RUN_OPT_OTHER) {
            if (rc != 0) return rc;
        } else if (!strcmp(a, "--stop")) {
            if (o->n_stops >= EDGE_RUN_MAX_STOPS) return run_usage("more than %u --stop strings", EDGE_RUN_MAX_STOPS);
            if (!*v) return run_usage("--stop wants a non-empty text");
            o->stops[o->n_stops++] = v;
        } else if (!strcmp(a, "--backend")) {
            if (!strcmp(v, "gpu")) o->backend = ENG_GPU;
            else if (!strcmp(v, "ref")) o->backend = ENG_REF;
            else return run_usage("--backend '%s': want gpu or ref", v);
        } else if (!strcmp(a, "--cache-type") || !strcmp(a, "-ctk") || !strcmp(a, "--cache-type-k") || !strcmp(a, "-ctv") ||
                   !strcmp(a, "--cache-type-v")) {
            DType t = !strcmp(v, "f16") ? DT_F16 : !strcmp(v, "f32") ? DT_F32 : !strcmp(v, "q8_0") ? DT_Q8_0 : DT_COUNT;
            if (t == DT_COUNT) return run_usage("%s '%s': want f32, f16 or q8_0", a, v);
            if (o->kv != DT_COUNT && o->kv != t) return run_usage("%s '%s': keys and values share one cache type (see --cache-type)", a, v);
            o->kv = t;
        } else if (!strcmp(a, "--act")) {
            if (!strcmp(v, "f16")) o->act = DT_F16;
            else if (!strcmp(v, "f32")) o->act = DT_F32;
            else return run_usage("--act '%s': want f16 or f32", v);
        } else if (!strcmp(a, "-np") || !strcmp(a, "--parallel")) {
            if (!run_parse_i64(v, 1, EDGE_MAX_SEQ, &x)) return run_usage("%s '%s': want 1..%u prompts at once (EDGE_MAX_SEQ)", a, v, EDGE_MAX_SEQ);
            o->np = (u32)x;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size")) {
            if (!run_parse_i64(v, 1, EDGE_MAX_PREFILL_BATCH, &x)) return run_usage("%s '%s': want 1..%u tokens per prefill batch", a, v, EDGE_MAX_PREFILL_BATCH);
            o->batch = (u32)x;
        } else if (!strcmp(a, "--stats-every")) {
            if (!run_parse_i64(v, 0, 1000000000, &x)) return run_usage("--stats-every '%s': want 0..10^9", v);
            o->stats_every = (u32)x;
        } else if (!strcmp(a, "--device")) {
            if (!run_parse_i64(v, 0, 255, &x)) return run_usage("--device '%s': want 0..255", v);
            edge_opt.device = v;
        }
    }
    if (o->prompt && o->input_set) return run_usage("-p and --input exclude each other");
    if (o->prompt) o->input = RUN_IN_PROMPT;
    else if (!o->input_set && isatty(0)) o->input = RUN_IN_TTY;
    if (!o->sep_set) {
        const char *d = o->input == RUN_IN_LINE ? "\n\n" : o->input == RUN_IN_JSONL ? "" : "\n";
        o->sep_len = (u32)strlen(d);
        memcpy(o->sep, d, o->sep_len);
        if (o->input == RUN_IN_NUL) o->sep_len = 1, o->sep[0] = 0;
    }
    return -1;
}

/* ---- set-up and tear-down ---------------------------------------------------------------- */
static void run_close(Run *r) {
    free(r->pre.system); free(r->pre.toks);
    if (r->g_up) eng_close(&r->g);
    if (r->m_up) model_close(&r->m);
    arena_free(&r->scratch);
    arena_free(&r->bufs);
    arena_free(&r->a);
}

/* -np N takes effect for line, nul and jsonl input without --chat */
static bool run_par_mode(const RunOpts *o) {
    return o->np > 1 && !o->chat && (o->input == RUN_IN_LINE || o->input == RUN_IN_NUL || o->input == RUN_IN_JSONL);
}

static int run_open(Run *r) {
    RunOpts *o = &r->o;
    Err e = {0};
    arena_init(&r->a, "run model", (u64)EDGE_HOST_ARENA_MIB << 20);
    if (!model_open(&r->m, o->model, o->allow_unlisted, &r->a, &e)) { errf("edge: %s\n", e.msg); return e.code ? e.code : EXIT_MODEL; }
    r->m_up = true;
    if (!tok_load(&r->tok, &r->m.gguf, &r->a, &e)) { errf("edge: %s\n", e.msg); return EXIT_MODEL; }
    const ModelConfig *c = &r->m.cfg;
    if (tok_n_vocab(r->tok) > c->n_vocab) {
        errf("edge: the tokenizer has %u tokens, more than the model's n_vocab %u\n", tok_n_vocab(r->tok), c->n_vocab);
        return EXIT_MODEL;
    }
    u32 n_seq = run_par_mode(o) ? o->np : 1;
    u32 n_ctx = o->n_ctx ? o->n_ctx : MIN(c->n_ctx, MAX(RUN_DEFAULT_CTX / n_seq, MIN(RUN_DEFAULT_CTX, RUN_PAR_MIN_CTX)));
    if (n_ctx > c->n_ctx) {
        errf("edge: -c %u exceeds the context limit of %u tokens for '%s'\n", n_ctx, c->n_ctx, c->name);
        return EXIT_USAGE;
    }
    r->n_ctx = n_ctx;
    bool tty = isatty(2) && !o->quiet;
    if (tty) errf("edge: loading %s on %s...", c->name, o->backend == ENG_GPU ? "the GPU" : "the CPU reference");
    f64 t0 = run_now_ms();
    if (!eng_open_gen(&r->g, &r->m, o->backend, n_ctx, o->act, o->kv, o->batch ? o->batch : EDGE_PREFILL_BATCH, true, n_seq, &e)) {
        if (tty) errf("\n");
        errf("edge: %s\n", e.msg);
        return e.code ? e.code : EXIT_DEVICE;
    }
    r->g_up = true;
    if (tty) errf("\r\033[K");
    if (o->chat_date) fmt_buf(r->date, sizeof r->date, "%s", o->chat_date);
    else chat_today(r->date, sizeof r->date);
    if (o->think && !o->raw && !chat_family_thinks(c->chat) && !o->quiet)
        errf("edge: warning: --think/--no-think: '%s' (chat family %s) has no thinking switch\n", c->name, chat_family_name(c->chat));
    if (!o->quiet)
        errf("edge: %s (%s), %s%s%s, context %u tokens, loaded in %.0f ms\n", c->name, o->model ? o->model : "embedded",
             o->backend == ENG_GPU ? "gpu " : "reference", o->backend == ENG_GPU ? (eng_info(&r->g).act == DT_F16 ? "f16" : "f32") : "",
             o->backend != ENG_GPU ? "" : eng_info(&r->g).kv == DT_F16 ? ", KV cache f16" : eng_info(&r->g).kv == DT_Q8_0 ? ", KV cache q8_0" : ", KV cache f32",
             n_ctx, run_now_ms() - t0);

    /* Fixed buffers. Decoded bytes per token <= 3 x the longest stored piece (every byte may
       become U+FFFD) + 3 (a flushed incomplete sequence). */
    for (u32 i = 0; i < tok_n_vocab(r->tok); i++) { u32 l; tok_piece(r->tok, (i32)i, &l); r->max_piece = MAX(r->max_piece, l); }
    u64 per_tok = 3ull * r->max_piece + 3;
    r->rec_cap = EDGE_RUN_MAX_PROMPT_BYTES;
    r->clean_cap = 3 * r->rec_cap + 1;
    r->conv_cap = o->chat ? 2 * r->clean_cap + (u64)n_ctx * per_tok : 0;
    u64 sys = o->system ? strlen(o->system) : 0;
    r->rend_cap = (o->chat ? r->conv_cap : r->clean_cap) + 3 * sys + 256ull * (EDGE_RUN_MAX_TURNS + 4) + 1;
    r->toks_cap = (u32)MIN(r->rend_cap + 8, 0x7fffffffu);
    r->out.cap = (u64)n_ctx * per_tok + 64;
    r->jout_cap = 6 * r->out.cap + 4096;
    u64 total = r->rec_cap + 1 + r->clean_cap + r->rend_cap + 4ull * r->toks_cap + 4ull * n_ctx + r->out.cap +
                r->jout_cap + r->conv_cap + (u64)c->n_vocab * sizeof(SampCand) + 4ull * n_ctx + 64 * 16;
    arena_init(&r->bufs, "run buffers", total);
    r->rec   = push_array(&r->bufs, char, r->rec_cap + 1);
    r->clean = push_array(&r->bufs, char, r->clean_cap);
    r->rend  = push_array(&r->bufs, char, r->rend_cap);
    r->toks  = push_array(&r->bufs, i32, r->toks_cap);
    r->kv    = push_array(&r->bufs, i32, n_ctx);
    r->out.buf = push_array(&r->bufs, char, r->out.cap);
    r->jout  = push_array(&r->bufs, char, r->jout_cap);
    if (o->chat) r->conv = push_array(&r->bufs, char, r->conv_cap);
    samp_init(&r->samp, c->n_vocab, n_ctx, &r->bufs);
    /* a JSON line: decoded strings (3x) plus nodes; a line too large for it is an error object */
    if (o->input == RUN_IN_JSONL) arena_init(&r->scratch, "json line", 8 * r->rec_cap + (1u << 20));
    r->rd.fd = 0;
    return -1;
}

/* ---- input ------------------------------------------------------------------------------- */
static int run_getc(Run *r) {
    RunReader *d = &r->rd;
    while (d->at == d->n) {
        if (d->eof || run_interrupted) return -1;
        ssize_t k = read(d->fd, d->buf, sizeof d->buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { d->eof = true; return -1; }
        d->at = 0; d->n = (u32)k;
    }
    return d->buf[d->at++];
}

/* The next record up to delim (-1: all of stdin) into r->rec. Returns false at the end of input.
   *over: the record was longer than rec_cap; with --truncate its last rec_cap bytes are kept. */
static bool run_read_record(Run *r, int delim, u64 *len, bool *over) {
    u64 n = 0;
    *over = false;
    int c = run_getc(r);
    if (c < 0) return false;
    for (; c >= 0 && c != delim; c = run_getc(r)) {
        if (n == r->rec_cap) {
            *over = true;
            if (!r->o.truncate) continue;          /* drop the rest of the record */
            u64 half = r->rec_cap / 2;              /* keep the end: slide the second half down */
            memmove(r->rec, r->rec + half, r->rec_cap - half);
            n = r->rec_cap - half;
        }
        r->rec[n++] = (char)c;
    }
    r->rec[n] = 0;
    *len = n;
    return true;
}

/* Copies s into r->clean with each invalid UTF-8 byte replaced by U+FFFD; returns the count. */
static u32 run_clean_utf8(Run *r, const char *s, u64 n, u64 *out_n) {
    u64 k = 0; u32 bad = 0;
    for (u64 i = 0; i < n;) {
        u32 l = json_utf8_len((const u8 *)s + i, n - i);
        if (l == 0) { memcpy(r->clean + k, "\xef\xbf\xbd", 3); k += 3; i++; bad++; continue; }
        memcpy(r->clean + k, s + i, l); k += l; i += l;
    }
    r->clean[k] = 0;
    *out_n = k;
    return bad;
}

/* ---- prompt -> tokens -------------------------------------------------------------------- */
static ChatFamily run_family(const Run *r) { return r->o.raw ? CHAT_NONE : r->m.cfg.chat; }

/* Tokenizes r->rend. With --no-special and a template, the user texts are tokenized apart from
   the template (never as control tokens): the template is rendered with a 0x01 placeholder for
   each user text, the pieces between placeholders with special tokens, the texts without. */
static bool run_tokenize(Run *r, ChatFamily fam, const ChatOpts *co, ChatTurn *turns, u32 nt, u64 n_rend, u32 *n_out, char *err, u32 errcap) {
    u64 n = 0;
    if (!r->o.no_special || fam == CHAT_NONE) {
        n = tok_encode(r->tok, r->rend, n_rend, true, !r->o.no_special, r->toks, r->toks_cap);
    } else {
        const char *user[EDGE_RUN_MAX_TURNS]; u32 nu = 0;
        for (u32 i = 0; i < nt; i++) {
            if (strchr(turns[i].text, 1)) { fmt_buf(err, (int)errcap, "byte 0x01 in a prompt is not allowed with --no-special"); return false; }
            if (!strcmp(turns[i].role, "user")) { user[nu++] = turns[i].text; turns[i].text = "\x01"; }
        }
        n_rend = chat_render_turns(fam, turns, nt, co, r->rend, r->rend_cap);
        for (u32 i = 0, k = 0; i < nt; i++) if (!strcmp(turns[i].role, "user")) turns[i].text = user[k++];
        if (n_rend >= r->rend_cap) { fmt_buf(err, (int)errcap, "templated prompt over %llu bytes", (unsigned long long)r->rend_cap); return false; }
        const char *s = r->rend, *end = r->rend + n_rend;
        bool first = true;
        for (u32 k = 0;; k++) {
            const char *p = memchr(s, 1, (u64)(end - s));
            u64 seg = (u64)((p ? p : end) - s);
            if (seg || first) n += tok_encode(r->tok, s, seg, first, true, r->toks + MIN(n, r->toks_cap), (u32)(r->toks_cap - MIN(n, r->toks_cap)));
            first = false;
            if (!p) break;
            const char *u = user[k]; u64 ul = strlen(u);
            chat_message_span(fam, &u, &ul);             /* the part of the text the template writes */
            n += tok_encode(r->tok, u, ul, false, false, r->toks + MIN(n, r->toks_cap), (u32)(r->toks_cap - MIN(n, r->toks_cap)));
            s = p + 1;
        }
    }
    if (n > r->toks_cap) { fmt_buf(err, (int)errcap, "%llu prompt tokens exceed the buffer of %u", (unsigned long long)n, r->toks_cap); return false; }
    *n_out = (u32)n;
    return true;
}

/* The system prefix of a request (RunPrefix): the longest common start of the tokens of two
   renderings that differ only in the user's text, for chat families with a system text (--system,
   the jsonl field, or the template's default), when it is at least RUN_PREFIX_MIN tokens; else 0.
   Kept for the last system text. Uses r->rend and r->toks as scratch (before run_prepare). */
#define RUN_PREFIX_MIN 8
static u32 run_prefix(Run *r, const RunReq *q) {
    RunPrefix *P = &r->pre;
    ChatFamily fam = run_family(r);
    if (fam == CHAT_NONE || r->o.chat) return 0;
    bool same = P->valid && P->think == q->think && (P->system ? q->system && !strcmp(P->system, q->system) : !q->system);
    if (same) return P->n;
    free(P->system); free(P->toks);
    u32 gen = P->gen + 1;
    memset(P, 0, sizeof *P);
    P->gen = gen;
    P->system = q->system ? strdup(q->system) : 0; P->think = q->think; P->valid = true;
    ChatOpts co = { .add_generation_prompt = true, .think = q->think, .date = r->date };
    i32 *probe[2] = { 0, 0 };
    u32 n[2] = { 0, 0 };
    char err[64];
    for (int i = 0; i < 2; i++) {
        ChatTurn turns[2]; u32 nt = 0;
        if (q->system) turns[nt++] = (ChatTurn){ "system", q->system };
        turns[nt++] = (ChatTurn){ "user", i ? "B" : "A" };
        u64 n_rend = chat_render_turns(fam, turns, nt, &co, r->rend, r->rend_cap);
        if (n_rend >= r->rend_cap || !run_tokenize(r, fam, &co, turns, nt, n_rend, &n[i], err, sizeof err)) break;
        probe[i] = malloc((n[i] + 1) * sizeof(i32));
        memcpy(probe[i], r->toks, n[i] * sizeof(i32));
    }
    u32 k = 0;
    while (probe[0] && probe[1] && k < n[0] && k < n[1] && probe[0][k] == probe[1][k]) k++;
    if (k >= RUN_PREFIX_MIN) { P->n = k; P->toks = probe[0]; probe[0] = 0; }
    free(probe[0]); free(probe[1]);
    return P->n;
}

/* UTF-8 check, template, tokens, context fit. Returns false with res->err on failure. */
static bool run_prepare(Run *r, const RunReq *q, u32 index, RunResult *res, u32 *n_tok) {
    u32 n_prefix = run_prefix(r, q);
    u64 n_clean;
    u32 bad = run_clean_utf8(r, q->text, q->len, &n_clean);
    if (bad) errf("edge: prompt %u: %u invalid UTF-8 byte%s replaced with U+FFFD\n", index, bad, bad == 1 ? "" : "s");
    ChatFamily fam = run_family(r);
    ChatOpts co = { .add_generation_prompt = true, .think = q->think, .date = r->date };
    ChatTurn turns[EDGE_RUN_MAX_TURNS + 1];
    u32 nt = 0;
    if (q->system) turns[nt++] = (ChatTurn){ "system", q->system };
    if (r->o.chat) {
        if (r->n_turns + 2 > EDGE_RUN_MAX_TURNS || r->conv_n + n_clean + 1 > r->conv_cap / 2) {
            errf("edge: prompt %u: the conversation is full (%u turns, %llu bytes); starting a new one\n", index, r->n_turns,
                 (unsigned long long)r->conv_n);
            r->n_turns = 0; r->conv_n = 0;
        }
        char *t = r->conv + r->conv_n;
        memcpy(t, r->clean, n_clean + 1);
        r->conv_n += n_clean + 1;
        r->turns[r->n_turns++] = (ChatTurn){ "user", t };
        for (u32 i = 0; i < r->n_turns; i++) turns[nt++] = r->turns[i];
    } else {
        turns[nt++] = (ChatTurn){ "user", r->clean };
    }
    u64 n_rend = chat_render_turns(fam, turns, nt, &co, r->rend, r->rend_cap);
    if (n_rend >= r->rend_cap) {
        fmt_buf(res->err, sizeof res->err, "templated prompt of %llu bytes exceeds the buffer of %llu", (unsigned long long)n_rend,
                (unsigned long long)r->rend_cap);
        return false;
    }
    u32 n;
    if (!run_tokenize(r, fam, &co, turns, nt, n_rend, &n, res->err, sizeof res->err)) return false;
    res->n_prompt = n;
    if (n == 0) { fmt_buf(res->err, sizeof res->err, "the prompt has no tokens"); return false; }
    if (n >= r->n_ctx) {
        if (!r->o.truncate) {
            fmt_buf(res->err, sizeof res->err, "%u prompt tokens do not fit the context of %u tokens (use --truncate or a larger -c)",
                    n, r->n_ctx);
            if (r->o.chat) { r->n_turns = 0; r->conv_n = 0; }   /* the conversation cannot continue */
            return false;
        }
        /* keep BOS and the end, leaving room for min(-n, half the context) new tokens */
        u32 room = (u32)MIN((u64)MAX(q->max_tokens, 1), (u64)(r->n_ctx / 2));
        u32 keep = MAX(r->n_ctx - room, 1u);
        bool bos = r->toks[0] == tok_bos(r->tok);
        u32 head = bos && keep > 1 ? 1 : 0;
        memmove(r->toks + head, r->toks + n - (keep - head), (keep - head) * sizeof(i32));
        if (!r->o.quiet) errf("edge: prompt %u: %u tokens do not fit the context of %u; kept the last %u\n", index, n, r->n_ctx, keep - head);
        n = keep;
        res->n_prompt = n;
    }
    *n_tok = n;
    /* the system prefix, when the prompt starts with it (a truncated prompt may not) */
    res->n_prefix = n_prefix && n > n_prefix && !memcmp(r->toks, r->pre.toks, n_prefix * sizeof(i32)) ? n_prefix : 0;
    return true;
}

/* ---- generation -------------------------------------------------------------------------- */
static bool run_finite(const f32 *x, u32 n) {
    for (u32 i = 0; i < n; i++) if (!isfinite(x[i])) return false;
    return true;
}

/* Writes the completion up to t->buf[upto] (t->printed: what was written or passed over). With
   --answer-only and a thinking family, only the answer part: chat_split on the text so far (its
   answer only grows); at the end (final) an output that could still have become "<think>" is answer. */
static void run_stream(Run *r, RunText *t, u64 upto, bool final) {
    u64 from = t->printed, to = upto;
    if (r->o.answer_only && chat_family_thinks(run_family(r))) {
        ChatSplit s = chat_split(t->buf, upto);
        if (s.undecided && !final) return;
        if (!s.undecided) { from = MAX(from, s.answer_at); to = s.answer_at + s.answer_n; }   /* to == upto */
    }
    if (to > from) run_write(r, t->buf + from, to - from);
    t->printed = upto;
}

/* Appends generated bytes, cuts at the earliest stop string, streams what can no longer be
   part of a stop string. Returns true when a stop string was found. */
static bool run_emit(Run *r, RunText *t, const RunReq *q, const char *s, u64 n, bool stream) {
    u64 old = t->n;
    n = MIN(n, t->cap - t->n);
    memcpy(t->buf + t->n, s, n);
    t->n += n;
    u64 hold = 0, cut = t->n;
    bool hit = false;
    for (u32 i = 0; i < q->n_stops; i++) {
        u64 l = q->stop_len[i];
        hold = MAX(hold, l - 1);
        u64 from = old >= l - 1 ? old - (l - 1) : 0;
        if (t->n - from < l) continue;
        const char *p = memmem(t->buf + from, t->n - from, q->stops[i], l);
        if (p && (u64)(p - t->buf) < cut) { cut = (u64)(p - t->buf); hit = true; }
    }
    if (hit) { t->n = cut; hold = 0; }
    if (stream && t->n > t->printed + hold) run_stream(r, t, t->n - hold, false);
    return hit;
}

/* A fault's class (Err.code), kept when it is the most serious met: device 3, then numeric 4. */
static void run_fault(Run *r, int code) {
    if (code == EXIT_DEVICE || (code == EXIT_NUMERIC && r->worst != EXIT_DEVICE)) r->worst = code;
}

/* Can a sequence whose context holds `held` tokens matching the prompt's, at position pos, give the
   prompt its system prefix of P tokens? Not with --no-cache-prompt, and not once a sliding-window
   layer's ring has wrapped (its rows of the prefix's last positions would be overwritten). */
static bool run_prefix_held(const Run *r, u32 held, u32 pos, u32 P) {
    return P && !r->o.no_cache_prompt && held >= P && pos >= P && pos <= eng_kv_ring(&r->g);
}

/* Prefills r->toks[from .. n) of the selected sequence: a prompt with a system prefix of P tokens in
   two parts, up to P and from P, reused or not, so that reusing it computes what prefilling it does. */
static bool run_feed(Run *r, u32 from, u32 P, u32 n, Err *e) {
    if (from < P && !eng_feed(&r->g, r->toks + from, P - from, 0, e)) return false;
    from = MAX(from, P);
    return eng_feed(&r->g, r->toks + from, n - from, 0, e);
}

/* A failure ends the prompt with res->stop = error and, for a device or numeric fault, run_fault. */
static void run_generate(Run *r, const RunReq *q, u32 n, RunResult *res, bool stream) {
    Engine *g = &r->g;
    u32 nv = r->m.cfg.n_vocab;
    Err e = {0};
    r->out.n = r->out.printed = 0;
    u32 reuse = 0, P = res->n_prefix;
    if (r->o.chat && r->n_kv < n && r->n_kv == eng_pos(g) && !memcmp(r->kv, r->toks, r->n_kv * sizeof(i32))) reuse = r->n_kv;
    else if (run_prefix_held(r, r->n_kv, eng_pos(g), P) && !memcmp(r->kv, r->toks, P * sizeof(i32)) && eng_truncate(g, P, &e)) reuse = P;
    else { eng_reset(g); r->n_kv = 0; }
    res->n_reused = reuse;
    f64 t0 = run_now_ms();
    if (!run_feed(r, reuse, P, n, &e)) {
        res->stop = RUN_STOP_ERROR; fmt_buf(res->err, sizeof res->err, "%s", e.msg);
        run_fault(r, e.code);
        eng_reset(g); r->n_kv = 0;
        return;
    }
    memcpy(r->kv + reuse, r->toks + reuse, (n - reuse) * sizeof(i32));
    r->n_kv = n;
    res->prefill_ms = run_now_ms() - t0;
    if (!run_finite(eng_last_logits(g), nv)) {
        res->stop = RUN_STOP_ERROR; fmt_buf(res->err, sizeof res->err, "NaN or Inf in the logits after the prompt");
        run_fault(r, EXIT_NUMERIC); return;
    }
    samp_reset(&r->samp, &q->sp);
    for (u32 i = n > r->samp.max_hist ? n - r->samp.max_hist : 0; i < n; i++) samp_accept(&r->samp, r->toks[i]);
    bool gpu_greedy = r->o.backend == ENG_GPU && samp_is_greedy(&q->sp);
    i32 next = samp_pick(&r->samp, eng_last_logits(g));
    ChatFamily fam = run_family(r);
    TokDecoder d;
    tok_decoder_init(&d);
    d.at_start = false;                 /* a continuation keeps the first piece's leading space */
    char piece[1024];
    res->stop = RUN_STOP_LENGTH;
    f64 t1 = run_now_ms();
    /* greedy on the GPU: each step is queued before the host has read the one before (eng_decode); a
       step queued after the last token wanted (an end of text, a stop string) is dropped */
    for (i64 step = 0; step < q->max_tokens; step++) {
        i32 tok = next;
        if (chat_is_stop(fam, r->tok, tok)) { res->stop = RUN_STOP_EOS; break; }
        u32 k = tok_decode(r->tok, &d, tok, piece, sizeof piece);
        res->n_gen++;
        samp_accept(&r->samp, tok);
        if (run_emit(r, &r->out, q, piece, k, stream)) { res->stop = RUN_STOP_STRING; break; }
        if (r->pipe_closed) break;
        if (step + 1 >= q->max_tokens) break;
        if (run_interrupted) { res->stop = RUN_STOP_INTERRUPT; break; }
        if (eng_pos(g) >= r->n_ctx) { res->stop = RUN_STOP_CONTEXT; break; }
        bool ok;
        if (gpu_greedy) {
            ok = eng_decode(g, tok, step + 2 < q->max_tokens, &next, &e);
            if (ok && (next < 0 || (u32)next >= nv)) {
                fmt_buf(res->err, sizeof res->err, "GPU argmax returned id %d (vocabulary of %u): NaN in the logits?", next, nv);
                res->stop = RUN_STOP_ERROR; run_fault(r, EXIT_NUMERIC); break;
            }
        } else {
            ok = eng_feed(g, &tok, 1, 0, &e);
            if (ok && !run_finite(eng_last_logits(g), nv)) {
                fmt_buf(res->err, sizeof res->err, "NaN or Inf in the logits at generated token %lld", (long long)step + 1);
                res->stop = RUN_STOP_ERROR; run_fault(r, EXIT_NUMERIC); break;
            }
            if (ok) next = samp_pick(&r->samp, eng_last_logits(g));
        }
        if (!ok) {
            fmt_buf(res->err, sizeof res->err, "%s", e.msg);
            res->stop = RUN_STOP_ERROR;
            run_fault(r, e.code);
            break;
        }
        r->kv[r->n_kv++] = tok;
    }
    if (gpu_greedy) eng_decode_end(g);
    if (res->stop != RUN_STOP_STRING) {
        u32 k = tok_decode_flush(r->tok, &d, piece, sizeof piece);
        if (run_emit(r, &r->out, q, piece, k, stream)) res->stop = RUN_STOP_STRING;
    }
    if (stream && r->out.printed < r->out.n) run_stream(r, &r->out, r->out.n, true);
    res->decode_ms = run_now_ms() - t1;
    if (r->o.chat && res->stop != RUN_STOP_ERROR) {      /* the reply becomes the assistant turn */
        if (r->n_turns < EDGE_RUN_MAX_TURNS && r->conv_n + r->out.n + 1 <= r->conv_cap) {
            char *t = r->conv + r->conv_n;
            memcpy(t, r->out.buf, r->out.n); t[r->out.n] = 0;
            r->conv_n += r->out.n + 1;
            r->turns[r->n_turns++] = (ChatTurn){ "assistant", t };
        }
    }
}

/* ---- one prompt, text and JSON output ---------------------------------------------------- */
static void run_req_defaults(Run *r, RunReq *q) {
    memset(q, 0, sizeof *q);
    q->system = r->o.system;
    q->think = r->o.think;
    q->max_tokens = r->o.n_predict;
    q->sp = r->o.sp;
    q->n_stops = r->o.n_stops;
    for (u32 i = 0; i < q->n_stops; i++) { q->stops[i] = r->o.stops[i]; q->stop_len[i] = (u32)strlen(q->stops[i]); }
}

static void run_report(Run *r, u32 index, const RunResult *res) {
    if (res->stop == RUN_STOP_ERROR) { errf("edge: prompt %u: %s\n", index, res->err); return; }
    if (res->stop == RUN_STOP_CONTEXT && !r->o.quiet)
        errf("edge: prompt %u: the context of %u tokens is full after %u generated tokens\n", index, r->n_ctx, res->n_gen);
    if (r->o.verbose)
        errf("edge: prompt %u: %u prompt tokens (%u reused) in %.2f ms (%.1f tok/s), %u generated in %.2f ms (%.1f tok/s), stop %s, rss %llu KiB\n",
             index, res->n_prompt, res->n_reused, res->prefill_ms, res->prefill_ms > 0 ? res->n_prompt * 1e3 / res->prefill_ms : 0.0,
             res->n_gen, res->decode_ms, res->decode_ms > 0 ? res->n_gen * 1e3 / res->decode_ms : 0.0,
             run_stop_names[res->stop], (unsigned long long)run_rss_kib());
}

/* The prompt being answered, for run_die_hook. */
static Run *run_live;
static u32  run_live_index;
static bool run_live_stream;

/* A fatal error (die: device lost, fence timeout ...) while a prompt is answered: what was
   streamed stays, the record is ended with the separator, the error names the prompt. */
static bool run_die_hook(int code, const char *msg) {
    (void)code;
    if (!run_live) return false;
    Run *r = run_live;
    if (run_live_stream) run_write(r, r->o.sep, r->o.sep_len);
    errf("edge: prompt %u: %s (after %u generated bytes were written)\n", run_live_index, msg, (u32)r->out.printed);
    return true;
}

/* Every --stats-every prompts: the numbers the soak test (test/soak.sh) checks for growth. */
static void run_stats(Run *r, u32 prompts) {
    u64 dev_w = 0, dev_s = 0, dev_p = 0;   /* device arenas: exact tensor bytes carved; the state arena's bump position */
    if (r->o.backend == ENG_GPU && r->g_up) { EngInfo gi = eng_info(&r->g); dev_w = gi.weight_bytes; dev_s = gi.state_bytes; dev_p = gi.state_pos; }
    errf("edge: stats: prompts %u host_arena %llu host_buffers %llu host_scratch %llu device_weights %llu device_state %llu "
         "device_state_pos %llu rss_kib %llu\n",
         prompts, (unsigned long long)arena_pos(&r->a), (unsigned long long)arena_pos(&r->bufs),
         (unsigned long long)arena_pos(&r->scratch), (unsigned long long)dev_w, (unsigned long long)dev_s,
         (unsigned long long)dev_p, (unsigned long long)run_rss_kib());
}

/* Answers one request; stream: text modes (write as generated, then the separator). */
static void run_answer(Run *r, const RunReq *q, u32 index, RunResult *res, bool stream) {
    memset(res, 0, sizeof *res);
    u32 n;
    if (!run_prepare(r, q, index, res, &n)) {
        res->stop = RUN_STOP_ERROR;
        if (r->o.chat && r->n_turns && !strcmp(r->turns[r->n_turns - 1].role, "user")) {
            r->n_turns--; r->conv_n = r->n_turns ? (u64)(r->turns[r->n_turns - 1].text - r->conv) + strlen(r->turns[r->n_turns - 1].text) + 1 : 0;
        }
        r->out.n = 0;
    } else {
        run_live = r; run_live_index = index; run_live_stream = stream;
        run_generate(r, q, n, res, stream);
        run_live = 0;
    }
    if (res->stop == RUN_STOP_ERROR) r->n_failed++; else r->n_answered++;
    if (stream) run_write(r, r->o.sep, r->o.sep_len);   /* a failed prompt still gets its (empty) record */
    run_report(r, index, res);
    if (r->o.stats_every && index % r->o.stats_every == 0) run_stats(r, index);
}

static void run_json_id(JsonWriter *w, const JsonVal *id, u64 line) {
    if (id && id->type == JSON_STR) json_write_str(w, id->str, id->len);
    else if (id && id->type == JSON_NUM) json_put(w, id->str, id->len);
    else json_putf(w, "%llu", (unsigned long long)line);
}

static void run_json_error(Run *r, const JsonVal *id, u64 line, const char *msg) {
    JsonWriter w = json_writer(r->jout, r->jout_cap);
    json_put(&w, "{\"id\":", 6);
    run_json_id(&w, id, line);
    json_putf(&w, ",\"line\":%llu,\"error\":", (unsigned long long)line);
    json_write_str(&w, msg, strlen(msg));
    json_put(&w, ",\"stop_reason\":\"error\"}\n", 24);
    run_write(r, r->jout, MIN(w.n, w.cap));
    errf("edge: line %llu: %s\n", (unsigned long long)line, msg);
}

static bool run_json_uint(const JsonVal *v, f64 hi, u64 *out) {
    if (!v || v->type != JSON_NUM || !(v->num >= 0 && v->num <= hi) || v->num != floor(v->num)) return false;
    *out = (u64)v->num;
    return true;
}

static bool run_json_real(const JsonVal *v, f64 lo, f64 hi, f32 *out) {
    if (!v || v->type != JSON_NUM || !(v->num >= lo && v->num <= hi)) return false;
    *out = (f32)v->num;
    return true;
}

/* Fills q from a request object; false with msg on a bad field. */
static bool run_req_from_json(Run *r, const JsonVal *o, RunReq *q, char *msg, u32 cap) {
    run_req_defaults(r, q);
    if (o->type != JSON_OBJ) { fmt_buf(msg, (int)cap, "a request must be a JSON object"); return false; }
    static const char *const keys[] = { "prompt", "system", "think", "max_tokens", "temperature", "top_k", "top_p", "min_p", "seed", "stop", "id" };
    for (const JsonVal *c = o->child; c; c = c->next) {
        bool known = false;
        for (u32 i = 0; i < ARRAY_COUNT(keys); i++) known |= strlen(keys[i]) == c->key_len && !memcmp(keys[i], c->key, c->key_len);
        if (!known) { fmt_buf(msg, (int)cap, "unknown key \"%.64s\" (known: prompt system think max_tokens temperature top_k top_p min_p seed stop id)", c->key); return false; }
    }
    const JsonVal *v = json_get(o, "prompt");
    if (!v || v->type != JSON_STR) { fmt_buf(msg, (int)cap, "\"prompt\" (a string) is required"); return false; }
    q->text = v->str; q->len = v->len;
    if ((v = json_get(o, "system")) && v->type != JSON_NULL) {
        if (v->type != JSON_STR || memchr(v->str, 0, v->len)) { fmt_buf(msg, (int)cap, "\"system\" must be a string without NUL"); return false; }
        q->system = v->str;
    }
    if ((v = json_get(o, "think")) && v->type != JSON_NULL) {
        if (v->type != JSON_TRUE && v->type != JSON_FALSE) { fmt_buf(msg, (int)cap, "\"think\" must be true, false or null"); return false; }
        q->think = v->type == JSON_TRUE ? CHAT_THINK_ON : CHAT_THINK_OFF;
    }
    u64 u;
    if ((v = json_get(o, "max_tokens"))) {
        if (!run_json_uint(v, EDGE_MAX_POS, &u)) { fmt_buf(msg, (int)cap, "\"max_tokens\" must be an integer 0..%u", EDGE_MAX_POS); return false; }
        q->max_tokens = (i64)u;
    }
    if ((v = json_get(o, "temperature")) && !run_json_real(v, 0, 100, &q->sp.temp)) { fmt_buf(msg, (int)cap, "\"temperature\" must be a number 0..100"); return false; }
    if ((v = json_get(o, "top_k"))) {
        if (!run_json_uint(v, 1 << 30, &u)) { fmt_buf(msg, (int)cap, "\"top_k\" must be an integer >= 0"); return false; }
        q->sp.top_k = (u32)u;
    }
    if ((v = json_get(o, "top_p")) && (!run_json_real(v, 0, 1, &q->sp.top_p) || q->sp.top_p <= 0)) { fmt_buf(msg, (int)cap, "\"top_p\" must be a number in (0, 1]"); return false; }
    if ((v = json_get(o, "min_p")) && !run_json_real(v, 0, 1, &q->sp.min_p)) { fmt_buf(msg, (int)cap, "\"min_p\" must be a number 0..1"); return false; }
    if ((v = json_get(o, "seed"))) {
        if (!run_json_uint(v, 9007199254740992.0, &u)) { fmt_buf(msg, (int)cap, "\"seed\" must be an integer 0..2^53"); return false; }
        q->sp.seed = u;
    }
    if ((v = json_get(o, "stop"))) {
        q->n_stops = 0;
        const JsonVal *one = v->type == JSON_STR ? v : 0, *list = v->type == JSON_ARR ? v->child : 0;
        if (!one && v->type != JSON_ARR) { fmt_buf(msg, (int)cap, "\"stop\" must be a string or an array of strings"); return false; }
        for (const JsonVal *s = one ? one : list; s; s = one ? 0 : s->next) {
            if (s->type != JSON_STR || s->len == 0) { fmt_buf(msg, (int)cap, "\"stop\" entries must be non-empty strings"); return false; }
            if (q->n_stops >= EDGE_RUN_MAX_STOPS) { fmt_buf(msg, (int)cap, "more than %u stop strings", EDGE_RUN_MAX_STOPS); return false; }
            q->stops[q->n_stops] = s->str; q->stop_len[q->n_stops++] = s->len;
        }
    }
    if ((v = json_get(o, "id")) && v->type != JSON_STR && v->type != JSON_NUM) { fmt_buf(msg, (int)cap, "\"id\" must be a string or a number"); return false; }
    return true;
}

/* A finished request's JSON line: the text (a thinking model's answer, its reasoning beside), counts, timings. */
static void run_json_result(Run *r, const JsonVal *id, u64 line, const RunResult *res, const RunText *t) {
    JsonWriter w = json_writer(r->jout, r->jout_cap);
    json_put(&w, "{\"id\":", 6);
    run_json_id(&w, id, line);
    json_put(&w, ",\"text\":", 8);
    if (chat_family_thinks(run_family(r))) {         /* the answer, and the reasoning beside it */
        ChatSplit sp = chat_split(t->buf, t->n);
        if (sp.undecided) sp.answer_at = 0, sp.answer_n = t->n;
        json_write_str(&w, t->buf + sp.answer_at, sp.answer_n);
        json_put(&w, ",\"reasoning\":", 13);
        json_write_str(&w, t->buf + sp.reason_at, sp.reason_n);
    } else json_write_str(&w, t->buf, t->n);
    json_putf(&w, ",\"tokens\":%u,\"stop_reason\":\"%s\",\"prompt_tokens\":%u,\"prompt_reused\":%u,\"prefill_ms\":%.3f,\"prefill_tok_s\":%.1f,"
                  "\"decode_ms\":%.3f,\"decode_tok_s\":%.1f}\n",
              res->n_gen, run_stop_names[res->stop], res->n_prompt, res->n_reused, res->prefill_ms,
              res->prefill_ms > 0 ? res->n_prompt * 1e3 / res->prefill_ms : 0.0, res->decode_ms,
              res->decode_ms > 0 ? res->n_gen * 1e3 / res->decode_ms : 0.0);
    run_write(r, r->jout, MIN(w.n, w.cap));
}

static void run_jsonl_line(Run *r, u64 line, u64 len, u32 index) {
    Temp t = temp_begin(&r->scratch);
    JsonDoc doc;
    char msg[256];
    if (!json_parse(r->rec, len, &r->scratch, &doc)) {
        fmt_buf(msg, sizeof msg, "invalid JSON at byte %llu: %s", (unsigned long long)doc.err_at + 1, doc.err);
        run_json_error(r, 0, line, msg); r->n_failed++; temp_end(t); return;
    }
    RunReq q;
    const JsonVal *id = json_get(doc.root, "id");
    if (id && id->type != JSON_STR && id->type != JSON_NUM) id = 0;
    if (!run_req_from_json(r, doc.root, &q, msg, sizeof msg)) { run_json_error(r, id, line, msg); r->n_failed++; temp_end(t); return; }
    if (doc.n_replaced) errf("edge: line %llu: %u invalid UTF-8 byte%s replaced with U+FFFD\n", (unsigned long long)line, doc.n_replaced, doc.n_replaced == 1 ? "" : "s");
    RunResult res;
    run_answer(r, &q, index, &res, false);
    if (res.stop == RUN_STOP_ERROR) { run_json_error(r, id, line, res.err); temp_end(t); return; }
    run_json_result(r, id, line, &res, &r->out);
    temp_end(t);
}

/* ---- the input loop ---------------------------------------------------------------------- */
/* The next record into r->rec (*len bytes; *over: longer than the buffer, its end kept): false at the
   end of the input, on SIGINT, after a device fault or when stdout was closed. Line, nul and jsonl
   modes skip empty records; --input all reads one record. */
static bool run_next(Run *r, u64 *line, u64 *len, bool *over) {
    RunInput mode = r->o.input;
    int delim = mode == RUN_IN_NUL ? 0 : mode == RUN_IN_ALL ? -1 : '\n';
    for (;;) {
        if (mode == RUN_IN_TTY) errf("> ");
        if (!run_read_record(r, delim, len, over)) return false;
        ++*line;
        if (run_interrupted || r->worst == EXIT_DEVICE || r->pipe_closed) return false;
        if ((mode == RUN_IN_LINE || mode == RUN_IN_TTY || mode == RUN_IN_JSONL) && *len && r->rec[*len - 1] == '\r') r->rec[--*len] = 0;
        if (*len == 0 && mode != RUN_IN_ALL) continue;   /* empty lines / records are skipped */
        if (*len == 0 && mode == RUN_IN_ALL && !*over) return false;
        return true;
    }
}

/* A record longer than the buffer: without --truncate reported (jsonl: an error line) and counted
   as failed (false; the caller writes a text mode's empty record); with it, a note. */
static bool run_fits(Run *r, u32 index, u64 line, u64 len, bool over) {
    (void)len;
    if (!over) return true;
    if (r->o.truncate) { errf("edge: prompt %u: longer than %u bytes; kept its end\n", index, EDGE_RUN_MAX_PROMPT_BYTES); return true; }
    char m[160];
    fmt_buf(m, sizeof m, "longer than %u bytes (EDGE_RUN_MAX_PROMPT_BYTES; --truncate keeps the end)", EDGE_RUN_MAX_PROMPT_BYTES);
    if (r->o.input == RUN_IN_JSONL) run_json_error(r, 0, line, m);
    else errf("edge: prompt %u: %s\n", index, m);
    r->n_failed++;
    return false;
}

static void run_par(Run *r);   /* -np N: cli/run_par.c */

/* ---- the command ------------------------------------------------------------------------- */
int run_main(int argc, char **argv) {
    Run *r = (Run *)calloc(1, sizeof(Run));
    if (!r) { errf("edge: cannot allocate %llu bytes for the run state\n", (unsigned long long)sizeof(Run)); return EXIT_USAGE; }
    int rc = run_parse_args(&r->o, argc, argv);
    if (rc >= 0) { free(r); return rc; }
    rc = run_open(r);
    if (rc >= 0) { run_close(r); free(r); return rc; }
    signal(SIGPIPE, SIG_IGN);
    die_hook = run_die_hook;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = run_on_sigint;        /* no SA_RESTART: a blocked read returns EINTR */
    sigaction(SIGINT, &sa, 0);

    u32 index = 0;
    u64 line = 0;
    RunReq q;
    RunResult res;
    f64 t0 = run_now_ms();
    RunInput mode = r->o.input;
    if (mode == RUN_IN_PROMPT) {
        run_req_defaults(r, &q);
        q.text = r->o.prompt; q.len = strlen(r->o.prompt);
        run_answer(r, &q, ++index, &res, true);
    } else if (r->g.n_seq > 1) {
        run_par(r);
    } else {
        u64 len; bool over;
        while (run_next(r, &line, &len, &over)) {
            ++index;
            if (!run_fits(r, index, line, len, over)) { if (mode != RUN_IN_JSONL) run_write(r, r->o.sep, r->o.sep_len); continue; }
            if (mode == RUN_IN_JSONL) { run_jsonl_line(r, line, len, index); continue; }
            run_req_defaults(r, &q);
            q.text = r->rec; q.len = len;
            run_answer(r, &q, index, &res, true);
            if (mode == RUN_IN_ALL) break;
        }
    }
    if (!r->o.quiet && !r->pipe_closed)
        errf("edge: %u prompt%s answered, %u failed, %.0f ms\n", r->n_answered, r->n_answered == 1 ? "" : "s", r->n_failed,
             run_now_ms() - t0);
    rc = run_interrupted ? EXIT_INTERRUPTED : r->worst ? r->worst : r->n_failed ? EXIT_PARTIAL : EXIT_OK;
    if (r->pipe_closed && !run_interrupted && !r->worst) rc = EXIT_OK;
    die_hook = 0;
    run_close(r);
    free(r);
    return rc;
}

static int run_cmd(int argc, char **argv) { return run_main(argc, argv); }

#define RUN_COMMANDS \
    { "run", run_cmd, "generate text from prompts on stdin or -p (the default command; see the options below)" },
