/* ops.h — one typed C wrapper per kernel op. Each wrapper finds its kernel by the
   exact key (op, phase, wtype, atype, otype) in config/kernels.def, checks the
   tensors' dtypes and shapes, and records one dispatch (inside vk_begin/vk_submit_wait).

   API:
     kdef_find(op, phase, wt, at, ot)        index into kdefs[] or -1
     op_add(vk, a, b, y) / op_mul(vk, a, b, y)     elementwise over nelem
     op_rmsnorm(vk, x, w, y, eps)            x (rows, n), w (n)
     op_matvec(vk, W, x, y)                  W (k, rows) in GGUF order, x (k), y (rows)   */
#ifndef EDGE_OPS_H
#define EDGE_OPS_H

typedef enum Op { OP_ADD, OP_MUL, OP_RMSNORM, OP_MATVEC, OP_COUNT } Op;
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
void op_matvec(Vk *vk, const Tensor *W, const Tensor *x, const Tensor *y);

#endif
