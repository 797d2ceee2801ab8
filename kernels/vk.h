/* vk.h — Vulkan compute for edge: the loader through dlopen, one device and queue,
   capabilities, a fixed device arena carved by a bump allocator, pipelines built
   from the embedded SPIR-V and its reflected signature, recording and dispatch.

   Why: the binary must start on any board with a Vulkan 1.1 driver, say clearly
   when there is none, use optional features only when the device reports them,
   and never hand a kernel a buffer whose dtype it does not expect.

   API:
     vk_init(&vk, err)                       dlopen libvulkan, instance (validation-aware), device (EDGE_DEVICE=N)
     vk_shutdown(&vk)
     vk_print_info(&vk) / kernel_print_table()   what `edge info` prints: the device; the embedded kernels
     vk_arena_init(&vk, &arena, name, bytes) one VkDeviceMemory block (several if maxMemoryAllocationSize forces it)
     vk_tensor(&arena, name, dtype, ndim, ne) exact-size sub-allocation (offset aligned to minStorageBufferOffsetAlignment)
     vk_weight(&arena, name, dtype, ndim, ne) the same for a weight: Q6_K and the group types in units (t.units)
     vk_upload(&vk, t, src) / vk_download(&vk, t, dst)   exactly t->nbytes (staging when not host-visible;
                                                          a weight in units regrouped on the way: vk_units)
     vk_kernel_find(name) / vk_pipeline(&vk, kernel)
     vk_begin(&vk) / vk_dispatch(&vk, pipe, tensors, n, push, push_bytes, gx, gy, gz) / vk_barrier(&vk) / vk_submit_wait(&vk)
     vk_validation_errors()                  errors reported by the Khronos validation layer so far
     vk_ts_pool/_reset/_write/_read, vk_fill_word       timestamps (--profile) and NaN injection (tests)

     vk_kernel_check(&caps, kernel, err)     may this device run the kernel? (features, workgroup size, shared memory)
     vk_profile_find(name) / vk_profile_apply(&caps, profile)   device profiles (config/profiles.def)

   Knobs (env): EDGE_DEVICE=N picks the physical device; EDGE_FAULT=NAME[:N] injects a fault (below); EDGE_VALIDATION=1 enables VK_LAYER_KHRONOS_validation;
   EDGE_VULKAN_LIB=PATH loads the Vulkan loader from PATH; EDGE_MAX_BINDING=BYTES lowers maxStorageBufferRange;
   EDGE_NO_PIPELINE_CACHE=1 disables the pipeline cache ($XDG_CACHE_HOME/edge/pipelines-<vendor>-<device>-<uuid>.bin,
   ~/.cache/edge/... without XDG_CACHE_HOME); EDGE_VERBOSE=1 prints notes (e.g. an ignored cache file);
   EDGE_NO_IDOT=1 leaves integer dot products off (the int8 decode lanes), EDGE_IDOT=1 uses them where
   the device has them but does not call them accelerated (lavapipe: tests), and on a device without f16
   the gate/up's int8 lanes in 32-bit multiplies (ops_matmul.c wq_s8); EDGE_NO_COOPMAT=1 likewise
   for cooperative matrices;
   EDGE_PROFILE=NAME restricts the capabilities to a board's (config/profiles.def: mali-g610 mali-g720
   adreno-740 adreno-750 adreno-6xx-turnip v3d-7.1 portable). A profile is applied right after the caps
   are read and before the device is created; it only removes: every limit becomes min(real, profile),
   every feature real && profile (subgroup size and operations, shaderFloat16, 16-bit storage, shared
   memory per workgroup, maxStorageBufferRange, workgroup invocations), and features it removes are not
   enabled on the VkDevice either. vk_pipeline refuses, naming the kernel and the missing capability,
   any kernel the restricted caps forbid. An unknown name is a device error (exit 3) that lists the
   valid names. `edge info` prints the active profile. */
