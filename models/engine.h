/* engine.h — one interface over the two forward passes: the scalar CPU reference
   (models/reference.c) and the GPU (models/transformer.c). Commands (eval, generation,
   bench, the factory test) drive a model through this, never through a backend directly. Two
   ways to advance: eng_feed (a list of tokens: a prompt, or a sampled step, logits to the host)
   and eng_decode (greedy steps, chained on the GPU). The engine sets the device's phase
   (vk_phase: prefill or decode) for the fault injector and error messages.

   API:
     eng_open(&g, model, backend, n_ctx, act, err)   backend ENG_REF or ENG_GPU; act DT_F32/DT_F16 (GPU),
                                                     DT_COUNT: f16 where the device has shaderFloat16
     eng_open_batch(&g, model, backend, n_ctx, act, batch, err)  the same with a GPU prefill batch of min(batch, n_ctx)
                                                     tokens (eng_open: EDGE_PREFILL_BATCH = 64); the logits, activation
                                                     and attention-score buffers hold this many rows (bench -b, eval --batch)
     eng_open_gen(&g, model, backend, n_ctx, act, kv, batch, last_row, n_seq, err)   the same for generation: kv the KV cache
                                                     dtype (DT_F32, DT_F16; DT_COUNT: eng_kv_default); last_row: eng_feed's
                                                     logits must be NULL, so the device and host keep one logits row;
                                                     n_seq: sequences held at once (1..EDGE_MAX_SEQ, each with its context)
     eng_kv_default(caps, act)                       the KV cache dtype generation uses by default on a device
     eng_close(&g)
     eng_reset(&g)                                   empty context (position 0)
     eng_feed(&g, tokens, n, logits, err)            evaluate n tokens at the current position;
                                                     logits: NULL, or n*n_vocab floats (every row)
     eng_decode(&g, token, more, &next, err)         one decode step: token at the current position; the greedy next id
                                                     (GPU: the argmax on the device, only the id read back). Chained
                                                     (the default on the GPU without debug tools; eng_set_chain): when
                                                     token is the id the step before returned, the steps run on the
                                                     GPU back to back, each embedding reading its id there, EDGE_CHAIN_STEPS
                                                     per command buffer, the next queued before the host waits (more:
                                                     another step may follow; xf_chain_*)
     eng_decode_end(&g)                              drops the chained steps in flight (eng_feed and eng_reset do too)
     eng_set_chain(&g, on)                           chained decode on or off (tests compare both)
     eng_select(&g, seq)                             the sequence eng_feed / eng_decode / eng_reset / eng_pos work on (0..n_seq-1)
     eng_copy_prefix(&g, src, dst, n, err)           sequence dst's context := the first n tokens of src's (their KV cache
                                                     rows copied on the device: a shared prefix computed once)
     eng_truncate(&g, n, err)                        the selected sequence keeps its first n tokens
     eng_kv_ring(&g)                                 positions a sequence can reach before a sliding-window layer's ring of
                                                     cache rows wraps (the context when no layer has one)
     eng_step(&g, n, seqs, tokens, ids, logits, err) one decode step of n sequences at once (token t of sequence seqs[t] at its
                                                     position; each sequence at most once): the greedy ids (ids, may be NULL)
                                                     and every row's logits (logits: n x n_vocab floats, may be NULL); the
                                                     GPU reads each weight once for all rows (xf_decode_rows)
     eng_info(&g)                                    activations, device, memory and dispatch figures (bench, run -v)
     eng_time_decode(&g, on), eng_decode_gpu_ns(&g)  timestamps around the decode step; its GPU time (bench)
     eng_last_logits(&g)                             the last row (after eng_feed), host memory
     eng_last_argmax(&g)                             its greedy id (ties: the lowest id, as ref_argmax)
     eng_pos(&g)                                     tokens in the context (of the selected sequence)
     eng_seq_pos(&g, seq)                            tokens in sequence seq's context
     eng_parse_tokens(s, arena, &ids, &n)            "ID ID ..." (spaces, tabs, commas, newlines) -> ids in the arena
   The device without a model (edge info, paths, plan: cli/ reaches the GPU only through this header):
     eng_open_device(&g, err)                        Vulkan only (eng_close closes it)
     eng_caps(&g)                                    the device's name and the features that choose kernel paths
     eng_print_device(&g)                            the device, driver, limits, features, memory heaps and types
     eng_print_kernels()                             the embedded kernel table (needs no device)
     eng_print_paths(&g, model, act, n_seq)          the kernel-path plan and both phases' ops as xf_describe records
                                                     them (a context of min(n_ctx, 256)); n_seq > 1: a batched step of
                                                     n_seq rows too; false: the dtype chain is broken
   (the memory plan on this device: models/plan.h's plan_compute_eng) */
