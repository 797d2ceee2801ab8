/* attn_test.c — rmsnorm (f16 out, fused add), bias, rope, KV store, attention, GLU,
   softcap, argmax and top-k kernels against plain C references in f64, on seeded random
   inputs with large magnitudes and masked keys, for f32 and f16 activations (f16: the
   reference sees the same f16-rounded inputs). Errors are measured against each op's
   natural magnitude (the size of the terms that make up the result). */

/* ---- helpers ------------------------------------------------------------------- */
static f32 f16_round(f32 x) { return f32_from_f16(f16_from_f32(x)); }

/* Rounds host values in place to what a tensor of dtype dt can hold. */
static void round_to(DType dt, f32 *x, u64 n) { if (dt == DT_F16) for (u64 i = 0; i < n; i++) x[i] = f16_round(x[i]); }

static void up_as(Vk *vk, const Tensor *t, const f32 *src) {
    if (t->dtype == DT_F32) { vk_upload(vk, t, src); return; }
    u16 *h = malloc(t->nelem * 2);
    for (u64 i = 0; i < t->nelem; i++) h[i] = f16_from_f32(src[i]);
    vk_upload(vk, t, h); free(h);
}

static void down_as(Vk *vk, const Tensor *t, f32 *dst) {
    if (t->dtype == DT_F32) { vk_download(vk, t, dst); return; }
    u16 *h = malloc(t->nelem * 2);
    vk_download(vk, t, h);
    for (u64 i = 0; i < t->nelem; i++) dst[i] = f32_from_f16(h[i]);
    free(h);
}

static bool is_finite_f64(f64 x) { return x == x && !isinf(x); }

/* Is a dtype usable on this device (f16 kernels need shaderFloat16 + 16-bit storage)? */
static bool dtype_ok(Vk *vk, DType t) { return t != DT_F16 || (vk->caps.f16_arith && vk->caps.storage16); }

static f64 tol_for(DType t) { return t == DT_F16 ? 1e-3 : 1e-5; }

/* ---- rmsnorm with f16 output, fused residual add --------------------------------- */
TEST(kernel_rmsnorm_f16_output_and_fused_add_match_reference) {
    Vk *vk = test_vk();
    if (!dtype_ok(vk, DT_F16)) SKIP("device lacks f16");
    const u32 n = 640, rows = 5;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "rmsnorm2", (u64)n * rows * 14 + n * 4 + 4096, &e));
    u64 nx[2] = { n, rows }, nw[1] = { n };
    Tensor tx = vk_tensor(&a, "x", DT_F32, 2, nx), tw = vk_tensor(&a, "w", DT_F32, 1, nw);
    Tensor ty = vk_tensor(&a, "y16", DT_F16, 2, nx), tr = vk_tensor(&a, "resid", DT_F32, 2, nx);
    f32 *x = malloc(n * rows * 4), *w = malloc(n * 4), *y = malloc(n * rows * 4), *r0 = malloc(n * rows * 4), *r = malloc(n * rows * 4);
    trng_seed(21);
    const f32 row_scale[5] = { 1.0f, 1e-20f, 1e25f, 0.0f, 3e4f };
    for (u32 j = 0; j < rows; j++) for (u32 i = 0; i < n; i++) { x[j * n + i] = trng_normal() * row_scale[j]; r0[j * n + i] = trng_normal() * 3; }
    for (u32 i = 0; i < n; i++) w[i] = 1.0f + 0.1f * trng_normal();
    vk_upload(vk, &tx, x); vk_upload(vk, &tw, w); vk_upload(vk, &tr, r0);
    const f32 eps = 1e-6f;
    vk_begin(vk); op_rmsnorm(vk, &tx, &tw, &ty, eps); op_rmsnorm_add(vk, &tx, &tw, &tr, eps); vk_submit_wait(vk);
    down_as(vk, &ty, y); vk_download(vk, &tr, r);
    f64 w16 = 0, wadd = 0; u32 bad = 0;
    for (u32 j = 0; j < rows; j++) {
        f64 ss = 0; for (u32 i = 0; i < n; i++) ss += (f64)x[j * n + i] * x[j * n + i];
        f64 inv = 1.0 / sqrt(ss / n + eps);
        for (u32 i = 0; i < n; i++) {
            f64 nv = x[j * n + i] * inv * w[i], want = r0[j * n + i] + nv;
            if (!is_finite_f64(y[j * n + i]) || !is_finite_f64(r[j * n + i])) { bad++; continue; }
            w16 = MAX(w16, fabs(y[j * n + i] - nv) / (fabs(nv) + 1e-4));     /* f16 subnormals below 6e-5 */
            wadd = MAX(wadd, fabs(r[j * n + i] - want) / (fabs(r0[j * n + i]) + fabs(nv) + 1e-30));
        }
    }
    CHECKF(bad == 0, "%u NaN/Inf outputs", bad);
    CHECKF(w16 <= 1e-3, "rmsnorm f16 output: max relative error %g", w16);
    CHECKF(wadd <= 1e-5, "rmsnorm_add: max error %g of |x| + |norm|", wadd);
    out("    rmsnorm f16-out max rel err %.3g, rmsnorm_add %.3g\n", w16, wadd);
    free(x); free(w); free(y); free(r0); free(r);
    vk_arena_free(&a);
}

/* ---- bias ------------------------------------------------------------------------ */
TEST(kernel_add_bias_matches_reference) {
    Vk *vk = test_vk();
    const u32 n = 384, T = 9;
    DType types[2] = { DT_F32, DT_F16 };
    for (int ti = 0; ti < 2; ti++) {
        DType at = types[ti];
        if (!dtype_ok(vk, at)) continue;
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "bias", (u64)n * (T + 1) * 4 + 4096, &e));
        u64 nb[1] = { n }, ny[2] = { n, T };
        Tensor tb = vk_tensor(&a, "b", DT_F32, 1, nb), ty = vk_tensor(&a, "y", at, 2, ny);
        f32 *b = malloc(n * 4), *y0 = malloc(n * T * 4), *y = malloc(n * T * 4);
        trng_seed(31 + ti);
        for (u32 i = 0; i < n; i++) b[i] = trng_normal();
        for (u32 i = 0; i < n * T; i++) y0[i] = trng_normal() * (i % 7 == 0 ? 1000.0f : 1.0f);
        round_to(at, y0, n * T);
        vk_upload(vk, &tb, b); up_as(vk, &ty, y0);
        vk_begin(vk); op_add_bias(vk, &tb, &ty); vk_submit_wait(vk);
        down_as(vk, &ty, y);
        f64 worst = 0;
        for (u32 i = 0; i < n * T; i++) {
            f64 want = (f64)y0[i] + b[i % n];
            worst = MAX(worst, fabs(y[i] - want) / (fabs(y0[i]) + fabs(b[i % n])));
        }
        CHECKF(worst <= tol_for(at), "%s: max error %g", dtype_name[at], worst);
        out("    add_bias %s max err %.3g\n", dtype_name[at], worst);
        free(b); free(y0); free(y);
        vk_arena_free(&a);
    }
}

