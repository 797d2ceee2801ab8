/* models/gguf.c — GGUF v2/v3 reader over mmap or memory.

   Why: a model file is untrusted input. Every count, length, offset and size is
   checked against the file size with overflow-checked 64-bit arithmetic before it
   is used; a bad file gives false and an Err (code EXIT_MODEL) whose message names
   the file, the field, its offset and the values. Nothing is allocated from an
   unchecked count: the body is walked once to validate it, then once more to fill
   arrays whose size is then known to be backed by file bytes.

   Layout (little-endian): "GGUF" u32 version u64 n_tensors u64 n_kv,
   n_kv x (string key, u32 type, value), n_tensors x (string name, u32 n_dims,
   u64 ne[n_dims], u32 type, u64 offset), padding to general.alignment (default 32),
   tensor data. A string is u64 length + bytes; an array is u32 elem type, u64 n, elems.

   API:
     gguf_open(g, path, arena, err)               mmap (read-only) + gguf_parse
     gguf_parse(g, data, size, name, arena, err)  parse bytes already in memory
     gguf_close(g)                                munmap when mapped
     gguf_find_kv / gguf_find_tensor              lookups by name (NULL when absent)
     gguf_get_u32 / _i64 / _f32 / _bool / _str    typed getters (ints convert when the value fits)
     gguf_get_arr / gguf_get_str_array            arrays (numeric raw bytes / strings)
     gguf_arr_i64(kv, i, &v) / gguf_arr_f32(kv, i, &v)   one numeric array element (unaligned-safe)
     gguf_str_eq(s, cstr)                         compare a file string with a C string
     gguf_type_size(t)                            bytes of a scalar metadata type (0 for string/array)
     gguf_print_value(kv)                         a metadata value as `edge gguf FILE` prints it (cli/gguf.c) */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>

#define GGUF_MAGIC          0x46554747u     /* "GGUF" little-endian */
#define GGUF_DEFAULT_ALIGN  32
#define GGUF_MIN_KV_BYTES   13  /* key length (8) + type (4) + a one-byte value */
#define GGUF_MIN_TI_BYTES   32  /* name length (8) + n_dims (4) + one dim (8) + type (4) + offset (8) */

typedef unsigned long long ull;

static const char *const gguf_type_names[GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};

u32 gguf_type_size(u32 t) {
    static const u8 sz[GGUF_TYPE_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    return t < GGUF_TYPE_COUNT ? sz[t] : 0;
}

static const char *gguf_type_name(u32 t) { return t < GGUF_TYPE_COUNT ? gguf_type_names[t] : "?"; }

/* ---- cursor over untrusted bytes ------------------------------------------------- */
typedef struct GgufCur {
    const u8   *p;
    u64         size, pos;
    const char *name;
    const char *section;    /* "header", "metadata", "tensor directory": for messages */
    Err        *e;
} GgufCur;

static u16 gguf_u16(const u8 *p) { return (u16)(p[0] | (p[1] << 8)); }
static u32 gguf_u32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }
static u64 gguf_u64(const u8 *p) { return (u64)gguf_u32(p) | (u64)gguf_u32(p + 4) << 32; }

/* Needs n more bytes at the cursor for `what`; an error naming the field otherwise. */
static bool gguf_need(GgufCur *c, u64 n, const char *what) {
    if (n > c->size - c->pos)
        return err_set(c->e, EXIT_MODEL, "%s: %s: file truncated: %s at offset %llu needs %llu bytes, only %llu left (file is %llu bytes)",
                       c->name, c->section, what, (ull)c->pos, (ull)n, (ull)(c->size - c->pos), (ull)c->size);
    return true;
}

static bool gguf_rd_u32(GgufCur *c, const char *what, u32 *v) {
    if (!gguf_need(c, 4, what)) return false;
    *v = gguf_u32(c->p + c->pos); c->pos += 4;
    return true;
}

static bool gguf_rd_u64(GgufCur *c, const char *what, u64 *v) {
    if (!gguf_need(c, 8, what)) return false;
    *v = gguf_u64(c->p + c->pos); c->pos += 8;
    return true;
}

