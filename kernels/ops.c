/* ops.c — implementation of ops.h. */

const KernelDef kdefs[KDEF_COUNT] = {
#define KERNEL(name, op, ph, wt, at, ot) { #name, op, ph, wt, at, ot },
#include "config/kernels.def"
#undef KERNEL
};

static const char *const op_name[] = {
#define OP(id, name, prof) [OP_##id] = name,
#include "config/ops.def"
#undef OP
};
_Static_assert(ARRAY_COUNT(op_name) == OP_COUNT, "op_name: one name per line of config/ops.def");
static const char *const phase_name[] = { [PH_ANY] = "any", [PH_PREFILL] = "prefill", [PH_DECODE] = "decode" };
_Static_assert(ARRAY_COUNT(phase_name) == PH_COUNT, "phase_name: one name per Phase");

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

/* One RMSNorm per row of a (rows, n) over the weight w (n): into y (op_rmsnorm), or added into the
   residual y (op_rmsnorm_add, ops_attn.c). */
static void op_norm_rows(Vk *vk, Op op, const char *what, const Tensor *a, const Tensor *w, const Tensor *y, f32 eps) {
    u64 n = a->ne[0], rows = a->nelem / n;
    need(w->nelem == n, what, w, "weight length differs from the row length");
    need(y->nelem == a->nelem, what, y, "output size differs from the input");
    VkPipe *p = op_pipe(vk, op, PH_ANY, w->dtype, a->dtype, y->dtype);
    struct { u32 n, rows; f32 eps; } push = { (u32)n, (u32)rows, eps };
    const Tensor *ts[3] = { a, w, y };
    u32 gx, gy; rows_grid(rows, &gx, &gy);
    vk_dispatch(vk, p, ts, 3, &push, sizeof push, gx, gy, 1);
}

void op_rmsnorm(Vk *vk, const Tensor *x, const Tensor *w, const Tensor *y, f32 eps) { op_norm_rows(vk, OP_RMSNORM, "rmsnorm", x, w, y, eps); }

/* ---- the rows table (ops.h) ---- */
void op_rows_fill(u32 *dst, u32 T, u32 p0, u32 slot) {
    dst[0] = T; dst[1] = 0;
    for (u32 t = 0; t < T; t++) { dst[2 + 2 * t] = p0 + t; dst[3 + 2 * t] = slot; }
}

void op_rows_need(const char *op, const Tensor *pos, u64 T) {
    need(pos->dtype == DT_U32 && pos->nelem >= op_rows_words(T), op, pos, "pos must be a u32 rows table of the batch's rows (ops.h)");
}

void op_rows_upload(Vk *vk, const Tensor *pos, u32 T, u32 p0, u32 slot) {
    op_rows_need("rows table", pos, T);
    u32 *rt = calloc(pos->nelem, sizeof(u32));
    if (!rt) die(EXIT_DEVICE, "edge: cannot allocate a rows table of %llu words", (unsigned long long)pos->nelem);
    op_rows_fill(rt, T, p0, slot);
    vk_upload(vk, pos, rt);
    free(rt);
}
