/* gguf.h — GGUF v2/v3 reader over mmap (or over memory: the embedded model, fuzzing).

   The file is untrusted input: every count, length, offset and size is checked
   against the file size with 64-bit overflow-checked arithmetic. A bad file
   gives false and an Err (code EXIT_MODEL) naming the field and the values; it
   never crashes.

   API:
     gguf_open(g, path, arena, err)              mmap + parse a file
     gguf_parse(g, data, size, name, arena, err) parse bytes already in memory
     gguf_close(g)                               unmap (no-op for memory)
     gguf_find_kv(g, key)                        metadata lookup (NULL when absent)
     gguf_get_u32 / _i64 / _f32 / _bool / _str   typed getters: false when absent or of a non-convertible type
     gguf_get_arr(g, key, &type, &n, &data)      raw array (numeric element arrays)
     gguf_get_str_array(g, key, arena, &strs, &n) array of strings
     gguf_find_tensor(g, name)                   tensor directory lookup (NULL when absent)
     gguf_arr_i64 / gguf_arr_f32(kv, i, &v)      one numeric array element (unaligned-safe); gguf_type_size(t)
     gguf_print_value(kv)                        a metadata value's type and value on stdout (edge gguf)
     ggml_type_name / ggml_type_supported / ggml_row_bytes (models/quant.h)     */
#ifndef EDGE_GGUF_H
#define EDGE_GGUF_H

/* ggml tensor types (the ids stored in GGUF). The ones edge reads: models/quant.c's table. */
enum {
    GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q4_1 = 3,
    GGML_TYPE_Q5_0 = 6, GGML_TYPE_Q5_1 = 7, GGML_TYPE_Q8_0 = 8, GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10, GGML_TYPE_Q3_K = 11, GGML_TYPE_Q4_K = 12, GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14, GGML_TYPE_Q8_K = 15, GGML_TYPE_IQ4_NL = 20, GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_BF16 = 30, GGML_TYPE_COUNT = 40,
};

/* GGUF metadata value types. */
enum {
    GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3, GGUF_U32 = 4, GGUF_I32 = 5,
    GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_U64 = 10,
    GGUF_I64 = 11, GGUF_F64 = 12, GGUF_TYPE_COUNT = 13,
};

typedef struct GgufStr { const char *ptr; u64 len; } GgufStr;   /* not NUL-terminated; points into the file */

typedef struct GgufKV {
    GgufStr     key;
    u32         type;       /* GGUF_* */
    u32         arr_type;   /* element type when type == GGUF_ARRAY */
    u64         arr_n;      /* element count when type == GGUF_ARRAY */
    const u8   *val;        /* the value's bytes in the file (for arrays: the first element) */
} GgufKV;

typedef struct GgufTensor {
    GgufStr     name;
    u32         ndim;       /* 1..4 */
    u64         ne[4];      /* GGUF order: ne[0] is the contiguous dimension; unused dims are 1 */
    u32         type;       /* GGML_TYPE_* */
    u64         offset;     /* relative to the data section */
    u64         nelem;      /* product of ne */
    u64         nbytes;     /* exact bytes of the data */
    const u8   *data;       /* points into the file */
} GgufTensor;

typedef struct Gguf {
    const char *path;       /* for messages */
    const u8   *data;       /* the whole file */
    u64         size;
    int         mapped;     /* 1 when gguf_close must munmap */
    u32         version;
    u64         n_kv;
    GgufKV     *kv;         /* (n_kv) */
    u64         n_tensors;
    GgufTensor *tensors;    /* (n_tensors) */
    u64         alignment;  /* general.alignment or 32 */
    u64         data_offset;/* start of the tensor data section */
} Gguf;

bool gguf_open(Gguf *g, const char *path, Arena *a, Err *e);
bool gguf_parse(Gguf *g, const u8 *data, u64 size, const char *name, Arena *a, Err *e);
void gguf_close(Gguf *g);

const GgufKV     *gguf_find_kv(const Gguf *g, const char *key);
const GgufTensor *gguf_find_tensor(const Gguf *g, const char *name);
bool gguf_get_u32(const Gguf *g, const char *key, u32 *out);
bool gguf_get_i64(const Gguf *g, const char *key, i64 *out);
bool gguf_get_f32(const Gguf *g, const char *key, f32 *out);
bool gguf_get_bool(const Gguf *g, const char *key, bool *out);
bool gguf_get_str(const Gguf *g, const char *key, GgufStr *out);
bool gguf_get_arr(const Gguf *g, const char *key, u32 *elem_type, u64 *n, const u8 **data);
bool gguf_get_str_array(const Gguf *g, const char *key, Arena *a, GgufStr **out, u64 *n);
bool gguf_str_eq(GgufStr s, const char *cstr);
/* Additions: one numeric array element by index (any integer type that fits / f32 or f64),
   and the byte size of a scalar metadata type (0 for string and array). */
bool gguf_arr_i64(const GgufKV *kv, u64 i, i64 *v);
bool gguf_arr_f32(const GgufKV *kv, u64 i, f32 *v);
u32  gguf_type_size(u32 t);
void gguf_print_value(const GgufKV *kv);

#endif