/* ---- rope -------------------------------------------------------------------------- */
static void check_rope(DType at, u32 hd, u32 nh, u32 T, u32 T_run, u32 n_rot, bool neox, u32 p0, f32 base, f32 fs, u64 seed, bool factors) {
    Vk *vk = test_vk();
    if (!dtype_ok(vk, at)) return;
    u64 n = (u64)hd * nh * T;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "rope", n * 8 + 4096, &e));
    u64 nx[3] = { hd, nh, T }, np[1] = { op_rows_words(T) };
    u64 nf[1] = { n_rot / 2 };
    Tensor tx = vk_tensor(&a, "x", at, 3, nx), ty = vk_tensor(&a, "y", at, 3, nx), tp = vk_tensor(&a, "pos", DT_U32, 1, np);
    Tensor tf = vk_tensor(&a, "ff", DT_F32, 1, nf);
    f32 *x = malloc(n * 4), *y = malloc(n * 4), *y0 = malloc(n * 4), ff[128];
    trng_seed(seed);
    for (u32 i = 0; i < n_rot / 2; i++) ff[i] = factors ? 1.0f + 7.0f * (trng_uniform() * 0.5f + 0.5f) : 1.0f;
    vk_upload(vk, &tf, ff);
    for (u64 i = 0; i < n; i++) { x[i] = trng_normal() * (i % 11 == 0 ? 100.0f : 1.0f); y0[i] = 12345.0f; }
    round_to(at, x, n);
    up_as(vk, &tx, x); up_as(vk, &ty, y0); op_rows_upload(vk, &tp, T_run, p0, 0);
    vk_begin(vk); op_rope(vk, &tx, &tp, &tf, &ty, n_rot, base, fs, neox); vk_submit_wait(vk);
    down_as(vk, &ty, y);
    /* f32 angles: theta carries a relative error of a few f32 ulps, so the tolerance grows
       with the angle (|x| * theta * 2.4e-7 is 4 ulps of theta). */
    f64 worst = 0; u32 untouched_bad = 0;
    for (u32 t = 0; t < T; t++) for (u32 h = 0; h < nh; h++) {
        const f32 *xr = x + ((u64)t * nh + h) * hd; const f32 *yr = y + ((u64)t * nh + h) * hd;
        if (t >= T_run) { for (u32 d = 0; d < hd; d++) untouched_bad += yr[d] != (at == DT_F16 ? f16_round(12345.0f) : 12345.0f); continue; }
        for (u32 i = 0; i < hd / 2; i++) {
            u32 ia = 2 * i, ib = 2 * i + 1;
            f64 ra = xr[ia], rb = xr[ib], theta = 0;
            if (2 * i < n_rot) {
                if (neox) { ia = i; ib = i + n_rot / 2; }
                theta = (f64)(p0 + t) * fs * pow(base, -2.0 * i / n_rot) / ff[i];
                f64 c = cos(theta), s = sin(theta);
                ra = xr[ia] * c - xr[ib] * s; rb = xr[ia] * s + xr[ib] * c;
            }
            f64 mag = fabs(xr[ia]) + fabs(xr[ib]) + 1e-30;
            f64 tol = tol_for(at) + 2.4e-7 * theta;
            f64 err = MAX(fabs(yr[ia] - ra), fabs(yr[ib] - rb)) / mag;
            worst = MAX(worst, err / tol * tol_for(at));
        }
    }
    CHECKF(untouched_bad == 0, "rope wrote %u values of rows t >= pos[1]", untouched_bad);
    CHECKF(worst <= tol_for(at), "rope %s hd %u n_rot %u %s p0 %u: max error %g (angle-scaled)", dtype_name[at], hd, n_rot,
           neox ? "neox" : "norm", p0, worst);
    out("    rope %s hd %u n_rot %u %s p0 %u: max err %.3g\n", dtype_name[at], hd, n_rot, neox ? "neox" : "norm", p0, worst);
    free(x); free(y); free(y0);
    vk_arena_free(&a);
}

TEST(kernel_rope_norm_and_neox_match_reference) {
    for (int ti = 0; ti < 2; ti++) {
        DType at = ti ? DT_F16 : DT_F32;
        check_rope(at, 64, 4, 6, 6, 64, false, 0, 10000.0f, 1.0f, 41, false);
        check_rope(at, 128, 3, 5, 3, 128, true, 1000, 1000000.0f, 1.0f, 42, false);   /* rows past pos[1] untouched */
        check_rope(at, 8, 8, 4, 4, 8, false, 2040, 10000.0f, 1.0f, 43, false);         /* stories260K shape, late positions */
        check_rope(at, 256, 2, 2, 2, 64, true, 77, 10000.0f, 0.5f, 44, false);         /* partial rotation, freq scale */
        check_rope(at, 64, 2, 2, 2, 32, false, 5, 10000.0f, 1.0f, 45, false);
        check_rope(at, 128, 4, 3, 3, 128, false, 900, 500000.0f, 1.0f, 46, true);   /* llama 3 frequency factors */
    }
}

/* ---- KV store ---------------------------------------------------------------------- */
TEST(kernel_kv_store_writes_rows_p0_to_p0_plus_T_modulo_the_rows) {
    Vk *vk = test_vk();
    const u32 kvd = 96, T = 5, n_ctx = 16;
    for (int v = 0; v < 4; v++) {
        DType at = v & 1 ? DT_F16 : DT_F32, ct = v & 2 ? DT_F16 : DT_F32;
        if (!dtype_ok(vk, at) || !dtype_ok(vk, ct)) continue;
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "kv", (u64)kvd * (T + n_ctx) * 4 + 4096, &e));
        u64 nk[2] = { kvd, T }, nc[2] = { kvd, n_ctx }, np[1] = { op_rows_words(T) };
        Tensor tk = vk_tensor(&a, "k", at, 2, nk), tc = vk_tensor(&a, "cache", ct, 2, nc), tp = vk_tensor(&a, "pos", DT_U32, 1, np);
        f32 *k = malloc(kvd * T * 4), *c0 = malloc(kvd * n_ctx * 4), *c = malloc(kvd * n_ctx * 4);
        trng_seed(51 + v);
        for (u32 i = 0; i < kvd * T; i++) k[i] = trng_normal() * 10;
        for (u32 i = 0; i < kvd * n_ctx; i++) c0[i] = -7.0f;
        round_to(at, k, kvd * T);
        up_as(vk, &tk, k); up_as(vk, &tc, c0); op_rows_upload(vk, &tp, 4, 14, 0);   /* 4 of the 5 rows: positions 14..17 -> rows 14, 15, 0, 1 */
        vk_begin(vk); op_kv_store(vk, &tk, &tp, &tc); vk_submit_wait(vk);
        down_as(vk, &tc, c);
        u32 bad = 0;
        for (u32 r = 0; r < n_ctx; r++) for (u32 d = 0; d < kvd; d++) {
            u32 t = (r + n_ctx - 14) % n_ctx;   /* the row's token, when it is one of the 4 */
            f32 want = t < 4 ? k[t * kvd + d] : -7.0f;
            if (ct == DT_F16) want = f16_round(want);
            bad += c[r * kvd + d] != want;
        }
        CHECKF(bad == 0, "act %s cache %s: %u cache values wrong", dtype_name[at], dtype_name[ct], bad);
        free(k); free(c0); free(c);
        vk_arena_free(&a);
    }
}

/* ---- attention ------------------------------------------------------------------- */
typedef struct AttnCase {
    u32 hd, nh, nkv, T, p0, n_ctx, window; f32 scale, softcap, qscale; DType at, ct;
    bool split;     /* through op_attention_split (attn_split + attn_merge) */
    u32 part_q;     /* split: queries the partials hold (0: all T); fewer: queries in groups */
} AttnCase;

