/* model.h — the supported model configs (config/models.def), matching a GGUF against them,
   and the weight tensors of a model looked up by name with every shape checked.

   Why: edge runs a short list of known models; a file that is not one of them is refused
   with a message naming the hyperparameter that differs (or, with the developer option
   --allow-unlisted, taken as it is). Every later stage (reference, GPU plans) reads only
   ModelConfig and ModelWeights, never the GGUF keys.

   API:
     model_table[MODEL_COUNT]                          the rows of config/models.def
     model_config_from_gguf(g, allow_unlisted, &cfg, err)  read + match the hyperparameters
     model_weights_load(&w, &cfg, g, arena, err)       find every tensor by name, check shapes and types (matrices: any
                                                       type with kernels; norms, biases, rope_freqs: F32)
     model_open(&m, path, allow_unlisted, arena, err)  all three (path NULL: the embedded stories260K)
     model_close(&m)
     model_layer_is_swa(cfg, il) / model_layer_rope(cfg, il, &base, &freq_scale)
     model_embedded(&data, &size)                      the stories260K.gguf linked into the binary
     model_arch_name(arch)                             "llama", "qwen2", "gemma2", "gemma3", "qwen3"   */
#ifndef EDGE_MODEL_H
#define EDGE_MODEL_H

typedef enum ModelArch { ARCH_LLAMA, ARCH_QWEN2, ARCH_GEMMA2, ARCH_GEMMA3, ARCH_QWEN3, ARCH_COUNT } ModelArch;

typedef enum ModelId {
#define MODEL_ROW(id, ...) MODEL_##id,
#include "config/models.def"
    MODEL_COUNT,
    MODEL_UNLISTED = MODEL_COUNT,   /* loaded with --allow-unlisted, hyperparameters from the file */
} ModelId;

/* One row of config/models.def. */
typedef struct ModelEntry {
    const char *name;
    ModelArch   arch;
    u32 n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
    f32 rope_base, rope_base_swa;
    u32 rope_dim;
    f32 eps;
    u32 swa_window;
    f32 attn_softcap, final_softcap;
    TokKind     tok;
    ChatFamily  chat;
    const char *kernel;             /* kernel path family: "llama", "qwen2", "gemma2", "gemma3", "qwen3" */
    u32 ctx;                        /* context limit, tokens */
    bool tied;                      /* published tie_word_embeddings: no output.weight (gen-model writes none) */
    f32 rope_factor;                /* RoPE scaling factor of the global layers (1: none): gemma3 linear
                                       (rope.scaling.*, checked); llama rows: the llama3 rope_freqs factor (gen-model) */
} ModelEntry;

extern const ModelEntry model_table[MODEL_COUNT];

/* Everything the forward pass needs to know about a model, from the table row (or the file). */
typedef struct ModelConfig {
    ModelId     id;
    const char *name;
    ModelArch   arch;
    u32 n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
    u32 rope_dim;                   /* rotated dims per head (<= head_dim) */
    u32 n_ctx;                      /* context limit, tokens */
    f32 eps;                        /* RMSNorm epsilon */
    bool rope_neox;                 /* rotate (x[i], x[i+d/2]) instead of (x[2i], x[2i+1]) */
    bool qkv_bias;                  /* attn_{q,k,v}.bias added before RoPE (qwen2) */
    bool qk_norm;                   /* per-head RMSNorm of q and k before RoPE (gemma3, qwen3) */
    bool post_norms;                /* post_attention_norm and post_ffw_norm (gemma2/3) */
    bool tied_output;               /* no output.weight: the LM head is token_embd */
    bool gelu;                      /* GELU(tanh)-gated FFN; else SiLU-gated */
    f32 embd_scale;                 /* x = E[tok] * embd_scale (sqrt(n_embd) for gemma, else 1) */
    f32 attn_scale;                 /* q *= attn_scale before the dot products */
    f32 attn_softcap;               /* s = c*tanh(s/c) on attention scores; 0: none */
    f32 final_softcap;              /* same on the logits; 0: none */
    u32 swa_period;                 /* layer il slides iff swa_period && il % swa_period < swa_period-1 */
    u32 swa_window;                 /* a sliding query at q sees keys k with 0 <= q-k < swa_window */
    f32 rope_base;                  /* global (non-sliding) layers */
    f32 rope_base_swa;              /* sliding layers when rope_swa_own_base (gemma3), else rope_base */
    bool rope_swa_own_base;
    f32 freq_scale;                 /* linear RoPE scaling (1/factor); gemma3: global layers only */
    TokKind     tok;
    ChatFamily  chat;
    const char *kernel;
} ModelConfig;

/* Weight tensors: pointers into the GGUF directory (data stays in the file). Shapes in GGUF
   order [ne0 = input dim, ne1 = output rows]; in comments as (rows, cols) = (ne1, ne0). */
typedef struct ModelLayer {
    const GgufTensor *attn_norm;    /* (n_embd) */
    const GgufTensor *wq;           /* (n_head*head_dim, n_embd) */
    const GgufTensor *wk;           /* (n_head_kv*head_dim, n_embd) */
    const GgufTensor *wv;           /* (n_head_kv*head_dim, n_embd) */
    const GgufTensor *bq;           /* (n_head*head_dim)    qkv_bias only */
    const GgufTensor *bk;           /* (n_head_kv*head_dim) qkv_bias only */
    const GgufTensor *bv;           /* (n_head_kv*head_dim) qkv_bias only */
    const GgufTensor *q_norm;       /* (head_dim) qk_norm only */
    const GgufTensor *k_norm;       /* (head_dim) qk_norm only */
    const GgufTensor *wo;           /* (n_embd, n_head*head_dim) */
    const GgufTensor *post_attn_norm; /* (n_embd) post_norms only */
    const GgufTensor *ffn_norm;     /* (n_embd) */
    const GgufTensor *w_gate;       /* (n_ff, n_embd) */
    const GgufTensor *w_up;         /* (n_ff, n_embd) */
    const GgufTensor *w_down;       /* (n_embd, n_ff) */
    const GgufTensor *post_ffn_norm; /* (n_embd) post_norms only */
} ModelLayer;

typedef struct ModelWeights {
    const GgufTensor *tok_embd;     /* (n_vocab, n_embd) */
    const GgufTensor *output_norm;  /* (n_embd) */
    const GgufTensor *output;       /* (n_vocab, n_embd); == tok_embd when tied */
    const GgufTensor *rope_freqs;   /* (rope_dim/2) llama3 frequency factors, or NULL */
    ModelLayer       *layers;       /* (n_layer) */
} ModelWeights;

typedef struct Model {
    Gguf         gguf;
    ModelConfig  cfg;
    ModelWeights w;
} Model;

const char *model_arch_name(ModelArch a);
bool model_config_from_gguf(const Gguf *g, bool allow_unlisted, ModelConfig *cfg, Err *e);
bool model_weights_load(ModelWeights *w, const ModelConfig *cfg, const Gguf *g, Arena *a, Err *e);
bool model_open(Model *m, const char *path, bool allow_unlisted, Arena *a, Err *e);
void model_close(Model *m);
bool model_layer_is_swa(const ModelConfig *cfg, u32 il);
void model_layer_rope(const ModelConfig *cfg, u32 il, f32 *base, f32 *freq_scale);
void model_embedded(const u8 **data, u64 *size);

#endif
