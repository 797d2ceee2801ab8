/* sampler.c — implementation of sampler.h. Allocates nothing after samp_init. */

static u64 samp_splitmix(u64 *x) {
    u64 z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static u64 samp_rotl(u64 x, int k) { return (x << k) | (x >> (64 - k)); }

u64 samp_rng_u64(Sampler *s) {
    u64 *r = s->rng;
    u64 res = samp_rotl(r[1] * 5, 7) * 9, t = r[1] << 17;
    r[2] ^= r[0]; r[3] ^= r[1]; r[1] ^= r[2]; r[0] ^= r[3];
    r[2] ^= t; r[3] = samp_rotl(r[3], 45);
    return res;
}

/* [0, 1) with 53 random bits */
f64 samp_rng_f64(Sampler *s) { return (f64)(samp_rng_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

void samp_init(Sampler *s, u32 n_vocab, u32 max_hist, Arena *a) {
    memset(s, 0, sizeof *s);
    s->n_vocab = n_vocab;
    s->cand = push_array(a, SampCand, n_vocab);
    s->max_hist = max_hist ? max_hist : 1;
    s->hist = push_array(a, i32, s->max_hist);
}

void samp_init_share(Sampler *s, const Sampler *with, u32 max_hist, Arena *a) {
    memset(s, 0, sizeof *s);
    s->n_vocab = with->n_vocab;
    s->cand = with->cand;
    s->max_hist = max_hist ? max_hist : 1;
    s->hist = push_array(a, i32, s->max_hist);
}

void samp_reset(Sampler *s, const SampParams *p) {
    s->p = *p;
    u64 x = p->seed;
    for (int i = 0; i < 4; i++) s->rng[i] = samp_splitmix(&x);
    s->n_hist = s->hist_at = 0;
}

void samp_accept(Sampler *s, i32 id) {
    s->hist[s->hist_at] = id;
    s->hist_at = (s->hist_at + 1) % s->max_hist;
    if (s->n_hist < s->max_hist) s->n_hist++;
}

bool samp_is_greedy(const SampParams *p) { return p->temp <= 0 && (p->repeat_penalty == 1.0f || p->repeat_last_n == 0); }

u32 samp_argmax(const f32 *logits, u32 n) {
    u32 best = 0;
    for (u32 i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    return best;
}

/* a before b: larger logit first, lower id first among equals */
static bool samp_before(const SampCand *a, const SampCand *b) {
    return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static void samp_sift_down(SampCand *h, u32 n, u32 i) {   /* min-heap: the worst candidate on top */
    for (;;) {
        u32 l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && samp_before(&h[w], &h[l])) w = l;
        if (r < n && samp_before(&h[w], &h[r])) w = r;
        if (w == i) return;
        SampCand t = h[i]; h[i] = h[w]; h[w] = t; i = w;
    }
}

/* Keeps the best k of c[0..n) in c[0..k), sorted best first (heap select, then heap sort). */
static void samp_top(SampCand *c, u32 n, u32 k) {
    for (u32 i = k / 2; i-- > 0;) samp_sift_down(c, k, i);
    for (u32 i = k; i < n; i++)
        if (samp_before(&c[i], &c[0])) { c[0] = c[i]; samp_sift_down(c, k, 0); }
    for (u32 m = k; m > 1; m--) {            /* pop the worst to the end: best first */
        SampCand t = c[0]; c[0] = c[m - 1]; c[m - 1] = t;
        samp_sift_down(c, m - 1, 0);
    }
}

i32 samp_pick(Sampler *s, const f32 *logits) {
    u32 n = s->n_vocab;
    SampCand *c = s->cand;
    for (u32 i = 0; i < n; i++) { c[i].id = (i32)i; c[i].logit = logits[i]; }
    const SampParams *p = &s->p;
    if (p->repeat_penalty != 1.0f && p->repeat_last_n > 0) {
        u32 look = MIN(s->n_hist, p->repeat_last_n);
        for (u32 j = 0; j < look; j++) {
            i32 id = s->hist[(s->hist_at + s->max_hist - 1 - j) % s->max_hist];
            if (id < 0 || (u32)id >= n) continue;
            f32 *l = &c[id].logit;
            if (*l == logits[id]) *l = *l > 0 ? *l / p->repeat_penalty : *l * p->repeat_penalty;  /* once per id */
        }
    }
    if (p->temp <= 0) {
        u32 best = 0;
        for (u32 i = 1; i < n; i++) if (samp_before(&c[i], &c[best])) best = i;
        return c[best].id;
    }
    u32 k = (p->top_k > 0 && p->top_k < n) ? p->top_k : n;
    samp_top(c, n, k);
    /* probabilities at temperature 1 for top-p / min-p; c[0] is the best */
    f64 sum = 0;
    for (u32 i = 0; i < k; i++) sum += exp((f64)c[i].logit - (f64)c[0].logit);
    if (p->top_p < 1.0f) {
        f64 acc = 0;
        for (u32 i = 0; i < k; i++) {
            acc += exp((f64)c[i].logit - (f64)c[0].logit) / sum;
            if (acc >= p->top_p) { k = i + 1; break; }
        }
    }
    if (p->min_p > 0.0f) {
        /* p_i >= min_p * p_0  <=>  logit_i - logit_0 >= log(min_p) */
        f64 lim = log((f64)p->min_p);
        u32 keep = 1;
        while (keep < k && (f64)c[keep].logit - (f64)c[0].logit >= lim) keep++;
        k = keep;
    }
    f64 w_sum = 0;
    for (u32 i = 0; i < k; i++) w_sum += exp(((f64)c[i].logit - (f64)c[0].logit) / p->temp);
    f64 r = samp_rng_f64(s) * w_sum, acc = 0;
    for (u32 i = 0; i < k; i++) {
        acc += exp(((f64)c[i].logit - (f64)c[0].logit) / p->temp);
        if (r < acc) return c[i].id;
    }
    return c[k - 1].id;
}
