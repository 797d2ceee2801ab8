/* transformer.h — the forward pass on the GPU (Vulkan), one function per phase,
   parameterized by the ModelConfig's arch flags. The same rules as models/reference.c,
   which it is tested against.

   Memory: xf_init plans every device tensor (weights, KV cache, activations for the
   largest batch, scores scratch, logits) with its exact size, allocates two device
   arenas of exactly the planned bytes, uploads the weights as stored in the GGUF (quantized
   blocks stay quantized), and allocates nothing after that.

   API:
     xf_init(&xf, vk, model, n_ctx, t_max, act, opts, err)  plan, allocate, upload (act: DT_F32 or DT_F16;
                                                      opts: the KV cache dtype and the logits rows, NULL: the
                                                      cache in act, logits for every row of a batch)
     xf_plan(&xf, vk, model, n_ctx, t_max, act, opts, on_tensor, ctx, err)   the plan only (planning arenas, nothing
                                                      allocated or uploaded); every tensor to on_tensor; then xf_free
     xf_free(&xf)
     xf_forward(&xf, tokens, T, p0, slot, last_only, logits, ids)   evaluate T tokens of sequence slot at positions p0..
                                                      (T <= t_max): logits (n_vocab*T floats) and/or ids (argmax per row), either
                                                      may be NULL; last_only: only the last row's logits are wanted (xf_last_logits)
     xf_decode_rows(&xf, tokens, n, pos, slot, logits, ids)  one batched decode step: row t is token t of sequence slot[t] at pos[t]
                                                      (n <= n_seq, one row per sequence): each row a lone decode step's kernels
                                                      (the token in grid z), or from EDGE_BATCH_TILES_MIN sequences on a device
                                                      with cooperative matrices the prefill products over the rows (each weight
                                                      read once for all: xf_batch_tiles); attention per row over its slot's cache
     xf_path_print(&xf)                               the kernel-path plan of both phases (edge paths)
   Debug tools (models/xf_debug.c; options parsed once by edge_main into xf_debug):
     xf_debug_parse(&argc, argv, err)                 removes --trace[=CATS] --trace-layers --trace-pos
                                                      --trace-warn --check-nan --profile from argv; reads EDGE_INJECT_NAN
     xf_describe(&xf, vk, model, n_ctx, t_max, act, T, n_seq, &desc)  runs xf_record without the GPU: every
                                                      op's kernel and dtypes, and the dtype-chain check; n_seq 1: a
                                                      prefill batch (T > 1) or a decode step, n_seq > 1: a batched
                                                      step of T rows (xf_decode_rows) in a context of n_seq sequences
     xf_paths_print(&desc, n_layer, vk)               one described phase's ops, layers with the same kernels
                                                      grouped, each op's kernel, dtypes and why (edge paths)
     xf_tensor_stats(vk, t, &st, scratch)             statistics over exactly t's elements (read back)
     xf_profile_print(&xf, file)                      the --profile table                               */
#ifndef EDGE_TRANSFORMER_H
#define EDGE_TRANSFORMER_H

/* ---- debug options (global: set once at start by edge_main, read by every command) ---- */
enum {                          /* --trace categories */
    XT_KERNELS = 1, XT_EMBED = 2, XT_ATTN = 4, XT_FFN = 8, XT_NORM = 16, XT_LOGITS = 32, XT_SAMPLE = 64, XT_ALL = 127
};
typedef struct XfRange { u32 lo, hi; } XfRange;   /* inclusive */
typedef struct XfDebug {
    u32     trace;              /* XT_* categories traced (0: off); XT_KERNELS alone: kernel lines without statistics */
    XfRange layers[16];         /* --trace-layers (n_layers 0: every layer) */
    u32     n_layers;
    XfRange pos[16];            /* --trace-pos (n_pos 0: every position) */
    u32     n_pos;
    f32     warn;               /* --trace-warn: flag |x| > warn (0: off) */
    bool    check_nan;          /* --check-nan: submit op by op, stop at the first NaN/Inf */
    bool    profile;            /* --profile: timestamps per op, table at the end */
    bool    inject;             /* EDGE_INJECT_NAN=OP:LAYER (testing aid) */
    char    inject_op[32];
    i32     inject_layer;       /* -1: a non-layer op */
    Phase   inject_phase;       /* PH_ANY, or only PH_PREFILL / PH_DECODE (OP:LAYER:prefill|decode) */
} XfDebug;
extern XfDebug xf_debug;

