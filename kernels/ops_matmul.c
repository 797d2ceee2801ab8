/* ops_matmul.c — every weight product of the forward pass (see ops.h for the contracts): the
   embedding gather, the plain and the split-k products, and the fused decode products.

   Why: the weights stay in their GGUF block bytes on the device; the kernels of
   kernels/matmul.wgsl (and matmul_cm.wgsl) dequantize while they multiply. A weight tensor larger
   than maxStorageBufferRange cannot be bound whole, so each op binds it as row chunks:
   sub-Tensor views of the same arena block whose offsets are whole rows and stay
   aligned to minStorageBufferOffsetAlignment. X and Y are bound whole; the chunk's
   first row goes to the kernel through push constants (r0), so the output offset
   never needs to be aligned. Q6_K and the group types (up column) are regrouped by the upload in units of 8 blocks
   (vk_units): chunks and op_concat_rows keep whole units.

   Which kernel runs:
     decode   matvec_* in workgroups of WQ_MV_WG (128) invocations, 2^ll lanes per row chosen per
              product by mv_lanes (1..128, types with decode lanes at least 8: few long rows get many
              lanes). The lane family follows the dtypes and the device: the f32 lanes (every type;
              the only ones of the types whose lanes column in config/dtypes.def is ANY: F32 F16
              BF16); for the types with decode lanes (K: Q4_K Q5_K Q6_K; B: Q8_0 Q4_0 Q4_1 Q5_0
              Q5_1 Q2_K Q3_K IQ4_NL IQ4_XS) with f16 activations the f16-pair lanes (*_h); where the device
              accelerates int8 dot products (caps.idot) the int8 lanes (*_q) for the gate/up product
              with its norm prologue (all of them but Q6_K: wq_q8) and the output norm + LM head; with
              EDGE_IDOT=1 on a device without f16, the Q4_K / Q5_K gate/up on int8 in 32-bit multiplies
              (*_s, wq_s8: the f32 lanes' rows and lanes, 4 of them per super-block). The
              q/k/v product keeps its f16 lanes (docs/perf-log.md #85). The fused entries (norm
              prologues, RoPE epilogue, glu) run on every type with decode lanes.
     prefill  matmul_* (64 x 64 tiles), or matmul_cm_* (cooperative matrices, 64 x 128 tiles; every
              weight type but F32 and BF16) where op_matmul_cm_fits and cm_view can bind X up to a whole tile
              of tokens; a batched decode step's rows (op_matmul_rows) matmul_cm_b_* (64 x 32 tiles, key
              PH_DECODE) there. Without matrix units, where the int8 lanes run (caps.idot) and for the
              types with decode lanes and f16 activations, matmul_q8_* (matmul_tile.wgsl matmul_q: the same
              tiles on int8 activations per 16 values: wq_q8_tile; their own tolerance class, docs/testing.md,
              and docs/usage.md "Options"). op_matmul_split runs a product in 2 or 4 k slices (f32 partials in a caller's
              free scratch, then splitk.wgsl's sum) where op_matmul_split_slices finds that slices fill
              the compute units better than the tiles alone.

   API (ops.h):
     op_get_rows(vk, E, ids, y, scale)    y f32 (n, T) = dequant(E[ids[t]]) * scale
     op_matmul(vk, ph, W, X, Y)           Y (M, T) = W (K, M) . X (K, T)
     op_matmul_acc(vk, ph, W, X, Y)       Y f32 += W . X (the residual add fused into the product's store)
     op_matmul_split(vk, W, X, Y, acc, scratch, s)   prefill in s k slices; false (nothing recorded) if it cannot split
     op_matmul_split_slices(vk, W, X)     1, 2 or 4 by the tiles and the device's compute units
     op_matmul_split_max(vk)              the most op_matmul_split_slices returns on this device (sizes scratch)
     op_matmul_batch_slices(vk, W, X)     1 .. 16 for a batched decode step's product (from W's shape alone)
     op_matmul_split_begin / _end         a split product in two halves: several products' partials side by side
                                          in one scratch, one barrier, then their sums
     op_matmul_cm_fits(vk, ph, W, X)      does this prefill product run on matmul_cm?
     op_concat_rows(vk, a, b, &ab)        a's rows then b's as one tensor when b follows a in memory (q|k|v)
     op_gate_up_view(vk, gate, up, &gu)   the same for the FFN's gate and up
     op_matmul_glu(vk, GU, X, Y, gelu)    decode: act(gate) * up in one pass over both
     op_matmul_glu_norm(vk, GU, X, nw, eps, Y, gelu)    the same with the FFN norm of the f32 residual in the prologue
     op_matmul_glu_res_norm(vk, GU, X, O, pw, Xout, nw, eps, Y, gelu)   Gemma: x' = x + rmsnorm(o) * pw first (into Xout)
     op_matmul_rope(vk, W, X, nw, ...)    decode q/k/v with biases, RoPE and both KV stores in the epilogue
                                          (nw: the attention norm in the prologue)
     op_matmul_norm(vk, W, X, nw, eps, Y) decode: the output norm and the LM head in one dispatch (int8 lanes)
     op_matmul_rope_fits / op_matmul_norm_fits / op_matmul_norm_q8_fits   where the fused forms apply
     op_norm_narrow(op)                   a *_W op (the *_norm_w entries) -> its product's op

   Knobs: WQ_MV_THREADS (2^17) and WQ_MV_NORM_THREADS (2^16): the invocations a matvec aims at
   (the second for the entries with a norm prologue, half of it for rows past 3,072: wq_norm_threads);
   WQ_CM_PER_UNIT (2) and WQ_CM_WG_STEPS (8): matmul_cm's split-k cost model (op_matmul_split_slices);
   WQ_CMB_PER_UNIT (4): matmul_cm_b's counted as a wave; env EDGE_SPLITK=N
   forces N k slices (1: never split).

   Kernel keys (config/kernels.def), wt = every weight type of config/dtypes.def (rows made per type):
     get_rows_<wt>          (OP_GET_ROWS, PH_ANY,     wt, u32, f32)
     matvec_<wt>_a32_y32    (OP_MATMUL,   PH_DECODE,  wt, f32, f32)   and _a16_y32 (f16, f32), _a16_y16 (f16, f16)
     matmul_<wt>_a32_y32    (OP_MATMUL,   PH_PREFILL, wt, f32, f32)   and the same two f16 variants
     the fused and split forms have keys of their own (OP_MATMUL_GLU, OP_MATMUL_ROPE(_NORM),
     OP_MATMUL_GLU_NORM(_Q8), OP_MATMUL_GLU_RES_NORM(_Q8), OP_MATMUL_NORM_Q8, OP_MATMUL_CM(_SPLIT), OP_MATMUL_Q8(_SPLIT),
     OP_MATMUL_SPLIT, OP_SPLITK_SUM)
   Decode takes any T (token = grid z), so a short batch may use the matvec kernels too.

   Measured (lavapipe, tests): max |y - ref| / sum|w x| is 1.8e-7 .. 3.3e-7 for f32 output
   on every type, 1.1e-4 .. 2.1e-4 with f16 output (its own rounding); the f16-pair decode lanes
   with f32 output 6.1e-5 .. 1.0e-4 (every type with decode lanes, session of issue 32). */

