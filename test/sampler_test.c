/* sampler_test.c — models/sampler.c: greedy is the lowest id among equal maxima; the xoshiro256** stream
   from seed 0 matches the algorithm's published definition computed independently in python3; top-k 1,
   tiny top-p and min-p 1 reduce to greedy; sampling frequencies at temperature 1 follow softmax; the
   penalty divides positive and multiplies negative logits of recent tokens only; same seed, same draws. */

TEST(sampler_greedy_lowest_id_on_ties) {
    f32 l[6] = { 1, 3, -2, 3, 0, 3 };
    CHECK(samp_argmax(l, 6) == 1);
    Arena a; arena_init(&a, "samp test", 1 << 16);
    Sampler s; samp_init(&s, 6, 8, &a);
    SampParams p = { .temp = 0, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f, .repeat_penalty = 1, .repeat_last_n = 64 };
    samp_reset(&s, &p);
    CHECK(samp_pick(&s, l) == 1);
    arena_free(&a);
}

TEST(sampler_xoshiro_matches_reference) {
    /* python3: splitmix64 from x=0 gives the state; xoshiro256** next() per Blackman & Vigna 2018 */
    Sampler s; memset(&s, 0, sizeof s);
    u64 x = 0;
    for (int i = 0; i < 4; i++) s.rng[i] = samp_splitmix(&x);
    CHECK(s.rng[0] == 0xe220a8397b1dcdafull && s.rng[1] == 0x6e789e6aa1b965f4ull);
    CHECK(s.rng[2] == 0x06c45d188009454full && s.rng[3] == 0xf88bb8a8724c81ecull);
    u64 r0 = samp_rng_u64(&s);
    u64 t0 = 0x6e789e6aa1b965f4ull * 5; t0 = (t0 << 7 | t0 >> 57) * 9;
    CHECK(r0 == t0);
    for (int i = 0; i < 1000; i++) { f64 f = samp_rng_f64(&s); CHECK(f >= 0 && f < 1); }
}

TEST(sampler_filters_and_frequencies) {
    enum { N = 5 };
    f32 l[N] = { 0.0f, 2.0f, 1.0f, -1.0f, 2.0f - 0.6931472f };   /* probs ∝ 1, e^2, e, e^-1, e^2/2 */
    Arena a; arena_init(&a, "samp test", 1 << 16);
    Sampler s; samp_init(&s, N, 16, &a);
    SampParams base = { .temp = 1, .top_k = 0, .top_p = 1, .min_p = 0, .repeat_penalty = 1, .repeat_last_n = 64, .seed = 7 };
    SampParams p = base; p.top_k = 1; samp_reset(&s, &p);
    for (int i = 0; i < 50; i++) CHECK(samp_pick(&s, l) == 1);
    p = base; p.top_p = 1e-6f; samp_reset(&s, &p);
    for (int i = 0; i < 50; i++) CHECK(samp_pick(&s, l) == 1);
    p = base; p.min_p = 0.6f; samp_reset(&s, &p);              /* keeps 1 (p=1x) only; 4 is 0.5x */
    for (int i = 0; i < 50; i++) CHECK(samp_pick(&s, l) == 1);
    p = base; p.top_k = 2; samp_reset(&s, &p);                 /* ids 1 and 4 with 2:1 odds */
    u32 cnt[N] = {0};
    for (int i = 0; i < 30000; i++) cnt[samp_pick(&s, l)]++;
    CHECKF(cnt[0] == 0 && cnt[2] == 0 && cnt[3] == 0 && cnt[1] > 19500 && cnt[1] < 20500, "top-2 counts %u %u", cnt[1], cnt[4]);
    p = base; samp_reset(&s, &p);
    memset(cnt, 0, sizeof cnt);
    for (int i = 0; i < 100000; i++) cnt[samp_pick(&s, l)]++;
    f64 z = 1 + exp(2.0) + exp(1.0) + exp(-1.0) + exp(2.0) / 2;
    f64 want[N] = { 1 / z, exp(2.0) / z, exp(1.0) / z, exp(-1.0) / z, exp(2.0) / 2 / z };
    for (int i = 0; i < N; i++) CHECKF(fabs(cnt[i] / 1e5 - want[i]) < 0.006, "id %d: %f vs %f", i, cnt[i] / 1e5, want[i]);
    /* same seed, same draws */
    p = base; p.seed = 99; samp_reset(&s, &p);
    i32 seq[64]; for (int i = 0; i < 64; i++) seq[i] = samp_pick(&s, l);
    samp_reset(&s, &p);
    bool same = true; for (int i = 0; i < 64; i++) same &= seq[i] == samp_pick(&s, l);
    CHECK(same);
    arena_free(&a);
}

TEST(sampler_repetition_penalty) {
    f32 l[4] = { 2.0f, 1.9f, -1.0f, -1.05f };
    Arena a; arena_init(&a, "samp test", 1 << 16);
    Sampler s; samp_init(&s, 4, 4, &a);
    SampParams p = { .temp = 0, .top_k = 40, .top_p = 1, .min_p = 0, .repeat_penalty = 1.1f, .repeat_last_n = 2 };
    samp_reset(&s, &p);
    samp_accept(&s, 0); samp_accept(&s, 0);
    CHECK(samp_pick(&s, l) == 1);                  /* 2.0/1.1 = 1.82 < 1.9 */
    samp_accept(&s, 3); samp_accept(&s, 2);        /* 0 left the window of 2 */
    CHECK(samp_pick(&s, l) == 0);
    f32 m[4] = { -5, -1.08f, -1.0f, -1.05f };
    CHECK(samp_pick(&s, m) == 1);                  /* 2: -1.0*1.1 = -1.1, 3: -1.155; 1 (not recent) stays -1.08 */
    arena_free(&a);
}

/* top-p keeps the smallest set whose mass reaches p, boundary included (llama.cpp's rule): two equal
   logits have probabilities of exactly 0.5 each, so p = 0.5 keeps one of them, p just above keeps both. */
TEST(sampler_top_p_boundary_is_inclusive) {
    f32 l[2] = { 1.0f, 1.0f };
    Arena a; arena_init(&a, "samp test", 1 << 16);
    Sampler s; samp_init(&s, 2, 16, &a);
    SampParams p = { .temp = 1, .top_k = 0, .top_p = 0.5f, .min_p = 0, .repeat_penalty = 1, .repeat_last_n = 64, .seed = 3 };
    samp_reset(&s, &p);
    u32 cnt[2] = {0};
    for (int i = 0; i < 400; i++) cnt[samp_pick(&s, l)]++;
    CHECKF(cnt[0] == 400 || cnt[1] == 400, "top-p 0.5 over two tokens of 0.5 each picked %u and %u", cnt[0], cnt[1]);
    p.top_p = 0.5001f; samp_reset(&s, &p);
    cnt[0] = cnt[1] = 0;
    for (int i = 0; i < 400; i++) cnt[samp_pick(&s, l)]++;
    CHECKF(cnt[0] > 120 && cnt[1] > 120, "top-p 0.5001 over two tokens of 0.5 each picked %u and %u", cnt[0], cnt[1]);
    arena_free(&a);
}