/* Reference in f64 on the values the GPU sees. Error: |out - ref| / sum_j p_j |v_j|, allowed
   tol + score_ulps * 6e-8 * max_j sum_d |q_d k_jd| * scale: an f32 dot product carries an
   absolute error of a few ulps of the sum of its terms' magnitudes, and a score error
   delta moves the output by at most about delta (relative). */
static f64 check_attention(const AttnCase *c, f64 score_ulps, u64 seed) {
    Vk *vk = test_vk();
    if (!dtype_ok(vk, c->at) || !dtype_ok(vk, c->ct)) return 0;
    u32 hd = c->hd, nh = c->nh, kvd = hd * c->nkv, T = c->T, n_ctx = c->n_ctx;
    u64 nq = (u64)hd * nh * T, nc = (u64)kvd * n_ctx, ns = (u64)n_ctx * nh * T;
    DevArena a; Err e;
    u32 pq = c->part_q ? c->part_q : T;
    u64 npart = (u64)op_attn_part_row(hd) * op_attn_chunks(n_ctx) * nh * pq;
    REQUIRE(vk_arena_init(vk, &a, "attn", (nq * 2 + nc * 2 + ns + npart) * 4 + 8192, &e));
    u64 shpart[4] = { op_attn_part_row(hd), op_attn_chunks(n_ctx), nh, pq };
    Tensor tpart = vk_tensor(&a, "attn_part", DT_F32, 4, shpart);
    u64 shq[3] = { hd, nh, T }, shc[2] = { kvd, n_ctx }, shs[3] = { n_ctx, nh, T }, shp[1] = { op_rows_words(T) };
    Tensor tq = vk_tensor(&a, "q", c->at, 3, shq), tkc = vk_tensor(&a, "kc", c->ct, 2, shc), tvc = vk_tensor(&a, "vc", c->ct, 2, shc);
    Tensor tp = vk_tensor(&a, "pos", DT_U32, 1, shp), ts = vk_tensor(&a, "scores", DT_F32, 3, shs), to = vk_tensor(&a, "out", c->at, 3, shq);
    f32 *q = malloc(nq * 4), *kc = malloc(nc * 4), *vc = malloc(nc * 4), *o = malloc(nq * 4);
    f64 *p = malloc(n_ctx * sizeof *p);
    trng_seed(seed);
    for (u64 i = 0; i < nq; i++) q[i] = trng_normal() * c->qscale;
    for (u64 i = 0; i < nc; i++) { kc[i] = trng_normal(); vc[i] = trng_normal() * (i % 13 == 0 ? 50.0f : 1.0f); }
    round_to(c->at, q, nq); round_to(c->ct, kc, nc); round_to(c->ct, vc, nc);
    up_as(vk, &tq, q); up_as(vk, &tkc, kc); up_as(vk, &tvc, vc); op_rows_upload(vk, &tp, T, c->p0, 0);
    vk_begin(vk);
    if (c->split) op_attention_split(vk, &tq, &tkc, &tvc, &tp, &tpart, &to, nh, c->nkv, c->scale, c->softcap, c->window, T == 1, 0);
    else op_attention(vk, &tq, &tkc, &tvc, &tp, &ts, &to, nh, c->nkv, c->scale, c->softcap, c->window);
    vk_submit_wait(vk);
    down_as(vk, &to, o);
    f64 worst = 0; u32 bad = 0;
    for (u32 t = 0; t < T; t++) for (u32 h = 0; h < nh; h++) {
        u32 qp = c->p0 + t, hk = h / (nh / c->nkv);
        u32 lo = c->window && qp + 1 > c->window ? qp + 1 - c->window : 0;
        const f32 *qr = q + ((u64)t * nh + h) * hd;
        f64 m = -INFINITY, smag = 0;
        for (u32 j = 0; j < n_ctx; j++) {
            if (j > qp || j < lo) { p[j] = -INFINITY; continue; }        /* the mask, as -inf */
            f64 s = 0, sa = 0;
            for (u32 d = 0; d < hd; d++) {
                f64 term = (f64)(f32)(qr[d] * c->scale) * kc[(u64)j * kvd + hk * hd + d];
                s += term; sa += fabs(term);
            }
            smag = MAX(smag, sa);
            if (c->softcap > 0) s = c->softcap * tanh(s / c->softcap);
            p[j] = s; m = MAX(m, s);
        }
        f64 sum = 0;
        for (u32 j = 0; j < n_ctx; j++) { p[j] = exp(p[j] - m); sum += p[j]; }
        for (u32 d = 0; d < hd; d++) {
            f64 want = 0, mag = 0;
            for (u32 j = 0; j < n_ctx; j++) {
                f64 v = vc[(u64)j * kvd + hk * hd + d];
                want += p[j] / sum * v; mag += p[j] / sum * fabs(v);
            }
            f64 got = o[((u64)t * nh + h) * hd + d];
            if (!is_finite_f64(got)) { bad++; continue; }
            f64 tol = tol_for(c->at) + score_ulps * 6e-8 * smag;
            worst = MAX(worst, fabs(got - want) / (mag + 1e-30) / tol * tol_for(c->at));   /* in units of tol_for */
        }
    }
    CHECKF(bad == 0, "%u NaN/Inf outputs", bad);
    CHECKF(worst <= tol_for(c->at), "attention%s hd %u heads %u/%u T %u p0 %u window %u softcap %g act %s cache %s: max error %g",
           c->split ? " (split)" : "", hd, nh, c->nkv, T, c->p0, c->window, (f64)c->softcap, dtype_name[c->at], dtype_name[c->ct], worst);
    free(q); free(kc); free(vc); free(o); free(p);
    vk_arena_free(&a);
    return worst;
}

TEST(kernel_attention_matches_reference) {
    const AttnCase cases[] = {
        /* hd   nh nkv  T    p0  n_ctx win  scale        softcap qscale  (dtypes set below) */
        {  64,  8,  8,  1,   37,   64,  0, 0.125f,       0,      1, DT_F32, DT_F32, 0, 0 },    /* decode, GQA 1 */
        { 128,  4,  2,  7,    0,   16,  0, 0.08838835f,  0,      1, DT_F32, DT_F32, 0, 0 },    /* prefill from 0, GQA 2 */
        { 128,  4,  2,  6,   10,   32,  0, 0.08838835f,  0,      2, DT_F32, DT_F32, 0, 0 },    /* prefill continuing a cache */
        { 256,  8,  1,  5,   20,   32,  4, 0.0625f,      50,     8, DT_F32, DT_F32, 0, 0 },    /* GQA 8, window < sequence, softcap active */
        { 256,  2,  1,  9,    3,   16,  3, 0.0625f,      50,     1e4, DT_F32, DT_F32, 0, 0 },  /* huge scores through the softcap */
        {  64,  2,  1,  1, 2047, 2048,  0, 0.125f,       0,      1, DT_F32, DT_F32, 0, 0 },    /* decode at the end of a 2048 context */
        {  64,  2,  2,  1, 2047, 2048, 16, 0.125f,       50,     3, DT_F32, DT_F32, 0, 0 },    /* long context, sliding window */
        {  64,  4,  1,  3,    1,    8,  0, 0.125f,       0,      30, DT_F32, DT_F32, 0, 0 },   /* peaked softmax, no softcap */
    };
    f64 w[2][2] = { { 0, 0 }, { 0, 0 } };
    for (u32 i = 0; i < ARRAY_COUNT(cases); i++) for (int v = 0; v < 4; v++) {
        AttnCase c = cases[i];
        c.at = v & 1 ? DT_F16 : DT_F32; c.ct = v & 2 ? DT_F16 : DT_F32;
        if (c.at == DT_F16 && c.qscale > 100) c.qscale = 100;        /* f16 q must stay finite */
        w[v & 1][v >> 1] = MAX(w[v & 1][v >> 1], check_attention(&c, 4, 61 + i * 4 + v));
    }
    out("    attention max err: act f32 (cache f32 %.3g, f16 %.3g), act f16 (cache f32 %.3g, f16 %.3g)\n",
        w[0][0], w[0][1], w[1][0], w[1][1]);
}

