/* fat.h — `edge fat`, the factory acceptance test: proves that a board's GPU computes
   correctly with the exact shipped kernels, before the board ships. No model file: seeded
   random tensors and the embedded stories260K model.

   Checks (one line each, `PASS|FAIL|SKIP  name  detail  time`):
     identity     device, ids, driver, Vulkan version, the features and limits edge needs
     kernel.NAME  every kernel variant of config/kernels.def at the shipped configs' shapes (fat_kernels.c)
     trap.NAME    activations over every finite f16 value and large f32 values: no NaN/Inf
     determinism  embedded model, greedy, 64 tokens, 5 GPU runs: identical and equal to the reference
     memory       address-in-address, walking ones, random patterns over the device arena (kernels/memtest.wgsl)
     throughput.* decode tokens/s and matvec GB/s against the floors in config/edge_config.h

   API:
     fat_check_begin(f, name) / fat_check_end(f, c, st, fmt, ...)   one result line (and a JSON entry)
     fat_num(c, key, value)                                         a number for the JSON report
     fat_kernel_checks(f) / fat_trap_checks(f)                      (fat_kernels.c)
   Exit codes: 0 all passed, 10 a check failed, 11 the test could not run. Docs: docs/fat.md. */
#ifndef EDGE_FAT_H
#define EDGE_FAT_H

enum { FAT_EXIT_FAILED = 10, FAT_EXIT_CANNOT_RUN = 11 };

typedef enum FatStatus { FAT_PASS, FAT_FAIL, FAT_SKIP } FatStatus;

typedef struct FatNum { char key[32]; f64 val; } FatNum;

typedef struct FatCheck {
    char      name[64];
    FatStatus st;
    char      detail[320];
    f64       t0, secs;
    FatNum    nums[8];
    u32       n_nums;
    u32       rep;          /* soak repetition that produced it (0: first) */
} FatCheck;

typedef struct Fat {
    Vk          vk;
    bool        full;           /* --full: every shape, longer memory test */
    f64         soak_s;         /* --soak SECONDS (0: none) */
    const char *json;           /* --json FILE */
    u64         mem_mib;        /* --mem MiB (0: computed) */
    const char *only;           /* --only GROUP[,GROUP] (developer option) */
    const char *perturb;        /* EDGE_FAT_PERTURB: kernel whose result is perturbed (testing aid) */
    bool        nondet;         /* EDGE_FAT_NONDET=1: one determinism run differs (testing aid) */
    bool        f16;            /* device runs the f16 kernels */
    FatCheck   *checks;         /* (cap) every result, for the JSON report */
    u32         n_checks, cap;
    u32         n_fail;
    u32         rep;            /* soak repetition */
    u64         khash[KDEF_COUNT];  /* output hash of each kernel variant in repetition 0 (soak drift) */
    i32         tokens0[64];    /* determinism tokens of repetition 0 */
    i32         ref_tokens[64]; /* the reference backend's tokens (computed once) */
    bool        have_ref;
    u32         open;           /* 1 + index of the check begun and not yet ended (0: none) */
    bool        broken;         /* a device error ended the device checks */
} Fat;

FatCheck *fat_check_begin(Fat *f, const char *name);
void      fat_check_end(Fat *f, FatCheck *c, FatStatus st, const char *fmt, ...);
void      fat_num(FatCheck *c, const char *key, f64 v);
bool      fat_want(const Fat *f, const char *group);
void      fat_kernel_checks(Fat *f);
void      fat_trap_checks(Fat *f);

#endif