#ifndef EDGE_VK_H
#define EDGE_VK_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* Runtime tensor dtypes: activations/scratch and the ggml weight types, one per row of
   config/dtypes.def (its columns are DTypeInfo's). */
typedef enum DType {
#define DTYPE(id, name, role, ggml, blk, bytes, bind, up, lanes, i8, wgslw, hf0, hf1, cm) DT_##id,
#include "config/dtypes.def"
    DT_COUNT
} DType;
typedef enum DtRole { DR_WEIGHT, DR_DATA } DtRole;
typedef enum DtBind { DB_F32, DB_F16, DB_WORDS, DB_I32 } DtBind;      /* what a binding of it holds */
typedef enum DtUp { DU_COPY, DU_Q6K, DU_G2, DU_G4, DU_G6, DU_G8 } DtUp;   /* upload: as stored, or regrouped in units (vk_units) */
typedef enum DtLanes { DL_ANY, DL_K, DL_B } DtLanes;                   /* decode lanes (matmul.wgsl): none, k-quant, 32-element groups */
typedef enum DtI8 { DI_NONE, DI_HEAD, DI_GLU } DtI8;                   /* products on int8 activations: none, the LM head, also gate/up */
typedef enum DtCm { DC_NO, DC_YES } DtCm;                      /* prefill on cooperative matrices (matmul_cm.wgsl) */
typedef struct DTypeInfo {
    const char *name;           /* "q4_k" */
    DtRole role; i32 ggml;      /* ggml type id, -1 for DATA */
    u32 blk, bytes;             /* elements and bytes per block */
    DtBind bind; DtUp up; DtLanes lanes; DtI8 i8;
    i16 hf[2];                  /* byte offsets of the block's f16 scale fields, -1 none */
    DtCm cm;                    /* has matmul_cm_* products (weights rounded to f16) */
} DTypeInfo;
extern const DTypeInfo dtype_info[DT_COUNT];
extern const char *const dtype_name[DT_COUNT];
/* the decode lane families (f16 pairs, int8) and the fused decode entries: lanes K or B */
static inline bool dtype_klanes(DType t) { return t < DT_COUNT && dtype_info[t].lanes != DL_ANY; }

typedef struct VkCaps {
    u32  api_version;
    u32  subgroup_size;
    u32  subgroup_ops;          /* VkSubgroupFeatureFlags supported in compute */
    bool f16_arith;             /* shaderFloat16 enabled */
    bool storage16;             /* storageBuffer16BitAccess enabled */
    bool int8_arith;            /* shaderInt8 */
    bool coopmat;               /* cooperative matrices 16x16x16 f16 -> f32 in subgroups of 32, Vulkan memory model (matmul_cm.wgsl, attn_cm.wgsl) */
    bool idot;                  /* the *_q decode lanes run: shaderIntegerDotProduct with signed 4x8 packed dot products accelerated (or EDGE_IDOT=1) */
    bool idot_ok;               /* shaderIntegerDotProduct is enabled on the device (EDGE_IDOT=1 may use it unaccelerated) */
    bool timestamps;            /* timestampComputeAndGraphics */
    f32  timestamp_period_ns;
    u64  timestamp_mask;        /* valid bits of the queue's timestamps */
    u64  max_storage_range;     /* maxStorageBufferRange (EDGE_MAX_BINDING may lower it) */
    u64  max_alloc;             /* maxMemoryAllocationSize */
    u64  min_offset_align;      /* minStorageBufferOffsetAlignment */
    u32  max_shared;            /* maxComputeSharedMemorySize */
    u32  max_wg_invocations;
    u32  max_wg_size[3];
    u32  max_push;              /* maxPushConstantsSize */
    bool unified;               /* device-local memory is also host-visible (lavapipe, most ARM boards) */
    u32  compute_units;         /* SMs / shader cores where the driver reports them (VK_NV_shader_sm_builtins,
                                   VK_ARM_shader_core_builtins), else 0 */
    const char *profile;        /* EDGE_PROFILE applied to these caps, 0 for none */
} VkCaps;

/* One row of config/profiles.def: the most a board's GPU allows. */
typedef enum ProfileId {
#define PROFILE(id, name, sg, sg_ops, f16, s16, shared, range, wg_inv) PROF_##id,
#include "config/profiles.def"
#undef PROFILE
    PROF_COUNT
} ProfileId;

typedef struct DevProfile {
    const char *name;
    u32  subgroup_size;
    u32  subgroup_ops;          /* VkSubgroupFeatureFlags */
    bool f16_arith, storage16;
    u32  max_shared;            /* bytes */
    u64  max_storage_range;     /* bytes */
    u32  max_wg_invocations;
} DevProfile;
extern const DevProfile dev_profiles[PROF_COUNT];

typedef struct VkBlock {        /* one VkDeviceMemory with one VkBuffer over all of it */
    VkDeviceMemory mem;
    VkBuffer       buf;
    u64            size;
    u8            *mapped;      /* non-NULL when host-visible */
    bool           cached;      /* host-cached: CPU reads are fast */
} VkBlock;

struct Tensor;
typedef struct DevArena {
    const char *name;
    struct Vk  *vk;
    VkBlock     blocks[8];
    u32         n_blocks;
    u32         cur;            /* block being carved */
    u64         pos;            /* bump position inside blocks[cur] */
    u64         cap;            /* sum of block sizes */
    u64         used;           /* sum of exact tensor bytes (no alignment padding) */
    bool        planning;       /* plan mode: no memory, tensors only advance the bump pointer */
    u64         align;          /* tensors placed while it is set start on a multiple of it (and always of the device's offset alignment and 16) */
    void      (*on_tensor)(void *ctx, const struct Tensor *t);  /* if set: called for every tensor placed (edge plan) */
    void       *on_ctx;
} DevArena;

typedef struct Tensor {
    const char *name;
    DType       dtype;
    u32         ndim;
    u64         ne[4];          /* ne[0] contiguous */
    u64         nelem;
    u64         nbytes;         /* exactly what the data needs */
    DevArena   *arena;
    u32         block;
    u64         offset;         /* in blocks[block] */
    bool        units;          /* a weight of a regrouped type (vk_weight): its device bytes are in units of 8
                                   blocks (vk_units), which vk_upload / vk_download convert */
} Tensor;

typedef struct VkPipe {
    const KernelInfo     *k;
    VkPipeline            pipe;
    VkPipelineLayout      layout;
    VkDescriptorSetLayout dsl;
} VkPipe;

/* A command buffer recorded once and submitted many times (the decode step): its own
   descriptor pool, so its sets survive other recordings. */
typedef struct VkRec {
    VkCommandBuffer  cmd;
    VkDescriptorPool pool;
    u32              sets, descs;   /* the pool's capacity: descriptor sets (one per dispatch) and their buffers */
    u32              n_dispatch, n_desc;   /* what the last recording used */
    bool             ready;         /* recorded and ended */
    VkFence          fence;         /* vk_rec_submit_async's */
    bool             pending;       /* submitted by vk_rec_submit_async, not yet waited for */
} VkRec;

typedef struct Vk {
    void                 *lib;
    VkInstance            instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice      phys;
    VkDevice              dev;
    VkQueue               queue;
    u32                   qfam;
    VkPhysicalDeviceProperties       props;
    VkPhysicalDeviceMemoryProperties mem;
    VkCaps                caps;
    char                  driver_name[256], driver_info[256];
    VkCommandPool         pool;
    VkCommandBuffer       cmd;        /* one-shot recordings (vk_begin) */
    VkCommandBuffer       copy_cmd;   /* staging copies */
    VkFence               fence;
    VkDescriptorPool      dpool;
    VkPipe                pipes[KERNEL_TABLE_COUNT ? KERNEL_TABLE_COUNT : 1];
    VkBlock               staging;  /* host-visible bounce buffer for non-unified devices */
    bool                  recording;
    u32                   n_dispatch; /* dispatches recorded since vk_begin */
    u64                   fence_timeout_ns; /* EDGE_VK_FENCE_TIMEOUT_NS or EDGE_FENCE_TIMEOUT_MS */
    u64                   spin_ns;    /* fence polling before a sleeping wait (EDGE_VK_SPIN_NS, EDGE_FENCE_SPIN_US; 0 on CPU devices) */
    u32                   n_pipelines;/* pipelines created so far (created once, on first use) */
    VkPipelineCache       pcache;     /* persisted pipeline cache (0: disabled) */
    char                  pcache_path[512];
    bool                  pcache_loaded; /* a valid cache file was read at vk_init */
    bool                  pipe_stats;    /* EDGE_PIPE_STATS=1 and the driver offers pipeline statistics */
    u64                   pcache_bytes, pcache_hash;  /* what was read: written back only when different */
    VkCommandBuffer       cur_cmd;    /* where vk_dispatch records: cmd, or a VkRec's */
    VkDescriptorPool      cur_pool;
    u32                   cur_sets, cur_descs, n_desc;   /* cur_pool's capacity; descriptors written since vk_begin */
    /* what the last vk_dispatch used (debug tools: --trace, --check-nan, edge paths) */
    VkPipe               *last_pipe;
    DType                 last_dt[16];  /* dtype of the tensor at each binding */
    u32                   last_n;
    /* describe mode (edge paths, dtype-chain check): vk_dispatch checks its arguments, calls
       on_describe and records nothing; vk_barrier and pipelines creation are skipped */
    bool                  describe;
    void                (*on_describe)(void *user, VkPipe *p, const Tensor *const *ts, u32 n);
    void                 *describe_user;
    /* testing aid (edge fat, EDGE_FAT_PERTURB; docs/fat.md): after each dispatch of kernel_table[perturb - 1]
       (0: none) the first word of every buffer it writes is overwritten (0x4A004A00), a wrong result on
       the real path; perturb_hits counts those dispatches */
    i32                   perturb;
    u32                   perturb_hits;
} Vk;

/* What the submits are for (set by the caller: run.c); names the phase in device errors and
   scopes the injected faults. */
typedef enum VkPhase { VK_PHASE_LOAD, VK_PHASE_PREFILL, VK_PHASE_DECODE } VkPhase;
extern VkPhase vk_phase;

/* Fault injection, a testing aid (docs/reliability.md): EDGE_FAULT=NAME[:N] makes the Nth
   matching call fail (default the first): device_lost_prefill / device_lost_decode (the fence
   wait of a submit in that phase reports VK_ERROR_DEVICE_LOST), alloc_fail (vkAllocateMemory),
   pipeline_fail (vkCreateComputePipelines), fence_timeout (the fence wait times out). Read by vk_init. */
typedef enum VkFault { VKF_NONE, VKF_DEVICE_LOST_PREFILL, VKF_DEVICE_LOST_DECODE, VKF_ALLOC_FAIL, VKF_PIPELINE_FAIL,
                       VKF_FENCE_TIMEOUT, VKF_COUNT } VkFault;

bool  vk_init(Vk *vk, Err *e);
void  vk_shutdown(Vk *vk);
void  vk_print_info(const Vk *vk);
void  kernel_print_table(void);
const char *vk_result_name(VkResult r);
u32   vk_validation_errors(void);

bool  vk_arena_init(Vk *vk, DevArena *a, const char *name, u64 bytes, Err *e);
void  vk_arena_free(DevArena *a);
void  vk_arena_plan(Vk *vk, DevArena *a, const char *name);  /* a planning arena: tensors get offsets, no memory */
u64   vk_arena_plan_bytes(const DevArena *a);                /* bytes vk_arena_init needs for the same tensors */
u64   dtype_bytes(DType t, u64 nelem);     /* exact bytes; 0 if nelem is not a whole number of blocks */
Tensor vk_tensor_at(DevArena *a, const char *name, DType t, u32 ndim, const u64 *ne, const char *site);
#define vk_tensor(a, name, t, ndim, ne) vk_tensor_at((a), (name), (t), (ndim), (ne), SITE)
Tensor vk_weight_at(DevArena *a, const char *name, DType t, u32 ndim, const u64 *ne, const char *site);
#define vk_weight(a, name, t, ndim, ne) vk_weight_at((a), (name), (t), (ndim), (ne), SITE)
void  vk_arena_keep(DevArena *a, u64 bytes, u32 n);   /* the next n tensors, bytes in all, in one block (a product's view of several) */
void  vk_upload(Vk *vk, const Tensor *t, const void *src);
void  vk_download(Vk *vk, const Tensor *t, void *dst);
void  vk_units(DType dt, u8 *dst, const u8 *src, u64 nblocks, bool pack);   /* Q6_K's and the group types' device layout (vk.c) */

bool  vk_pcache_path(const Vk *vk, char *buf, int n);   /* the pipeline cache file of this device */
const char *vk_pcache_reject(const Vk *vk, const u8 *d, u64 n);  /* why cache bytes are unusable, 0 if usable */
i32   vk_kernel_find(const char *name);    /* index into kernel_table, -1 if absent */
bool  vk_kernel_check(const VkCaps *c, const KernelInfo *k, Err *e);  /* false + message naming kernel and capability */
const DevProfile *vk_profile_find(const char *name);                   /* 0 if unknown */
void  vk_profile_apply(VkCaps *c, const DevProfile *p);
void  vk_profile_names(char *buf, int n);  /* "mali-g610 mali-g720 ..." */
VkPipe *vk_pipeline(Vk *vk, i32 kernel);
void  vk_begin(Vk *vk);
void  vk_dispatch(Vk *vk, VkPipe *p, const Tensor *const *ts, u32 n, const void *push, u32 push_bytes, u32 gx, u32 gy, u32 gz);
void  vk_barrier(Vk *vk);
void  vk_submit_wait(Vk *vk);
void  vk_rec_init(Vk *vk, VkRec *r);
void  vk_rec_init_like(Vk *vk, VkRec *r, const VkRec *like, u32 more_sets, u32 more_descs);   /* a pool of like's use and that much more (a recording of nearly the same dispatches) */
void  vk_rec_free(Vk *vk, VkRec *r);
void  vk_rec_begin(Vk *vk, VkRec *r);      /* later vk_dispatch calls record into r */
void  vk_rec_end(Vk *vk, VkRec *r);
void  vk_rec_submit(Vk *vk, VkRec *r);     /* replay: submit and wait */
void  vk_rec_submit_async(Vk *vk, VkRec *r);   /* replay without waiting (the recording's own fence) */
void  vk_rec_wait(Vk *vk, VkRec *r);       /* wait for vk_rec_submit_async's submit, if any */

/* debug tools: timestamp queries (--profile) and a NaN writer (EDGE_INJECT_NAN) */
VkQueryPool vk_ts_pool(Vk *vk, u32 n);                     /* n timestamp queries */
void  vk_ts_pool_free(Vk *vk, VkQueryPool q);
void  vk_ts_reset(Vk *vk, VkQueryPool q, u32 n);           /* recorded into the current command buffer */
void  vk_ts_write(Vk *vk, VkQueryPool q, u32 i);           /* recorded: after all previous commands */
void  vk_ts_read(Vk *vk, VkQueryPool q, u32 n, u64 *ticks);/* after the submit: n raw ticks */
void  vk_fill_word(Vk *vk, const Tensor *t, u32 word);      /* recorded: the first 4 bytes of t := word */
void  vk_fill_words(Vk *vk, const Tensor *t, u32 word, u64 bytes);   /* recorded: the first `bytes` of t (whole words) := word */
void  vk_copy_bytes(Vk *vk, const Tensor *src, const Tensor *dst, u64 bytes);   /* recorded: the first `bytes` of src into dst (device to device) */

#endif
