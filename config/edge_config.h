/* edge_config.h — compile-time knobs, each with a default and its unit.
   Override with -DNAME=VALUE (build.sh passes EDGE_CFLAGS through). */
#ifndef EDGE_CONFIG_H
#define EDGE_CONFIG_H

#ifndef EDGE_HOST_ARENA_MIB
#define EDGE_HOST_ARENA_MIB 64          /* MiB: host scratch arena for tables, tokenizer, plans */
#endif

#ifndef EDGE_MAX_POS
#define EDGE_MAX_POS (1u << 30)         /* tokens: largest count a token option (-c, -n, max_tokens) parses; not a
                                           context cap: the context goes to the model's limit (config/models.def) */
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

#ifndef EDGE_MAX_SEQ
#define EDGE_MAX_SEQ 64                 /* sequences one engine decodes together (edge run -np) */
#endif
#ifndef EDGE_BATCH_TILES_MIN
#define EDGE_BATCH_TILES_MIN 16         /* sequences (-np) from which batched decode steps run the prefill products
                                           on a device with cooperative matrices (env EDGE_BATCH_TILES overrides) */
#endif
#ifndef EDGE_PREFILL_BATCH
#define EDGE_PREFILL_BATCH 64           /* tokens per GPU prefill batch (bounds the activation and scores buffers) */
#endif
#define EDGE_MAX_PREFILL_BATCH 4096     /* the most -b / --batch may ask */

/* ---- kernels/ops_matmul.c: matvec lanes */
#ifndef WQ_MV_THREADS
#define WQ_MV_THREADS (1u << 17)        /* invocations a matvec aims for (H200: fewer leave loads idle) */
#endif

#ifndef WQ_MV_NORM_THREADS
#define WQ_MV_NORM_THREADS (1u << 16)   /* invocations: the same for the *_norm entries (every workgroup normalizes the
                                           whole row first) */
#endif

/* ---- cli/: the run command and JSON */
#ifndef EDGE_RUN_MAX_PROMPT_BYTES
#define EDGE_RUN_MAX_PROMPT_BYTES (128u << 10)  /* bytes: longest prompt record (longer: reported, or its end kept with
                                                   --truncate) */
#endif

#ifndef EDGE_RUN_MAX_STOPS
#define EDGE_RUN_MAX_STOPS 16           /* stop strings per request */
#endif

#ifndef EDGE_RUN_MAX_TURNS
#define EDGE_RUN_MAX_TURNS 256          /* turns of a --chat conversation */
#endif

#ifndef JSON_MAX_DEPTH
#define JSON_MAX_DEPTH 64               /* nesting levels of arrays and objects */
#endif

/* ---- models/genmodel.c (edge gen-model) */
#ifndef GEN_CHUNK_BYTES
#define GEN_CHUNK_BYTES (4u << 20)      /* bytes: the write buffer (whole blocks are generated into it) */
#endif

/* ---- edge fat (fat/fat.c): floors and sizes. The throughput floors are per device class
   (VkPhysicalDeviceType); a board replaces them at run time with `edge fat --floors FILE`
   (measure known-good boards with `edge fat --json`, take about 70% of the lowest; docs/fat.md).
   decode: tokens/s of the embedded stories260K on the path `edge run` takes (f16 where the device
   has it, its default context of 2048 tokens, chained greedy decode); matvec: GB/s of the q8_0 decode
   matvec at the largest shipped FFN shape. CPU class: lavapipe (Mesa 22.3.6) on 2 cores measured
   22-23 tokens/s and 0.47-0.48 GB/s (idle machine); the floors are about 1/4 of that (CI machines
   vary, tests run in parallel). Integrated (Mali, Adreno, V3D boards) and discrete: conservative
   guesses, not measured here: a stories260K token is ~49 small dispatches (latency bound; a GPU
   should not be slower than lavapipe on 2 CPU cores), an integrated GPU reads 10-50 GB/s, a discrete one
   200-4000 GB/s (docs/performance.md: 700-1000 GB/s decode weight bandwidth on an H100/H200). */
#ifndef EDGE_FAT_FLOOR_DECODE_TPS_CPU
#define EDGE_FAT_FLOOR_DECODE_TPS_CPU 6.0           /* tokens/s: software device (lavapipe), or type other/virtual */
#endif
#ifndef EDGE_FAT_FLOOR_MATVEC_GBPS_CPU
#define EDGE_FAT_FLOOR_MATVEC_GBPS_CPU 0.12         /* GB/s */
#endif
#ifndef EDGE_FAT_FLOOR_DECODE_TPS_INTEGRATED
#define EDGE_FAT_FLOOR_DECODE_TPS_INTEGRATED 20.0   /* tokens/s: integrated GPU (Mali, Adreno, V3D boards) */
#endif
#ifndef EDGE_FAT_FLOOR_MATVEC_GBPS_INTEGRATED
#define EDGE_FAT_FLOOR_MATVEC_GBPS_INTEGRATED 2.0   /* GB/s */
#endif
#ifndef EDGE_FAT_FLOOR_DECODE_TPS_DISCRETE
#define EDGE_FAT_FLOOR_DECODE_TPS_DISCRETE 100.0    /* tokens/s: discrete GPU */
#endif
#ifndef EDGE_FAT_FLOOR_MATVEC_GBPS_DISCRETE
#define EDGE_FAT_FLOOR_MATVEC_GBPS_DISCRETE 40.0    /* GB/s */
#endif

#ifndef EDGE_FAT_MEM_SAMPLES
#define EDGE_FAT_MEM_SAMPLES 4096       /* words: memory test words read back and compared on the host, per pattern */
#endif

#ifndef EDGE_FAT_MEM_SAMPLE_RUN
#define EDGE_FAT_MEM_SAMPLE_RUN 64      /* words: length of each sampled run (EDGE_FAT_MEM_SAMPLES / this downloads) */
#endif

#ifndef EDGE_FAT_MEM_CPU_QUICK_MIB
#define EDGE_FAT_MEM_CPU_QUICK_MIB 64   /* MiB: memory test size on a software device (lavapipe) in --quick */
#endif

#ifndef EDGE_FAT_CTX
#define EDGE_FAT_CTX 8192               /* tokens: context (at most the config's limit) for sizing the largest config's
                                           KV cache (memory test) and the highest RoPE position tested */
#endif

#ifndef EDGE_FAT_WEIGHT_MILLIBITS
#define EDGE_FAT_WEIGHT_MILLIBITS 8500  /* millibits per weight when sizing the largest config's arena (Q8_0: 8.5 bits) */
#endif

#endif