typedef struct XfStats {
    u64 n, nan, inf, warn;      /* elements, NaN, Inf, |x| > warn */
    f64 min, max, sum, maxabs;  /* over the finite elements */
    u64 amax_row, amax_col;     /* where maxabs is (row = token of the batch, col = index in the row) */
    u64 bad_row, bad_col;       /* first NaN/Inf */
} XfStats;

enum { PC_MATMUL, PC_ATTN, PC_NORM, PC_ROPE, PC_ACT, PC_SAMPLE, PC_COPY, PC_COUNT };   /* --profile classes (each op's: config/ops.def) */
typedef struct XfProfPhase {
    VkQueryPool pool;
    u32   n_ops;                /* ops per recording (queries = n_ops + 1) */
    u8   *op_class;             /* (n_ops) PC_* */
    u32   n_dispatch;           /* dispatches of one recording, counted op by op */
    f64   ns[PC_COUNT];         /* GPU time per class */
    const char **op_site;       /* (n_ops) the op's site name (attn_q, ffn_down, lm_head ...) */
    const char *site[48];       /* distinct site names, in order of first appearance */
    f64   site_ns[48];          /* GPU time per site, summed over layers */
    u32   site_calls[48];       /* ops per recording at that site */
    u32   n_site;
    u64   tokens, submits, dispatches;
    f64   wall_s;
} XfProfPhase;

/* One op as xf_describe saw it. */
typedef struct XfDescOp {
    const char *name;           /* site: attn_q, attention, ffn_down, ... */
    i32   layer;                /* -1: not in a layer */
    const KernelInfo *k;
    i32   kdef;                 /* index into kdefs[] */
    DType in[8]; u32 n_in;      /* dtypes of the read-only bindings */
    DType out;                  /* dtype of the op's output tensor */
    u32   n_dispatch;
} XfDescOp;
typedef struct XfWrite {         /* a state region and the dtype the last op wrote it with */
    const DevArena *a; u32 block; u64 off, bytes; DType dt; const char *by;
} XfWrite;
typedef struct XfDesc {
    XfDescOp *ops; u32 n_ops, cap_ops;
    XfWrite  *w; u32 n_w, cap_w;
    u32   n_dispatch;
    u32   chain_errors;
    char  chain_msg[512];       /* the first chain error */
} XfDesc;

/* The kernel path of one phase: which fused products the recording runs. Decided once per model and
   device at load (xf_path_decide, after the tensors are placed), printed by `edge paths`, and read by
   the recording, which holds no fusion flags of its own. The debug tools that read every op's output
   (--check-nan, value traces, EDGE_INJECT_NAN) record with xf_path_unfused instead. */
typedef enum XfQkv { XQ_SEPARATE, XQ_QK, XQ_QKV } XfQkv;       /* q, k, v products: three, q+k and v, one */
typedef enum XfFfn {                                            /* the gate/up products and the activation */
    XF_GATE_UP,         /* gate, up, then glu */
    XF_GLU,             /* act(gate) * up in one pass over the back-to-back weights (op_matmul_glu) */
    XF_GLU_NORM,        /* ... with the FFN norm in its prologue (op_matmul_glu_norm) */
    XF_GLU_RES_NORM,    /* ... with the attention residual add and the FFN norm in its prologue (Gemma, f16) */
} XfFfn;
typedef struct XfBlockPath {    /* one layer's choices (layers differ where a file mixes weight types) */
    XfQkv qkv;          /* decode: one product over q/k(/v) weights lying back to back */
    bool  qkv_rope;     /* decode, k-quants: RoPE, biases and the KV stores in the q/k/v product's epilogue */
    bool  qkv_norm;     /* ... and the attention norm in its prologue (when no fused residual made h) */
    bool  attn_res_norm;/* post-norm models: the attention residual add also makes the FFN norm (rmsnorm_add_norm) */
    XfFfn ffn;
} XfBlockPath;
typedef struct XfPath {
    bool  fused;        /* any fused kernel at all */
    bool  rope_kv;      /* RoPE of q and k and both KV stores in one dispatch (else rope, rope, kv_store x2) */
    bool  bias_in_rope; /* rope_kv adds the q/k/v biases (else bias ops) */
    bool  norm_in_rope; /* rope_kv_norm makes the per-head q/k norms too (Qwen3, Gemma 3; else q_norm, k_norm) */
    bool  ffn_res_norm; /* post-norm models: the FFN residual add also makes the next layer's attention norm */
    bool  head_norm;    /* one row: the output norm in the LM head's prologue (int8 lanes) */
    bool  attn_flash;   /* batches: attention through attn_flash, attn_cm where op_attention_cm_fits (else split over key chunks, or one pass) */
    XfBlockPath *layer; /* (n_layer); 0: every layer plain (XfBlockPath of zeros) */
} XfPath;

