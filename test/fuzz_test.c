/* fuzz_test.c — replays every file of test/corpus/TARGET/ (small regression inputs: valid and
   malformed GGUF headers, text with invalid UTF-8, JSON and argument edge cases, and any input that
   once crashed or hung a fuzz target, kept after the fix) through the same fuzz_TARGET functions
   libFuzzer calls (test/fuzz/TARGET.c), here without libFuzzer: under `./build.sh test debug` with
   ASan and UBSan. A die() inside a target is a failure (a parser must return an error instead), and
   so is a missing test/corpus or a target without files. */
#define FUZZ_IN_TESTS 1
#include "fuzz/fuzz.h"
#include "fuzz/gguf.c"
#include "fuzz/tok_spm.c"
#include "fuzz/tok_bpe.c"
#include "fuzz/detok.c"
#include "fuzz/chat.c"
#include "fuzz/json.c"
#include "fuzz/args.c"
#include <dirent.h>

typedef struct FuzzTarget { const char *name; void (*fn)(const u8 *, size_t); } FuzzTarget;
static const FuzzTarget fuzz_targets[] = {
    { "gguf", fuzz_gguf }, { "tok_spm", fuzz_tok_spm }, { "tok_bpe", fuzz_tok_bpe }, { "detok", fuzz_detok },
    { "chat", fuzz_chat }, { "json", fuzz_json }, { "args", fuzz_args },
};

/* One input through a target; true when it called die() (its code and die_trap_msg set). */
static bool fuzz_replay_one(void (*fn)(const u8 *, size_t), const u8 *data, size_t n, int *code) {
    return EXPECT_DIE(code, fn(data, n));
}

TEST(fuzz_corpus_replay) {
    u32 files = 0;
    for (u32 i = 0; i < ARRAY_COUNT(fuzz_targets); i++) {
        char dir[256];
        fmt_buf(dir, sizeof dir, "test/corpus/%s", fuzz_targets[i].name);
        DIR *d = opendir(dir);
        if (!d) { CHECKF(0, "%s: no corpus folder (run from the repository root)", dir); continue; }
        u32 files_before = files;
        for (struct dirent *de; (de = readdir(d));) {
            if (de->d_name[0] == '.') continue;
            char path[512];
            fmt_buf(path, sizeof path, "%s/%s", dir, de->d_name);
            FILE *f = fopen(path, "rb");
            if (!f) { CHECKF(false, "cannot open %s", path); continue; }
            u64 n; u8 *data = fuzz_slurp(f, &n);
            fclose(f);
            int code = 0;
            bool died = fuzz_replay_one(fuzz_targets[i].fn, data, n, &code);
            CHECKF(!died, "%s: die(%d): %s", path, code, die_trap_msg);
            free(data);
            files++;
        }
        closedir(d);
        CHECKF(files > files_before, "%s: no files", dir);
    }
    out("    %u corpus files replayed\n", files);
    /* the tokenizer targets return at once without their vocabularies: then they checked nothing */
    if (!fuzz_vocab("llama2") || !fuzz_vocab("gemma") || !fuzz_vocab("qwen2.5"))
        SKIP_UNLESS_REQUIRED("tokenizer vocabularies not found (build/vocab or test/fixtures/tokenizer): tok_spm, tok_bpe and detok replayed nothing");
}

/* The seeds of a few targets, built here, so the harness bodies run in every test build. */
TEST(fuzz_harness_smoke) {
    static const char gguf_head[] = "GGUF\x03\0\0\0\x01\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0";
    fuzz_gguf((const u8 *)gguf_head, sizeof gguf_head - 1);
    static const char json[] = "{\"prompt\":\"hi \\ud83d\\ude00\",\"stop\":[\"a\"],\"max_tokens\":3}";
    fuzz_json((const u8 *)json, sizeof json - 1);
    static const char args[] = "--sep\0\\x00\\n\0-n\0" "16\0--trace=attn\0--stop\0x";
    fuzz_args((const u8 *)args, sizeof args - 1);
    static const char chat[] = "\x02\x00sys\0\x01user <|im_end|>\0\x02reply";
    fuzz_chat((const u8 *)chat, sizeof chat - 1);
    static const char text[] = "\x03Hello world \xc3\xa9 <s>\xff";
    if (!fuzz_vocab("llama2") || !fuzz_vocab("qwen2.5")) SKIP_UNLESS_REQUIRED("tokenizer vocabularies llama2 and qwen2.5 not found (build/vocab or test/fixtures/tokenizer)");
    fuzz_tok_spm((const u8 *)text, sizeof text - 1);
    fuzz_tok_bpe((const u8 *)text, sizeof text - 1);
    static const u8 ids[] = { 2, 7, 1, 0, 0x10, 0, 0xff, 0xff, 0x34, 0x12 };
    fuzz_detok(ids, sizeof ids);
}
