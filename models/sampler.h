/* sampler.h — picking the next token from a row of logits: greedy, or temperature sampling
   after repetition penalty, top-k, top-p and min-p, with a seeded PRNG of our own.

   Why: the same seed, prompt and device must give the same bytes on every run and every
   libc, so the random numbers come from xoshiro256** seeded by splitmix64, not rand().

   Order of the steps (llama.cpp's default chain): repetition penalty over the last
   repeat_last_n tokens (logit > 0: divided by the penalty, else multiplied) -> top-k ->
   top-p (smallest set whose probability at temperature 1 reaches p) -> min-p (drop tokens
   below min_p times the best probability) -> temperature -> draw.
   temp <= 0 is greedy: the largest logit, the lowest id on ties (after the penalty).

   API:
     samp_init(&s, n_vocab, max_hist, arena)     scratch sized once (n_vocab candidates, history ring)
     samp_init_share(&s, &with, max_hist, arena) the same, sharing with's candidate scratch (samplers used one at a time)
     samp_reset(&s, &params)                     new sequence: params, reseed, empty history
     samp_accept(&s, id)                         remember a token (prompt and generated) for the penalty
     samp_pick(&s, logits)                       the next token from a full row (logits not modified)
     samp_argmax(logits, n)                      greedy pick
     samp_is_greedy(&params)                     temp <= 0 and no penalty: the GPU argmax path may be used
     samp_rng_u64(&s) / samp_rng_f64(&s)         the PRNG (tests) */
#ifndef EDGE_SAMPLER_H
#define EDGE_SAMPLER_H

typedef struct SampParams {
    f32 temp;               /* <= 0: greedy */
    u32 top_k;              /* 0: off */
    f32 top_p;              /* >= 1: off */
    f32 min_p;              /* <= 0: off */
    f32 repeat_penalty;     /* 1: off */
    u32 repeat_last_n;      /* tokens of history the penalty looks at */
    u64 seed;
} SampParams;

typedef struct SampCand { i32 id; f32 logit; } SampCand;

typedef struct Sampler {
    SampParams p;
    u64       rng[4];       /* xoshiro256** state */
    u32       n_vocab;
    SampCand *cand;         /* (n_vocab) scratch */
    i32      *hist;         /* (max_hist) ring of recent tokens */
    u32       max_hist, n_hist, hist_at;
} Sampler;

void samp_init(Sampler *s, u32 n_vocab, u32 max_hist, Arena *a);
void samp_init_share(Sampler *s, const Sampler *with, u32 max_hist, Arena *a);
void samp_reset(Sampler *s, const SampParams *p);
void samp_accept(Sampler *s, i32 id);
i32  samp_pick(Sampler *s, const f32 *logits);
u32  samp_argmax(const f32 *logits, u32 n);
bool samp_is_greedy(const SampParams *p);
u64  samp_rng_u64(Sampler *s);
f64  samp_rng_f64(Sampler *s);

#endif