TEST(kernel_attention_split_matches_reference) {
    const AttnCase cases[] = {
        /* hd   nh nkv  T    p0  n_ctx win  scale        softcap qscale */
        {  64,  8,  8,  1,   37,   64,  0, 0.125f,       0,      1, DT_F32, DT_F32, 1, 0 },    /* one chunk */
        {  64,  8,  2,  1,   64,  200,  0, 0.125f,       0,      1, DT_F32, DT_F32, 1, 0 },    /* 2 x 32 keys + 1: a chunk of one key */
        { 128, 12,  2,  1,  150,  200,  0, 0.08838835f,  0,      2, DT_F32, DT_F32, 1, 0 },    /* 3 chunks, the last partial; GQA 6 */
        { 256,  8,  4,  1,  190,  200, 70, 0.0625f,      50,     8, DT_F32, DT_F32, 1, 0 },    /* window across chunk edges, softcap */
        { 256,  2,  1,  1,  100,  128,  0, 0.0625f,      50,     1e4, DT_F32, DT_F32, 1, 0 },  /* huge scores through the softcap */
        {  64,  2,  1,  1, 2047, 2048,  0, 0.125f,       0,      1, DT_F32, DT_F32, 1, 0 },    /* the end of a 2048 context: 64 chunks */
        {  64,  2,  2,  1, 2047, 2048, 16, 0.125f,       50,     3, DT_F32, DT_F32, 1, 0 },    /* long context, sliding window */
        {   8,  8,  4,  1,  300,  512,  0, 0.35355339f,  0,      30, DT_F32, DT_F32, 1, 0 },   /* stories260K heads, peaked softmax */
        /* prefill: T queries at once, each with its own causal range */
        { 128,  4,  2,  7,    0,   16,  0, 0.08838835f,  0,      1, DT_F32, DT_F32, 1, 0 },    /* from 0, GQA 2 */
        { 128,  4,  2,  6,   10,   32,  0, 0.08838835f,  0,      2, DT_F32, DT_F32, 1, 0 },    /* continuing a cache */
        { 256,  8,  1,  5,   20,   32,  4, 0.0625f,      50,     8, DT_F32, DT_F32, 1, 0 },    /* window < sequence, softcap */
        {  64,  8,  2, 40,   90,  200, 70, 0.125f,       0,      1, DT_F32, DT_F32, 1, 0 },    /* 40 queries over chunk edges, window */
        {  64,  4,  1,  3,    1,    8,  0, 0.125f,       0,      30, DT_F32, DT_F32, 1, 0 },   /* peaked softmax */
        /* partials for fewer queries than the batch: groups of part_q queries, the last one partial */
        {  64,  8,  2, 40,   90,  200, 70, 0.125f,       0,      1, DT_F32, DT_F32, 1, 7 },
        { 128,  4,  2,  7,    0,   16,  0, 0.08838835f,  0,      1, DT_F32, DT_F32, 1, 2 },
        { 256,  8,  1,  5,   20,   32,  4, 0.0625f,      50,     8, DT_F32, DT_F32, 1, 1 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(cases); i++) for (int v = 0; v < 4; v++) {
        AttnCase c = cases[i];
        c.at = v & 1 ? DT_F16 : DT_F32; c.ct = v & 2 ? DT_F16 : DT_F32;
        if (c.at == DT_F16 && c.qscale > 100) c.qscale = 100;
        check_attention(&c, 4, 161 + i * 4 + v);
    }
    AttnCase huge = { 64, 2, 1, 1, 100, 128, 0, 1.0f, 0, 1e14f, DT_F32, DT_F32, 1, 0 };   /* one key dominates */
    check_attention(&huge, 0, 199);
}

TEST(kernel_attention_huge_scores_stay_finite) {
    /* q.k near 1e30 without a softcap: one key dominates; the output is that key's value */
    AttnCase c = { 64, 2, 1, 4, 5, 16, 0, 1.0f, 0, 1e14f, DT_F32, DT_F32, 0, 0 };
    check_attention(&c, 0, 99);
}

/* ---- GLU ------------------------------------------------------------------------- */
static f64 gelu_ref(f64 x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static f64 silu_ref(f64 x) { return x / (1 + exp(-x)); }

TEST(kernel_glu_silu_and_gelu_match_reference) {
    Vk *vk = test_vk();
    const u32 n = 8192;
    for (int v = 0; v < 4; v++) {
        DType at = v & 1 ? DT_F16 : DT_F32; bool gelu = v & 2;
        if (!dtype_ok(vk, at)) continue;
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "glu", (u64)n * 12 + 4096, &e));
        u64 ne[1] = { n };
        Tensor tg = vk_tensor(&a, "gate", at, 1, ne), tu = vk_tensor(&a, "up", at, 1, ne), ty = vk_tensor(&a, "y", at, 1, ne);
        f32 *g = malloc(n * 4), *u = malloc(n * 4), *y = malloc(n * 4);
        trng_seed(71 + v);
        /* gate magnitudes 1 .. 1e30 (f16: up to 1e4), both signs */
        const f32 sc32[6] = { 1, 5, 30, 1e4f, 1e15f, 1e30f }, sc16[6] = { 1, 5, 30, 300, 3000, 1e4f };
        for (u32 i = 0; i < n; i++) {
            g[i] = trng_normal() * (at == DT_F16 ? sc16 : sc32)[i % 6];
            u[i] = trng_normal();
        }
        g[0] = 1e30f; g[1] = -1e30f; g[2] = 0; g[3] = -88.7f; g[4] = 88.8f;
        if (at == DT_F16) { g[0] = 65504; g[1] = -65504; u[0] = 3; u[1] = 2.5f; }   /* products past f16 range */
        round_to(at, g, n); round_to(at, u, n);
        up_as(vk, &tg, g); up_as(vk, &tu, u);
        vk_begin(vk); op_glu(vk, &tg, &tu, &ty, gelu); vk_submit_wait(vk);
        down_as(vk, &ty, y);
        f64 worst = 0; u32 bad = 0;
        for (u32 i = 0; i < n; i++) {
            f64 want = (gelu ? gelu_ref(g[i]) : silu_ref(g[i])) * u[i];
            if (at == DT_F16) want = MAX(-65504.0, MIN(65504.0, want));            /* f16 outputs saturate */
            if (!is_finite_f64(y[i])) { bad++; continue; }
            /* natural magnitude |gate * up|; f16 adds the output's subnormal spacing */
            worst = MAX(worst, fabs(y[i] - want) / (fabs((f64)g[i] * u[i]) + (at == DT_F16 ? 1e-4 : 1e-30)));
        }
        CHECKF(bad == 0, "%s %s: %u NaN/Inf outputs from finite inputs", gelu ? "gelu" : "silu", dtype_name[at], bad);
        CHECKF(worst <= tol_for(at), "%s %s: max error %g", gelu ? "gelu" : "silu", dtype_name[at], worst);
        out("    glu %s %s max err %.3g\n", gelu ? "gelu" : "silu", dtype_name[at], worst);
        free(g); free(u); free(y);
        vk_arena_free(&a);
    }
}

