/* gguf_write.c — implementation of gguf_write.h. Little-endian, as GGUF is (every edge target is). */

void gguf_w_raw(GgufWriter *w, const void *d, u64 n) {
    if (w->n + n > w->cap) {
        u64 cap = MAX(w->cap * 2, w->n + n + 4096);
        u8 *p = realloc(w->p, cap);
        if (!p) die(EXIT_USAGE, "gguf writer: out of memory growing the header to %llu bytes", (unsigned long long)cap);
        w->p = p; w->cap = cap;
    }
    memcpy(w->p + w->n, d, n);
    w->n += n;
}

static void gguf_w_u64v(GgufWriter *w, u64 v) { gguf_w_raw(w, &v, 8); }
static void gguf_w_u32v(GgufWriter *w, u32 v) { gguf_w_raw(w, &v, 4); }

void gguf_w_raw_str(GgufWriter *w, const char *s, u64 len) { gguf_w_u64v(w, len); gguf_w_raw(w, s, len); }

void gguf_w_init(GgufWriter *w) {
    memset(w, 0, sizeof *w);
    w->align = 32;
    gguf_w_raw(w, "GGUF", 4);
    gguf_w_u32v(w, 3);
    gguf_w_u64v(w, 0);      /* n_tensors, patched by gguf_w_finish */
    gguf_w_u64v(w, 0);      /* n_kv */
}

void gguf_w_free(GgufWriter *w) { free(w->p); memset(w, 0, sizeof *w); }

static void gguf_w_key(GgufWriter *w, const char *key, u32 type) {
    if (w->in_tensors) die(EXIT_USAGE, "gguf writer: metadata key '%s' after the first tensor", key);
    gguf_w_raw_str(w, key, strlen(key));
    gguf_w_u32v(w, type);
    w->n_kv++;
}

void gguf_w_u32(GgufWriter *w, const char *key, u32 v) { gguf_w_key(w, key, GGUF_U32); gguf_w_u32v(w, v); }
void gguf_w_f32(GgufWriter *w, const char *key, f32 v) { gguf_w_key(w, key, GGUF_F32); gguf_w_raw(w, &v, 4); }
void gguf_w_bool(GgufWriter *w, const char *key, bool v) { u8 b = v; gguf_w_key(w, key, GGUF_BOOL); gguf_w_raw(w, &b, 1); }
void gguf_w_str(GgufWriter *w, const char *key, const char *s) { gguf_w_key(w, key, GGUF_STRING); gguf_w_raw_str(w, s, strlen(s)); }

void gguf_w_arr(GgufWriter *w, const char *key, u32 elem_type, u64 n) {
    gguf_w_key(w, key, GGUF_ARRAY);
    gguf_w_u32v(w, elem_type);
    gguf_w_u64v(w, n);
}

bool gguf_w_tensor(GgufWriter *w, const char *name, u32 ndim, const u64 *ne, u32 type, u64 *nbytes) {
    w->in_tensors = true;
    u64 nelem = 1, bytes, padded;
    for (u32 i = 0; i < ndim; i++) if (!mul_u64(nelem, ne[i], &nelem)) return false;
    if (!ggml_row_bytes(type, ne[0], &bytes) || !mul_u64(bytes, nelem / ne[0], &bytes)) return false;
    if (!add_u64(bytes, w->align - 1, &padded) || !add_u64(w->data_bytes, padded / w->align * w->align, &padded)) return false;
    gguf_w_raw_str(w, name, strlen(name));
    gguf_w_u32v(w, ndim);
    for (u32 i = 0; i < ndim; i++) gguf_w_u64v(w, ne[i]);
    gguf_w_u32v(w, type);
    gguf_w_u64v(w, w->data_bytes);
    w->data_bytes = padded;
    w->n_tensors++;
    if (nbytes) *nbytes = bytes;
    return true;
}

void gguf_w_finish(GgufWriter *w) {
    memcpy(w->p + 8, &w->n_tensors, 8);
    memcpy(w->p + 16, &w->n_kv, 8);
    static const u8 zeros[64];
    u64 pad = align_up(w->n, w->align) - w->n;
    gguf_w_raw(w, zeros, pad);
}