/* The push-constant block shared by every entry of kernels/matmul.wgsl. */
typedef struct WqPush {
    u32 k, rows, r0, m, t; f32 scale; u32 acc, act, ll;
    u32 hd, n_head, n_head_kv, n_rot; f32 log2_base, freq_scale; u32 neox, n_ctx, bias, rbase;   /* matvec_k_rope */
    f32 eps;                                                                                    /* *_norm entries */
    u32 kc;                                                                                     /* matmul split-k: k per grid-z slice (0 = whole rows) */
} WqPush;

#define WQ_MATMUL_TM 64u   /* rows per matmul workgroup tile (matmul_tile.wgsl TM; a workgroup of 256) */
#define WQ_MATMUL_TN 64u   /* tokens per matmul workgroup tile (matmul_tile.wgsl TN) */
#define WQ_CM_TM 64u       /* rows per matmul_cm workgroup tile (matmul_cm.wgsl TM) */
#define WQ_CM_TN 128u      /* tokens per matmul_cm workgroup tile (matmul_cm.wgsl TN) */
#define WQ_CM_TK 32u       /* k per matmul_cm step (matmul_cm.wgsl TK): its rows are a multiple */
#define WQ_CM_PER_UNIT 2u  /* matmul_cm workgroups a compute unit runs at full rate (the H200: 3 fit by its 157 registers, 2 fill it: op_matmul_split_slices) */
#define WQ_CM_WG_STEPS 8u  /* a matmul_cm workgroup's prologue and stores, in k steps of WQ_CM_TK (op_matmul_split_slices) */
#define WQ_CMB_TN 32u      /* tokens per matmul_cm_b workgroup tile (matmul_cm.wgsl TB) */
#define WQ_CMB_PER_UNIT 4u /* matmul_cm_b workgroups per compute unit counted as a wave (the H100: 78-82 registers, 19 KiB) */
#define WQ_ROWS_WG   256u  /* get_rows: elements per workgroup (64 threads x 4) */

#define WQ_MV_WG      128u  /* invocations per matvec workgroup (matmul.wgsl MVT) */
#define WQ_NORM_MAX   3072u /* longest row of the *_norm entries (matmul.wgsl XV = 6: 768 vec4) */
#define WQ_NORM_W_MAX 4096u /* longest row of the *_norm_w entries (XV = 8; f16 activations) */
static bool is_act_dtype(DType t) { return t == DT_F32 || t == DT_F16; }

/* log2 of the lanes per row of a matvec over `rows` rows of K elements (matmul.wgsl p.ll): the
   fewest that give `target` invocations in all (WQ_MV_THREADS, or WQ_MV_NORM_THREADS for the
   entries with the norm prologue, whose cost grows with the workgroups), at most one 4-element
   group (k-quants: one super-block per 8 lanes, and at least 8 lanes) per lane and pass, and at
   most max_ll. Measured on the H200 with the f16-pair lanes (docs/perf-log.md #77): llama's q/k/v (3,072 rows of
   2,048, norm prologue) takes 9.8 us with 32 lanes and 12.9 with 64; its ffn_down (2,048 rows of
   8,192) 15.0 us with 64 and 16.0 with 32. */
static u32 mv_lanes(DType wt, u64 K, u64 rows, u32 max_ll, u32 target) {
    bool kq = dtype_klanes(wt);
    u64 units = kq ? K / 32 : (K + 3) / 4;          /* lanes that each get work on the first pass (32 elements each) */
    u32 ll = kq ? 3 : 0;
    while (ll < max_ll && rows << ll < target && (2ull << ll) <= units) ll++;
    return ll;
}

/* The invocations a plain decode product aims at: twice WQ_MV_THREADS where both its rows and their
   length pass 3,072 (llama-3.1-8b's attn_out and ffn_down, the 7B rows'). Measured on the H200:
   tg128 llama-3.1-8b 291.6 -> 297.4, qwen2.5-7b 317.0 -> 325.2; llama-3.2-1b's ffn_down (2,048 rows of
   8,192) keeps WQ_MV_THREADS (#77). */
static u32 wq_mv_threads(u64 K, u64 rows) { return K > WQ_NORM_MAX && rows > WQ_NORM_MAX ? WQ_MV_THREADS * 2 : WQ_MV_THREADS; }

/* Rows per workgroup of a glu entry: the k-quant entries with f16 activations (matmul.wgsl runs its
   *_h and *_q entries for them: matvec_k_glu_h, matvec_k_glu_norm_h / _q, matvec_k_glu_res_norm_h /
   _q) take a gate row and its up row in one invocation (one set of activations for both), the others
   put the gate rows on the first half of the invocations and the up rows on the second. */
static u32 wq_glu_rows(DType wt, DType act, u32 ll) {
    bool pairs = dtype_klanes(wt) && act == DT_F16;
    return (pairs ? WQ_MV_WG : WQ_MV_WG / 2) >> ll;
}

static u64 wq_gcd(u64 a, u64 b) { while (b) { u64 t = a % b; a = b; b = t; } return a; }

/* Rows per bound chunk of a weight with rows of rb bytes: all of them when the tensor
   fits one binding, else the most that fit whose byte count keeps the next chunk's
   offset aligned (a multiple of align / gcd(rb, align) rows) and, for a regrouped type, holds whole
   units of 8 blocks (vk_units: a chunk's blocks are regrouped as the tensor's). */
static u64 wq_chunk_rows(Vk *vk, const char *op, const Tensor *W, u64 rb, u64 rows) {
    u64 lim = vk->caps.max_storage_range & ~(u64)15;   /* views are whole 16-byte vectors */
    if (align_up(W->nbytes, 16) <= lim) return rows;
    u64 al = vk->caps.min_offset_align, step = al / wq_gcd(rb, al);
    if (dtype_info[W->dtype].up != DU_COPY) { u64 nsb = rb / dtype_info[W->dtype].bytes, s8 = 8 / wq_gcd(nsb, 8); step = step / wq_gcd(step, s8) * s8; }
    u64 n = lim / rb / step * step;
    if (n == 0)
        die(EXIT_DEVICE, "op %s: tensor '%s' rows of %llu bytes cannot be bound in aligned chunks under maxStorageBufferRange %llu "
            "(needs %llu rows per chunk)", op, W->name, (unsigned long long)rb, (unsigned long long)lim, (unsigned long long)step);
    if (W->offset % al != 0) die(EXIT_USAGE, "op %s: tensor '%s' offset %llu is not aligned to %llu", op, W->name,
                                 (unsigned long long)W->offset, (unsigned long long)al);
    return n;
}

/* A view of rows r0 .. r0+n-1 of W (same arena block, offset advanced by whole rows).
   Its byte count is rounded up to whole 16-byte vectors: matmul.wgsl reads the weights as
   array<vec4<u32>>, whose length is the bound range / 16, so the last bytes of the tensor
   would otherwise be out of reach (its Q6_K blocks count is floor(range / 210), which the
   rounding keeps). The padding bytes lie before the next tensor (vk_tensor_at reserves whole
   16-byte vectors), or are refused when the block ends right there. */
