/* genmodel.h — `edge gen-model`: a GGUF with random weights and exactly the tensor names, shapes,
   order and per-tensor types that llama.cpp's converter (F16) and llama-quantize (Q8_0, Q4_K_M)
   produce for a config of config/models.def; and the same directory in memory, without data,
   for memory plans of configs nobody has downloaded (`edge plan --config`).

   Why: benchmarks and plans of the shipped configs without downloading weights, and real shapes
   for the tests.

   Rules (llama.cpp, see docs in genmodel.c):
     F16     2-D tensors F16, 1-D F32 (norms, biases, rope_freqs)
     Q8_0    2-D tensors Q8_0
     Q4_K_M  2-D Q4_K; Q6_K for the LM head (output.weight, or token_embd.weight when tied) and for
             attn_v / ffn_down of layer i when use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i-n/8)%3 == 2.
             A row not a multiple of 256 falls back: Q6_K -> Q8_0 (as llama.cpp), Q4_K -> Q8_0 (llama.cpp
             uses Q5_0, which edge does not run; a note on stderr says so).
     Order   F16: the converter's (rope_freqs, token_embd, per layer, output_norm, output); quantized:
             llama-quantize's (non-layer tensors by name, then layers in number order, names sorted).

   API:
     gen_type_parse(s, &ftype)                          "F16" | "Q8_0" | "Q4_K_M" -> general.file_type (1, 7, 15)
     gen_ftype_name(ftype)                              and back
     gen_tensors(row, n_layer, ftype, arena, &list, &n, notes, err)   the directory, types chosen
     gen_header(&w, row, n_layer, ftype, list, n, err)  metadata + directory into a GgufWriter
     gen_model_write(path, row, n_layer, ftype, seed, err)           the whole file, streamed
     gen_model_dir(&m, row, n_layer, ftype, arena, err) a Model whose tensors have shapes and types, no data

   Knobs: GEN_CHUNK_BYTES (bytes of the bounded write buffer).
   Measured on the 2-core build machine (Q4_K_M, default seed): gemma-2-2b-it 1,708,117,440 bytes
   (1.59 GiB) in 11.7 s, llama-3.2-1b-instruct 802,625,248 bytes in 6.0 s, qwen2.5-1.5b-instruct
   983,391,328 bytes in 7.3 s; about 11 MB resident. Generating gemma-2-2b alone (-o /dev/null)
   takes 1.7 s: the rest is the disk. */
#ifndef EDGE_GENMODEL_H
#define EDGE_GENMODEL_H

typedef enum GenKind { GEN_WEIGHT, GEN_NORM, GEN_BIAS, GEN_ROPE_FREQS } GenKind;

typedef struct GenTensor {
    char    name[64];
    u32     ndim;
    u64     ne[2];          /* GGUF order: ne[0] contiguous */
    u32     type;           /* GGML_TYPE_* */
    GenKind kind;
    u64     nbytes;
} GenTensor;

bool gen_type_parse(const char *s, u32 *ftype);
const char *gen_ftype_name(u32 ftype);
bool gen_tensors(const ModelEntry *t, u32 n_layer, u32 ftype, Arena *a, GenTensor **list, u32 *n, bool notes, Err *e);
bool gen_header(GgufWriter *w, const ModelEntry *t, u32 n_layer, u32 ftype, const GenTensor *list, u32 n, Err *e);
bool gen_model_write(const char *path, const ModelEntry *t, u32 n_layer, u32 ftype, u64 seed, Err *e);
bool gen_model_dir(Model *m, const ModelEntry *t, u32 n_layer, u32 ftype, Arena *a, Err *e);
const ModelEntry *gen_find_config(const char *name);

#endif
