/* ops.h — one typed C wrapper per kernel op. Each wrapper finds its kernel by the
   exact key (op, phase, wtype, atype, otype) in config/kernels.def, checks the
   tensors' dtypes and shapes, and records one dispatch (inside vk_begin/vk_submit_wait).

   API:
     kdef_find(op, phase, wt, at, ot)        index into kdefs[] or -1
     op_add(vk, a, b, y) / op_mul(vk, a, b, y)     elementwise over nelem
     op_rmsnorm(vk, x, w, y, eps)            x (rows, n), w (n); y f32 or f16
     the forward pass's ops below (ops_matmul.c, ops_attn.c); a matrix-vector product is
     op_matmul(vk, PH_DECODE, W, x, y) with W (k, rows), x (k), y (rows)                   */
#ifndef EDGE_OPS_H
#define EDGE_OPS_H

typedef enum Op {               /* one per line of config/ops.def */
#define OP(id, name, prof) OP_##id,
#include "config/ops.def"
#undef OP
    OP_COUNT
} Op;
typedef enum Phase { PH_ANY, PH_PREFILL, PH_DECODE, PH_COUNT } Phase;

typedef struct KernelDef {
    const char *kernel;     /* name in kernel_table */
    Op op; Phase phase; DType wtype, atype, otype;
} KernelDef;

enum {
#define KERNEL(name, op, ph, wt, at, ot) KDEF_##name,
#include "config/kernels.def"
#undef KERNEL
    KDEF_COUNT
};
extern const KernelDef kdefs[KDEF_COUNT];

i32  kdef_find(Op op, Phase ph, DType wt, DType at, DType ot);
void op_add(Vk *vk, const Tensor *a, const Tensor *b, const Tensor *y);
void op_mul(Vk *vk, const Tensor *a, const Tensor *b, const Tensor *y);
void op_rmsnorm(Vk *vk, const Tensor *x, const Tensor *w, const Tensor *y, f32 eps);

/* ---- the GPU forward pass's ops (issue 4). Conventions:
   - shapes in GGUF order: ne[0] is contiguous. A "(n, T)" tensor is T rows of n values.
   - the residual stream is always f32; "act" tensors (matmul inputs, q/k/v, FFN hidden,
     attention output) are f32 or f16 (the activation dtype of the kernel path).
   - positions come from a u32 tensor `pos`, the rows table (op_rows_fill): [T, 0] then each row's
     (position, sequence slot), never from push constants, so a recorded command buffer can be
     replayed per token after only rewriting `pos`. KV caches are (kv_dim, n_ctx, n_seq): n_seq slots
     of n_ctx rows (2-D: one slot); a row's keys and values live in its slot's rows.
   - every kernel accumulates in f32 and is NaN-safe for finite inputs.                    */

/* ---- the rows table (ops.c) ---- */
static inline u64 op_rows_words(u64 T) { return 2 + 2 * T; }   /* u32 elements of a rows table of T rows */
void op_rows_fill(u32 *dst, u32 T, u32 p0, u32 slot);
     /* a batch of one sequence: rows at positions p0 .. p0 + T - 1, all in slot */
void op_rows_upload(Vk *vk, const Tensor *pos, u32 T, u32 p0, u32 slot);
     /* op_rows_fill into the whole of pos (rows past T zero) (tests, the factory test) */
void op_rows_need(const char *op, const Tensor *pos, u64 T);
     /* pos is u32 and holds a table of T rows (else the op's need() error) */

/* ---- embedding rows and weight products (ops_matmul.c) ---- */
void op_get_rows(Vk *vk, const Tensor *E, const Tensor *ids, const Tensor *y, f32 scale);
     /* E (n_embd, n_vocab) any weight type; ids u32 (T), 1 <= T <= 65535; y f32 (n_embd, T) = E[ids] * scale */
void op_matmul(Vk *vk, Phase ph, const Tensor *W, const Tensor *X, const Tensor *Y);
     /* W (K, M) any weight type; X act (K, T); Y f32 or act (M, T): Y[t] = W . X[t], 1 <= T <= 65535.
        PH_DECODE uses the matvec kernels (any T: the token is grid z), PH_PREFILL the 64x64 tiles,
        or matmul_cm where op_matmul_cm_fits. */
void op_matmul_acc(Vk *vk, Phase ph, const Tensor *W, const Tensor *X, const Tensor *Y);
     /* Y f32 (M, T) += W . X: the residual add fused into the matmul's store */
