/* json.c — implementation of json.h: a recursive-descent parser over a byte span (never
   reads past len; the text need not be NUL-terminated) into arena-allocated JsonVal nodes,
   and the escaper. Decoded strings are at most as long as their source plus 2 bytes per
   replaced byte, so the arena needs at most about 4x the line plus the nodes. */

typedef struct JsonP {
    const u8 *s;
    u64       n, i;
    Arena    *a;
    JsonDoc  *doc;
    u32       depth;
} JsonP;

static bool json_fail(JsonP *p, const char *msg) {
    if (!p->doc->err) { p->doc->err = msg; p->doc->err_at = p->i; }
    return false;
}

/* Arena space or NULL: a document too large for the caller's arena is an error, not a crash. */
static void *json_alloc(JsonP *p, u64 size, u64 align) {
    u64 at = align_up(p->a->pos, align);
    if (at > p->a->cap || p->a->cap - at < size) { json_fail(p, "document too large for the parse arena"); return 0; }
    return arena_push(p->a, size, align);
}

static void json_ws(JsonP *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool json_lit(JsonP *p, const char *w) {
    u64 k = strlen(w);
    if (p->n - p->i < k || memcmp(p->s + p->i, w, k)) return json_fail(p, "invalid literal");
    p->i += k;
    return true;
}

static i32 json_hex4(JsonP *p) {
    if (p->n - p->i < 4) return -1;
    i32 v = 0;
    for (int k = 0; k < 4; k++) {
        u8 c = p->s[p->i + k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    p->i += 4;
    return v;
}

static u32 json_utf8_put(u8 *o, u32 cp) {
    if (cp < 0x80) { o[0] = (u8)cp; return 1; }
    if (cp < 0x800) { o[0] = (u8)(0xc0 | cp >> 6); o[1] = (u8)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) { o[0] = (u8)(0xe0 | cp >> 12); o[1] = (u8)(0x80 | ((cp >> 6) & 0x3f)); o[2] = (u8)(0x80 | (cp & 0x3f)); return 3; }
    o[0] = (u8)(0xf0 | cp >> 18); o[1] = (u8)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (u8)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (u8)(0x80 | (cp & 0x3f));
    return 4;
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid (overlongs, surrogates, > U+10FFFF). */
static u32 json_utf8_len(const u8 *s, u64 n) {
    u8 c = s[0];
    if (c < 0x80) return 1;
    u32 k; u32 cp;
    if (c >= 0xc2 && c <= 0xdf) { k = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { k = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { k = 4; cp = c & 0x07; }
    else return 0;
    if (n < k) return 0;
    for (u32 j = 1; j < k; j++) {
        if ((s[j] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[j] & 0x3f);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return k;
}

/* p->i at the opening quote. Decodes into the arena. */
static bool json_string(JsonP *p, const char **out, u32 *out_len) {
    p->i++;
    u64 start = p->i, end = start;
    while (end < p->n && p->s[end] != '"') end += (p->s[end] == '\\' && end + 1 < p->n) ? 2 : 1;
    if (end >= p->n) return json_fail(p, "unterminated string");
    if (end - start > 0x3fffffff) return json_fail(p, "string too long");
    u8 *o = (u8 *)json_alloc(p, 3 * (end - start) + 1, 1);   /* worst case: each byte -> U+FFFD */
    if (!o) return false;
    u32 m = 0;
    while (p->i < end) {
        u8 c = p->s[p->i];
        if (c < 0x20) return json_fail(p, "control character in string (escape it)");
        if (c == '\\') {
            u8 e = p->s[p->i + 1];
            p->i += 2;
            switch (e) {
            case '"': o[m++] = '"'; break;   case '\\': o[m++] = '\\'; break;
            case '/': o[m++] = '/'; break;   case 'b': o[m++] = '\b'; break;
            case 'f': o[m++] = '\f'; break;  case 'n': o[m++] = '\n'; break;
            case 'r': o[m++] = '\r'; break;  case 't': o[m++] = '\t'; break;
            case 'u': {
                i32 u = json_hex4(p);
                if (u < 0) return json_fail(p, "bad \\u escape (want 4 hex digits)");
                if (u >= 0xdc00 && u <= 0xdfff) return json_fail(p, "lone low surrogate in \\u escape");
                u32 cp = (u32)u;
                if (u >= 0xd800 && u <= 0xdbff) {
                    if (end - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') return json_fail(p, "high surrogate without a low surrogate");
                    p->i += 2;
                    i32 lo = json_hex4(p);
                    if (lo < 0xdc00 || lo > 0xdfff) return json_fail(p, "high surrogate without a low surrogate");
                    cp = 0x10000 + (((u32)u - 0xd800) << 10) + ((u32)lo - 0xdc00);
                }
                m += json_utf8_put(o + m, cp);
                break;
            }
            default: p->i -= 1; return json_fail(p, "invalid escape");
            }
            continue;
        }
        u32 k = json_utf8_len(p->s + p->i, end - p->i);
        if (k == 0) { memcpy(o + m, "\xef\xbf\xbd", 3); m += 3; p->i++; p->doc->n_replaced++; continue; }
        memcpy(o + m, p->s + p->i, k); m += k; p->i += k;
    }
    p->i = end + 1;
    o[m] = 0;
    *out = (const char *)o; *out_len = m;
    return true;
}

static bool json_number(JsonP *p, JsonVal *v) {
    u64 st = p->i;
    const u8 *s = p->s;
    if (p->i < p->n && s[p->i] == '-') p->i++;
    if (p->i >= p->n) return json_fail(p, "bad number");
    if (s[p->i] == '0') p->i++;
    else if (s[p->i] >= '1' && s[p->i] <= '9') while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9') p->i++;
    else return json_fail(p, "bad number");
    if (p->i < p->n && s[p->i] == '.') {
        p->i++;
        if (p->i >= p->n || s[p->i] < '0' || s[p->i] > '9') return json_fail(p, "bad number: digits must follow '.'");
        while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9') p->i++;
    }
    if (p->i < p->n && (s[p->i] == 'e' || s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (s[p->i] == '+' || s[p->i] == '-')) p->i++;
        if (p->i >= p->n || s[p->i] < '0' || s[p->i] > '9') return json_fail(p, "bad number: digits must follow the exponent");
        while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9') p->i++;
    }
    u64 k = p->i - st;
    char *t = (char *)json_alloc(p, k + 1, 1);
    if (!t) return false;
    memcpy(t, s + st, k); t[k] = 0;
    v->type = JSON_NUM; v->str = t; v->len = (u32)k;
    v->num = strtod(t, 0);   /* the grammar is checked above; the C locale is never changed */
    return true;
}

static bool json_value(JsonP *p, JsonVal *v);

static bool json_container(JsonP *p, JsonVal *v, bool obj) {
    if (++p->depth > JSON_MAX_DEPTH) return json_fail(p, "nesting deeper than JSON_MAX_DEPTH");
    v->type = obj ? JSON_OBJ : JSON_ARR;
    p->i++;
    json_ws(p);
    u8 close = obj ? '}' : ']';
    if (p->i < p->n && p->s[p->i] == close) { p->i++; p->depth--; return true; }
    JsonVal **tail = &v->child;
    for (;;) {
        JsonVal *c = (JsonVal *)json_alloc(p, sizeof(JsonVal), _Alignof(JsonVal));
        if (!c) return false;
        memset(c, 0, sizeof *c);
        json_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') return json_fail(p, "expected a member name (string)");
            if (!json_string(p, &c->key, &c->key_len)) return false;
            json_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return json_fail(p, "expected ':'");
            p->i++;
        }
        if (!json_value(p, c)) return false;
        *tail = c; tail = &c->next; v->n++;
        json_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
        if (p->i < p->n && p->s[p->i] == close) { p->i++; p->depth--; return true; }
        return json_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool json_value(JsonP *p, JsonVal *v) {
    json_ws(p);
    if (p->i >= p->n) return json_fail(p, "unexpected end of input");
    switch (p->s[p->i]) {
    case '{': return json_container(p, v, true);
    case '[': return json_container(p, v, false);
    case '"': v->type = JSON_STR; return json_string(p, &v->str, &v->len);
    case 't': v->type = JSON_TRUE; return json_lit(p, "true");
    case 'f': v->type = JSON_FALSE; return json_lit(p, "false");
    case 'n': v->type = JSON_NULL; return json_lit(p, "null");
    default:  return json_number(p, v);
    }
}

bool json_parse(const char *text, u64 len, Arena *a, JsonDoc *doc) {
    memset(doc, 0, sizeof *doc);
    JsonP p = { (const u8 *)text, len, 0, a, doc, 0 };
    JsonVal *root = (JsonVal *)json_alloc(&p, sizeof(JsonVal), _Alignof(JsonVal));
    if (!root) return false;
    memset(root, 0, sizeof *root);
    if (!json_value(&p, root)) return false;
    json_ws(&p);
    if (p.i != p.n) return json_fail(&p, "trailing characters after the value");
    doc->root = root;
    return true;
}

JsonVal *json_get(const JsonVal *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJ) return 0;
    u64 k = strlen(key);
    for (JsonVal *c = obj->child; c; c = c->next)
        if (c->key_len == k && !memcmp(c->key, key, k)) return c;
    return 0;
}

/* ---- writer ------------------------------------------------------------------------------ */
JsonWriter json_writer(char *buf, u64 cap) { JsonWriter w = { buf, cap, 0 }; return w; }

void json_put(JsonWriter *w, const char *s, u64 n) {
    if (w->n < w->cap) memcpy(w->p + w->n, s, MIN(n, w->cap - w->n));
    w->n += n;
}

void json_putf(JsonWriter *w, const char *fmt, ...) {
    char b[512];
    va_list ap; va_start(ap, fmt);
    int k = fmt_vbuf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k > (int)sizeof b - 1) k = (int)sizeof b - 1;
    if (k > 0) json_put(w, b, (u64)k);
}

void json_write_str(JsonWriter *w, const char *str, u64 n) {
    const u8 *s = (const u8 *)str;
    json_put(w, "\"", 1);
    for (u64 i = 0; i < n;) {
        u8 c = s[i];
        if (c == '"') { json_put(w, "\\\"", 2); i++; continue; }
        if (c == '\\') { json_put(w, "\\\\", 2); i++; continue; }
        if (c < 0x20) {
            const char *e = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : 0;
            if (e) json_put(w, e, 2);
            else { char b[8]; fmt_buf(b, sizeof b, "\\u%04x", c); json_put(w, b, 6); }
            i++; continue;
        }
        u32 k = json_utf8_len(s + i, n - i);
        if (k == 0) { json_put(w, "\\ufffd", 6); i++; continue; }
        json_put(w, (const char *)s + i, k); i += k;
    }
    json_put(w, "\"", 1);
}