/* ---- softcap --------------------------------------------------------------------- */
TEST(kernel_softcap_matches_reference) {
    Vk *vk = test_vk();
    const u32 n = 10000; const f32 cap = 30;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "softcap", (u64)n * 8 + 4096, &e));
    u64 ne[1] = { n };
    Tensor tx = vk_tensor(&a, "x", DT_F32, 1, ne), ty = vk_tensor(&a, "y", DT_F32, 1, ne);
    f32 *x = malloc(n * 4), *y = malloc(n * 4);
    trng_seed(81);
    const f32 sc[5] = { 1, 30, 100, 1e4f, 1e30f };
    for (u32 i = 0; i < n; i++) x[i] = trng_normal() * sc[i % 5];
    x[0] = 1e30f; x[1] = -1e30f; x[2] = 0; x[3] = 3.4e38f; x[4] = 1e-30f;
    vk_upload(vk, &tx, x);
    vk_begin(vk); op_softcap(vk, &tx, &ty, cap); vk_submit_wait(vk);
    vk_download(vk, &ty, y);
    f64 worst = 0, worst_rel = 0; u32 bad = 0;
    for (u32 i = 0; i < n; i++) {
        f64 want = cap * tanh((f64)x[i] / cap);
        if (!is_finite_f64(y[i])) { bad++; continue; }
        worst = MAX(worst, fabs(y[i] - want) / cap);                   /* natural magnitude: the cap */
        worst_rel = MAX(worst_rel, fabs(y[i] - want) / (fabs(want) + 1e-30));
    }
    CHECKF(bad == 0, "%u NaN/Inf outputs", bad);
    CHECKF(worst <= 1e-6, "max error %g of the cap", worst);
    CHECKF(worst_rel <= 1e-5, "max relative error %g", worst_rel);
    out("    softcap max err %.3g of cap, %.3g relative\n", worst, worst_rel);
    free(x); free(y);
    vk_arena_free(&a);
}

/* ---- argmax and top-k ------------------------------------------------------------ */
TEST(kernel_argmax_and_topk_match_reference) {
    Vk *vk = test_vk();
    const u32 nv = 32000, rows = 4, K = 64;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "sample", (u64)nv * rows * 4 + (u64)K * rows * 8 + 96 * rows * 4 + 8192, &e));
    u64 nl[2] = { nv, rows }, ni[1] = { rows }, nk[2] = { K, rows };
    Tensor tl = vk_tensor(&a, "logits", DT_F32, 2, nl), ti = vk_tensor(&a, "ids", DT_U32, 1, ni);
    Tensor tki = vk_tensor(&a, "topk_ids", DT_U32, 2, nk), tkv = vk_tensor(&a, "topk_vals", DT_F32, 2, nk);
    f32 *l = malloc((u64)nv * rows * 4), *kv = malloc(K * rows * 4);
    u32 ids[4], *ki = malloc(K * rows * 4);
    trng_seed(91);
    for (u64 i = 0; i < (u64)nv * rows; i++) l[i] = trng_normal() * 3;
    f32 nan = NAN;
    /* row 0: tie of the max at ids 30000, 17, 5000 -> 17; a NaN at id 3 */
    l[30000] = 100; l[17] = 100; l[5000] = 100; l[3] = nan;
    /* row 1: NaNs everywhere at the front, max at the last id, ties inside the top-k */
    for (u32 i = 0; i < 100; i++) l[nv + i] = nan;
    l[nv + nv - 1] = 1e30f; for (u32 i = 0; i < 10; i++) l[nv + 200 + i * 1000] = 20;
    /* row 2: all -inf -> id 0 */
    for (u32 i = 0; i < nv; i++) l[2 * nv + i] = -INFINITY;
    /* row 3: integers, many ties everywhere */
    for (u32 i = 0; i < nv; i++) l[3 * nv + i] = (f32)(trng_u32() % 50);
    vk_upload(vk, &tl, l);
    vk_begin(vk); op_argmax(vk, &tl, &ti); op_topk(vk, &tl, &tki, &tkv, K); vk_submit_wait(vk);
    vk_download(vk, &ti, ids); vk_download(vk, &tki, ki); vk_download(vk, &tkv, kv);
    u32 bad_topk = 0;
    for (u32 r = 0; r < rows; r++) {
        const f32 *lr = l + (u64)r * nv;
        /* reference: K passes of "best after the previous pick", written plainly */
        f32 pv = 0; u32 pi = ~0u, best = ~0u;
        for (u32 k = 0; k < K; k++) {
            u32 bi = ~0u; f32 bv = -INFINITY;
            for (u32 i = 0; i < nv; i++) {
                f32 x = lr[i];
                if (x != x) continue;
                if (k > 0 && !(x < pv || (x == pv && i > pi))) continue;
                if (bi == ~0u || x > bv || (x == bv && i < bi)) { bv = x; bi = i; }
            }
            if (k == 0) best = bi;
            if (ki[r * K + k] != bi || !(kv[r * K + k] == bv)) {
                if (bad_topk < 3) errf("  row %u rank %u: got id %u (%g), want %u (%g)\n", r, k, ki[r * K + k], (f64)kv[r * K + k], bi, (f64)bv);
                bad_topk++;
            }
            pv = bv; pi = bi;
        }
        CHECKF(ids[r] == best, "row %u: argmax %u, want %u", r, ids[r], best);
    }
    CHECK(ids[0] == 17 && ids[1] == nv - 1 && ids[2] == 0);
    CHECK(ki[0] == 17 && ki[1] == 5000 && ki[2] == 30000);
    CHECKF(bad_topk == 0, "%u top-k entries differ", bad_topk);
    /* k = 1 equals argmax */
    u64 n1[2] = { 1, rows };
    Tensor t1i = vk_tensor(&a, "top1_ids", DT_U32, 2, n1), t1v = vk_tensor(&a, "top1_vals", DT_F32, 2, n1);
    u32 one[4];
    vk_begin(vk); op_topk(vk, &tl, &t1i, &t1v, 1); vk_submit_wait(vk);
    vk_download(vk, &t1i, one);
    for (u32 r = 0; r < rows; r++) CHECKF(one[r] == ids[r], "row %u: top-1 %u, argmax %u", r, one[r], ids[r]);
    /* argmax_check, in one workgroup and split over G slices (argmax_part + argmax_merge): the same
       ids, and the NaN/Inf flag of rows 0 (NaN), 1 (NaN) and 2 (-inf) but not row 3 */
    u32 G = op_argmax_slices(nv);
    CHECK(G == 32);
    u64 n2[2] = { 2, rows }, np[2] = { 3 * (u64)G, rows };
    Tensor tc1 = vk_tensor(&a, "check_ids", DT_U32, 2, n2), tc2 = vk_tensor(&a, "check_ids_split", DT_U32, 2, n2);
    Tensor tp = vk_tensor(&a, "argmax_part", DT_U32, 2, np);
    u32 c1[8], c2[8];
    for (u32 G2 = 2; G2 <= G; G2 += G - 2) {      /* G = 2 (a slice wider than the row's stride) and G = 32 */
        Tensor tpg = tp; tpg.ne[0] = 3 * (u64)G2; tpg.nelem = tpg.ne[0] * rows; tpg.nbytes = tpg.nelem * 4;
        vk_begin(vk); op_argmax_check(vk, &tl, &tc1, 0); op_argmax_check(vk, &tl, &tc2, &tpg); vk_submit_wait(vk);
        vk_download(vk, &tc1, c1); vk_download(vk, &tc2, c2);
        for (u32 r = 0; r < rows; r++) {
            CHECKF(c1[2 * r] == ids[r] && c2[2 * r] == ids[r], "G=%u row %u: argmax_check %u, split %u, argmax %u", G2, r, c1[2 * r], c2[2 * r], ids[r]);
            CHECKF(c1[2 * r + 1] == (r < 3) && c2[2 * r + 1] == (r < 3), "G=%u row %u: flag %u, split %u", G2, r, c1[2 * r + 1], c2[2 * r + 1]);
        }
    }
    free(l); free(kv); free(ki);
    vk_arena_free(&a);
}