void op_matmul_rows(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc);
     /* Y (+)= W . X for a batched decode step's few rows on the prefill kernels: matmul_cm_b (32-token tiles, key
        PH_DECODE) where it fits (as op_matmul_cm_fits, judged for EDGE_MAX_SEQ rows), else the prefill tiles */
bool op_matmul_cm_fits(const Vk *vk, Phase ph, const Tensor *W, const Tensor *X);
     /* prefill on cooperative matrices (matmul_cm.wgsl)? The device has them (caps.coopmat), weights of a
        type with matmul_cm products (config/dtypes.def cm: all but F32 and BF16) with rows a multiple of 32,
        f16 X bound up to a whole tile of tokens within the binding limit, and not op_matmul_cm_off */
extern bool op_matmul_cm_off;   /* tests: the plain prefill tiles even where matmul_cm would run */
extern u64 op_cm_products;      /* products recorded on matmul_cm */
u32  op_matmul_split_slices(Vk *vk, const Tensor *W, const Tensor *X);
u32  op_matmul_split_max(Vk *vk);
     /* 1 (no split), 2 or 4 by the tiles and the device's compute units (1 where the driver reports no
        unit count, or on a CPU device); EDGE_SPLITK=N forces N (at most 64) */
bool op_matmul_split(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc, const Tensor *scratch, u32 s);
     /* prefill Y (+)= W . X in s k slices: f32 partials in scratch (free bytes), a barrier, their sum into Y;
        false (nothing recorded) when the product does not split (ops_matmul.c op_matmul_split_begin says when) */
extern u64 op_split_products;   /* products recorded split (a count for tests) */
u32  op_matmul_batch_slices(Vk *vk, const Tensor *W, const Tensor *X);
     /* k slices (1 .. 16; EDGE_SPLITK=N: N) of a batched decode step's product on the prefill kernels: the fewest
        k steps counting a wave of workgroups as one, from W's shape alone (a row's sums do not depend on the step's rows) */
typedef struct OpSplit { Tensor part, y; u32 s; bool acc; } OpSplit;
bool op_matmul_split_begin(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc, const Tensor *scratch, u64 *used,
                           u32 s, bool rows, OpSplit *sp);
void op_matmul_split_end(Vk *vk, const OpSplit *sp);
     /* op_matmul_split in two halves, for independent products split side by side: _begin records the slices'
        dispatch with its partials at *used in scratch (advanced; false, nothing recorded, where op_matmul_split
        would be; rows: op_matmul_rows' kernels), then after one barrier _end records each sum into Y */
bool op_concat_rows(Vk *vk, const Tensor *a, const Tensor *b, Tensor *ab);
     /* ab = a's rows then b's as one weight tensor, when b follows a in memory (same block, dtype
        and row length), the pair fits one binding and, for Q6_K, a holds whole units of 8 super-blocks
        (decode: q/k/v in one matvec); false otherwise. */
bool op_gate_up_view(Vk *vk, const Tensor *gate, const Tensor *up, Tensor *gu);
     /* gu = gate and up as one (K, 2 n_ff) tensor, when up follows gate in memory (same block,
        dtype and shape) and the pair fits one binding; false otherwise. */

/* ---- decode products with more work fused in (ops_matmul.c) ---- */
void op_matmul_glu(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *Y, bool gelu);
     /* decode: Y (n_ff, T) = act(Wgate . X) * (Wup . X) in one dispatch (GU from op_gate_up_view;
        act SiLU, or GELU-tanh when gelu); Y in X's dtype; the products are rounded to Y's dtype
        before the activation. */
bool op_matmul_norm_fits(const Tensor *W, const Tensor *X, DType act);
     /* can a product take the norm in its prologue: weights with decode lanes (config/dtypes.def lanes K or B)
        with rows of k <= 3072 (4096 with act f16: matmul.wgsl's *_norm_w entries), X f32 rows */
Op op_norm_narrow(Op op);
     /* a norm-prologue *_W op (the *_norm_w entries, rows past 3072) -> the op whose product it computes
        (fat's checks); any other op unchanged */
void op_matmul_glu_norm(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *Y, bool gelu);
     /* op_matmul_glu of rmsnorm(X) * nw, X the f32 residual row (one token; op_matmul_norm_fits); Y f32 or f16.
        Weights whose i8 column (config/dtypes.def) is GLU, with f16 Y, run on int8 activations
        (matvec_k_glu_norm_q) where the int8 lanes run. */
