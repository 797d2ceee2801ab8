/* reference.h — the scalar CPU forward pass for llama, qwen2, qwen3, gemma2 and gemma3: the oracle every
   GPU kernel is checked against (fixtures README, "Forward-pass rules").

   One token at a time with a KV cache: after ref_step(s, tok) s->logits holds the prediction for
   the next position. Activations f32, weights dequantized row by row as they are used
   (dequant_row), dot products, norms and softmax accumulated in f64.

   API:
     ref_state_bytes(cfg, n_ctx, &bytes)   arena bytes ref_init needs (checked 64-bit arithmetic)
     ref_init(&s, model, n_ctx, arena, err) allocate the state and the KV cache for n_ctx positions
     ref_reset(&s)                          forget the sequence (n_past = 0)
     ref_step(&s, token, err)               evaluate one token at position n_past -> s->logits
     ref_argmax(logits, n)                  greedy pick: the largest, the lowest id on ties
     ref_gelu_tanh(x) / ref_softcap(x, c)   the exact formulas (for tests)            */
#ifndef EDGE_REFERENCE_H
#define EDGE_REFERENCE_H

typedef struct RefState {
    const Model *m;
    u32  n_ctx;         /* KV cache capacity, positions */
    u32  n_past;        /* positions already in the cache */
    /* activations of the current token */
    f32 *x;             /* (n_embd) residual stream */
    f32 *h;             /* (n_embd) normed input of a block */
    f32 *q;             /* (n_head*head_dim) */
    f32 *k;             /* (n_head_kv*head_dim) */
    f32 *v;             /* (n_head_kv*head_dim) */
    f32 *att;           /* (n_head*head_dim) attention output, heads concatenated */
    f32 *o;             /* (n_embd) block output before the residual add */
    f32 *gate;          /* (n_ff) */
    f32 *up;            /* (n_ff) */
    f32 *logits;        /* (n_vocab) */
    f64 *scores;        /* (n_ctx) one head's attention scores */
    f32 *row;           /* (max row length) one dequantized weight row */
    f32 *vec;           /* (max vector length) one dequantized 1-D weight (norm, bias) */
    f32 *rope_ff;       /* (rope_dim/2) RoPE frequency factors (1 when the model has none) */
    /* the KV cache */
    f32 *k_cache;       /* (n_layer, n_ctx, n_head_kv*head_dim) after q/k norm and RoPE */
    f32 *v_cache;       /* (n_layer, n_ctx, n_head_kv*head_dim) */
} RefState;

bool ref_state_bytes(const ModelConfig *cfg, u32 n_ctx, u64 *bytes);
bool ref_init(RefState *s, const Model *m, u32 n_ctx, Arena *a, Err *e);
void ref_reset(RefState *s);
bool ref_step(RefState *s, i32 token, Err *e);
u32  ref_argmax(const f32 *logits, u32 n);
f64  ref_gelu_tanh(f64 x);
f64  ref_softcap(f64 x, f64 cap);

#endif