/* ---- keys and argument checks ---------------------------------------------------- */
TEST(forward_ops_have_f32_and_f16_kernels_and_refuse_bad_shapes) {
    for (int ai = 0; ai < 2; ai++) {
        DType at = ai ? DT_F16 : DT_F32;
        CHECK(kdef_find(OP_ADD_BIAS, PH_ANY, DT_F32, at, at) >= 0);
        CHECK(kdef_find(OP_ROPE, PH_ANY, DT_F32, at, at) >= 0);
        CHECK(kdef_find(OP_GLU, PH_ANY, DT_F32, at, at) >= 0);
        CHECK(kdef_find(OP_RMSNORM, PH_ANY, DT_F32, DT_F32, at) >= 0);
        for (int ci = 0; ci < 2; ci++) {
            DType ct = ci ? DT_F16 : DT_F32;
            CHECK(kdef_find(OP_KV_STORE, PH_ANY, ct, at, ct) >= 0);
            CHECK(kdef_find(OP_ATTENTION, PH_ANY, ct, at, at) >= 0);
        }
    }
    Vk *vk = test_vk();
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "badshapes", 65536, &e));
    u64 sq[3] = { 64, 6, 1 }, sc[2] = { 64 * 4, 8 }, ss[3] = { 8, 6, 1 }, sp[1] = { 2 };
    Tensor q = vk_tensor(&a, "q", DT_F32, 3, sq), kc = vk_tensor(&a, "kc", DT_F32, 2, sc), vc = vk_tensor(&a, "vc", DT_F32, 2, sc);
    Tensor s = vk_tensor(&a, "scores", DT_F32, 3, ss), o = vk_tensor(&a, "o", DT_F32, 3, sq), pos = vk_tensor(&a, "pos", DT_U32, 1, sp);
    int code = 0;
    vk_begin(vk);
    bool died = EXPECT_DIE(&code, op_attention(vk, &q, &kc, &vc, &pos, &s, &o, 6, 4, 0.125f, 0, 0));
    CHECKF(died && code == EXIT_USAGE && strstr(die_trap_msg, "multiple of n_head_kv"), "%s", die_trap_msg);
    died = EXPECT_DIE(&code, op_rope(vk, &q, &q, &q, &o, 64, 10000, 1, false));     /* pos of the wrong type */
    CHECKF(died && strstr(die_trap_msg, "pos must be a u32 rows table"), "%s", die_trap_msg);
    u64 s100[2] = { 100, 1 };
    Tensor l = vk_tensor(&a, "logits", DT_F32, 2, s100), ids = vk_tensor(&a, "ids", DT_U32, 1, s100 + 1);
    died = EXPECT_DIE(&code, op_topk(vk, &l, &ids, &ids, 65));
    CHECKF(died && strstr(die_trap_msg, "k must be 1..EDGE_TOPK_MAX"), "%s", die_trap_msg);
    vk->recording = false;
    VK_CHECK(vkEndCommandBuffer(vk->cmd));
    vk_arena_free(&a);
}

/* ---- rope_kv: the values of rope, rope and kv_store, up to the driver's contraction -------- */
/* rope_kv against add_bias, rope, rope and kv_store: the same rounding of x + bias to the activation
   dtype, the same angles (products and exp2 only: nothing to contract) and the same rotation, so the
   outputs are equal up to where the driver contracts xa c - xb s into an fma differently in the two
   shaders (vk_test.c fuse_gap; NVIDIA does, lavapipe gives equal bits): a few f32 roundings of
   |xa| + |xb|, the size of the rotated pair, far within 1e-5 of the largest |value| (a rotation
   keeps a pair's length), and with f16 outputs one f16 step (two with a bias: below). Cache rows the
   step does not write must keep their old values on both sides. */
