/* genmodel.h — `edge gen-model`: a GGUF with random weights and exactly the tensor names, shapes,
   order and per-tensor types that llama.cpp's converter (F16) and llama-quantize (every other
   preset, without an imatrix) produce for a config of config/models.def; and the same directory in
   memory, without data, for memory plans of configs nobody has downloaded (`edge plan --config`).

   Why: benchmarks and plans of the shipped configs without downloading weights, and real shapes
   for the tests.

   Presets (llama-quantize's names; general.file_type): F16 1, BF16 32, Q8_0 7, Q4_0 2, Q4_1 3,
   Q5_0 8, Q5_1 9, Q2_K 10, Q3_K_S 11, Q3_K_M 12, Q3_K_L 13, Q4_K_S 14, Q4_K_M 15, Q5_K_S 16,
   Q5_K_M 17, Q6_K 18, IQ4_NL 25, IQ4_XS 30.
   Rules (llama.cpp src/llama-quant.cpp, llama_tensor_get_type; genmodel.c has them as code):
     1-D tensors F32. F16 / BF16: every 2-D tensor. Quantized presets: the preset's type, except
     the LM head (output.weight, or token_embd.weight when tied): Q6_K (Q8_0 for Q8_0, and Q8_0
     when the row is not whole blocks of the preset's type); attn_v, attn_output and ffn_down by
     the mix (Q2_K, Q3_K_M/L, Q4_K_S/M, Q5_K_M, IQ4_NL/XS), some by layer index (use_more_bits(i, n)
     = i < n/8 || i >= 7n/8 || (i-n/8)%3 == 2) or by n_head/n_head_kv >= 4. A row that is not whole
     blocks falls back: IQ4_XS -> IQ4_NL, Q2_K / Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1,
     Q6_K -> Q8_0, then F16 when 32 does not divide it either; other types cannot fall back (error).
     --token-embedding-type / --output-tensor-type replace token_embd's / output's type (a tied
     embedding takes the output type unless the embedding type is given), as llama-quantize's do.
     Order: F16: the converter's (rope_freqs, token_embd, per layer, output_norm, output); the
     others: llama-quantize's (non-layer tensors by name, then layers in number order, names sorted).

   API:
     gen_type_parse(s, &gt)                             a preset name (any case) -> GenType, no overrides
     gen_tensor_type_parse(s, &type)                    a weight type name (any case) -> GGML_TYPE_*
     gen_ftype_name(ftype), gen_preset_list(buf, n)     a preset's name; every preset's, for messages
     gen_tensors(row, n_layer, &gt, arena, &list, &n, notes, err)   the directory, types chosen
     gen_header(&w, row, n_layer, &gt, list, n, err)    metadata + directory into a GgufWriter
     gen_model_write(path, row, n_layer, &gt, seed, err)              the whole file, streamed
     gen_model_dir(&m, row, n_layer, &gt, arena, err)   a Model whose tensors have shapes and types, no data

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

/* What llama-quantize is asked for: a preset and its two type overrides. */
typedef struct GenType {
    u32 ftype;      /* general.file_type of a preset (LLAMA_FTYPE_*) */
    u32 tok_embd;   /* --token-embedding-type: GGML_TYPE_*, or GGML_TYPE_COUNT for the mix's */
    u32 output;     /* --output-tensor-type, likewise */
} GenType;

bool gen_type_parse(const char *s, GenType *gt);
bool gen_tensor_type_parse(const char *s, u32 *type);
const char *gen_ftype_name(u32 ftype);
const char *gen_preset_list(char *buf, int n);
bool gen_tensors(const ModelEntry *t, u32 n_layer, const GenType *gt, Arena *a, GenTensor **list, u32 *n, bool notes, Err *e);
bool gen_header(GgufWriter *w, const ModelEntry *t, u32 n_layer, const GenType *gt, const GenTensor *list, u32 n, Err *e);
bool gen_model_write(const char *path, const ModelEntry *t, u32 n_layer, const GenType *gt, u64 seed, Err *e);
bool gen_model_dir(Model *m, const ModelEntry *t, u32 n_layer, const GenType *gt, Arena *a, Err *e);
const ModelEntry *gen_find_config(const char *name);

#endif
