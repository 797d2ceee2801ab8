/* json_test.c — base/json.c: accepts what RFC 8259 accepts and rejects the rest, decodes escapes (surrogate
   pairs) to the UTF-8 python3's json module gives, replaces invalid UTF-8 by U+FFFD and counts it, never
   overruns a small arena (an error instead), and the escaper's output parses back to the same bytes. The
   expected decodings were taken from python3 -c 'json.loads(...)' (an independent implementation). */

static bool json_test_parse(const char *s, Arena *a, JsonDoc *d) {
    arena_pop_to(a, 0);
    return json_parse(s, strlen(s), a, d);
}

TEST(json_accepts_valid_documents) {
    Arena a; arena_init(&a, "json test", 1 << 16);
    JsonDoc d;
    static const char *const ok[] = { "0", "-0", "1.5e-3", "-12E+2", "\"\"", "true", "false", "null", "[]", "{}",
        " [1, [2, [3]], {\"a\": {}}] ", "{\"a\":1,\"a\":2}", "\"\\u0000\"", "\"\\/\"", "[\"\\ud83d\\ude00\"]", "\t\n\r 7 \r\n" };
    for (u32 i = 0; i < ARRAY_COUNT(ok); i++) CHECKF(json_test_parse(ok[i], &a, &d), "rejected %s: %s", ok[i], d.err ? d.err : "");
    REQUIRE(json_test_parse("{\"prompt\":\"caf\\u00e9 \\ud83d\\ude00\\n\\\"q\\\"\",\"n\":-2.5e1,\"l\":[1,\"x\",null]}", &a, &d));
    JsonVal *p = json_get(d.root, "prompt");
    REQUIRE(p && p->type == JSON_STR);
    CHECK(p->len == 14 && !memcmp(p->str, "caf\xc3\xa9 \xf0\x9f\x98\x80\n\"q\"", 14));
    JsonVal *n = json_get(d.root, "n");
    CHECK(n && n->type == JSON_NUM && n->num == -25.0 && !strcmp(n->str, "-2.5e1"));
    JsonVal *l = json_get(d.root, "l");
    CHECK(l && l->type == JSON_ARR && l->n == 3 && l->child->next->type == JSON_STR && l->child->next->next->type == JSON_NULL);
    CHECK(!json_get(d.root, "missing"));
    arena_free(&a);
}

TEST(json_rejects_invalid_documents) {
    Arena a; arena_init(&a, "json test", 1 << 16);
    JsonDoc d;
    static const char *const bad[] = { "", " ", "{", "}", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}", "01", "1.", ".5",
        "-", "1e", "+1", "0x10", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "\"a\tb\"", "\"a\nb\"", "[1] 2", "{\"a\":1}}", "NaN", "Infinity", "[1 2]", "{\"a\" 1}" };
    for (u32 i = 0; i < ARRAY_COUNT(bad); i++) CHECKF(!json_test_parse(bad[i], &a, &d) && d.err, "accepted '%s'", bad[i]);
    char deep[200]; memset(deep, '[', 100); memset(deep + 100, ']', 99); deep[199] = 0;   /* unbalanced and too deep */
    CHECK(!json_test_parse(deep, &a, &d));
    memset(deep, '[', 65); memset(deep + 65, ']', 65); deep[130] = 0;
    CHECK(!json_test_parse(deep, &a, &d) && strstr(d.err, "nesting"));
    memset(deep, '[', 64); memset(deep + 64, ']', 64); deep[128] = 0;
    CHECK(json_test_parse(deep, &a, &d));
    CHECK(!json_test_parse("{\"a\":1,}", &a, &d) && d.err_at == 7);
    arena_free(&a);
}

TEST(json_invalid_utf8_replaced_and_small_arena_is_an_error) {
    Arena a; arena_init(&a, "json test", 1 << 12);
    JsonDoc d;
    REQUIRE(json_test_parse("\"a\xff" "b\xc3\"", &a, &d));
    CHECK(d.n_replaced == 2 && d.root->len == 8 && !memcmp(d.root->str, "a\xef\xbf\xbd" "b\xef\xbf\xbd", 8));
    CHECK(json_test_parse("\"\xed\xa0\x80\"", &a, &d) && d.n_replaced == 3);      /* UTF-8-encoded surrogate */
    CHECK(json_test_parse("\"\xc0\xaf\"", &a, &d) && d.n_replaced == 2);          /* overlong */
    char big[3000]; big[0] = '['; u32 k = 1;
    while (k < sizeof big - 3) { big[k++] = '1'; big[k++] = ','; }
    big[k++] = '1'; big[k++] = ']'; big[k] = 0;                                   /* ~1500 nodes > 4 KiB */
    CHECK(!json_test_parse(big, &a, &d) && strstr(d.err, "too large"));
    arena_free(&a);
}

TEST(json_escaper_round_trips) {
    Arena a; arena_init(&a, "json test", 1 << 16);
    char out[512];
    const char s[] = "q\"b\\s/\n\t\r\b\f\x01\x1f\x7f caf\xc3\xa9 \xf0\x9f\x98\x80 bad\xff\xc3 end";
    JsonWriter w = json_writer(out, sizeof out);
    json_write_str(&w, s, sizeof s - 1);
    REQUIRE(w.n < sizeof out);
    out[w.n] = 0;
    CHECK(strstr(out, "\\u0001") && strstr(out, "\\u001f") && strstr(out, "\\ufffd\\ufffd end") && strstr(out, "\\\"b\\\\s/\\n\\t\\r\\b\\f"));
    JsonDoc d;
    REQUIRE(json_parse(out, w.n, &a, &d));
    const char want[] = "q\"b\\s/\n\t\r\b\f\x01\x1f\x7f caf\xc3\xa9 \xf0\x9f\x98\x80 bad\xef\xbf\xbd\xef\xbf\xbd end";
    CHECK(d.root->type == JSON_STR && d.root->len == sizeof want - 1 && !memcmp(d.root->str, want, sizeof want - 1));
    JsonWriter small = json_writer(out, 4);                        /* truncates, counts the full length */
    json_write_str(&small, "abcdef", 6);
    CHECK(small.n == 8 && !memcmp(out, "\"abc", 4));
    arena_free(&a);
}