TEST(kernel_rope_kv_equals_separate_ops) {
    Vk *vk = test_vk();
    struct { u32 hd, nh, nkv, T, p0, n_ctx, n_rot; bool neox; } cs[] = {
        { 64, 8, 2, 1, 37, 64, 64, false },    /* decode, NORM */
        { 64, 8, 2, 5, 10, 64, 64, true },     /* prefill, NEOX */
        { 128, 4, 4, 3, 62, 64, 32, true },    /* partial rotation; the last row wraps to row 0 (a ring) */
        { 8, 8, 4, 2, 0, 16, 8, false },       /* stories260K heads */
    };
    for (u32 ci = 0; ci < ARRAY_COUNT(cs); ci++) for (int v16 = 0; v16 < 2; v16++) for (int bias = 0; bias < 2; bias++) {
        DType at = v16 ? DT_F16 : DT_F32;     /* bias: Qwen2's q/k/v biases, added by rope_kv vs by add_bias */
        if (!dtype_ok(vk, at)) continue;
        u32 hd = cs[ci].hd, nh = cs[ci].nh, nkv = cs[ci].nkv, T = cs[ci].T, kvd = hd * nkv, nc = cs[ci].n_ctx;
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "rope_kv", ((u64)hd * nh * T * 4 + (u64)kvd * T * 5 + (u64)kvd * nc * 4 + hd + (u64)hd * nh + 2 * kvd) * 4 + 24 * 256, &e));
        u64 sq[3] = { hd, nh, T }, sk[3] = { hd, nkv, T }, sc[2] = { kvd, nc }, sp[1] = { op_rows_words(T) }, sf[1] = { cs[ci].n_rot / 2 };
        Tensor q = vk_tensor(&a, "q", at, 3, sq), k = vk_tensor(&a, "k", at, 3, sk), v = vk_tensor(&a, "v", at, 3, sk);
        Tensor qo1 = vk_tensor(&a, "qo1", at, 3, sq), qo2 = vk_tensor(&a, "qo2", at, 3, sq), kp = vk_tensor(&a, "kp", at, 3, sk);
        Tensor kc1 = vk_tensor(&a, "kc1", at, 2, sc), vc1 = vk_tensor(&a, "vc1", at, 2, sc);
        Tensor kc2 = vk_tensor(&a, "kc2", at, 2, sc), vc2 = vk_tensor(&a, "vc2", at, 2, sc);
        Tensor pos = vk_tensor(&a, "pos", DT_U32, 1, sp), ff = vk_tensor(&a, "ff", DT_F32, 1, sf);
        u64 sbq[1] = { (u64)hd * nh }, sbk[1] = { kvd };
        Tensor bq = vk_tensor(&a, "bq", DT_F32, 1, sbq), bk = vk_tensor(&a, "bk", DT_F32, 1, sbk), bv = vk_tensor(&a, "bv", DT_F32, 1, sbk);
        Tensor qs = vk_tensor(&a, "q_sep", at, 3, sq), ks = vk_tensor(&a, "k_sep", at, 3, sk), vs = vk_tensor(&a, "v_sep", at, 3, sk);
        u64 nq = (u64)hd * nh * T, nk = (u64)kvd * T, ncache = (u64)kvd * nc;
        f32 *buf = malloc((nq + 2 * nk + ncache + hd) * 4);
        trng_seed(300 + ci * 2 + v16);
        for (u64 i = 0; i < nq + 2 * nk + ncache; i++) buf[i] = trng_normal() * 4;
        for (u32 i = 0; i < cs[ci].n_rot / 2; i++) buf[nq + 2 * nk + ncache + i] = 1.0f + 0.5f * (f32)i / hd;
        up_as(vk, &q, buf); up_as(vk, &k, buf + nq); up_as(vk, &v, buf + nq + nk);
        up_as(vk, &qs, buf); up_as(vk, &ks, buf + nq); up_as(vk, &vs, buf + nq + nk);
        vk_upload(vk, &bq, buf + nq + 2 * nk); vk_upload(vk, &bk, buf + nq + 2 * nk + 1); vk_upload(vk, &bv, buf + nq + 2 * nk + 2);
        up_as(vk, &kc1, buf + nq + 2 * nk); up_as(vk, &kc2, buf + nq + 2 * nk);       /* old cache contents must survive */
        up_as(vk, &vc1, buf + nq + 2 * nk); up_as(vk, &vc2, buf + nq + 2 * nk);
        vk_upload(vk, &ff, buf + nq + 2 * nk + ncache);
        op_rows_upload(vk, &pos, T, cs[ci].p0, 0);
        vk_begin(vk);
        if (bias) {
            Tensor q2 = qs, k2 = ks, v2b = vs;    /* (n, T) rows for add_bias */
            q2.ndim = k2.ndim = v2b.ndim = 2; q2.ne[0] = (u64)hd * nh; k2.ne[0] = v2b.ne[0] = kvd; q2.ne[1] = k2.ne[1] = v2b.ne[1] = T; q2.ne[2] = k2.ne[2] = v2b.ne[2] = 1;
            op_add_bias(vk, &bq, &q2); op_add_bias(vk, &bk, &k2); op_add_bias(vk, &bv, &v2b);
            vk_barrier(vk);
        }
        op_rope(vk, &qs, &pos, &ff, &qo1, cs[ci].n_rot, 10000.0f, 0.5f, cs[ci].neox);
        op_rope(vk, &ks, &pos, &ff, &kp, cs[ci].n_rot, 10000.0f, 0.5f, cs[ci].neox);
        Tensor v2 = vs, kp2 = kp;        /* (kv_dim, T) views for kv_store */
        v2.ndim = kp2.ndim = 2; v2.ne[0] = kp2.ne[0] = kvd; v2.ne[1] = kp2.ne[1] = T; v2.ne[2] = kp2.ne[2] = 1;
        op_kv_store(vk, &v2, &pos, &vc1);
        vk_barrier(vk);
        op_kv_store(vk, &kp2, &pos, &kc1);
        op_rope_kv(vk, &q, &k, &v, &pos, &ff, &qo2, &kc2, &vc2, cs[ci].n_rot, 10000.0f, 0.5f, cs[ci].neox,
                   bias ? &bq : 0, bias ? &bk : 0, bias ? &bv : 0, 0, 0);
        vk_submit_wait(vk);
        const Tensor *pa[3][2] = { { &qo1, &qo2 }, { &kc1, &kc2 }, { &vc1, &vc2 } };
        for (int t = 0; t < 3; t++) {
            f32 *y1 = down_f32(vk, pa[t][0]), *y2 = down_f32(vk, pa[t][1]);
            /* with a bias and f16 activations the separate path rounds x + bias to f16 (add_bias's output);
               rope_kv rounds it too, but a driver may fold that round trip away (NVIDIA does: H100, 2 f16
               steps apart on 1-33 of 512-8,192 values). The rotation moves that input rounding between a
               pair's two outputs: one f16 step of the pair's larger value, for rotated values of q and
               the key cache (v and the unrotated tail are one rounding on both sides) */
            f64 *ex = 0;
            if (bias && at == DT_F16 && t < 2) {
                u64 n = pa[t][0]->nelem, rot = cs[ci].n_rot;
                ex = calloc(n, sizeof *ex);
                for (u64 i = 0; i < n; i++) {
                    u64 d = i % hd, j;                 /* q: (hd, nh, T); the cache: (kvd, n_ctx), kvd = nkv hd */
                    if (d >= rot) continue;
                    if (cs[ci].neox) j = d < rot / 2 ? i + rot / 2 : i - rot / 2; else j = i ^ 1;
                    ex[i] = 0x1p-10 * MAX(MAX(fabs((f64)y1[i]), fabs((f64)y2[i])), MAX(fabs((f64)y1[j]), fabs((f64)y2[j])));
                }
            }
            FuseGap gap = fuse_gap(y2, y1, pa[t][0]->nelem, at == DT_F16, ex);
            free(ex);
            CHECKF(gap.past == 0, "case %u %s bias %d: %s: %llu of %llu values of rope_kv and the separate ops past the contraction bound (largest gap %.3g)",
                   ci, dtype_name[at], bias, pa[t][0]->name, (unsigned long long)gap.past, (unsigned long long)pa[t][0]->nelem, gap.worst);
            CHECKF(!fuse_exact(vk) || gap.worst == 0, "case %u %s bias %d: %s: rope_kv and the separate ops differ by up to %.3g on a CPU device (equal bits expected)",
                   ci, dtype_name[at], bias, pa[t][0]->name, gap.worst);
            free(y1); free(y2);
        }
        free(buf);
        vk_arena_free(&a);
    }
}

/* ---- rope_kv_norm: the per-head q/k RMSNorm, RoPE and both stores, against C in f64 ------- */
typedef struct RopeNormCase { u32 hd, nh, nkv, T, p0, n_ctx, n_rot; bool neox; } RopeNormCase;

/* Head x (hd f32) normalized by w (x / sqrt(mean(x^2) + eps) * w, as models/reference.c) and rotated
   at position pos into want, with each value's error scale in mag (the pair's normalized size; f32
   angles carry about 1e-6 of theta, as fat_rope_want allows). */
static void rope_norm_ref(const f32 *x, const f32 *w, u32 hd, u32 n_rot, bool neox, u32 pos, f32 eps, f64 tol, f64 *want, f64 *mag) {
    f64 ss = 0, y[EDGE_MAX_HEAD_DIM];
    for (u32 d = 0; d < hd; d++) ss += (f64)x[d] * x[d];
    f64 inv = 1.0 / sqrt(ss / hd + eps);
    for (u32 d = 0; d < hd; d++) y[d] = x[d] * inv * w[d];
    for (u32 i = 0; i < hd / 2; i++) {
        u32 ia = 2 * i, ib = 2 * i + 1;
        f64 theta = 0;
        if (2 * i < n_rot && neox) { ia = i; ib = i + n_rot / 2; }
        want[ia] = y[ia]; want[ib] = y[ib];
        if (2 * i < n_rot) {
            theta = pos * 0.5 * pow(10000.0, -2.0 * i / n_rot) / (1.0 + 0.25 * i / hd);   /* freq_scale 0.5, factors ff */
            want[ia] = y[ia] * cos(theta) - y[ib] * sin(theta); want[ib] = y[ia] * sin(theta) + y[ib] * cos(theta);
        }
        mag[ia] = mag[ib] = (fabs(y[ia]) + fabs(y[ib]) + 1e-30) * (tol + 1e-6 * theta) / tol;
    }
}