static bool gguf_rd_str(GgufCur *c, const char *what, GgufStr *s) {
    u64 at = c->pos, left = c->size - c->pos, n;
    if (left >= 8 && (n = gguf_u64(c->p + at)) <= left - 8) {     /* fast path: the message is formatted only on errors */
        s->ptr = (const char *)c->p + at + 8; s->len = n;
        c->pos = at + 8 + n;
        return true;
    }
    char w[160];
    fmt_buf(w, sizeof w, "%s length", what);
    if (!gguf_rd_u64(c, w, &n)) return false;
    if (n > c->size - c->pos)
        return err_set(c->e, EXIT_MODEL, "%s: %s: %s %llu at offset %llu exceeds the %llu bytes left in the file (file is %llu bytes)",
                       c->name, c->section, w, (ull)n, (ull)at, (ull)(c->size - c->pos), (ull)c->size);
    s->ptr = (const char *)c->p + c->pos; s->len = n;
    c->pos += n;
    return true;
}

/* Skips one value of scalar or string type `t` (arrays are handled by the caller). */
static bool gguf_skip_value(GgufCur *c, u32 t, const char *what) {
    if (t == GGUF_STRING) { GgufStr s; return gguf_rd_str(c, what, &s); }
    if (!gguf_need(c, gguf_type_size(t), what)) return false;
    c->pos += gguf_type_size(t);
    return true;
}

/* ---- name hashing (duplicate keys and tensor names, lookups) -------------------- */
static u64 gguf_hash(const char *p, u64 n) {
    u64 h = 1469598103934665603ull;
    for (u64 i = 0; i < n; i++) { h ^= (u8)p[i]; h *= 1099511628211ull; }
    return h;
}

bool gguf_str_eq(GgufStr s, const char *cstr) {
    u64 n = strlen(cstr);
    return s.len == n && memcmp(s.ptr, cstr, n) == 0;
}

static bool gguf_str_same(GgufStr a, GgufStr b) { return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0; }

/* Inserts names[i] into an open-addressing table of 2^k slots (value i+1); returns the
   index of an equal name already there, or -1. */
static i64 gguf_table_insert(u32 *tab, u64 mask, const GgufStr *names, u64 stride, u32 i) {
    GgufStr s = *(const GgufStr *)((const u8 *)names + stride * i);
    for (u64 h = gguf_hash(s.ptr, s.len) & mask;; h = (h + 1) & mask) {
        if (!tab[h]) { tab[h] = i + 1; return -1; }
        GgufStr o = *(const GgufStr *)((const u8 *)names + stride * (tab[h] - 1));
        if (gguf_str_same(o, s)) return tab[h] - 1;
    }
}

/* ---- parsing -------------------------------------------------------------------- */
/* Pushes from the caller's arena, but reports a too-small arena as an error instead of dying. */
static void *gguf_push(Arena *a, u64 elem, u64 n, const char *name, const char *what, Err *e) {
    u64 bytes, start = align_up(a->pos, 8), end;
    if (!mul_u64(elem, n, &bytes) || !add_u64(start, bytes, &end) || end > a->cap) {
        err_set(e, EXIT_MODEL, "%s: %s needs %llu x %llu bytes, more than arena '%s' has left (%llu of %llu used)",
                name, what, (ull)n, (ull)elem, a->name, (ull)a->pos, (ull)a->cap);
        return 0;
    }
    return arena_push(a, bytes, 8);
}