typedef struct XfLayer {
    Tensor attn_norm;           /* f32 (n_embd) */
    Tensor wq, wk, wv;          /* (n_embd, n_head*hd) / (n_embd, n_head_kv*hd) any weight type */
    Tensor bq, bk, bv;          /* f32 biases (qwen2) */
    Tensor q_norm, k_norm;      /* f32 (head_dim) (gemma3, qwen3) */
    Tensor wo;                  /* (n_head*hd, n_embd) */
    Tensor post_attn_norm;      /* f32 (n_embd) (gemma2/3) */
    Tensor ffn_norm;            /* f32 (n_embd) */
    Tensor w_gate, w_up;        /* (n_embd, n_ff) */
    Tensor w_down;              /* (n_ff, n_embd) */
    Tensor post_ffn_norm;       /* f32 (n_embd) */
    Tensor wqk, wqkv;           /* views: wq+wk and wq+wk+wv when they lie back to back (nbytes 0: not) */
    Tensor gu;                  /* view: w_gate+w_up when they lie back to back (nbytes 0: not) */
} XfLayer;

/* The forward pass's state, split by lifetime. */
typedef struct XfWeights {      /* uploaded once per model: read-only afterwards */
    DevArena arena;
    u64     plan;               /* planned bytes of the arena */
    Arena   names;              /* host copies of the weight tensors' names */
    Tensor  tok_embd, output_norm, output;
    Tensor  rope_ff;            /* f32 (rope_dim/2) RoPE frequency factors (Llama 3), ones otherwise */
    XfLayer *layers;            /* (n_layer) */
} XfWeights;

typedef struct XfKv { Tensor k, v; } XfKv;   /* one layer's cache: kv dtype (n_head_kv*hd, n_ctx, n_seq) */

typedef struct XfState {        /* per context: the KV cache and the activations of a batch of up to t_max tokens */
    DevArena arena;
    u64     plan;               /* planned bytes of the arena */
    XfKv   *kv;                 /* (n_layer) */
    Tensor  ids;                /* u32 (t_max) input tokens */
    Tensor  pos;                /* u32 (op_rows_words(t_max)): the rows table (kernels/ops.h) */
    Tensor  x;                  /* f32 (n_embd, t_max) residual stream */
    Tensor  x2;                 /* f32 (n_embd) decode with f16 activations (Gemma): the residual row's
                                   other copy, since gate/up takes the attention residual in its prologue */
    Tensor  h;                  /* act (n_embd, t_max) normed block input */
    Tensor  q, k;               /* (n_head*hd | n_head_kv*hd, t_max): f32 before a q/k norm (gemma3, qwen3), else act */
    Tensor  v;                  /* (n_head_kv*hd, t_max) in q's dtype (rope_kv_norm reads f32 q, k, v) */
    Tensor  qkv;                /* (n_head*hd + 2 n_head_kv*hd): decode's q, k, v side by side (one matvec over the
                                   q/k/v weights when they lie back to back), in q's dtype */
    Tensor  qr, kr;             /* act after the q/k norm (gemma3, qwen3) */
    Tensor  qp, kp;             /* act after RoPE */
    Tensor  att;                /* act (n_head*hd, t_max) attention output */
    Tensor  scores;             /* f32 (n_ctx, n_head, t_max) attention scratch */
    Tensor  attn_part;          /* f32 (head_dim + 2, n_ctx / 32, n_head, Q) split-attention partials of Q queries
                                   (op_attention_split_fits; Q: at most the bytes of the scores scratch) */
    Tensor  o;                  /* f32 (n_embd, t_max) block output */
    Tensor  gate, up;           /* act (n_ff, t_max) */
    Tensor  ff;                 /* act (n_ff, t_max) */
    Tensor  hn;                 /* act (n_embd, t_max) final norm */
    Tensor  logits;             /* f32 (n_vocab, t_max), or (n_vocab, 1) with Xf.one_row */
    Tensor  zl;                 /* f32 (n_vocab, t_max | 1) pre-softcap logits (gemma2) */
    Tensor  split_part;         /* f32 split-k partials: of the prefill attn_out / ffn_down products with Xf.one_row
                                   (n_embd * s * t_max, s: op_matmul_split_max; else they use the logits), and of a
                                   batched step's products with Xf.batch_tiles (xf_batch_split_bytes), the larger */
    Tensor  out_ids;            /* u32 (t_max) argmax per row */
    Tensor  argmax_part;        /* u32 (3 G, t_max | 1): the split argmax scan, when G = op_argmax_slices(n_vocab) > 1 */
    Tensor  chain_pos[2][EDGE_CHAIN_STEPS];   /* u32 (op_rows_words(1)) each chained step's rows table, written by the host before its recording's submit */
    Tensor  chain_out[2][EDGE_CHAIN_STEPS];   /* u32 (2, 1) each chained step's [id, flag]: its argmax writes it, the next step's embedding reads its id */
    u32    *host_ids;           /* (2, t_max) id and NaN/Inf flag per row, read back */
    u32    *host_rows;          /* (op_rows_words(t_max)) the rows table being uploaded */
} XfState;