static Tensor wq_view(const char *op, const Tensor *W, u64 r0, u64 n, u64 rb) {
    if (W->units != (dtype_info[W->dtype].up != DU_COPY))
        die(EXIT_USAGE, "op %s: tensor '%s' (%s) is bound as a weight but was not made by vk_weight (its bytes are not in units)",
            op, W->name, dtype_name[W->dtype]);
    Tensor v = *W;
    v.ndim = 2; v.ne[1] = n; v.ne[2] = v.ne[3] = 1;
    v.nelem = W->ne[0] * n; v.nbytes = align_up(n * rb, 16); v.offset = W->offset + r0 * rb;
    if (!W->arena->planning && v.offset + v.nbytes > W->arena->blocks[W->block].size)
        die(EXIT_USAGE, "op %s: tensor '%s' ends %llu bytes before a whole 16-byte vector at the end of its arena block; "
            "leave 16 bytes of padding after weight tensors", op, W->name, (unsigned long long)(v.nbytes - n * rb));
    return v;
}

static u64 wq_row_bytes(const char *op, const Tensor *W) {
    u64 rb = dtype_bytes(W->dtype, W->ne[0]);
    need(rb != 0, op, W, "the row length is not a whole number of blocks of its type");
    return rb;
}

void op_get_rows(Vk *vk, const Tensor *E, const Tensor *ids, const Tensor *y, f32 scale) {
    const char *op = "get_rows";
    u64 n = E->ne[0], rows = E->nelem / n, T = ids->nelem;
    u64 rb = wq_row_bytes(op, E);
    need(ids->dtype == DT_U32, op, ids, "ids must be u32");
    need(y->nelem == n * T, op, y, "output size differs from n_embd x tokens");
    need(T >= 1 && T <= 65535, op, ids, "tokens must be 1..65535");
    need(y->nelem <= 0xffffffffu && rows <= 0xffffffffu, op, y, "more than 2^32 elements");
    VkPipe *p = op_pipe(vk, OP_GET_ROWS, PH_ANY, E->dtype, ids->dtype, y->dtype);
    u64 chunk = wq_chunk_rows(vk, op, E, rb, rows);
    u32 gx = (u32)((n + WQ_ROWS_WG - 1) / WQ_ROWS_WG);
    need(gx <= 65535, op, E, "rows too long for one dispatch");
    for (u64 r0 = 0; r0 < rows; r0 += chunk) {
        u64 nr = MIN(chunk, rows - r0);
        Tensor v = wq_view(op, E, r0, nr, rb);
        WqPush push = { .k = (u32)n, .rows = (u32)nr, .r0 = (u32)r0, .m = (u32)rows, .t = (u32)T, .scale = scale };
        const Tensor *ts[3] = { &v, ids, y };
        vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, (u32)T, 1);
    }
}

/* Does a prefill product run on the cooperative-matrix kernel (matmul_cm.wgsl)? On devices that
   have the 16x16x16 f16 configuration (caps.coopmat), for every weight type with matmul_cm products
   (config/dtypes.def cm: all but F32 and BF16), rows a multiple of its 32-element k step, f16 activations, X
   bound up to a whole tile of tokens within the device's binding limit, and the kernel's workgroup
   memory within the device's. */
bool op_matmul_cm_off;      /* tests: the plain tiles even where matmul_cm would run */
u64 op_cm_products;         /* products recorded on matmul_cm (tests: the kernel ran) */
/* rows: a batched decode step's product, whose kernel is matmul_cm_b (32-token tiles, key PH_DECODE).
   Its fit is judged for the most rows a step may have (EDGE_MAX_SEQ), so that whether a step's rows
   run on matmul_cm_b does not depend on how many there are. */
static u64 cm_tile_tokens(bool rows) { return rows ? WQ_CMB_TN : WQ_CM_TN; }
static u64 cm_bound_tokens(const Tensor *W, const Tensor *X, bool rows) {
    u64 T = X->nelem / W->ne[0], tn = cm_tile_tokens(rows);
    return (MAX(T, rows ? (u64)EDGE_MAX_SEQ : 1u) + tn - 1) / tn * tn;
}
static bool cm_fits(const Vk *vk, const Tensor *W, const Tensor *X, bool rows) {
    if (!(!op_matmul_cm_off && vk->caps.coopmat && X->dtype == DT_F16 && W->dtype < DT_COUNT &&
          dtype_info[W->dtype].cm != DC_NO && W->ne[0] % WQ_CM_TK == 0 && W->ne[0] % dtype_info[W->dtype].blk == 0)) return false;
    i32 d = kdef_find(OP_MATMUL_CM, rows ? PH_DECODE : PH_PREFILL, W->dtype, DT_F16, DT_F32);   /* the kernel runs here: its */
    i32 ki = d < 0 ? -1 : vk_kernel_find(kdefs[d].kernel);                                        /* workgroup memory, ... */
    Err e;
    if (ki < 0 || !vk_kernel_check(&vk->caps, &kernel_table[ki], &e)) return false;
    return dtype_bytes(X->dtype, W->ne[0] * cm_bound_tokens(W, X, rows)) <= vk->caps.max_storage_range;
}
bool op_matmul_cm_fits(const Vk *vk, Phase ph, const Tensor *W, const Tensor *X) { return ph == PH_PREFILL && cm_fits(vk, W, X, false); }

/* matmul_cm reads whole tiles of tokens: *xw = X bound up to one (false, and no cm, when X's
   arena block ends before that). */
static bool cm_view(const Vk *vk, const Tensor *W, const Tensor *X, bool rows, Tensor *xw) {
    *xw = *X;
    if (!cm_fits(vk, W, X, rows)) return false;
    u64 K = W->ne[0], T = X->nelem / K, tn = cm_tile_tokens(rows);
    u64 nb = dtype_bytes(X->dtype, K * ((T + tn - 1) / tn * tn));
    if (!X->arena->planning && X->offset + dtype_bytes(X->dtype, K * cm_bound_tokens(W, X, rows)) > X->arena->blocks[X->block].size) return false;
    xw->nbytes = nb;
    return true;
}

bool op_matmul_q8_off;       /* tests: the f16-pair lanes even where the int8 (*_q) lanes would run */
bool op_matmul_q8t_off;      /* tests: the f32 tiles even where matmul_q would run */
u64 op_q8t_products;         /* prefill products recorded on matmul_q (tests: the kernel ran) */
/* Does a prefill product without matrix units run on int8 activations (matmul_q)? Where the int8
   lanes run (caps.idot), with f16 activations, for the types with decode lanes (K or B). */
static bool wq_q8_tile(const Vk *vk, const Tensor *W, const Tensor *X) {
    return vk->caps.idot && !op_matmul_q8_off && !op_matmul_q8t_off && X->dtype == DT_F16 && dtype_klanes(W->dtype);
}

/* Y (+)= W . X: decode's lanes (token in grid z), prefill's tiles or matmul_cm, or with rows (a batched
   decode step: op_matmul_rows) matmul_cm_b where matmul_cm would run, else the tiles. */
