/* engine.h — one interface over the two forward passes: the scalar CPU reference
   (models/reference.c) and the GPU (models/transformer.c). Commands (eval, generation,
   the factory test) drive a model through this, never through a backend directly.

   API:
     eng_open(&g, model, backend, n_ctx, act, err)   backend ENG_REF or ENG_GPU; act DT_F32/DT_F16 (GPU),
                                                     DT_COUNT: f16 where the device has shaderFloat16
     eng_close(&g)
     eng_reset(&g)                                   empty context (position 0)
     eng_feed(&g, tokens, n, logits, err)            evaluate n tokens at the current position;
                                                     logits: NULL, or n*n_vocab floats (every row)
     eng_step_argmax(&g, token, &next, err)          one token; the greedy next id (GPU: reads back only the id)
     eng_greedy_begin(&g, token, err)                greedy decode from token at the current position; then
     eng_greedy_next(&g, more, &next, err)           each call evaluates the last id (token, then each next) and
     eng_greedy_end(&g)                              returns the greedy next; more: another call may follow. The
                                                     GPU path queues the next steps (EDGE_CHAIN_STEPS per command buffer)
                                                     before it waits for these (each embedding reads its id on the GPU:
                                                     xf_chain_*); end drops what is in flight
     eng_last_logits(&g)                             the last row (after eng_feed), host memory
     eng_pos(&g)                                     tokens in the context                      */
#ifndef EDGE_ENGINE_H
#define EDGE_ENGINE_H

typedef enum EngBackend { ENG_REF, ENG_GPU } EngBackend;

typedef struct Engine {
    EngBackend  backend;
    const Model *m;
    u32         n_ctx, pos, n_vocab;
    f32        *last;        /* (n_vocab) logits of the last evaluated position */
    f32        *batch;       /* (n_vocab, t_max) GPU batch logits */
    Arena       ref_arena;
    RefState    ref;
    Vk          vk;
    Xf          xf;
    bool        vk_up, xf_up;
    bool        chained;     /* eng_greedy_*: the GPU steps are chained (xf_chain_*) */
    i32         gtok;        /* eng_greedy_*: the id the next step evaluates (when not chained) */
} Engine;

bool eng_open(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, Err *e);
extern u32 eng_prefill_batch;   /* tokens per GPU prefill batch (default EDGE_PREFILL_BATCH = 64): the logits,
                                   activation and attention-score buffers hold this many rows */
void eng_close(Engine *g);
void eng_reset(Engine *g);
bool eng_feed(Engine *g, const i32 *tokens, u32 n, f32 *logits, Err *e);
bool eng_step_argmax(Engine *g, i32 token, i32 *next, Err *e);
bool eng_greedy_begin(Engine *g, i32 token, Err *e);
bool eng_greedy_next(Engine *g, bool more, i32 *next, Err *e);
void eng_greedy_end(Engine *g);
static inline const f32 *eng_last_logits(const Engine *g) { return g->last; }
static inline u32 eng_pos(const Engine *g) { return g->pos; }

#endif
