/* fat.h — `edge fat`, the factory acceptance test: proves that a board's GPU computes
   correctly with the exact shipped kernels, before the board ships. Seeded random tensors and
   the embedded stories260K model; with -m FILE also the model file the board ships with.

   Checks (one line each, `PASS|FAIL|SKIP  name  detail  time`):
     identity     device, ids, driver, Vulkan version, the features and limits edge needs
     kernel.NAME  every kernel variant of config/kernels.def at the shipped configs' shapes (fat_kernels.c)
     trap.NAME    activations over every finite f16 value and large f32 values: no NaN/Inf
     end_to_end   embedded model on the path `edge run` takes on this device (f16 where it has it, batched
                  prefill, chained greedy decode), 3 runs: identical tokens, prompt logits and greedy tokens
                  equal to the reference backend within the path's tolerance
     determinism  embedded model, f32 activations one step at a time, greedy, 64 tokens, 5 GPU runs:
                  identical and equal to the reference
     memory       address-in-address, walking ones, random patterns over the device arena (kernels/memtest.wgsl),
                  compared on the GPU and, for sampled words, on the host; an injected bad word must be seen by both
     model_path   -m FILE: that file on this device's default path (its types, shapes, fused products), a short
                  token prompt and greedy steps against the reference backend, 3 runs: identical tokens
     throughput.* decode tokens/s (end_to_end's decode) and matvec GB/s against the device class's floors
                  (config/edge_config.h) or a board's --floors FILE

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
    char      detail[512];
    f64       t0, secs;
    FatNum    nums[8];
    u32       n_nums;
    u32       rep;          /* soak repetition that produced it (0: first) */
} FatCheck;

/* One throughput floor and where it came from (the class default's knob, or FILE line N). */
typedef struct FatFloor { f64 val; bool set; char from[200]; } FatFloor;

/* The reference backend's answer for an end-to-end check (computed once; soak reuses it). */
typedef struct FatE2eRef {
    i32  prompt[64];    /* (n_prompt) BOS + the prompt's ids */
    u32  n_prompt;
    u32  n_steps;       /* greedy tokens (the first from the prompt's last row) */
    f32 *logits;        /* (n_prompt, n_vocab) every prompt row's logits */
    i32  tokens[64];    /* greedy continuation (model_path: only the first) */
} FatE2eRef;

/* One end-to-end subject's state: the embedded model (end_to_end) or the -m file (model_path). */
typedef struct FatE2e {
    FatE2eRef ref;
    bool      have;         /* ref computed */
    i32       tokens0[64];  /* GPU tokens of soak repetition 0 */
    Engine   *keep;         /* model_path: the reference engine after the prompt (fat_e2e_follow rewinds to it) */
} FatE2e;

typedef struct Fat {
    Vk          vk;
    bool        full;           /* --full: every shape, longer memory test */
    f64         soak_s;         /* --soak SECONDS (0: none) */
    const char *json;           /* --json FILE */
    u64         mem_mib;        /* --mem MiB (0: computed) */
    const char *only;           /* --only GROUP[,GROUP] (developer option) */
    const char *perturb;        /* EDGE_FAT_PERTURB: kernel whose result is perturbed (testing aid) */
    bool        nondet;         /* EDGE_FAT_NONDET=1: one determinism run differs (testing aid) */
    bool        memfault;       /* EDGE_FAT_MEMFAULT=1: the memory test's real pass sees one corrupted word (testing aid) */
    const char *floors_path;    /* --floors FILE */
    FatFloor    floor_tps, floor_gbps;  /* decode tokens/s, matvec GB/s */
    bool        f16;            /* device runs the f16 kernels */
    FatCheck   *checks;         /* (cap) every result, for the JSON report */
    u32         n_checks, cap;
    u32         n_fail;
    u32         rep;            /* soak repetition */
    u64         khash[KDEF_COUNT];  /* output hash of each kernel variant in repetition 0 (soak drift) */
    i32         tokens0[64];    /* determinism tokens of repetition 0 */
    i32         ref_tokens[64]; /* the reference backend's tokens (computed once) */
    bool        have_ref;
    FatE2e      e2e;            /* end_to_end: the embedded model */
    const char *model_path;     /* -m FILE: model_path runs that file's own kernel path */
    bool        allow_unlisted; /* --allow-unlisted (as edge run's) */
    Model       model;          /* the -m file, opened before the device checks */
    Arena       model_arena;
    FatE2e      me2e;           /* model_path's reference and tokens */
    f64         decode_tps;     /* end_to_end's decode speed (0: not measured) */
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