static void wq_matmul(Vk *vk, Phase ph, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc, bool rows) {
    const char *op = acc ? "matmul_acc" : "matmul";
    need(!acc || Y->dtype == DT_F32, op, Y, "an accumulated output must be f32");
    u64 K = W->ne[0], M = W->nelem / K, T = X->nelem / K;
    u64 rb = wq_row_bytes(op, W);
    need(X->ne[0] == K && X->nelem % K == 0, op, X, "row length differs from the weight's row length");
    need(Y->nelem == M * T, op, Y, "output size differs from weight rows x tokens");
    need(T >= 1 && T <= 65535, op, X, "tokens must be 1..65535");
    need(Y->nelem <= 0xffffffffu && X->nelem <= 0xffffffffu, op, Y, "more than 2^32 elements");
    need(ph == PH_DECODE || ph == PH_PREFILL, op, W, "phase must be decode or prefill");
    Tensor xw;
    bool cm = ph == PH_PREFILL && cm_view(vk, W, X, rows, &xw);
    bool q8 = ph == PH_PREFILL && !cm && wq_q8_tile(vk, W, X);
    VkPipe *p = op_pipe(vk, cm ? OP_MATMUL_CM : q8 ? OP_MATMUL_Q8 : OP_MATMUL, cm && rows ? PH_DECODE : ph, W->dtype, X->dtype, Y->dtype);
    u64 chunk = wq_chunk_rows(vk, op, W, rb, M);
    for (u64 r0 = 0; r0 < M; r0 += chunk) {
        u64 nr = MIN(chunk, M - r0);
        Tensor v = wq_view(op, W, r0, nr, rb);
        WqPush push = { .k = (u32)K, .rows = (u32)nr, .r0 = (u32)r0, .m = (u32)M, .t = (u32)T, .scale = 1.0f, .acc = acc ? 1u : 0u };
        const Tensor *ts[3] = { &v, cm ? &xw : X, Y };
        if (ph == PH_DECODE) {          /* WQ_MV_WG >> ll rows per workgroup, token in z */
            need(p->k->wg[0] == WQ_MV_WG, op, W, "the matvec kernel's workgroup size differs from WQ_MV_WG");
            push.ll = mv_lanes(W->dtype, K, M, 7, wq_mv_threads(K, M));
            u32 mvr = WQ_MV_WG >> push.ll;
            u32 gx, gy; rows_grid((nr + mvr - 1) / mvr, &gx, &gy);
            vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, (u32)T);
        } else if (cm) {                /* 64 rows x 128 tokens (matmul_cm_b: 32) per workgroup of 4 subgroups */
            need(p->k->wg[0] == 128, op, W, "the matmul_cm kernel's workgroup size differs from 128");
            u64 gx = (nr + WQ_CM_TM - 1) / WQ_CM_TM, tn = cm_tile_tokens(rows);
            need(gx <= 65535, op, W, "more than 65535 tiles of rows in one chunk");
            vk_dispatch(vk, p, ts, 3, &push, sizeof push, (u32)gx, (u32)((T + tn - 1) / tn), 1);
            op_cm_products++;
        } else {
            u64 gx = (nr + WQ_MATMUL_TM - 1) / WQ_MATMUL_TM;
            need(p->k->wg[0] == 256, op, W, "the matmul kernel's workgroup size differs from 256");
            need(gx <= 65535, op, W, "more than 65535 x 64 rows in one chunk");
            vk_dispatch(vk, p, ts, 3, &push, sizeof push, (u32)gx, (u32)((T + WQ_MATMUL_TN - 1) / WQ_MATMUL_TN), 1);
            if (q8) op_q8t_products++;
        }
    }
}

void op_matmul(Vk *vk, Phase ph, const Tensor *W, const Tensor *X, const Tensor *Y) { wq_matmul(vk, ph, W, X, Y, false, false); }
void op_matmul_rows(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc) { wq_matmul(vk, PH_PREFILL, W, X, Y, acc, true); }
u64 op_split_products;      /* products recorded through op_matmul_split (tests: the split path ran) */

/* The k per slice when K is cut into s slices (a multiple of 256: whole super-blocks), as
   op_matmul_split_begin cuts it; ceil(K / kc) slices result, which may be fewer than s. */
static u64 split_kc(u64 K, u32 s) { return align_up((K + s - 1) / s, 256); }

/* matmul_cm's time for W (K, M) . X (K, T) in s k slices (split_kc), in k steps of one workgroup; 0
   where s slices are not s distinct slices, or where one slice (no split) would not fill a wave. A
   wave of WQ_CM_PER_UNIT workgroups per unit costs a slice's steps plus WQ_CM_WG_STEPS; the partials
   cost a step per slice per 256,000 outputs (written and summed again). Fitted on the H200 to attn_out
   and ffn_down of eight shapes (1B to 8B, pp512, 2 to 8 slices, docs/perf-log.md session 38): of 1 to
   4 slices it picks the fastest for all 16 products; the wave model of 3 resident workgroups it
   replaced chose counts up to 41% slower (qwen3-4b's ffn_down). One slice alone in a partial wave ran
   slower than the model says (llama-3.2-3b's attn_out 136 us against 121 in 4 slices): the workgroups
   do not spread evenly. */
static f64 cm_split_cost(u64 K, u64 M, u64 T, u32 s, u64 units) {
    u64 kc = split_kc(K, s), n = (K + kc - 1) / kc, cap = WQ_CM_PER_UNIT * units;
    u64 tiles = (M + WQ_CM_TM - 1) / WQ_CM_TM * ((T + WQ_CM_TN - 1) / WQ_CM_TN), wg = tiles * n;
    if (n != s || (s == 1 && tiles < cap)) return 0;
    f64 waves = (f64)((wg + cap - 1) / cap), steps = (f64)(kc / WQ_CM_TK + WQ_CM_WG_STEPS);
    return waves * steps + (s > 1 ? (f64)s * (f64)(M * T) / 256000.0 : 0);
}

/* the count of 1 to 4 slices of least cm_split_cost (1 where none applies) */
static u32 cm_split_best(u64 K, u64 M, u64 T, u64 units) {
    u32 best = 1;
    f64 cost = 0;
    for (u32 s = 1; s <= 4; s++) {
        f64 c = cm_split_cost(K, M, T, s, units);
        if (c > 0 && (!cost || c < cost)) { cost = c; best = s; }
    }
    return best;
}

/* The k slices a prefill product over W (K, M) . X (K, T) should take: 1 to 4, where the driver
   reports the compute unit count (none: 1, no split). EDGE_SPLITK=N forces N (1 = never split).
   - The f32 tiles: the fewest slices that give at least 8 workgroups per unit. Measured on the H200
     (132 SMs), pp512 against no split: llama-3.2-1b +1.6%, qwen2.5-1.5b +14%, gemma-2-2b +9% with 4
     slices for attn_out and ffn_down (192-288 tiles of 64 x 64); 3 slices are slower than 2 or 4
     there (a second, mostly empty wave), 6 and 8 no faster than 4.
   - matmul_cm: the count of least cm_split_cost. */