#define XF_KEY_LEVELS 16    /* key bounds 64 << 0 .. 64 << 15 (2M positions: past every context) */
typedef struct XfRecs {         /* command buffers recorded once and replayed, and what they were recorded for */
    u32     n_dispatch_last;    /* dispatches recorded by the last xf_forward */
    /* A one-row decode recording's attention grid covers the positions below its key bound: 64, 128, ...
       up to n_ctx (level lv: 64 << lv), each level recorded at first use and kept, so a step at a short
       position does not launch (and exit) the workgroups of the whole context's key chunks. */
    VkRec   dec[XF_KEY_LEVELS];        /* the decode step (T = 1) per key level, replayed per token */
    u32     dec_lv;                    /* the level of the last decode step */
    VkRec   chain[2][XF_KEY_LEVELS];   /* greedy decode with steps in flight (xf_chain_*): EDGE_CHAIN_STEPS decode steps in each of two command buffers, per key level */
    u32     chain_lv[2];        /* the level each of the two was last submitted at */
    u32     chain_next;         /* the recording the next chained submit goes to */
    u32     chain_n;            /* chained steps in flight or done and not yet returned (0 .. 2 x EDGE_CHAIN_STEPS) */
    u32     chain_p;            /* the position of the next chained step to submit */
    u32     chain_slot;         /* the sequence slot the chain decodes */
    bool    chain_read;         /* the oldest recording has been waited for and its ids read back (chain_ids) */
    u32     chain_ret;          /* steps of it returned by xf_chain_next */
    u32     chain_ids[EDGE_CHAIN_STEPS][2];   /* the oldest recording's [id, flag] per step, once waited for */
    bool    time_decode;        /* edge bench: timestamps at the start and end of the decode recording */
    VkQueryPool dec_ts;         /* (2) the last replayed decode step's start and end (time_decode) */
    VkRec   pre;                /* the last prefill batch (T > 1), replayed while T and last_only stay */
    VkRec  *multi;              /* (n_seq) batched steps (xf_decode_rows) of 1 .. n_seq rows, each recorded at first use */
    u32    *multi_keys;         /* (n_seq) the key bound each was recorded with: its attention grid covers positions below it */
    u32     keys;               /* the key bound of the recording being made (0: n_ctx) */
    u32     pre_t;
    bool    pre_last;           /* last_only of the prefill recording */
    bool    pre_head_last;      /* head_last of the prefill recording */
    bool    head_last;          /* the last recording computed the LM head for the last row only */
} XfRecs;

typedef struct XfDiag {         /* debug tools and profiling (all idle unless xf_debug or describe asks) */
    bool    on;                 /* any debug tool active for this recording */
    bool    step;               /* submit op by op (--trace, --check-nan) */
    Phase   rec_ph; u32 rec_p0, rec_T;
    u32     rec_ops, rec_dispatch;   /* ops and dispatches of the recording so far */
    bool    injected;
    struct XfOpCur { const char *name; u32 cat; const char *cls; i32 layer; Tensor out; Tensor in[4]; u32 n_in; u32 d0; bool snap; } cur;
    u8     *buf, *snap;         /* readback scratch, bytes each */
    u64     bytes;
    XfProfPhase prof[2];        /* [0] prefill, [1] decode */
    VkQueryPool prof_cur;
    XfDesc *desc;               /* describe mode */
} XfDiag;