void op_matmul_glu_res_norm(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *O, const Tensor *pw, const Tensor *Xout,
                            const Tensor *nw, f32 eps, const Tensor *Y, bool gelu);
     /* the same after Gemma's post-attention residual add: X' = X + rmsnorm(O) * pw is stored into Xout
        (which must not overlap X) and normalized by nw for the product; f16 activations */
bool op_matmul_norm_q8_fits(const Vk *vk, const Tensor *W, const Tensor *X, DType act);
     /* does op_matmul_norm run here: the int8 lanes run, f16 activations, op_matmul_norm_fits */
void op_matmul_norm(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *Y);
     /* decode Y (f32) = W . (rmsnorm(X) * nw rounded to act): the attention norm in the product's prologue
        (q/k/v of the q/k-norm models, whose RoPE cannot be the product's epilogue); op_matmul_norm_fits */
void op_matmul_normed(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, DType act, const Tensor *Y);
     /* one token: Y (M) f32 = W . (rmsnorm(X) * nw), X the f32 residual row, on int8 activations
        (matvec_k_norm_q: the output norm and the LM head in one dispatch), where op_matmul_norm_q8_fits */
extern bool op_matmul_q8_off;   /* tests: the f16-pair decode lanes even where the int8 lanes (*_q) would run */
extern bool op_matmul_s8_on;    /* tests, fat: the gate/up on int8 in 32-bit multiplies (*_s) also where the device would not take it */
extern u64 op_q8_products;      /* products recorded on the int8 lanes */
extern bool op_matmul_q8t_off;  /* tests: the f32 prefill tiles even where matmul_q (int8 activations) would run */
extern u64 op_q8t_products;     /* prefill products recorded on matmul_q */
bool op_matmul_rope_fits(const Tensor *W, const Tensor *X);
     /* can the q/k/v product take rope_kv's work: weights with decode lanes, X one row */
void op_matmul_rope(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *pos, const Tensor *ff,
                    const Tensor *qo, const Tensor *kc, const Tensor *vc, u32 n_head, u32 n_head_kv, u32 n_rot, f32 base,
                    f32 freq_scale, bool neox, const Tensor *bq, const Tensor *bk, const Tensor *bv, u32 rbase);
     /* decode, one token: the q/k/v projection W . X (W: rows rbase.. of q|k|v, whole heads) with rope_kv's
        work in the epilogue: biases (bq != 0), RoPE of q into qo and of k into the key cache row of the rows table's
        one row, v into the value cache row. Only where op_matmul_rope_fits; W in one binding. With nw != 0, X is the f32
        residual row and the product takes rmsnorm(X) * nw (eps) made in the kernel's prologue
        (op_matmul_norm_fits); without, qo is in X's dtype. */

/* ---- norms, bias, rope, KV cache (ops_attn.c) ---- */
void op_add_bias(Vk *vk, const Tensor *b, const Tensor *y);
     /* y act (n, T) += b f32 (n), broadcast over rows (Qwen2 q/k/v bias) */
void op_rmsnorm_add(Vk *vk, const Tensor *o, const Tensor *w, const Tensor *x, f32 eps);
     /* x f32 (n, T) += rmsnorm(o f32 (n, T)) * w (Gemma post-attention / post-FFN norms) */
void op_rmsnorm_add_norm(Vk *vk, const Tensor *o, const Tensor *w, const Tensor *x, const Tensor *w2, const Tensor *h, f32 eps);
     /* x += rmsnorm(o) * w, then h (f32 or f16) = rmsnorm(x) * w2 (the next norm of the updated residual),
        one dispatch; only where op_rmsnorm_add_norm_fits */
bool op_rmsnorm_add_norm_fits(const Tensor *o);   /* rows of at most 4096, a multiple of 4 */
void op_rope(Vk *vk, const Tensor *x, const Tensor *pos, const Tensor *ff, const Tensor *y, u32 n_rot, f32 base, f32 freq_scale, bool neox);
     /* x act (head_dim, n_heads, T) -> y same shape; token t at position p0 + t. NORM rotates
        (x[2i], x[2i+1]), NEOX (x[i], x[i + n_rot/2]); dims >= n_rot pass through.
        theta_i = pos * freq_scale * base^(-2i/n_rot) / ff[i]; ff f32 (n_rot/2): Llama 3's
        rope_freqs factors, or ones. */