u32 op_matmul_split_slices(Vk *vk, const Tensor *W, const Tensor *X) {
    if (edge_opt.splitk.v >= 1) return (u32)MIN(edge_opt.splitk.v, 64);
    u64 K = W->ne[0], M = W->nelem / K, T = X->nelem / K, units = vk->caps.compute_units;
    if (!units || vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return 1;
    Tensor xw;
    if (cm_view(vk, W, X, false, &xw)) return cm_split_best(K, M, T, units);
    u64 tiles = (M + WQ_MATMUL_TM - 1) / WQ_MATMUL_TM * ((T + WQ_MATMUL_TN - 1) / WQ_MATMUL_TN), want = 8 * units;
    u32 s = 1;
    while (s < 4 && tiles * s < want) s *= 2;
    return s;
}

/* The k slices of a batched decode step's product (op_matmul_rows' kernels): of 1 .. 16 the one whose
   slices of kc (a multiple of 256, as op_matmul_split_begin cuts them) take the fewest k steps in all,
   counting a wave of workgroups (WQ_CMB_PER_UNIT per compute unit; the f32 tiles: 8) as one, the fewer
   slices on a tie; a count whose partials for EDGE_MAX_SEQ rows would pass the binding limit is not
   taken. So a product of a few tiles of rows still fills the device, slices that spill into a second,
   mostly empty wave are not taken (llama-3.2-1b's gate on the H100: 4 slices of 512, 512 workgroups in
   one wave of 528), and the count depends on the weight's shape, not on how many rows a step has.
   1 where op_matmul_split_slices never splits; EDGE_SPLITK=N: N. */
u32 op_matmul_batch_slices(Vk *vk, const Tensor *W, const Tensor *X) {
    if (edge_opt.splitk.v >= 1) return (u32)MIN(edge_opt.splitk.v, 64);
    u64 K = W->ne[0], M = W->nelem / K, units = vk->caps.compute_units;
    if (!units || vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return 1;
    Tensor xw;
    bool cm = cm_view(vk, W, X, true, &xw);
    u64 tm = cm ? WQ_CM_TM : WQ_MATMUL_TM, tiles = (M + tm - 1) / tm, cap = (cm ? WQ_CMB_PER_UNIT : 8) * units;
    u32 best = 1; u64 cost = (tiles + cap - 1) / cap * K;
    for (u32 s = 2; s <= 16; s++) {
        u64 kc = split_kc(K, s), n = (K + kc - 1) / kc, c = (tiles * n + cap - 1) / cap * kc;
        if (n >= 2 && c < cost && n * M * EDGE_MAX_SEQ * 4 <= vk->caps.max_storage_range) { cost = c; best = s; }
    }
    return best;
}

u32 op_matmul_split_max(Vk *vk) {
    if (edge_opt.splitk.v >= 1) return (u32)MIN(edge_opt.splitk.v, 64);
    return !vk->caps.compute_units || vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 4;
}

/* Prefill Y (M, T) (+)= W . X in s k-slices of kc elements (a multiple of 256) side by side:
   op_matmul_split_begin records one matmul_split dispatch (grid z = slice) that writes the f32 partial
   products to a part carved from `scratch` at *used (any buffer whose bytes are free until the
   end; *used advances), op_matmul_split_end (after a barrier) records splitk_sum, which adds the slices (and
   Y when acc) into Y. op_matmul_split_begin returns false, recording nothing, when the product does not
   split: s < 2, K under two slices, W bound in row chunks, too little scratch, a part over the
   binding limit. (Measured on the H200: q, k and v split side by side before one barrier were
   ~1.5% slower than unsplit; they already run concurrently. A batched decode step does split them side
   by side, transformer.c xf_products: its few rows leave the unsplit products a handful of tiles.) */
bool op_matmul_split_begin(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc,
                           const Tensor *scratch, u64 *used, u32 s, bool rows, OpSplit *sp) {
    const char *op = "matmul_split";
    u64 K = W->ne[0], M = W->nelem / K, T = X->nelem / K;
    if (s < 2) return false;
    u64 kc = split_kc(K, s);
    s = (u32)((K + kc - 1) / kc);
    u64 rb = dtype_bytes(W->dtype, K), off = align_up(*used, vk->caps.min_offset_align), pb = (u64)s * M * T * 4;
    if (s < 2 || !rb || wq_chunk_rows(vk, op, W, rb, M) < M || off + pb > scratch->nbytes || pb > vk->caps.max_storage_range) return false;
    need(!acc || Y->dtype == DT_F32, op, Y, "an accumulated output must be f32");
    need(X->ne[0] == K && X->nelem % K == 0 && Y->nelem == M * T, op, Y, "shapes differ from W (K, M) . X (K, T)");
    need(T >= 1 && T <= 65535 && (u64)s * M * T <= 0xffffffffu, op, X, "tokens must be 1..65535 and the slices under 2^32 elements");
    Tensor xw;
    bool cm = cm_view(vk, W, X, rows, &xw);
    bool q8 = !cm && wq_q8_tile(vk, W, X);
    VkPipe *p = op_pipe(vk, cm ? OP_MATMUL_CM_SPLIT : q8 ? OP_MATMUL_Q8_SPLIT : OP_MATMUL_SPLIT, cm && rows ? PH_DECODE : PH_PREFILL, W->dtype, X->dtype, DT_F32);
    Tensor v = wq_view(op, W, 0, M, rb), pv = *scratch;
    pv.name = "split-k partials"; pv.dtype = DT_F32; pv.ndim = 1; pv.ne[0] = (u64)s * M * T; pv.ne[1] = pv.ne[2] = pv.ne[3] = 1;
    pv.nelem = pv.ne[0]; pv.nbytes = pb; pv.offset = scratch->offset + off;
    WqPush push = { .k = (u32)K, .rows = (u32)M, .r0 = 0, .m = (u32)M, .t = (u32)T, .scale = 1.0f, .kc = (u32)kc };
    const Tensor *ts[3] = { &v, &xw, &pv };
    u64 tm = cm ? WQ_CM_TM : WQ_MATMUL_TM, tn = cm ? cm_tile_tokens(rows) : WQ_MATMUL_TN, gx = (M + tm - 1) / tm;
    need(gx <= 65535, op, W, "more than 65535 tiles of rows");
    need(p->k->wg[0] == (cm ? 128u : 256u), op, W, "the split kernel's workgroup size differs from its tile's");
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, (u32)gx, (u32)((T + tn - 1) / tn), s);
    if (cm) op_cm_products++;
    if (q8) op_q8t_products++;
    *used = off + pb;
    *sp = (OpSplit){ pv, *Y, s, acc };
    return true;
}

void op_matmul_split_end(Vk *vk, const OpSplit *sp) {
    VkPipe *ps = op_pipe(vk, OP_SPLITK_SUM, PH_PREFILL, DT_F32, DT_F32, sp->y.dtype);
    struct { u32 n, s, acc; } push = { (u32)sp->y.nelem, sp->s, sp->acc ? 1u : 0u };
    const Tensor *ts[2] = { &sp->part, &sp->y };
    u32 sx, sy; rows_grid((sp->y.nelem + 255) / 256, &sx, &sy);
    vk_dispatch(vk, ps, ts, 2, &push, sizeof push, sx, sy, 1);
    op_split_products++;
}

bool op_matmul_split(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *Y, bool acc, const Tensor *scratch, u32 s) {
    u64 used = 0; OpSplit sp;
    if (!op_matmul_split_begin(vk, W, X, Y, acc, scratch, &used, s, false, &sp)) return false;
    vk_barrier(vk);
    op_matmul_split_end(vk, &sp);
    return true;
}

void op_matmul_acc(Vk *vk, Phase ph, const Tensor *W, const Tensor *X, const Tensor *Y) { wq_matmul(vk, ph, W, X, Y, true, false); }

/* a and b as one tensor of a's rows then b's, when b lies right after a in the same arena
   block, with one dtype and row length, and the pair fits one binding; a regrouped type only when a
   holds whole units of 8 blocks (vk_units regroups each tensor on its own: b's units must start
   where a's end). */
bool op_concat_rows(Vk *vk, const Tensor *a, const Tensor *b, Tensor *ab) {
    if (a->arena != b->arena || a->block != b->block || a->dtype != b->dtype || a->ne[0] != b->ne[0] ||
        b->offset != a->offset + a->nbytes || !a->nbytes || !b->nbytes) return false;
    if (dtype_info[a->dtype].up != DU_COPY && a->nbytes / dtype_info[a->dtype].bytes % 8) return false;
    if (align_up(a->nbytes + b->nbytes, 16) > vk->caps.max_storage_range) return false;
    *ab = *a;
    ab->ndim = 2; ab->ne[1] = a->nelem / a->ne[0] + b->nelem / b->ne[0]; ab->ne[2] = ab->ne[3] = 1;
    ab->nelem = a->nelem + b->nelem; ab->nbytes = a->nbytes + b->nbytes;
    ab->name = "(rows of two tensors)";
    return true;
}

bool op_gate_up_view(Vk *vk, const Tensor *gate, const Tensor *up, Tensor *gu) {
    if (gate->nelem != up->nelem || !op_concat_rows(vk, gate, up, gu)) return false;
    gu->name = "ffn_gate+up";
    return true;
}

u64 op_q8_products;          /* products recorded on the *_q lanes (tests: the kernel ran) */
/* Do the int8 lanes (*_q) run on this device: integer dot products it accelerates (caps.idot), not
   turned off by a test? */
static bool wq_q8_dev(const Vk *vk) { return vk->caps.idot && !op_matmul_q8_off; }

/* Does the gate/up product with the FFN norm in its prologue run on int8 activations
   (matvec_k_glu_norm_q)? The weight types whose i8 column in config/dtypes.def is GLU, with f16
   activations (out: the glu output dtype): Q4_K as measured; Q5_K and the group-lane types (one f16
   scale per 32 weights: the int8 blocks' own shape) take Q4_K's choice, not measured on their own
   yet; Q6_K (HEAD) keeps its f16-pair lanes there. The q/k/v product measured slower on int8
   (docs/perf-log.md #85) and keeps its f16 lanes. */
static bool wq_q8(const Vk *vk, const Tensor *W, DType out) {
    return wq_q8_dev(vk) && dtype_info[W->dtype].i8 == DI_GLU && out == DT_F16;
}

bool op_matmul_s8_on;         /* tests, fat: the gate/up on int8 in 32-bit multiplies also where the device would not take it */
/* Does the gate/up product with the FFN norm in its prologue run on int8 activations in 32-bit
   multiplies (matvec_k_glu_norm_s, two int8 products per multiply)? With EDGE_IDOT=1 on a device
   without f16 arithmetic (the portable profile: f32 activations, and the dot-product lanes take f16),
   for the Q4_K layout's types. Not by default: it moves that path from the f32 class to the int8
   class (docs/testing.md), which the devices with accelerated dot products take by default. Measured
   on the H200 (portable, docs/perf-log.md #138): gate/up 25.1 -> 17.7 us per llama-3.2-1b layer, tg128
   +12-14%. */
static bool wq_s8(const Vk *vk, const Tensor *W, DType out) {
    bool dev = op_matmul_s8_on || (edge_opt.idot && !vk->caps.f16_arith && !edge_opt.no_idot);
    return dev && !op_matmul_q8_off && out == DT_F32 && (W->dtype == DT_Q4_K || W->dtype == DT_Q5_K);
}

bool op_matmul_norm_fits(const Tensor *W, const Tensor *X, DType act) {
    return dtype_klanes(W->dtype) && X->dtype == DT_F32 && X->ne[0] == W->ne[0] && X->nelem % W->ne[0] == 0 &&
           W->ne[0] <= (act == DT_F16 ? WQ_NORM_W_MAX : WQ_NORM_MAX);
}

/* The norm-prologue ops and their *_W twins (matmul.wgsl's *_norm_w entries, rows past WQ_NORM_MAX). */
static const Op wq_norm_ops[][2] = {
    { OP_MATMUL_ROPE_NORM, OP_MATMUL_ROPE_NORM_W }, { OP_MATMUL_GLU_NORM, OP_MATMUL_GLU_NORM_W },
    { OP_MATMUL_GLU_NORM_Q8, OP_MATMUL_GLU_NORM_Q8_W }, { OP_MATMUL_GLU_RES_NORM, OP_MATMUL_GLU_RES_NORM_W },
    { OP_MATMUL_GLU_RES_NORM_Q8, OP_MATMUL_GLU_RES_NORM_Q8_W }, { OP_MATMUL_NORM, OP_MATMUL_NORM_W },
    { OP_MATMUL_NORM_Q8, OP_MATMUL_NORM_Q8_W },
};
Op op_norm_narrow(Op op) {
    for (size_t i = 0; i < sizeof wq_norm_ops / sizeof wq_norm_ops[0]; i++) if (wq_norm_ops[i][1] == op) return wq_norm_ops[i][0];
    return op;
}
/* The kernel op of a norm-prologue product over rows of K: narrow, or its *_W twin past WQ_NORM_MAX. */
static Op wq_norm_op(Op narrow, u64 K) {
    for (size_t i = 0; K > WQ_NORM_MAX && i < sizeof wq_norm_ops / sizeof wq_norm_ops[0]; i++) if (wq_norm_ops[i][0] == narrow) return wq_norm_ops[i][1];
    return narrow;
}
/* The invocations a norm-prologue product aims at (mv_lanes): half for the *_norm_w entries, whose
   longer prologue costs each workgroup more. Measured on the H200: llama-3.1-8b's q/k/v 24.2 -> 20.0 us
   (16 -> 8 lanes per row), tg128 291.6 -> 303.4; qwen2.5-7b 317.0 -> 321.3; a quarter: the same. */
static u32 wq_norm_threads(u64 K) { return K > WQ_NORM_MAX ? WQ_MV_NORM_THREADS / 2 : WQ_MV_NORM_THREADS; }

static void wq_need_norm(const char *op, const Tensor *W, const Tensor *X, const Tensor *nw, DType act) {
    need(op_matmul_norm_fits(W, X, act), op, X,
         "the norm prologue needs weights with decode lanes (config/dtypes.def), f32 rows and k <= 3072 (4096 with f16 activations)");
    need(X->nelem / X->ne[0] <= 65535, op, X, "more than 65535 rows");
    need(nw->dtype == DT_F32 && nw->nelem == W->ne[0], op, nw, "the norm weight must be f32 of the row length");
}

/* The output norm and the LM head in one dispatch, on int8 activations: where the int8 lanes run,
   f16 activations, rows of a type with decode lanes of k <= 3072 and f32 rows (a token each: grid z). */
bool op_matmul_norm_q8_fits(const Vk *vk, const Tensor *W, const Tensor *X, DType act) {
    return wq_q8_dev(vk) && act == DT_F16 && op_matmul_norm_fits(W, X, act);
}

/* The products with the norm prologue, one dispatch per chunk of rows: op_matmul_norm (the int8 LM
   head, kop OP_MATMUL_NORM_Q8) and op_matmul_normed (q/k/v of the q/k-norm models, OP_MATMUL_NORM). */
static void wq_norm_product(Vk *vk, const char *op, Op kop, DType act, const Tensor *W, const Tensor *X, const Tensor *nw,
                            f32 eps, const Tensor *Y) {
    u64 K = W->ne[0], M = W->nelem / K, T = X->nelem / K;
    u64 rb = wq_row_bytes(op, W);
    bool q8 = kop == OP_MATMUL_NORM_Q8;
    wq_need_norm(op, W, X, nw, act);
    need(Y->nelem == M * T && Y->dtype == DT_F32, op, Y, "output must be (rows, T) f32");
    need(T >= 1 && T <= 65535, op, X, "tokens must be 1..65535");
    VkPipe *p = op_pipe(vk, wq_norm_op(kop, K), PH_DECODE, W->dtype, act, DT_F32);
    need(p->k->wg[0] == WQ_MV_WG, op, W, "the matvec kernel's workgroup size differs from WQ_MV_WG");
    u64 chunk = wq_chunk_rows(vk, op, W, rb, M);
    for (u64 r0 = 0; r0 < M; r0 += chunk) {
        u64 nr = MIN(chunk, M - r0);
        Tensor v = wq_view(op, W, r0, nr, rb);
        /* The LM head (q8): 4 lanes per row (one per 64-weight chunk of a super-block): 32 rows per
           workgroup, so each workgroup's prologue serves more rows; the grid is capped at 32
           workgroups per compute unit (each then takes several groups of rows). Measured on the H200
           (docs/perf-log.md #88): 8 lanes per row and uncapped, 143 us for llama's head; 4 lanes,
           122.5 us; fewer workgroups than 32 per SM are slower (one per SM 137 us). */
        WqPush push = { .k = (u32)K, .rows = (u32)nr, .r0 = (u32)r0, .m = (u32)M, .t = q8 ? 1 : (u32)T, .scale = 1.0f, .eps = eps,
                        .ll = q8 ? 2 : mv_lanes(W->dtype, K, M, 6, wq_norm_threads(K)) };
        const Tensor *ts[4] = { &v, X, Y, nw };
        u64 groups = (nr + (WQ_MV_WG >> push.ll) - 1) / (WQ_MV_WG >> push.ll);
        u32 gx = 1, gy = 1;
        if (q8) gx = (u32)MIN(groups, MIN(vk->caps.compute_units ? (u64)vk->caps.compute_units * 32 : 65535, 65535));
        else rows_grid(groups, &gx, &gy);
        vk_dispatch(vk, p, ts, 4, &push, sizeof push, gx, gy, (u32)T);
        op_q8_products += q8;
    }
}

void op_matmul_norm(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *Y) {
    wq_norm_product(vk, "matmul_norm_q8", OP_MATMUL_NORM_Q8, DT_F16, W, X, nw, eps, Y);
}

void op_matmul_normed(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, DType act, const Tensor *Y) {
    wq_norm_product(vk, "matmul_norm", OP_MATMUL_NORM, act, W, X, nw, eps, Y);
}

/* log2 of the lanes per row of a gate/up with the norm prologue. The int8 entries take 4 lanes per row
   (one per 64-weight chunk of a super-block: twice the rows per workgroup, half the prologues) where that
   pays: with Gemma's residual prologue, which reads four rows and normalizes twice in every workgroup
   (measured on the H200, docs/perf-log.md #123: gemma-2-2b tg128 549.6 -> 582.3), and on the wide rows
   (the *_norm_w entries, k > WQ_NORM_MAX) where that grid fits one wave of WQ_GLU_W_PER_UNIT workgroups
   per compute unit, on devices that tell their compute units (perf-log #136, H200: llama-3.1-8b's 448
   workgroups on 132 SMs, tg128 323.4 -> 333.1; qwen2.5-7b's 592 would leave a second wave nearly empty:
   it keeps 8 lanes, level). The plain-norm entry of narrower rows is faster at mv_lanes' 8 (qwen2.5-1.5b
   778.5 -> 759.6 at 4; qwen3-4b 441.4 -> 427.2). */
#define WQ_GLU_W_PER_UNIT 4u
static u32 wq_glu_norm_lanes(const Vk *vk, DType wt, u64 K, u64 M, bool q8, bool res) {
    u64 units = vk->caps.compute_units, g4 = wq_glu_rows(wt, DT_F16, 2);
    if (q8 && (res || (K > WQ_NORM_MAX && units && (M + g4 - 1) / g4 <= units * WQ_GLU_W_PER_UNIT))) return 2;
    return mv_lanes(wt, K, 2 * M, 6, wq_norm_threads(K));
}

/* op_matmul_glu_norm, and with R (O, pw, Xout) Gemma's post-attention residual before the norm:
   X' = X + rmsnorm(O) * pw into Xout, then the product of rmsnorm(X') * nw */
static void wq_glu_norm(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *const *R, const Tensor *nw, f32 eps, const Tensor *Y, bool gelu) {
    const char *op = R ? "matmul_glu_res_norm" : "matmul_glu_norm";
    u64 K = GU->ne[0], M = GU->nelem / K / 2, T = X->nelem / K;
    wq_need_norm(op, GU, X, nw, Y->dtype);
    need(Y->nelem == M * T && (Y->dtype == DT_F32 || Y->dtype == DT_F16), op, Y, "output must be (n_ff, T) f32 or f16");
    need(align_up(GU->nbytes, 16) <= vk->caps.max_storage_range, op, GU, "gate and up must fit one binding (see op_gate_up_view)");
    if (R) {
        need(Y->dtype == DT_F16, op, Y, "the residual prologue runs with f16 activations only");
        for (int i = 0; i < 3; i++)
            need(R[i]->dtype == DT_F32 && R[i]->nelem == (i == 1 ? K : K * T), op, R[i], "o and x' must be f32 (k, T), the post-norm weight f32 (k)");
        need(R[2]->arena != X->arena || R[2]->block != X->block || R[2]->offset >= X->offset + X->nbytes || X->offset >= R[2]->offset + R[2]->nbytes, op, R[2],
             "x' must not overlap x (other workgroups still read x)");
    }
    bool q8 = wq_q8(vk, GU, Y->dtype), s8 = !R && wq_s8(vk, GU, Y->dtype);
    Op kop = wq_norm_op(R ? (q8 ? OP_MATMUL_GLU_RES_NORM_Q8 : OP_MATMUL_GLU_RES_NORM)
                          : (q8 ? OP_MATMUL_GLU_NORM_Q8 : s8 ? OP_MATMUL_GLU_NORM_S8 : OP_MATMUL_GLU_NORM), K);
    VkPipe *p = op_pipe(vk, kop, PH_DECODE, GU->dtype, Y->dtype, Y->dtype);
    op_q8_products += q8 || s8;
    need(p->k->wg[0] == WQ_MV_WG, op, GU, "the matvec kernel's workgroup size differs from WQ_MV_WG");
    Tensor v = wq_view(op, GU, 0, 2 * M, dtype_bytes(GU->dtype, K));
    u32 ll = wq_glu_norm_lanes(vk, GU->dtype, K, M, q8, R != 0);
    need(!s8 || ll >= 2, op, GU, "the int8 multiply lanes take 4 lanes per super-block: at least 4 lanes per row");
    WqPush push = { .k = (u32)K, .rows = (u32)M, .m = (u32)M, .t = 1, .scale = 1.0f, .act = gelu ? 1u : 0u, .ll = ll, .eps = eps };
    const Tensor *ts[7] = { &v, X, Y, nw, R ? R[0] : 0, R ? R[1] : 0, R ? R[2] : 0 };
    u32 g = wq_glu_rows(GU->dtype, Y->dtype, push.ll);
    u32 gx, gy; rows_grid((M + g - 1) / g, &gx, &gy);
    vk_dispatch(vk, p, ts, R ? 7 : 4, &push, sizeof push, gx, gy, (u32)T);
}

void op_matmul_glu_norm(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *Y, bool gelu) {
    wq_glu_norm(vk, GU, X, 0, nw, eps, Y, gelu);
}

void op_matmul_glu_res_norm(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *O, const Tensor *pw, const Tensor *Xout,
                            const Tensor *nw, f32 eps, const Tensor *Y, bool gelu) {
    const Tensor *R[3] = { O, pw, Xout };
    wq_glu_norm(vk, GU, X, R, nw, eps, Y, gelu);
}

void op_matmul_glu(Vk *vk, const Tensor *GU, const Tensor *X, const Tensor *Y, bool gelu) {
    const char *op = "matmul_glu";
    u64 K = GU->ne[0], M = GU->nelem / K / 2, T = X->nelem / K;
    wq_row_bytes(op, GU);
    need(X->ne[0] == K && X->nelem % K == 0, op, X, "row length differs from the weights' row length");
    need(Y->nelem == M * T && Y->dtype == X->dtype, op, Y, "output must be (n_ff, T) in the activation dtype");
    need(T >= 1 && T <= 65535 && M <= 0xffffffffu, op, X, "tokens must be 1..65535");
    need(align_up(GU->nbytes, 16) <= vk->caps.max_storage_range, op, GU, "gate and up must fit one binding (see op_gate_up_view)");
    VkPipe *p = op_pipe(vk, OP_MATMUL_GLU, PH_DECODE, GU->dtype, X->dtype, Y->dtype);
    Tensor v = wq_view(op, GU, 0, 2 * M, dtype_bytes(GU->dtype, K));
    WqPush push = { .k = (u32)K, .rows = (u32)M, .m = (u32)M, .t = (u32)T, .scale = 1.0f, .act = gelu ? 1u : 0u,
                    .ll = mv_lanes(GU->dtype, K, 2 * M, 6, WQ_MV_THREADS) };
    const Tensor *ts[3] = { &v, X, Y };
    need(p->k->wg[0] == WQ_MV_WG, op, GU, "the matvec kernel's workgroup size differs from WQ_MV_WG");
    u32 g = wq_glu_rows(GU->dtype, X->dtype, push.ll);
    u32 gx, gy; rows_grid((M + g - 1) / g, &gx, &gy);
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, (u32)T);
}

