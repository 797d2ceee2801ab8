/* plan.h — `edge plan`: the exact device and host memory plan of a model at a context, from the
   same planning pass as xf_init (xf_plan: the allocation sequence on planning arenas), and
   whether it fits this device's memory heaps.

   API:
     plan_compute(&p, vk, model, n_ctx, act, batch, opts, print, err)  totals (and, with print, every buffer on stdout);
                                                          batch: the prefill batch in tokens, as eng_open_batch; opts: as
                                                          xf_init (KV cache dtype, one logits row; NULL: as eng_open_batch)
     plan_compute_eng(&p, &g, model, n_ctx, act, kv, batch, n_seq, print, err)   edge run's plan on an engine's device
                                                          (eng_open_device): one logits row (per sequence); kv DT_COUNT:
                                                          eng_kv_default; n_seq: sequences held (edge run -np)
     plan_overhead(&p)                                    alignment padding / planned bytes            */
#ifndef EDGE_PLAN_H
#define EDGE_PLAN_H

typedef struct Plan {
    u32 n_ctx, t_max, n_seq;    /* context per sequence, prefill batch, sequences (edge run -np) */
    u64 n_tensors;
    u64 weights, kv, act;       /* exact tensor bytes: weights arena; KV cache and activations (state arena) */
    u64 kv_kind[2];             /* KV cache bytes of the [0] global and [1] sliding-window layers (all sequences) */
    u32 kv_layers[2], kv_pos[2];   /* their layers and the positions each layer's cache holds */
    u64 plan_w, plan_s;         /* planned arena bytes, padding included (what xf_init allocates) */
    u64 pad_w, pad_s;           /* plan - tensor bytes: alignment padding and block-end remainders */
    u64 host;                   /* host bytes the engine allocates besides the mapped file */
    u64 heap_size;              /* the heap the arenas would come from (0: none found) */
    u32 heap;
    bool fits;
} Plan;

bool plan_compute(Plan *p, Vk *vk, const Model *m, u32 n_ctx, DType act, u32 batch, const XfOpts *o, bool print, Err *e);
bool plan_compute_eng(Plan *p, Engine *g, const Model *m, u32 n_ctx, DType act, DType kv, u32 batch, u32 n_seq, bool print, Err *e);
static inline f64 plan_overhead(const Plan *p) {
    u64 t = p->plan_w + p->plan_s;
    return t ? (f64)(p->pad_w + p->pad_s) / (f64)t : 0;
}

#endif