/* One metadata entry; fills kv when non-NULL. */
static bool gguf_parse_kv(GgufCur *c, u64 i, GgufKV *kv) {
    char w[160];
    GgufKV k = { 0 };
    fmt_buf(w, sizeof w, "key of metadata entry %llu", (ull)i);
    if (!gguf_rd_str(c, w, &k.key)) return false;
    int kl = (int)MIN(k.key.len, 100);
    u64 at = c->pos;
    fmt_buf(w, sizeof w, "value type of '%.*s'", kl, k.key.ptr);
    if (!gguf_rd_u32(c, w, &k.type)) return false;
    if (k.type >= GGUF_TYPE_COUNT)
        return err_set(c->e, EXIT_MODEL, "%s: metadata '%.*s': value type %u at offset %llu is not a GGUF type (0..%u)",
                       c->name, kl, k.key.ptr, k.type, (ull)at, GGUF_TYPE_COUNT - 1);
    fmt_buf(w, sizeof w, "value of '%.*s'", kl, k.key.ptr);
    if (k.type != GGUF_ARRAY) {
        k.val = c->p + c->pos;
        if (!gguf_skip_value(c, k.type, w)) return false;
    } else {
        at = c->pos;
        fmt_buf(w, sizeof w, "array element type of '%.*s'", kl, k.key.ptr);
        if (!gguf_rd_u32(c, w, &k.arr_type)) return false;
        if (k.arr_type >= GGUF_TYPE_COUNT || k.arr_type == GGUF_ARRAY)
            return err_set(c->e, EXIT_MODEL, "%s: metadata '%.*s': array element type %u at offset %llu is not allowed (%s)",
                           c->name, kl, k.key.ptr, k.arr_type, (ull)at,
                           k.arr_type == GGUF_ARRAY ? "nested arrays are not supported" : "not a GGUF type");
        at = c->pos;
        fmt_buf(w, sizeof w, "array length of '%.*s'", kl, k.key.ptr);
        if (!gguf_rd_u64(c, w, &k.arr_n)) return false;
        u64 esz = k.arr_type == GGUF_STRING ? 8 : gguf_type_size(k.arr_type), need;
        if (!mul_u64(k.arr_n, esz, &need) || need > c->size - c->pos)
            return err_set(c->e, EXIT_MODEL, "%s: metadata '%.*s': array length %llu at offset %llu (%s elements) exceeds the %llu bytes left in the file (file is %llu bytes)",
                           c->name, kl, k.key.ptr, (ull)k.arr_n, (ull)at, gguf_type_name(k.arr_type),
                           (ull)(c->size - c->pos), (ull)c->size);
        k.val = c->p + c->pos;
        if (k.arr_type != GGUF_STRING) c->pos += need;
        else for (u64 j = 0; j < k.arr_n; j++) {
            u64 left = c->size - c->pos, n;
            if (left >= 8 && (n = gguf_u64(c->p + c->pos)) <= left - 8) { c->pos += 8 + n; continue; }   /* fast path */
            fmt_buf(w, sizeof w, "string %llu of array '%.*s'", (ull)j, kl, k.key.ptr);
            GgufStr s;
            if (!gguf_rd_str(c, w, &s)) return false;
        }
    }
    if (kv) *kv = k;
    return true;
}

/* One tensor info; fills t when non-NULL (shape, type and size checks happen here). */
static bool gguf_parse_tensor_info(GgufCur *c, u64 i, GgufTensor *t) {
    char w[200];
    GgufTensor x = { 0 };
    fmt_buf(w, sizeof w, "name of tensor %llu", (ull)i);
    if (!gguf_rd_str(c, w, &x.name)) return false;
    int nl = (int)MIN(x.name.len, 100);
    u64 at = c->pos;
    fmt_buf(w, sizeof w, "n_dims of tensor '%.*s'", nl, x.name.ptr);
    if (!gguf_rd_u32(c, w, &x.ndim)) return false;
    if (x.ndim < 1 || x.ndim > 4)
        return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': n_dims %u at offset %llu is not in 1..4",
                       c->name, nl, x.name.ptr, x.ndim, (ull)at);
    x.nelem = 1;
    for (u32 d = 0; d < 4; d++) x.ne[d] = 1;
    for (u32 d = 0; d < x.ndim; d++) {
        at = c->pos;
        fmt_buf(w, sizeof w, "dimension %u of tensor '%.*s'", d, nl, x.name.ptr);
        if (!gguf_rd_u64(c, w, &x.ne[d])) return false;
        if (x.ne[d] == 0 || x.ne[d] > (u64)INT64_MAX)
            return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': dimension %u (ne[%u]) = %llu at offset %llu is not in 1..2^63-1",
                           c->name, nl, x.name.ptr, d, d, (ull)x.ne[d], (ull)at);
        if (!mul_u64(x.nelem, x.ne[d], &x.nelem) || x.nelem > (u64)INT64_MAX)
            return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': shape [%llu, %llu, %llu, %llu]: element count (product of ne) overflows 63 bits",
                           c->name, nl, x.name.ptr, (ull)x.ne[0], (ull)x.ne[1], (ull)x.ne[2], (ull)x.ne[3]);
    }
    at = c->pos;
    fmt_buf(w, sizeof w, "type of tensor '%.*s'", nl, x.name.ptr);
    if (!gguf_rd_u32(c, w, &x.type)) return false;
    if (!ggml_type_supported(x.type)) {
        char tn[48], list[160];
        if (strcmp(ggml_type_name(x.type), "?")) fmt_buf(tn, sizeof tn, "%s", ggml_type_name(x.type));
        else fmt_buf(tn, sizeof tn, "id %u (unknown)", x.type);
        return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': type %s is not supported (supported: %s; type field %u at offset %llu)",
                       c->name, nl, x.name.ptr, tn, ggml_supported_list(list, sizeof list), x.type, (ull)at);
    }
    u64 row, rows = x.ne[1] * x.ne[2] * x.ne[3];     /* cannot overflow: nelem did not */
    if (x.ne[0] % ggml_block_elems(x.type) != 0)
        return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': row length ne[0] = %llu is not a multiple of the %s block size %u",
                       c->name, nl, x.name.ptr, (ull)x.ne[0], ggml_type_name(x.type), ggml_block_elems(x.type));
    if (!ggml_row_bytes(x.type, x.ne[0], &row) || !mul_u64(row, rows, &x.nbytes))
        return err_set(c->e, EXIT_MODEL, "%s: tensor '%.*s': byte size of shape [%llu, %llu, %llu, %llu] (%s) overflows 64 bits",
                       c->name, nl, x.name.ptr, (ull)x.ne[0], (ull)x.ne[1], (ull)x.ne[2], (ull)x.ne[3], ggml_type_name(x.type));
    fmt_buf(w, sizeof w, "data offset of tensor '%.*s'", nl, x.name.ptr);
    if (!gguf_rd_u64(c, w, &x.offset)) return false;
    if (t) *t = x;
    return true;
}