/* Elements per row of a KV cache of kv_dim values: kv_dim, or for a q8_0 cache (DT_Q8_0; kernels/common/kvq8.wgsl's
   row layout: quants, then f16 scales) kv_dim rounded up to 64, so that a row is whole words; 0 for a q8_0
   cache whose kv_dim is not a multiple of 32 (llama.cpp's rule: blocks of 32). */
static inline u64 op_kv_width(DType cache, u64 kv_dim) { return cache != DT_Q8_0 ? kv_dim : kv_dim % 32 ? 0 : (kv_dim + 63) / 64 * 64; }
void op_kv_store(Vk *vk, const Tensor *k, const Tensor *pos, const Tensor *cache);
     /* k act (kv_dim, T) -> cache (op_kv_width, n_ctx) f32, f16 or q8_0 (blocks of 32 quantized as
        ggml's quantize_row_q8_0_ref), rows p0 .. p0+T-1 */
void op_rope_kv(Vk *vk, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *pos, const Tensor *ff,
                const Tensor *qo, const Tensor *kc, const Tensor *vc, u32 n_rot, f32 base, f32 freq_scale, bool neox,
                const Tensor *bq, const Tensor *bk, const Tensor *bv, u32 sqk, u32 sv);
     /* [op_add_bias of bq/bk/bv to q/k/v when bq is not 0], op_rope(q -> qo), then op_rope(k) and
        op_kv_store of the result and of v into rows pos[0].. of the caches kc/vc, in one dispatch.
        q (head_dim, n_head, T), k (head_dim, n_head_kv, T), v like k; qo like q; caches
        (head_dim * n_head_kv, n_ctx, n_seq); biases f32 (head_dim * heads). sqk, sv: the elements from
        one row of q and of k (v) to the next where they lie in a wider buffer (a batched step's q|k|v
        rows), 0 where they are contiguous. */
void op_rope_kv_norm(Vk *vk, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *pos, const Tensor *ff,
                     const Tensor *qo, const Tensor *kc, const Tensor *vc, const Tensor *qn, const Tensor *kn, f32 eps,
                     u32 n_rot, f32 base, f32 freq_scale, bool neox, u32 sqk, u32 sv);
     /* op_rope_kv (no biases) after the per-head RMSNorm of q and k (Qwen3, Gemma 3): each head x of q
        becomes x / sqrt(mean(x^2) + eps) * qn, of k the same with kn, in f32, unrounded into RoPE.
        q, k, v f32 (head_dim, heads, T); qo in the activation dtype; qn, kn f32 (head_dim). */

/* ---- attention (ops_attn.c) ---- */
void op_attention(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos, const Tensor *scores,
                  const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window);
     /* q act (head_dim <= 256, n_head, T); kc/vc caches (head_dim*n_head_kv, n_ctx); scores f32
        scratch (n_ctx, n_head, T_max); out act (head_dim, n_head, T). Query t (position
        p0+t) attends keys j <= p0+t, and j > p0+t-window when window > 0. s = (q.k)*scale;
        if softcap > 0: s = softcap*tanh(s/softcap); softmax; out = sum p_j v_j. GQA: head h
        uses kv head h / (n_head / n_head_kv). */
void op_attention_split(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos, const Tensor *part,
                        const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window, bool decode, u32 keys);
     /* op_attention spread over the GPU: each (head, chunk of 32 keys, query) a workgroup
        (attn_split), then one merge per (head, query) (attn_merge), a barrier between. part: f32
        scratch (head_dim + 4, op_attn_chunks(n_ctx), n_head, Q): with Q < T the queries go in
        groups of Q (a dispatch pair each). Only where op_attention_split_fits. decode: the decode
        variants (a token per row, also for a batched step's rows), else the prefill ones. keys: no
        query is at position keys or later (the grid covers their chunks only; 0: n_ctx). */