#ifndef EDGE_ENGINE_H
#define EDGE_ENGINE_H

typedef enum EngBackend { ENG_REF, ENG_GPU } EngBackend;

typedef struct Engine {
    EngBackend  backend;
    const Model *m;
    u32         n_ctx, pos, n_vocab;   /* pos: the selected sequence's position */
    u32         n_seq, cur;  /* sequences held; the selected one (eng_select) */
    u32        *seq_pos;     /* (n_seq) each sequence's position (the selected one's is pos while selected) */
    u32         ring;        /* positions before a sliding-window layer's ring of cache rows wraps (eng_kv_ring; n_ctx: none) */
    f32        *last;        /* (n_vocab) logits of the last evaluated position */
    f32        *batch;       /* (n_vocab, t_max) GPU batch logits (none when the engine keeps one row); (n_vocab, n_seq) with n_seq > 1 */
    Arena       ref_arena;
    RefState   *refs;        /* (n_seq) the reference's state per sequence */
    Vk          vk;
    Xf          xf;
    bool        vk_up, xf_up;
    bool        chain;       /* eng_decode chains GPU steps (eng_set_chain; default on) */
    bool        chained;     /* a chain is running (xf_chain_*) */
    i32         gtok;        /* the id the chain's last returned step predicted */
} Engine;

typedef struct EngInfo {     /* eng_info: figures for bench and run -v (GPU; zeros for the reference) */
    DType       act;         /* activation dtype of the kernel path */
    DType       kv;          /* KV cache dtype */
    const char *device;
    bool        timestamps;  /* the device can time a decode step (eng_time_decode) */
    u64         weight_bytes, state_bytes, state_pos;   /* tensor bytes in the weights / state arenas; state arena position */
    u64         plan_bytes, alloc_bytes;                /* planned and allocated device bytes */
    u64         embd_bytes;  /* the token embedding table */
    u32         dispatches;  /* dispatches of the last forward (per token after a decode step) */
} EngInfo;

typedef struct EngCaps {     /* eng_caps: what `edge paths` prints before the path */
    const char *device;
    bool        f16_arith, storage16, coopmat, subgroup_arith, timestamps;
    u64         max_storage_range;   /* bytes one binding may span */
} EngCaps;

bool eng_open(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, Err *e);
bool eng_open_batch(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, u32 batch, Err *e);
bool eng_open_gen(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, DType kv, u32 batch, bool last_row, u32 n_seq, Err *e);
DType eng_kv_default(const VkCaps *caps, DType act);
void eng_close(Engine *g);
void eng_reset(Engine *g);
bool eng_feed(Engine *g, const i32 *tokens, u32 n, f32 *logits, Err *e);
bool eng_decode(Engine *g, i32 token, bool more, i32 *next, Err *e);
void eng_decode_end(Engine *g);
void eng_set_chain(Engine *g, bool on);
void eng_select(Engine *g, u32 seq);
bool eng_step(Engine *g, u32 n, const u32 *seqs, const i32 *tokens, i32 *ids, f32 *logits, Err *e);
bool eng_copy_prefix(Engine *g, u32 src, u32 dst, u32 n, Err *e);
bool eng_truncate(Engine *g, u32 n, Err *e);
static inline u32 eng_kv_ring(const Engine *g) { return g->ring; }
EngInfo eng_info(const Engine *g);
void eng_time_decode(Engine *g, bool on);
f64  eng_decode_gpu_ns(Engine *g);
static inline const f32 *eng_last_logits(const Engine *g) { return g->last; }
static inline u32 eng_pos(const Engine *g) { return g->pos; }
static inline u32 eng_seq_pos(const Engine *g, u32 seq) { return seq == g->cur ? g->pos : g->seq_pos[seq]; }
static inline i32 eng_last_argmax(const Engine *g) { return (i32)ref_argmax(g->last, g->n_vocab); }
bool eng_parse_tokens(const char *s, Arena *a, i32 **ids, u32 *n);
bool eng_open_device(Engine *g, Err *e);
EngCaps eng_caps(const Engine *g);
void eng_print_device(const Engine *g);
void eng_print_kernels(void);
bool eng_print_paths(Engine *g, const Model *m, DType act, u32 n_seq);

#endif
