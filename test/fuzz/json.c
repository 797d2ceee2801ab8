/* json.c — fuzz target: the JSON lines input (`edge --input jsonl`): the strict JSON parser,
   then the request reader of run.c (keys, types, ranges, stop lists) on what parsed, and the
   string escaper: every input written as a JSON string must parse back to itself (valid UTF-8)
   or to U+FFFD replacements. */
#include "fuzz.h"

static Run *fuzz_json_run;

static void fuzz_json(const u8 *data, size_t n) {
    if (!fuzz_json_run) {
        fuzz_json_run = (Run *)calloc(1, sizeof(Run));
        char *argv[] = { "edge", "--input", "jsonl", "--stop", "END", 0 };
        int rc = run_parse_args(&fuzz_json_run->o, 5, argv);
        FUZZ_ASSERT(rc == -1);
    }
    Arena *a = fuzz_scratch();
    const char *text = (const char *)data;
    JsonDoc doc;
    if (json_parse(text, n, a, &doc)) {
        FUZZ_ASSERT(doc.root != 0);
        RunReq q; char msg[256];
        if (run_req_from_json(fuzz_json_run, doc.root, &q, msg, sizeof msg)) {
            FUZZ_ASSERT(q.text != 0 && q.n_stops <= EDGE_RUN_MAX_STOPS);
            for (u32 i = 0; i < q.n_stops; i++) FUZZ_ASSERT(q.stop_len[i] > 0);
        }
    } else {
        FUZZ_ASSERT(doc.err && doc.err_at <= n);
    }
    /* escaper round trip */
    u64 cap = 6 * n + 8;
    char *w = push_array(a, char, cap);
    JsonWriter jw = json_writer(w, cap);
    json_write_str(&jw, text, n);
    FUZZ_ASSERT(jw.n <= cap);
    JsonWriter small = json_writer(w, n / 3);   /* truncated: the count is still the full length */
    json_write_str(&small, text, n);
    FUZZ_ASSERT(small.n == jw.n);
    jw = json_writer(w, cap);
    json_write_str(&jw, text, n);
    JsonDoc back;
    bool ok = json_parse(w, jw.n, a, &back);
    FUZZ_ASSERT(ok && back.root->type == JSON_STR);
    bool valid = true;
    for (u64 i = 0; i < n && valid;) { u32 l = json_utf8_len(data + i, n - i); if (!l) valid = false; else i += l; }
    if (ok && valid) FUZZ_ASSERT(back.root->len == n && !memcmp(back.root->str, text, n));
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_json(data, n); return 0; }
#endif
