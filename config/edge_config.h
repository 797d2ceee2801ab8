/* edge_config.h — compile-time knobs, each with a default and its unit.
   Override with -DNAME=VALUE (build.sh passes EDGE_CFLAGS through). */
#ifndef EDGE_CONFIG_H
#define EDGE_CONFIG_H

#ifndef EDGE_HOST_ARENA_MIB
#define EDGE_HOST_ARENA_MIB 64          /* MiB: host scratch arena for tables, tokenizer, plans */
#endif

#ifndef EDGE_MAX_CTX
#define EDGE_MAX_CTX 8192               /* tokens: upper bound on -c regardless of the model's limit */
#endif

#ifndef EDGE_VK_MAX_SETS
#define EDGE_VK_MAX_SETS 4096           /* descriptor sets: most dispatches in one recorded command buffer */
#endif

#ifndef EDGE_VK_STAGING_BYTES
#define EDGE_VK_STAGING_BYTES (16u << 20) /* bytes: host-visible bounce buffer on non-unified devices */
#endif

#ifndef EDGE_VK_FENCE_TIMEOUT_NS
#define EDGE_VK_FENCE_TIMEOUT_NS 60000000000ull /* ns: a submit that takes longer is a device error */
#endif

#ifndef EDGE_TOPK_MAX
#define EDGE_TOPK_MAX 64                /* ids: most candidates op_topk returns per row */
#endif

#ifndef EDGE_MAX_HEAD_DIM
#define EDGE_MAX_HEAD_DIM 256           /* elements: the attention and RoPE kernels' largest head */
#endif

#endif
