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

#ifndef EDGE_VK_ATTN_ALIGN
#define EDGE_VK_ATTN_ALIGN 256          /* bytes: the decode attention's output, partials and o start on this (H200: decode
                                           0.5-0.7% slower with them at 16-byte offsets) */
#endif

#ifndef EDGE_VK_UNCACHED_READ_MAX
#define EDGE_VK_UNCACHED_READ_MAX 4096  /* bytes: larger reads of uncached mapped memory use a GPU copy to cached staging */
#endif

#ifndef EDGE_VK_FENCE_TIMEOUT_NS
#define EDGE_VK_FENCE_TIMEOUT_NS 60000000000ull /* ns: a submit that takes longer is a device error */
#endif

#ifndef EDGE_VK_SPIN_NS
#define EDGE_VK_SPIN_NS 5000000ull      /* ns a GPU fence is polled before a sleeping wait (decode tokens take ~1-5 ms) */
#endif

#ifndef EDGE_CHAIN_STEPS
#define EDGE_CHAIN_STEPS 2              /* greedy decode steps per chained command buffer (xf_chain_*): each submission
                                           costs the GPU ~11 us of idle (H200); tokens reach the host in groups this size */
#endif

#ifndef EDGE_TOPK_MAX
#define EDGE_TOPK_MAX 64                /* ids: most candidates op_topk returns per row */
#endif

#ifndef EDGE_MAX_HEAD_DIM
#define EDGE_MAX_HEAD_DIM 256           /* elements: the attention and RoPE kernels' largest head */
#endif

/* ---- edge fat (test/fat.c): floors and sizes. A board sets its own floors at build time,
   e.g. EDGE_CFLAGS="-DEDGE_FAT_MIN_DECODE_TPS=400 -DEDGE_FAT_MIN_MATVEC_GBPS=12" ./build.sh
   (measure a known-good board with `edge fat --json`, then take about 70% of its numbers;
   docs/fat.md). The defaults are low enough that lavapipe on 2 CPU cores passes. */
#ifndef EDGE_FAT_MIN_DECODE_TPS
#define EDGE_FAT_MIN_DECODE_TPS 2.0     /* tokens/s: decode speed of the embedded stories260K, greedy */
#endif

#ifndef EDGE_FAT_MIN_MATVEC_GBPS
#define EDGE_FAT_MIN_MATVEC_GBPS 0.01   /* GB/s: q8_0 matvec weight bandwidth at the largest shipped FFN shape */
#endif

#ifndef EDGE_FAT_MEM_CPU_QUICK_MIB
#define EDGE_FAT_MEM_CPU_QUICK_MIB 64   /* MiB: memory test size on a software device (lavapipe) in --quick */
#endif

#ifndef EDGE_FAT_WEIGHT_MILLIBITS
#define EDGE_FAT_WEIGHT_MILLIBITS 8500  /* millibits per weight when sizing the largest config's arena (Q8_0: 8.5 bits) */
#endif

#endif
