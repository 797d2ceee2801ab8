/* kernel.h — the reflected signature of an embedded kernel (filled by tools/spvgen.c
   into build/kernels.gen.h). Layouts and dtype checks are built from this, never by hand. */
#ifndef EDGE_KERNEL_H
#define EDGE_KERNEL_H

typedef enum KElem { KE_F32, KE_F16, KE_U32, KE_I32, KE_STRUCT, KE_COUNT } KElem;

typedef struct KBinding {
    i32         set, binding;
    u8          elem;       /* KElem of the runtime array's element */
    u8          vec;        /* vector width of the element (1 = scalar) */
    u8          writable;   /* 0 = read-only (NonWritable), 1 = read_write */
    const char *name;       /* WGSL variable name */
} KBinding;

typedef struct KernelInfo {
    const char     *name;       /* unique kernel name (entry point or variant name) */
    const char     *file;       /* kernels/xxx.wgsl */
    const char     *entry;      /* WGSL entry point */
    const char     *overrides;  /* Tint --overrides used for this variant ("" if none) */
    const uint32_t *spv;
    u64             spv_words;
    u32             wg[3];      /* workgroup size */
    u32             push_size;  /* push-constant bytes (var<immediate>) */
    u32             shared_bytes; /* workgroup memory: sum of the var<workgroup> sizes (vs maxComputeSharedMemorySize) */
    u8              cap_f16, cap_s16, cap_subgroup, cap_sub_arith, cap_sub_ballot, cap_sub_shuffle;
    u8              cap_coopmat;  /* cooperative matrices and the Vulkan memory model (matmul_cm.wgsl) */
    u8              cap_idot;     /* integer dot products (shaderIntegerDotProduct: the *_q decode lanes) */
    u32             n_bindings;
    KBinding        bindings[16];
} KernelInfo;

__attribute__((unused)) static const char *const kelem_name[KE_COUNT] = { "f32", "f16", "u32", "i32", "struct" };

#endif