/* Walks the metadata and tensor infos; fills g->kv / g->tensors when they are set. */
static bool gguf_parse_body(Gguf *g, GgufCur *c) {
    c->pos = 24;
    c->section = "metadata";
    for (u64 i = 0; i < g->n_kv; i++)
        if (!gguf_parse_kv(c, i, g->kv ? &g->kv[i] : 0)) return false;
    c->section = "tensor directory";
    for (u64 i = 0; i < g->n_tensors; i++)
        if (!gguf_parse_tensor_info(c, i, g->tensors ? &g->tensors[i] : 0)) return false;
    return true;
}

typedef struct GgufSpan { u64 start, end; u32 idx; } GgufSpan;

static int gguf_span_cmp(const void *a, const void *b) {
    const GgufSpan *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The 24-byte header: magic, version, tensor and metadata counts, each count
   bounded by what the rest of the file can hold. */
static bool gguf_parse_header(Gguf *g, GgufCur *c) {
    const char *name = g->path;
    u64 size = g->size;
    Err *e = c->e;
    u32 magic;
    if (!gguf_rd_u32(c, "magic", &magic)) return false;
    if (magic != GGUF_MAGIC)
        return err_set(e, EXIT_MODEL, "%s: bad magic 0x%08x at offset 0 (expected 0x%08x, \"GGUF\"): not a GGUF file",
                       name, magic, GGUF_MAGIC);
    if (!gguf_rd_u32(c, "version", &g->version)) return false;
    if (g->version != 2 && g->version != 3)
        return err_set(e, EXIT_MODEL, "%s: GGUF version %u at offset 4 is not supported (supported: 2, 3)", name, g->version);
    if (!gguf_rd_u64(c, "tensor count", &g->n_tensors)) return false;
    if (!gguf_rd_u64(c, "metadata count (n_kv)", &g->n_kv)) return false;
    u64 room = size - 24;
    if (g->n_tensors > room / GGUF_MIN_TI_BYTES)
        return err_set(e, EXIT_MODEL, "%s: tensor count %llu at offset 8 exceeds what the file can hold (file is %llu bytes; a tensor info takes at least %u)",
                       name, (ull)g->n_tensors, (ull)size, GGUF_MIN_TI_BYTES);
    room -= g->n_tensors * GGUF_MIN_TI_BYTES;
    if (g->n_kv > room / GGUF_MIN_KV_BYTES)
        return err_set(e, EXIT_MODEL, "%s: metadata count (n_kv) %llu at offset 16 exceeds what the file can hold (file is %llu bytes; an entry takes at least %u)",
                       name, (ull)g->n_kv, (ull)size, GGUF_MIN_KV_BYTES);
    if (g->n_kv >= 0x7fffffff || g->n_tensors >= 0x7fffffff)  /* table indices are u32 */
        return err_set(e, EXIT_MODEL, "%s: tensor count %llu or metadata count %llu is too large", name, (ull)g->n_tensors, (ull)g->n_kv);
    return true;
}

/* Duplicate metadata keys and tensor names, through a scratch hash table popped on success
   (on failure the caller pops the arena). */
static bool gguf_check_unique_names(Gguf *g, Arena *a, Err *e) {
    const char *name = g->path;
    u64 tab_n = 16, tab_mark = arena_pos(a);
    while (tab_n < 2 * (g->n_kv + g->n_tensors)) tab_n *= 2;
    u32 *tab = gguf_push(a, sizeof(u32), tab_n, name, "the name table", e);
    if (!tab) return false;
    for (u32 i = 0; i < g->n_kv; i++) {
        i64 d = gguf_table_insert(tab, tab_n - 1, &g->kv[0].key, sizeof(GgufKV), i);
        if (d >= 0)
            return err_set(e, EXIT_MODEL, "%s: duplicate metadata key '%.*s' (entries %lld and %u)", name,
                           (int)MIN(g->kv[i].key.len, 100), g->kv[i].key.ptr, (long long)d, i);
    }
    memset(tab, 0, tab_n * sizeof(u32));
    for (u32 i = 0; i < g->n_tensors; i++) {
        i64 d = gguf_table_insert(tab, tab_n - 1, &g->tensors[0].name, sizeof(GgufTensor), i);
        if (d >= 0)
            return err_set(e, EXIT_MODEL, "%s: duplicate tensor name '%.*s' (tensors %lld and %u)", name,
                           (int)MIN(g->tensors[i].name.len, 100), g->tensors[i].name.ptr, (long long)d, i);
    }
    arena_pop_to(a, tab_mark);
    return true;
}

/* general.alignment and the data section's start, then each tensor's data: aligned and
   inside the file; sets t->data. */
static bool gguf_place_tensor_data(Gguf *g, u64 end_of_infos, Err *e) {
    const char *name = g->path;
    u64 size = g->size;
    const GgufKV *al = gguf_find_kv(g, "general.alignment");
    if (al) {
        u32 v;
        if (al->type != GGUF_U32 || (v = gguf_u32(al->val)) == 0 || (v & (v - 1)) != 0)
            return err_set(e, EXIT_MODEL, "%s: general.alignment must be a u32 power of two (found type %s, value %llu)", name,
                           gguf_type_name(al->type), al->type == GGUF_U32 ? (ull)gguf_u32(al->val) : 0ull);
        g->alignment = v;
    }
    u64 pad = (g->alignment - end_of_infos % g->alignment) % g->alignment;
    g->data_offset = end_of_infos + pad;
    if (g->n_tensors && g->data_offset > size)
        return err_set(e, EXIT_MODEL, "%s: tensor data: file truncated: the data section starts at offset %llu (tensor infos end at %llu, alignment %llu) but the file is %llu bytes",
                       name, (ull)g->data_offset, (ull)end_of_infos, (ull)g->alignment, (ull)size);

    u64 data_room = g->data_offset <= size ? size - g->data_offset : 0;
    for (u64 i = 0; i < g->n_tensors; i++) {
        GgufTensor *t = &g->tensors[i];
        int nl = (int)MIN(t->name.len, 100);
        u64 end;
        if (t->offset % g->alignment != 0)
            return err_set(e, EXIT_MODEL, "%s: tensor '%.*s': data offset %llu is not a multiple of the alignment %llu",
                           name, nl, t->name.ptr, (ull)t->offset, (ull)g->alignment);
        if (!add_u64(t->offset, t->nbytes, &end))
            return err_set(e, EXIT_MODEL, "%s: tensor '%.*s': data offset %llu + size %llu overflows 64 bits (the data section is %llu bytes from file offset %llu; file is %llu bytes)",
                           name, nl, t->name.ptr, (ull)t->offset, (ull)t->nbytes, (ull)data_room, (ull)g->data_offset, (ull)size);
        if (end > data_room)
            return err_set(e, EXIT_MODEL, "%s: tensor '%.*s': data offset %llu + size %llu = %llu exceeds the data section (%llu bytes from file offset %llu; file is %llu bytes): the file is truncated or the offset is wrong",
                           name, nl, t->name.ptr, (ull)t->offset, (ull)t->nbytes, (ull)end, (ull)data_room, (ull)g->data_offset, (ull)size);
        t->data = g->data + g->data_offset + t->offset;
    }
    return true;
}

/* No two tensors' data ranges overlap: sort the spans by start, compare neighbours
   (scratch popped on success; on failure the caller pops the arena). */
static bool gguf_check_overlaps(Gguf *g, Arena *a, Err *e) {
    if (g->n_tensors <= 1) return true;
    u64 m2 = arena_pos(a);
    GgufSpan *sp = gguf_push(a, sizeof(GgufSpan), g->n_tensors, g->path, "the overlap check", e);
    if (!sp) return false;
    for (u32 i = 0; i < g->n_tensors; i++)
        sp[i] = (GgufSpan){ g->tensors[i].offset, g->tensors[i].offset + g->tensors[i].nbytes, i };
    qsort(sp, g->n_tensors, sizeof *sp, gguf_span_cmp);
    for (u64 i = 1; i < g->n_tensors; i++) {
        if (sp[i].start < sp[i - 1].end) {
            const GgufTensor *p = &g->tensors[sp[i - 1].idx], *q = &g->tensors[sp[i].idx];
            return err_set(e, EXIT_MODEL, "%s: tensor '%.*s' (data offset %llu, %llu bytes) overlaps tensor '%.*s' (data offset %llu, %llu bytes)",
                           g->path, (int)MIN(q->name.len, 100), q->name.ptr, (ull)q->offset, (ull)q->nbytes,
                           (int)MIN(p->name.len, 100), p->name.ptr, (ull)p->offset, (ull)p->nbytes);
        }
    }
    arena_pop_to(a, m2);
    return true;
}

/* Header, then key/values and tensor directory (validated, then filled), then the
   checks across entries: unique names, data placement, no overlaps. On failure the
   arena is popped back and g->kv / g->tensors are cleared. */
bool gguf_parse(Gguf *g, const u8 *data, u64 size, const char *name, Arena *a, Err *e) {
    memset(g, 0, sizeof *g);
    g->path = name; g->data = data; g->size = size; g->alignment = GGUF_DEFAULT_ALIGN;
    GgufCur c = { data, size, 0, name, "header", e };
    if (!gguf_parse_header(g, &c)) return false;

    /* pass 1: validate the structure; pass 2: fill arrays now known to be backed by file bytes */
    if (!gguf_parse_body(g, &c)) return false;
    u64 mark = arena_pos(a);
    g->kv = gguf_push(a, sizeof(GgufKV), g->n_kv ? g->n_kv : 1, name, "the metadata table", e);
    g->tensors = g->kv ? gguf_push(a, sizeof(GgufTensor), g->n_tensors ? g->n_tensors : 1, name, "the tensor directory", e) : 0;
    if (g->kv && g->tensors &&
        gguf_parse_body(g, &c) &&     /* cannot fail: same bytes as pass 1 */
        gguf_check_unique_names(g, a, e) &&
        gguf_place_tensor_data(g, c.pos, e) &&
        gguf_check_overlaps(g, a, e))
        return true;
    arena_pop_to(a, mark);
    g->kv = 0; g->tensors = 0;
    return false;
}

bool gguf_open(Gguf *g, const char *path, Arena *a, Err *e) {
    memset(g, 0, sizeof *g);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(e, EXIT_MODEL, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) { int en = errno; close(fd); return err_set(e, EXIT_MODEL, "%s: cannot stat: %s", path, strerror(en)); }
    if (!S_ISREG(st.st_mode)) { close(fd); return err_set(e, EXIT_MODEL, "%s: not a regular file", path); }
    u64 size = (u64)st.st_size;
    if (size < 24) {
        close(fd);
        return err_set(e, EXIT_MODEL, "%s: header: file truncated: a GGUF header needs 24 bytes (magic, version, tensor count, metadata count), the file is %llu bytes",
                       path, (ull)size);
    }
    void *m = mmap(0, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int en = errno;
    close(fd);
    if (m == MAP_FAILED) return err_set(e, EXIT_MODEL, "%s: cannot mmap %llu bytes: %s", path, (ull)size, strerror(en));
    if (!gguf_parse(g, m, size, path, a, e)) { munmap(m, size); memset(g, 0, sizeof *g); return false; }
    g->mapped = 1;
    return true;
}

void gguf_close(Gguf *g) {
    if (g->mapped && g->data) munmap((void *)g->data, g->size);
    memset(g, 0, sizeof *g);
}

/* ---- lookups and getters ---------------------------------------------------------- */
const GgufKV *gguf_find_kv(const Gguf *g, const char *key) {
    if (!g->kv) return 0;
    for (u64 i = 0; i < g->n_kv; i++) if (gguf_str_eq(g->kv[i].key, key)) return &g->kv[i];
    return 0;
}

const GgufTensor *gguf_find_tensor(const Gguf *g, const char *name) {
    if (!g->tensors) return 0;
    for (u64 i = 0; i < g->n_tensors; i++) if (gguf_str_eq(g->tensors[i].name, name)) return &g->tensors[i];
    return 0;
}

/* An integer-typed value at p as i64 (u64 values above INT64_MAX: false). */
static bool gguf_int_at(u32 t, const u8 *p, i64 *v, u64 *uv, bool *is_u64) {
    *is_u64 = false;
    switch (t) {
    case GGUF_U8:  *v = p[0]; break;
    case GGUF_I8:  *v = (i8)p[0]; break;
    case GGUF_U16: *v = gguf_u16(p); break;
    case GGUF_I16: *v = (i16)gguf_u16(p); break;
    case GGUF_U32: *v = gguf_u32(p); break;
    case GGUF_I32: *v = (i32)gguf_u32(p); break;
    case GGUF_I64: *v = (i64)gguf_u64(p); break;
    case GGUF_U64: *uv = gguf_u64(p); *is_u64 = true; *v = *uv > (u64)INT64_MAX ? -1 : (i64)*uv; break;
    default: return false;
    }
    return true;
}

bool gguf_get_u32(const Gguf *g, const char *key, u32 *out) {
    const GgufKV *kv = gguf_find_kv(g, key);
    i64 v; u64 uv; bool isu;
    if (!kv || !gguf_int_at(kv->type, kv->val, &v, &uv, &isu)) return false;
    if (isu) { if (uv > 0xffffffffull) return false; *out = (u32)uv; return true; }
    if (v < 0 || v > 0xffffffffll) return false;
    *out = (u32)v;
    return true;
}

bool gguf_get_i64(const Gguf *g, const char *key, i64 *out) {
    const GgufKV *kv = gguf_find_kv(g, key);
    i64 v; u64 uv; bool isu;
    if (!kv || !gguf_int_at(kv->type, kv->val, &v, &uv, &isu)) return false;
    if (isu && uv > (u64)INT64_MAX) return false;
    *out = v;
    return true;
}

static f64 gguf_f64_at(const u8 *p) { u64 b = gguf_u64(p); f64 d; memcpy(&d, &b, 8); return d; }
static f32 gguf_f32_at(const u8 *p) { u32 b = gguf_u32(p); f32 f; memcpy(&f, &b, 4); return f; }

bool gguf_get_f32(const Gguf *g, const char *key, f32 *out) {
    const GgufKV *kv = gguf_find_kv(g, key);
    if (!kv) return false;
    if (kv->type == GGUF_F32) { *out = gguf_f32_at(kv->val); return true; }
    if (kv->type == GGUF_F64) { *out = (f32)gguf_f64_at(kv->val); return true; }
    return false;
}

bool gguf_get_bool(const Gguf *g, const char *key, bool *out) {
    const GgufKV *kv = gguf_find_kv(g, key);
    if (!kv || kv->type != GGUF_BOOL) return false;
    *out = kv->val[0] != 0;
    return true;
}

bool gguf_get_str(const Gguf *g, const char *key, GgufStr *out) {
    const GgufKV *kv = gguf_find_kv(g, key);
    if (!kv || kv->type != GGUF_STRING) return false;
    out->len = gguf_u64(kv->val);
    out->ptr = (const char *)kv->val + 8;
    return true;
}

bool gguf_get_arr(const Gguf *g, const char *key, u32 *elem_type, u64 *n, const u8 **data) {
    const GgufKV *kv = gguf_find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY || kv->arr_type == GGUF_STRING) return false;
    *elem_type = kv->arr_type; *n = kv->arr_n; *data = kv->val;
    return true;
}

bool gguf_get_str_array(const Gguf *g, const char *key, Arena *a, GgufStr **out, u64 *n) {
    const GgufKV *kv = gguf_find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY || kv->arr_type != GGUF_STRING) return false;
    GgufStr *s = push_array(a, GgufStr, kv->arr_n ? kv->arr_n : 1);   /* n <= file size / 8: validated */
    const u8 *p = kv->val;
    for (u64 i = 0; i < kv->arr_n; i++) {
        s[i].len = gguf_u64(p);
        s[i].ptr = (const char *)p + 8;
        p += 8 + s[i].len;
    }
    *out = s; *n = kv->arr_n;
    return true;
}

