/* transformer.h — the forward pass on the GPU (Vulkan), one function per phase,
   parameterized by the ModelConfig's arch flags. The same rules as models/reference.c,
   which it is tested against.

   Memory: xf_init plans every device tensor (weights, KV cache, activations for the
   largest batch, scores scratch, logits) with its exact size, allocates two device
   arenas of exactly the planned bytes, uploads the weights as stored in the GGUF (quantized
   blocks stay quantized), and allocates nothing after that.

   API:
     xf_init(&xf, vk, model, n_ctx, t_max, act, err)  plan, allocate, upload (act: DT_F32 or DT_F16)
     xf_plan(&xf, vk, model, n_ctx, t_max, act, on_tensor, ctx, err)   the plan only (planning arenas, nothing
                                                      allocated or uploaded); every tensor to on_tensor; then xf_free
     xf_free(&xf)
     xf_forward(&xf, tokens, T, p0, logits, ids)      evaluate T tokens at positions p0.. (T <= t_max):
                                                      logits (n_vocab*T floats) and/or ids (argmax per row), either may be NULL
     xf_plan_print(&xf)                               every device buffer and its bytes                */
#ifndef EDGE_TRANSFORMER_H
#define EDGE_TRANSFORMER_H

typedef struct XfLayer {
    Tensor attn_norm;           /* f32 (n_embd) */
    Tensor wq, wk, wv;          /* (n_embd, n_head*hd) / (n_embd, n_head_kv*hd) any weight type */
    Tensor bq, bk, bv;          /* f32 biases (qwen2) */
    Tensor q_norm, k_norm;      /* f32 (head_dim) (gemma3) */
    Tensor wo;                  /* (n_head*hd, n_embd) */
    Tensor post_attn_norm;      /* f32 (n_embd) (gemma2/3) */
    Tensor ffn_norm;            /* f32 (n_embd) */
    Tensor w_gate, w_up;        /* (n_embd, n_ff) */
    Tensor w_down;              /* (n_ff, n_embd) */
    Tensor post_ffn_norm;       /* f32 (n_embd) */
    Tensor k_cache, v_cache;    /* kv dtype (n_head_kv*hd, n_ctx) */
} XfLayer;

typedef struct Xf {
    Vk                *vk;
    const Model       *m;
    const ModelConfig *cfg;
    DType   act;                /* activation dtype of the kernel path */
    DType   kv;                 /* KV cache dtype */
    u32     n_ctx, t_max;
    DevArena wa, sa;            /* weights, state (KV + activations) */
    u64     plan_w, plan_s;     /* planned bytes of each arena */
    Tensor  tok_embd, output_norm, output;
    XfLayer *layers;            /* (n_layer) */
    /* state for a batch of up to t_max tokens */
    Tensor  ids;                /* u32 (t_max) input tokens */
    Tensor  pos;                /* u32 (2): [p0, T] */
    Tensor  x;                  /* f32 (n_embd, t_max) residual stream */
    Tensor  h;                  /* act (n_embd, t_max) normed block input */
    Tensor  q, k;               /* (n_head*hd | n_head_kv*hd, t_max): f32 before a q/k norm (gemma3), else act */
    Tensor  v;                  /* act (n_head_kv*hd, t_max) */
    Tensor  qr, kr;             /* act after the q/k norm (gemma3) */
    Tensor  qp, kp;             /* act after RoPE */
    Tensor  att;                /* act (n_head*hd, t_max) attention output */
    Tensor  scores;             /* f32 (n_ctx, n_head, t_max) attention scratch */
    Tensor  o;                  /* f32 (n_embd, t_max) block output */
    Tensor  gate, up;           /* act (n_ff, t_max) */
    Tensor  ff;                 /* act (n_ff, t_max) */
    Tensor  hn;                 /* act (n_embd, t_max) final norm */
    Tensor  logits;             /* f32 (n_vocab, t_max) */
    Tensor  zl;                 /* f32 (n_vocab, t_max) pre-softcap logits (gemma2) */
    Tensor  out_ids;            /* u32 (t_max) argmax per row */
    u32     n_dispatch_last;    /* dispatches recorded by the last xf_forward */
    Arena   names;              /* host copies of the weight tensors' names */
    VkRec   dec;                /* the decode step (T = 1), recorded once, replayed per token */
} Xf;

bool xf_init(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, Err *e);
bool xf_plan(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act,
             void (*on_tensor)(void *ctx, const Tensor *t), void *ctx, Err *e);
void xf_free(Xf *xf);
bool xf_forward(Xf *xf, const i32 *tokens, u32 T, u32 p0, f32 *logits, u32 *ids, Err *e);
void xf_plan_print(const Xf *xf);

#endif