bool op_matmul_rope_fits(const Tensor *W, const Tensor *X) {
    return dtype_klanes(W->dtype) && X->ne[0] == W->ne[0] && X->nelem % W->ne[0] == 0 && X->nelem / W->ne[0] <= 65535;
}

void op_matmul_rope(Vk *vk, const Tensor *W, const Tensor *X, const Tensor *nw, f32 eps, const Tensor *pos, const Tensor *ff,
                    const Tensor *qo, const Tensor *kc, const Tensor *vc, u32 n_head, u32 n_head_kv, u32 n_rot, f32 base,
                    f32 freq_scale, bool neox, const Tensor *bq, const Tensor *bk, const Tensor *bv, u32 rbase) {
    const char *op = nw ? "matmul_rope_norm" : "matmul_rope";
    u64 K = W->ne[0], M = W->nelem / K, hd = qo->ne[0], nq = hd * n_head, kvd = hd * n_head_kv, T = X->nelem / K;
    wq_row_bytes(op, W);
    need(op_matmul_rope_fits(W, X), op, X, "needs weights with decode lanes (config/dtypes.def lanes K or B) and rows of the weights' length");
    if (nw) wq_need_norm(op, W, X, nw, qo->dtype);
    need(qo->nelem == nq * T && (nw ? is_act_dtype(qo->dtype) : qo->dtype == X->dtype), op, qo,
         "q output must be (head_dim, n_head, T) in the activation dtype");
    need(hd % 2 == 0 && n_rot % 2 == 0 && n_rot > 0 && n_rot <= hd, op, qo, "head_dim and n_rot must be even, 0 < n_rot <= head_dim");
    need(rbase % hd == 0 && M % hd == 0 && rbase + M <= nq + 2 * kvd, op, W, "rows must be whole heads within q, k and v");
    need(kc->ne[0] == kvd && vc->ne[0] == kvd && vc->nelem == kc->nelem && vc->dtype == kc->dtype, op, kc,
         "caches must both be (head_dim * n_head_kv, n_ctx) of one dtype");
    op_rows_need(op, pos, T);
    need(base > 0 && ff->dtype == DT_F32 && ff->nelem == n_rot / 2, op, ff, "needs base > 0 and f32 frequency factors (n_rot / 2)");
    bool bias = bq != 0;
    need(!bias || (bk && bv && bq->dtype == DT_F32 && bk->dtype == DT_F32 && bv->dtype == DT_F32 && bq->nelem == nq &&
                   bk->nelem == kvd && bv->nelem == kvd), op, bias ? bq : W, "biases must all be f32 (head_dim * heads)");
    need(align_up(W->nbytes, 4) <= vk->caps.max_storage_range, op, W, "the weights must fit one binding");
    VkPipe *p = op_pipe(vk, nw ? wq_norm_op(OP_MATMUL_ROPE_NORM, K) : OP_MATMUL_ROPE, PH_DECODE, W->dtype, qo->dtype, kc->dtype);
    need(p->k->wg[0] == WQ_MV_WG, op, W, "the matvec kernel's workgroup size differs from WQ_MV_WG");
    Tensor v = wq_view(op, W, 0, M, dtype_bytes(W->dtype, K));
    WqPush push = { .k = (u32)K, .rows = (u32)M, .m = (u32)M, .t = 1, .scale = 1.0f, .ll = mv_lanes(W->dtype, K, M, 6, nw ? wq_norm_threads(K) : WQ_MV_THREADS),
                    .hd = (u32)hd, .n_head = n_head, .n_head_kv = n_head_kv, .n_rot = n_rot, .log2_base = (f32)log2((f64)base),
                    .freq_scale = freq_scale, .neox = neox ? 1u : 0u, .n_ctx = (u32)kc->ne[1], .bias = bias, .rbase = rbase,
                    .eps = eps };
    /* without biases their bindings hold ff (never read) */
    const Tensor *ts[11] = { &v, X, qo, pos, ff, kc, vc, bias ? bq : ff, bias ? bk : ff, bias ? bv : ff, nw };
    u32 per = (WQ_MV_WG >> push.ll) / 2;          /* rotation pairs per workgroup */
    u32 gx, gy; rows_grid((M / 2 + per - 1) / per, &gx, &gy);
    vk_dispatch(vk, p, ts, nw ? 11 : 10, &push, sizeof push, gx, gy, (u32)T);
}