typedef struct XfOpts {
    DType   kv;                 /* KV cache dtype: DT_F32, or DT_F16 (needs storageBuffer16BitAccess) */
    bool    last_row;           /* generation: logits of a batch's last row only (xf_forward's last_only,
                                   or T = 1), so the logits buffers hold one row (one per sequence: n_seq) */
    u32     n_seq;              /* sequences decoded together (xf_decode_rows; 0: 1): KV cache slots, logits rows */
} XfOpts;

typedef struct Xf {
    /* the configuration, fixed at xf_init */
    Vk                *vk;
    const Model       *m;
    const ModelConfig *cfg;
    DType   act;                /* activation dtype of the kernel path */
    DType   kv;                 /* KV cache dtype */
    u32     n_ctx, t_max;
    u32     n_seq;              /* KV cache slots (XfOpts.n_seq) */
    bool    one_row;            /* the logits buffers hold one row (XfOpts.last_row where the head's last-row
                                   views stay aligned for every batch size: xf_one_row) */
    XfPath  path[PH_COUNT];     /* the kernel path of [PH_PREFILL] and [PH_DECODE] (xf_path_decide) */
    bool    batch_tiles;        /* batched steps run the prefill products (xf_batch_tiles) on the path `batch` */
    XfPath  batch;
    XfWeights w;
    XfState   s;
    XfRecs    r;
    XfDiag    d;
} Xf;

bool xf_init(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, const XfOpts *o, Err *e);
bool xf_plan(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, const XfOpts *o,
             void (*on_tensor)(void *ctx, const Tensor *t), void *ctx, Err *e);
void xf_free(Xf *xf);
extern u64 xf_prefill_replays;   /* prefill batches run from the kept recording (a count for tests) */
extern bool xf_key_levels_off;   /* tests: one-row decode recordings cover the whole context (XfRecs.dec: one level) */
bool xf_forward(Xf *xf, const i32 *tokens, u32 T, u32 p0, u32 slot, bool last_only, f32 *logits, u32 *ids, Err *e);
bool xf_decode_rows(Xf *xf, const i32 *tokens, u32 n, const u32 *pos, const u32 *slot, f32 *logits, u32 *ids, Err *e);
bool xf_last_logits(Xf *xf, u32 T, u32 p0, f32 *dst, Err *e);
f64  xf_decode_gpu_ns(Xf *xf);
/* Greedy decode with steps in flight (the GPU path without debug tools: xf_chain_ok). Two command
   buffers each hold EDGE_CHAIN_STEPS decode steps; a chained step's embedding takes its id from the
   chain_out of the step before it (the previous one in its recording, or the other recording's last;
   xf_chain_start puts the first id there), where that step's argmax left it, so the host queues the
   next recording before it waits for this one and the GPU goes from step to step without waiting for
   the host (no copy at a step's end: a copy command and its barrier cost ~20 us per token on the H200;
   each submission leaves the GPU ~11 us idle, hence several steps per recording). xf_chain_next(more)
   returns the oldest step not yet returned: when that step's recording has not been waited for, it
   first queues the next recording (when more and its first position is inside the context), then
   waits and reads back all of the recording's ids. xf_chain_stop waits for what is left and drops it
   (a step queued past the last one wanted writes only its own KV row, which the next step at that
   position overwrites; steps past the context's end run at its last position, and are never returned). */
bool xf_kv_copy(Xf *xf, u32 src, u32 dst, u32 n, Err *e);   /* slot src's cache rows of positions 0..n-1 into slot dst */
bool xf_chain_ok(const Xf *xf);
bool xf_chain_start(Xf *xf, i32 token, u32 p0, u32 slot, Err *e);
bool xf_chain_next(Xf *xf, bool more, u32 *id, Err *e);
void xf_chain_stop(Xf *xf);
void xf_path_print(const Xf *xf);

bool xf_debug_parse(int *argc, char **argv, Err *e);
bool xf_describe(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, u32 T, u32 n_seq, XfDesc *d);
void xf_desc_free(XfDesc *d);
void xf_paths_print(const XfDesc *d, u32 n_layer, const Vk *vk);
void xf_tensor_stats(Vk *vk, const Tensor *t, XfStats *st, void *scratch);
void xf_profile_print(Xf *xf, FILE *f);

#endif
