/* ops.c — implementation of ops.h. */

const KernelDef kdefs[KDEF_COUNT] = {
#define KERNEL(name, op, ph, wt, at, ot) { #name, op, ph, wt, at, ot },
#include "config/kernels.def"
#undef KERNEL
};

static const char *const op_name[OP_COUNT] = {
    [OP_ADD] = "add", [OP_MUL] = "mul", [OP_RMSNORM] = "rmsnorm",
    [OP_GET_ROWS] = "get_rows", [OP_MATMUL] = "matmul",
    [OP_ADD_BIAS] = "add_bias", [OP_RMSNORM_ADD] = "rmsnorm_add", [OP_ROPE] = "rope", [OP_KV_STORE] = "kv_store",
    [OP_ATTENTION] = "attention", [OP_GLU] = "glu", [OP_SOFTCAP] = "softcap", [OP_ARGMAX] = "argmax", [OP_TOPK] = "topk", [OP_ARGMAX_CHECK] = "argmax_check", [OP_ARGMAX_PART] = "argmax_part", [OP_ARGMAX_MERGE] = "argmax_merge", [OP_ATTN_SPLIT] = "attn_split", [OP_ATTN_MERGE] = "attn_merge", [OP_ROPE_KV] = "rope_kv", [OP_MATMUL_GLU] = "matmul_glu", [OP_RMSNORM_ADD_NORM] = "rmsnorm_add_norm", [OP_MATMUL_ROPE] = "matmul_rope", [OP_MATMUL_ROPE_NORM] = "matmul_rope_norm", [OP_MATMUL_GLU_NORM] = "matmul_glu_norm", [OP_ATTN_FLASH] = "attn_flash", [OP_ATTN_FLASH_W] = "attn_flash_w", [OP_MATMUL_SPLIT] = "matmul_split", [OP_SPLITK_SUM] = "splitk_sum", [OP_MATMUL_CM] = "matmul_cm", [OP_MATMUL_CM_SPLIT] = "matmul_cm_split", [OP_MATMUL_GLU_NORM_Q8] = "matmul_glu_norm_q8", [OP_MATMUL_NORM_Q8] = "matmul_norm_q8", [OP_MATMUL_GLU_RES_NORM] = "matmul_glu_res_norm", [OP_MATMUL_GLU_RES_NORM_Q8] = "matmul_glu_res_norm_q8",
};
static const char *const phase_name[PH_COUNT] = { "any", "prefill", "decode" };

i32 kdef_find(Op op, Phase ph, DType wt, DType at, DType ot) {
    for (i32 i = 0; i < KDEF_COUNT; i++) {
        const KernelDef *d = &kdefs[i];
        if (d->op == op && d->phase == ph && d->wtype == wt && d->atype == at && d->otype == ot) return i;
    }
    return -1;
}

static VkPipe *op_pipe(Vk *vk, Op op, Phase ph, DType wt, DType at, DType ot) {
    i32 d = kdef_find(op, ph, wt, at, ot);
    if (d < 0) die(EXIT_USAGE, "no kernel for op %s, phase %s, weights %s, activations %s, output %s (see config/kernels.def)",
                   op_name[op], phase_name[ph], dtype_name[wt], dtype_name[at], dtype_name[ot]);
    i32 k = vk_kernel_find(kdefs[d].kernel);
    if (k < 0) die(EXIT_USAGE, "config/kernels.def names kernel '%s', which is not in the embedded kernel table", kdefs[d].kernel);
    return vk_pipeline(vk, k);
}

static void need(bool ok, const char *op, const Tensor *t, const char *what) {
    if (!ok) die(EXIT_USAGE, "op %s: tensor '%s' (%s, %llu x %llu): %s", op, t->name, dtype_name[t->dtype],
                 (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], what);
}

/* Grid for one workgroup per row, rows beyond 65535 spill into y. */
static void rows_grid(u64 rows, u32 *gx, u32 *gy) {
    *gx = (u32)MIN(rows, 65535); *gy = (u32)((rows + 65534) / 65535);
}

static void op_binary(Vk *vk, Op op, const Tensor *a, const Tensor *b, const Tensor *y) {
    const char *n = op_name[op];
    need(a->nelem == b->nelem && a->nelem == y->nelem, n, y, "element counts differ");
    need(a->nelem <= 0xffffffffu, n, a, "more than 2^32 elements");
    VkPipe *p = op_pipe(vk, op, PH_ANY, a->dtype, b->dtype, y->dtype);
    u32 push[1] = { (u32)a->nelem };
    const Tensor *ts[3] = { a, b, y };
    u64 groups = (a->nelem + p->k->wg[0] - 1) / p->k->wg[0];
    need(groups <= 65535, n, a, "too many elements for one dispatch");
    vk_dispatch(vk, p, ts, 3, push, sizeof push, (u32)groups, 1, 1);
}

void op_add(Vk *vk, const Tensor *a, const Tensor *b, const Tensor *y) { op_binary(vk, OP_ADD, a, b, y); }
void op_mul(Vk *vk, const Tensor *a, const Tensor *b, const Tensor *y) { op_binary(vk, OP_MUL, a, b, y); }

void op_rmsnorm(Vk *vk, const Tensor *x, const Tensor *w, const Tensor *y, f32 eps) {
    u64 n = x->ne[0], rows = x->nelem / n;
    need(w->nelem == n, "rmsnorm", w, "weight length differs from the row length");
    need(y->nelem == x->nelem, "rmsnorm", y, "output size differs from the input");
    VkPipe *p = op_pipe(vk, OP_RMSNORM, PH_ANY, w->dtype, x->dtype, y->dtype);
    struct { u32 n, rows; f32 eps; } push = { (u32)n, (u32)rows, eps };
    const Tensor *ts[3] = { x, w, y };
    u32 gx, gy; rows_grid(rows, &gx, &gy);
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, 1);
}
