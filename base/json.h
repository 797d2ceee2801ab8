/* json.h — a small strict JSON (RFC 8259) parser and a string escaper, for `edge --input jsonl`.

   Why: JSON lines come from other programs and people; the parser must reject what is not
   JSON (and say where), never read past its input, and never allocate outside the arena the
   caller gives it (the caller resets that arena per line). Kept on its own to be fuzzed.

   Rules: one value, surrounded only by whitespace; objects, arrays, strings, numbers, true,
   false, null; nesting at most JSON_MAX_DEPTH; strings: every escape of RFC 8259, \uXXXX with
   surrogate pairs (a lone surrogate is an error), no raw control characters; invalid UTF-8
   inside a string is replaced by U+FFFD and counted (JsonDoc.n_replaced), not rejected.
   Numbers keep their source text (JsonVal.str) as well as their value.

   API:
     json_parse(text, len, arena, &doc)        -> true, or false with doc.err and doc.err_at (byte offset)
     json_get(obj, key)                        member value by key (first match), NULL if absent
     json_write_str(w, s, n)                   s as a quoted JSON string: ", \, control bytes escaped,
                                               invalid UTF-8 as \ufffd, valid UTF-8 verbatim
     json_writer(buf, cap)                     a writer over a fixed buffer; w.n may exceed cap (truncated) */
#ifndef EDGE_JSON_H
#define EDGE_JSON_H

typedef enum JsonType { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } JsonType;

typedef struct JsonVal {
    JsonType        type;
    const char     *key;        /* member name when inside an object (decoded, NUL-terminated) */
    u32             key_len;
    const char     *str;        /* JSON_STR: decoded bytes, NUL-terminated; JSON_NUM: source text */
    u32             len;        /* bytes of str */
    f64             num;        /* JSON_NUM */
    u32             n;          /* JSON_ARR / JSON_OBJ: number of children */
    struct JsonVal *child;      /* first child */
    struct JsonVal *next;       /* next sibling */
} JsonVal;

typedef struct JsonDoc {
    JsonVal    *root;
    u32         n_replaced;     /* invalid UTF-8 bytes replaced by U+FFFD in strings */
    const char *err;            /* static message */
    u64         err_at;         /* byte offset of the error */
} JsonDoc;

typedef struct JsonWriter { char *p; u64 cap, n; } JsonWriter;

bool       json_parse(const char *text, u64 len, Arena *a, JsonDoc *doc);
JsonVal   *json_get(const JsonVal *obj, const char *key);
JsonWriter json_writer(char *buf, u64 cap);
void       json_put(JsonWriter *w, const char *s, u64 n);
void       json_putf(JsonWriter *w, const char *fmt, ...);
void       json_write_str(JsonWriter *w, const char *s, u64 n);

#endif