/* One case at activation dtype at and cache dtype ct; returns the worst error / tolerance. Head h of
   token t is scaled by one of 1, 1e-4 (eps dominates its mean square), 30 and 1e20 (squares past f32). */
static f64 check_rope_kv_norm(Vk *vk, const RopeNormCase *c, DType at, DType ct, u64 seed) {
    u32 hd = c->hd, nh = c->nh, nkv = c->nkv, T = c->T, kvd = hd * nkv, nc = c->n_ctx;
    u64 nq = (u64)hd * nh * T, nk = (u64)kvd * T, ncache = (u64)kvd * nc;
    const f32 eps = 1e-6f, scales[4] = { 1.0f, 1e-4f, 30.0f, 1e20f };
    DevArena a; Err e;
    if (!vk_arena_init(vk, &a, "rope_kv_norm", (nq * 2 + nk * 2 + ncache * 2 + 2 * hd + hd) * 4 + 16 * 256, &e)) { CHECKF(0, "%s", e.msg); return 1e30; }
    u64 sq[3] = { hd, nh, T }, sk[3] = { hd, nkv, T }, sc[2] = { kvd, nc }, sp[1] = { op_rows_words(T) }, sf[1] = { c->n_rot / 2 }, sw[1] = { hd };
    Tensor q = vk_tensor(&a, "q", DT_F32, 3, sq), k = vk_tensor(&a, "k", DT_F32, 3, sk), v = vk_tensor(&a, "v", DT_F32, 3, sk);
    Tensor qo = vk_tensor(&a, "qo", at, 3, sq), kc = vk_tensor(&a, "kc", ct, 2, sc), vc = vk_tensor(&a, "vc", ct, 2, sc);
    Tensor pos = vk_tensor(&a, "pos", DT_U32, 1, sp), ff = vk_tensor(&a, "ff", DT_F32, 1, sf);
    Tensor qn = vk_tensor(&a, "q_norm", DT_F32, 1, sw), kn = vk_tensor(&a, "k_norm", DT_F32, 1, sw);
    f32 *x = malloc((nq + 2 * nk + ncache + 2 * hd + hd) * 4), *got = malloc((nq + 2 * ncache) * 4);
    f32 *xq = x, *xk = x + nq, *xv = x + nq + nk, *c0 = x + nq + 2 * nk, *wq = c0 + ncache, *wk = wq + hd, *fv = wk + hd;
    f64 *want = malloc((nq + 2 * ncache) * 8), *mag = malloc((nq + 2 * ncache) * 8);
    trng_seed(seed);
    for (u64 r = 0; r < (nq + nk) / hd; r++)
        for (u32 d = 0; d < hd; d++) xq[r * hd + d] = trng_normal() * scales[(r + seed) % 4];   /* q rows, then k rows */
    for (u64 i = 0; i < nk; i++) xv[i] = trng_normal() * 10;
    for (u64 i = 0; i < ncache; i++) c0[i] = trng_normal();
    for (u32 d = 0; d < 2 * hd; d++) wq[d] = 1.0f + 0.5f * trng_uniform();
    for (u32 i = 0; i < c->n_rot / 2; i++) fv[i] = 1.0f + 0.25f * (f32)i / hd;
    round_to(ct, c0, ncache);
    vk_upload(vk, &q, xq); vk_upload(vk, &k, xk); vk_upload(vk, &v, xv); up_as(vk, &kc, c0); up_as(vk, &vc, c0);
    vk_upload(vk, &qn, wq); vk_upload(vk, &kn, wk); vk_upload(vk, &ff, fv);
    op_rows_upload(vk, &pos, T, c->p0, 0);
    vk_begin(vk);
    op_rope_kv_norm(vk, &q, &k, &v, &pos, &ff, &qo, &kc, &vc, &qn, &kn, eps, c->n_rot, 10000.0f, 0.5f, c->neox, 0, 0);
    vk_submit_wait(vk);
    down_as(vk, &qo, got); down_as(vk, &kc, got + nq); down_as(vk, &vc, got + nq + ncache);
    f64 tq = tol_for(at), tc = at == DT_F16 || ct == DT_F16 ? 1e-3 : 1e-5, worst = 0;
    for (u64 i = 0; i < 2 * ncache; i++) { want[nq + i] = c0[i % ncache]; mag[nq + i] = -1; }   /* untouched rows: exact */
    for (u32 t = 0; t < T; t++) {
        for (u32 h = 0; h < nh; h++) { u64 o = ((u64)t * nh + h) * hd; rope_norm_ref(xq + o, wq, hd, c->n_rot, c->neox, c->p0 + t, eps, tq, want + o, mag + o); }
        for (u32 h = 0; h < nkv; h++) {   /* (a position past the cache's rows wraps: the ring) */
            u64 o = ((u64)t * nkv + h) * hd, dst = nq + (u64)((c->p0 + t) % nc) * kvd + (u64)h * hd;
            rope_norm_ref(xk + o, wk, hd, c->n_rot, c->neox, c->p0 + t, eps, tc, want + dst, mag + dst);
            for (u32 d = 0; d < hd; d++) { want[dst + ncache + d] = xv[o + d]; mag[dst + ncache + d] = fabs(xv[o + d]) + 1e-30; }
        }
    }
    for (u64 i = 0; i < nq + 2 * ncache; i++) {
        f64 tol = i < nq ? tq : tc, r = mag[i] < 0 ? (got[i] == want[i] ? 0 : 1e30) : fabs(got[i] - want[i]) / mag[i] / tol;
        if (!is_finite_f64(got[i])) r = 1e30;
        if (r > worst) { worst = r; if (r > 1) errf("  hd %u %s/%s cache: element %llu got %g want %g\n", hd, dtype_name[at], dtype_name[ct], (unsigned long long)i, (f64)got[i], want[i]); }
    }
    free(x); free(got); free(want); free(mag);
    vk_arena_free(&a);
    return worst;
}

TEST(kernel_rope_kv_norm_matches_reference) {
    Vk *vk = test_vk();
    static const RopeNormCase cs[] = {
        { 128, 16, 8, 1, 37, 64, 128, true },    /* qwen3-1.7b heads, decode */
        { 128, 8, 2, 5, 60, 64, 128, true },     /* prefill, GQA 4:1; the last row wraps to row 0 (a ring) */
        { 256, 4, 1, 3, 10, 32, 256, true },     /* gemma3 head 256 (two pairs per invocation) */
        { 64, 8, 4, 2, 0, 16, 32, false },       /* NORM pairs, partial rotation */
    };
    for (u32 ci = 0; ci < ARRAY_COUNT(cs); ci++)
        for (int ai = 0; ai < 2; ai++) for (int ki = 0; ki < 2; ki++) {
            DType at = ai ? DT_F16 : DT_F32, ct = ki ? DT_F16 : DT_F32;
            if (!dtype_ok(vk, at) || !dtype_ok(vk, ct)) continue;
            f64 w = check_rope_kv_norm(vk, &cs[ci], at, ct, 700 + ci * 4 + ai * 2 + ki);
            CHECKF(w <= 1, "case %u act %s cache %s: worst error %.3g of the tolerance", ci, dtype_name[at], dtype_name[ct], w);
        }
}
