/* gguf_write.h — a GGUF v3 writer: metadata and the tensor directory built in memory, then
   written in one piece; the tensor data is streamed after it by the caller, tensor by tensor,
   in directory order (each tensor padded to the alignment, as ggml does).

   Why: `edge gen-model` writes multi-GiB files with bounded memory, and tests build
   metadata-only files in memory (gguf_w_finish + gguf_parse).

   API:
     gguf_w_init(&w)                              header placeholders (magic, version 3, counts)
     gguf_w_u32 / _f32 / _bool / _str(&w, key, v) one metadata entry
     gguf_w_arr(&w, key, elem_type, n)            an array entry's key, types and count; the caller
       then appends the n elements with gguf_w_raw / gguf_w_raw_str
     gguf_w_tensor(&w, name, ndim, ne, type)      one directory entry (after every metadata entry);
                                                  returns false if the byte size overflows or is not whole blocks
     gguf_w_finish(&w)                            patch the counts, pad to the alignment: w.p[0..w.n) is the header,
                                                  w.data_bytes the data section that must follow
     gguf_w_free(&w)                                                                                   */
#ifndef EDGE_GGUF_WRITE_H
#define EDGE_GGUF_WRITE_H

typedef struct GgufWriter {
    u8  *p;             /* (cap) the header being built (malloc'd, grows) */
    u64  n, cap;
    u64  n_kv, n_tensors;
    u64  data_bytes;    /* data section size so far (each tensor padded to align) */
    u32  align;         /* 32: GGUF's default (no general.alignment key written) */
    bool in_tensors;    /* a tensor was added: no more metadata */
} GgufWriter;

void gguf_w_init(GgufWriter *w);
void gguf_w_free(GgufWriter *w);
void gguf_w_raw(GgufWriter *w, const void *d, u64 n);
void gguf_w_raw_str(GgufWriter *w, const char *s, u64 len);
void gguf_w_u32(GgufWriter *w, const char *key, u32 v);
void gguf_w_f32(GgufWriter *w, const char *key, f32 v);
void gguf_w_bool(GgufWriter *w, const char *key, bool v);
void gguf_w_str(GgufWriter *w, const char *key, const char *s);
void gguf_w_arr(GgufWriter *w, const char *key, u32 elem_type, u64 n);
bool gguf_w_tensor(GgufWriter *w, const char *name, u32 ndim, const u64 *ne, u32 type, u64 *nbytes);
void gguf_w_finish(GgufWriter *w);

#endif