bool gguf_arr_i64(const GgufKV *kv, u64 i, i64 *v) {
    u64 uv; bool isu;
    if (kv->type != GGUF_ARRAY || i >= kv->arr_n) return false;
    u32 sz = gguf_type_size(kv->arr_type);
    if (sz == 0 || !gguf_int_at(kv->arr_type, kv->val + i * sz, v, &uv, &isu)) return false;
    return !isu || uv <= (u64)INT64_MAX;
}

bool gguf_arr_f32(const GgufKV *kv, u64 i, f32 *v) {
    if (kv->type != GGUF_ARRAY || i >= kv->arr_n) return false;
    if (kv->arr_type == GGUF_F32) { *v = gguf_f32_at(kv->val + i * 4); return true; }
    if (kv->arr_type == GGUF_F64) { *v = (f32)gguf_f64_at(kv->val + i * 8); return true; }
    return false;
}

/* ---- printing metadata values (edge gguf: cli/gguf.c) ------------------------------- */
static void gguf_print_scalar(u32 t, const u8 *p) {
    i64 v; u64 uv; bool isu;
    if (t == GGUF_F32) out("%g", (f64)gguf_f32_at(p));
    else if (t == GGUF_F64) out("%g", gguf_f64_at(p));
    else if (t == GGUF_BOOL) out("%s", p[0] ? "true" : "false");
    else if (t == GGUF_STRING) {     /* control characters escaped, long strings cut */
        u64 n = gguf_u64(p);
        char buf[512]; u32 k = 0;
        for (u64 i = 0; i < n && i < 120; i++) {
            u8 ch = p[8 + i];
            if (ch == '\n') { buf[k++] = '\\'; buf[k++] = 'n'; }
            else if (ch == '"' || ch == '\\') { buf[k++] = '\\'; buf[k++] = (char)ch; }
            else if (ch < 0x20 || ch == 0x7f) k += (u32)fmt_buf(buf + k, 8, "\\x%02x", ch);
            else buf[k++] = (char)ch;
        }
        out("\"%.*s%s\"", (int)k, buf, n > 120 ? "..." : "");
    } else if (gguf_int_at(t, p, &v, &uv, &isu)) {
        if (isu) out("%llu", (ull)uv); else out("%lld", (long long)v);
    }
}

static const u8 *gguf_print_elem(u32 t, const u8 *p) {
    gguf_print_scalar(t, p);
    return p + (t == GGUF_STRING ? 8 + gguf_u64(p) : gguf_type_size(t));
}

/* A metadata value as `edge gguf` lists it: the type, then the value (strings quoted, control
   characters escaped, cut at 120 bytes); an array as TYPE[n] and its first 8 elements. */
void gguf_print_value(const GgufKV *kv) {
    if (kv->type != GGUF_ARRAY) { out("%-6s ", gguf_type_name(kv->type)); gguf_print_scalar(kv->type, kv->val); return; }
    out("%s[%llu] [", gguf_type_name(kv->arr_type), (ull)kv->arr_n);
    const u8 *p = kv->val;
    for (u64 j = 0; j < kv->arr_n && j < 8; j++) { if (j) out(", "); p = gguf_print_elem(kv->arr_type, p); }
    out("%s]", kv->arr_n > 8 ? ", ..." : "");
}