bool op_attention_short_fits(Vk *vk, u32 head_dim, DType cache, DType act, u64 keys);   /* attn_short runs for a decode split over at most keys keys */
extern bool op_attn_short_off;           /* the split and merge even there (tests, edge fat) */
extern bool op_attn_short_narrow;        /* attn_short_n (256 invocations) even where attn_short (512) fits (edge fat) */
bool op_kernel_optional(const char *kernel);   /* a kernel the ops use only where the device allows it (attn_short: else the split and merge) */
bool op_attention_split_fits(u32 head_dim, u64 n_ctx);   /* head_dim a multiple of 8, <= 256, head_dim / 8 divides 128; n_ctx <= 32768 */
u32 op_attn_chunks(u64 n_ctx);                            /* key chunks of 32 over n_ctx */
u32 op_attn_part_row(u32 head_dim);   /* floats per chunk in part: m, sum, 2 zeros, acc[head_dim] (16-byte aligned for attn_merge) */
void op_attention_flash(Vk *vk, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos,
                        const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window);
     /* op_attention for a batch (prefill) in one dispatch and no scratch: each (head, 16 queries; 8 for head_dim 256,
        16 through attn_flash_w where its 18.5 KiB of shared memory fit) a workgroup (attn_flash) over every key
        of those queries with a running max; out in q's dtype. Only where op_attention_flash_fits. Where
        op_attention_cm_fits, attn_cm instead (16 queries per workgroup of 4 subgroups on cooperative matrices); else
        where op_attention_tile_fits, attn_tile (16-64 queries per workgroup, register tiles, no matrix units). */
bool op_attention_flash_fits(Vk *vk, u32 head_dim, DType cache, DType act);   /* head_dim a multiple of 4, <= 256, head_dim / 4 divides 128; the kernel fits the device */
Op   op_attention_flash_kernel(Vk *vk, u32 head_dim, DType cache, DType act);   /* OP_ATTN_FLASH, or OP_ATTN_FLASH_W (16 queries of head_dim 256) where it fits */
bool op_attention_cm_fits(Vk *vk, u32 head_dim, DType cache, DType act, u32 window, u64 n_ctx);   /* attn_cm runs (op_attention_flash picks it) */
#define OP_ATTN_CM_ROWS 80u   /* the cache rows attn_cm asks (n_ctx at least): a chunk's keys (64 + 15 read again) fit a ring (attn_cm.wgsl ring) */
Op   op_attention_cm_op(u32 head_dim, u32 window);   /* OP_ATTN_CM (head_dim 128), _H64, _H256 or _H256W (a window): the build */
bool op_is_attn_cm(Op op);               /* one of those */
bool op_attention_tile_fits(Vk *vk, u32 head_dim, DType cache, DType act);   /* attn_tile runs (op_attention_flash picks it where attn_cm does not) */
Op   op_attention_tile_op(u32 head_dim); /* OP_ATTN_TILE (head_dim 128), _H64 or _H256: the build */
bool op_is_attn_tile(Op op);             /* one of those */
void op_attention_flash_with(Vk *vk, Op kernel, const Tensor *q, const Tensor *kc, const Tensor *vc, const Tensor *pos,
                             const Tensor *out, u32 n_head, u32 n_head_kv, f32 scale, f32 softcap, u32 window);   /* that kernel (fat) */

/* ---- activations, softcap, sampling (ops_attn.c) ---- */
void op_glu(Vk *vk, const Tensor *gate, const Tensor *up, const Tensor *y, bool gelu);
     /* y act (n, T) = act(gate) * up; gelu = GELU-tanh (argument clamped, NaN-safe) else SiLU */
void op_softcap(Vk *vk, const Tensor *x, const Tensor *y, f32 cap);
     /* y f32 = cap * tanh(x / cap), cap > 0 */
void op_argmax(Vk *vk, const Tensor *logits, const Tensor *ids);
     /* logits f32 (n_vocab, T) -> ids u32 (T); lowest id wins ties */
void op_argmax_check(Vk *vk, const Tensor *logits, const Tensor *ids, const Tensor *part);
     /* logits f32 (n_vocab, T) -> ids u32 (2, T): [argmax, 1 if the row holds a NaN/Inf else 0].
        part: 0, or u32 scratch (3 G, >= T) with 2 <= G <= 256: the scan is split over G workgroups
        per row and merged (two dispatches with a barrier between); see op_argmax_slices. */
u32 op_argmax_slices(u64 n);   /* the G worth using for rows of n logits, one per 1024, at most 128 (1: one workgroup is enough) */
void op_topk(Vk *vk, const Tensor *logits, const Tensor *ids, const Tensor *vals, u32 k);
     /* logits f32 (n_vocab, T) -> ids u32 (k, T) and vals f32 (k, T), best first, lowest id
        first among equal values, NaN never chosen; 1 <= k <= 64 (EDGE_TOPK_MAX) */

#endif
