/* matmul_test.c — weight-type kernels against the CPU dequantizer and f64 references.

   Every weight type of config/dtypes.def x activation path (f32; f16 with
   f32 output; f16 with f16 output) x phase (decode matvec, prefill tiled matmul), on
   seeded random valid blocks (random bytes, finite f16 scales in [1e-3, 1e-1]).
   Reference: dequant_row (models/quant.c) + f64 dot. Error measure: |y - ref| / sum|w x|.
     f32 activations: <= 1e-5.
     f16 activations: <= 1e-5 against the reference on the f16-rounded x (f32 output),
                      <= 1e-3 with f16 output (its own rounding is 2^-11 of |y|),
                      and <= 1e-3 against the unrounded x.
                      decode of the types with decode lanes (matvec_*_h, f16-pair lanes): <= 5e-4 with f32 output:
                      each product is rounded to f16 and added to one other in f16 before f32,
                      at most 2^-10 of its |w x| (1e-3 of sum|w x| in the worst case, ~1e-4
                      measured); the same class as the f16 rounding of x itself.
   On a device with cooperative matrices (caps.coopmat) every f16 prefill product of a type with
   matmul_cm products (config/dtypes.def cm: all but F32 and BF16) and rows a multiple of 32 must run on
   matmul_cm (op_cm_products), which rounds the weights to f16 too: with f32 output <= 5e-4, the
   class of the f16-pair lanes (each w x is off by at most 2^-11 of its |w x|; ~7e-5 measured).
   Also: large magnitudes (no NaN/inf from finite inputs), rows past 65535 (grid y),
   weights bound as several row chunks (lowered maxStorageBufferRange), and the
   dequant fixtures (fixtures/dequant) against their stored f32 values. */

static u32 mt_ggml_type(DType t) {
    if ((u32)t >= DT_COUNT || dtype_info[t].role != DR_WEIGHT) die(EXIT_USAGE, "matmul_test: %s is not a weight type", dtype_name[t]);
    return (u32)dtype_info[t].ggml;
}

static const char *mt_dn(DType t) { return (u32)t < DT_COUNT ? dtype_name[t] : "?"; }

/* every weight type of config/dtypes.def, in its order */
static DType mt_wtypes[DT_COUNT];
static u32 mt_nw;
static void mt_types_init(void) {
    mt_nw = 0;
    for (u32 t = 0; t < DT_COUNT; t++) if (dtype_info[t].role == DR_WEIGHT) mt_wtypes[mt_nw++] = (DType)t;
}

static void mt_put_f16(u8 *p, f32 v) { u16 h = f16_from_f32(v); p[0] = (u8)h; p[1] = (u8)(h >> 8); }
static f32  mt_scale(void) { f32 d = 1e-3f + (1e-1f - 1e-3f) * (0.5f + 0.5f * trng_uniform()); return trng_u32() & 1 ? -d : d; }

/* Random valid weight bytes of `rows` rows of k elements; wf gets the dequantized values. */
static void mt_random_weights(DType t, u64 rows, u64 k, u8 *bytes, f32 *wf) {
    u64 rb = dtype_bytes(t, k), n = rows * rb;
    if (t == DT_F32 || t == DT_F16 || t == DT_BF16) {
        for (u64 i = 0; i < rows * k; i++) {
            f32 v = trng_normal() * 0.05f;
            if (t == DT_F32) memcpy(bytes + 4 * i, &v, 4);
            else if (t == DT_F16) mt_put_f16(bytes + 2 * i, v);
            else { u32 u; memcpy(&u, &v, 4); bytes[2 * i] = (u8)(u >> 16); bytes[2 * i + 1] = (u8)(u >> 24); }
        }
    } else {
        for (u64 i = 0; i < n; i++) bytes[i] = (u8)trng_u32();
        u32 bb = ggml_block_bytes(mt_ggml_type(t));
        for (u64 o = 0; o < n; o += bb)     /* finite scales in the block's f16 fields (config/dtypes.def hf) */
            for (int f = 0; f < 2; f++) if (dtype_info[t].hf[f] >= 0) mt_put_f16(bytes + o + dtype_info[t].hf[f], mt_scale());
    }
    for (u64 r = 0; r < rows; r++) dequant_row(mt_ggml_type(t), bytes + r * rb, wf + r * k, k);
}

typedef struct MtErr { f64 worst, worst_orig; u32 nans; bool cm; } MtErr;   /* cm: the product ran on matmul_cm */

/* Y = W X through op_matmul on the device; W given as bytes + its dequantized values.
   Returns the errors; checks are done by the caller. */
static MtErr mt_run(DType wt, const u8 *wbytes, const f32 *wf, DType at, DType ot, Phase ph,
                    u64 M, u64 K, u64 T, f32 xscale, u64 seed) {
    Vk *vk = test_vk();
    MtErr r = { 0, 0, 0, false };
    DevArena a; Err e;
    u64 wb = dtype_bytes(wt, M * K), xb = dtype_bytes(at, K * T), yb = dtype_bytes(ot, M * T);
    /* + a tile of 128 tokens: matmul_cm binds X up to a whole tile */
    REQUIRE(vk_arena_init(vk, &a, "matmul-test", wb + xb + yb + dtype_bytes(at, K * 128) + 3 * 256, &e));
    u64 nw[2] = { K, M }, nx[2] = { K, T }, ny[2] = { M, T };
    Tensor tw = vk_weight(&a, "W", wt, 2, nw), tx = vk_tensor(&a, "X", at, 2, nx), ty = vk_tensor(&a, "Y", ot, 2, ny);
    f32 *x = malloc(K * T * 4), *xr = malloc(K * T * 4), *y = malloc(M * T * 4);
    u16 *x16 = malloc(K * T * 2), *y16 = malloc(M * T * 2);
    trng_seed(seed);
    for (u64 i = 0; i < K * T; i++) {
        x[i] = trng_normal() * xscale;
        if (at == DT_F16) { x[i] = x[i] > 60000.f ? 60000.f : x[i] < -60000.f ? -60000.f : x[i]; x16[i] = f16_from_f32(x[i]); xr[i] = f32_from_f16(x16[i]); }
        else xr[i] = x[i];
    }
    vk_upload(vk, &tw, wbytes);
    vk_upload(vk, &tx, at == DT_F16 ? (void *)x16 : (void *)x);
    u64 cm0 = op_cm_products;
    vk_begin(vk); op_matmul(vk, ph, &tw, &tx, &ty); vk_submit_wait(vk);
    bool cm = vk->caps.coopmat && ph == PH_PREFILL && at == DT_F16 && dtype_info[wt].cm != DC_NO && K % 32 == 0 &&
              K * 2 * ((T + 127) / 128 * 128) <= vk->caps.max_storage_range;     /* X bound up to a 128-token tile */
    CHECKF(!cm || op_cm_products > cm0, "%s prefill M=%llu K=%llu T=%llu: the device has cooperative matrices, but matmul_cm did not run",
           mt_dn(wt), (unsigned long long)M, (unsigned long long)K, (unsigned long long)T);
    r.cm = op_cm_products > cm0;
    if (ot == DT_F16) { vk_download(vk, &ty, y16); for (u64 i = 0; i < M * T; i++) y[i] = f32_from_f16(y16[i]); }
    else vk_download(vk, &ty, y);
    f64 ymax = ot == DT_F16 ? 65504.0 : 3.4028234663852886e38;
    for (u64 t = 0; t < T; t++) for (u64 m = 0; m < M; m++) {
        f64 s = 0, so = 0, sa = 0;
        const f32 *wr = wf + m * K;
        for (u64 i = 0; i < K; i++) { s += (f64)wr[i] * xr[t * K + i]; so += (f64)wr[i] * x[t * K + i]; sa += fabs((f64)wr[i] * xr[t * K + i]); }
        s = s > ymax ? ymax : s < -ymax ? -ymax : s;
        so = so > ymax ? ymax : so < -ymax ? -ymax : so;
        f64 got = y[t * M + m];
        if (got != got || isinf(got)) { r.nans++; continue; }
        f64 rel = fabs(got - s) / (sa + 1e-30), relo = fabs(got - so) / (sa + 1e-30);
        if (rel > r.worst) r.worst = rel;
        if (relo > r.worst_orig) r.worst_orig = relo;
    }
    free(x); free(xr); free(y); free(x16); free(y16);
    vk_arena_free(&a);
    return r;
}

static f64 mt_max_err[DT_COUNT][3];   /* worst error seen per weight type x path, for mt_all_shapes' summary */
static u32 mt_cases[DT_COUNT][3];     /* random cases run per weight type x path */

static const char *mt_path_name(DType at, DType ot) { return at == DT_F32 ? "a32/y32" : ot == DT_F32 ? "a16/y32" : "a16/y16"; }

/* The tolerance of a path (see the header). */
#define MT_TOL_PAIRS 5e-4
static bool mt_pairs(DType wt, DType at, Phase ph) { return at == DT_F16 && ph == PH_DECODE && dtype_klanes(wt); }
/* cm: the product ran on matmul_cm (its weights rounded to f16: the pair lanes' class) */
static f64 mt_tol(DType wt, DType at, DType ot, Phase ph, bool cm) { return ot == DT_F16 ? 1e-3 : mt_pairs(wt, at, ph) || cm ? MT_TOL_PAIRS : 1e-5; }

/* One random case: check the tolerances of the path. */
static void mt_case(DType wt, DType at, DType ot, Phase ph, u64 M, u64 K, u64 T, f32 xscale, u64 seed) {
    u8 *wb = malloc(dtype_bytes(wt, M * K));
    f32 *wf = malloc(M * K * 4);
    trng_seed(seed * 7919 + 1);
    mt_random_weights(wt, M, K, wb, wf);
    MtErr r = mt_run(wt, wb, wf, at, ot, ph, M, K, T, xscale, seed);
    f64 tol = mt_tol(wt, at, ot, ph, r.cm);
    const char *pn = mt_path_name(at, ot), *phn = ph == PH_DECODE ? "decode" : "prefill";
    CHECKF(r.nans == 0, "%s %s %s M=%llu K=%llu T=%llu: %u NaN/inf outputs", mt_dn(wt), pn, phn,
           (unsigned long long)M, (unsigned long long)K, (unsigned long long)T, r.nans);
    CHECKF(r.worst <= tol, "%s %s %s M=%llu K=%llu T=%llu x*%g: max error %g of sum|w*x| (tolerance %g)", mt_dn(wt), pn, phn,
           (unsigned long long)M, (unsigned long long)K, (unsigned long long)T, (f64)xscale, r.worst, tol);
    if (at == DT_F16)
        CHECKF(r.worst_orig <= 1e-3, "%s %s %s M=%llu K=%llu T=%llu: against unrounded x %g", mt_dn(wt), pn, phn,
               (unsigned long long)M, (unsigned long long)K, (unsigned long long)T, r.worst_orig);
    int pi = at == DT_F32 ? 0 : ot == DT_F32 ? 1 : 2;
    if (r.worst > mt_max_err[wt][pi]) mt_max_err[wt][pi] = r.worst;
    mt_cases[wt][pi]++;
    free(wb); free(wf);
}

static void mt_paths(DType wt, Phase ph, u64 M, u64 K, u64 T, u64 seed) {
    mt_case(wt, DT_F32, DT_F32, ph, M, K, T, 1.0f, seed);
    mt_case(wt, DT_F16, DT_F32, ph, M, K, T, 1.0f, seed + 1);
    mt_case(wt, DT_F16, DT_F16, ph, M, K, T, 1.0f, seed + 2);
}

/* Every shape on every path of one weight type; then its row of the error table, and each path
   must have run at least 10 cases (counted in this test only). */
static void mt_all_shapes(DType wt) {
    u64 s = 100 * (u64)wt;
    memset(mt_max_err[wt], 0, sizeof mt_max_err[wt]);
    memset(mt_cases[wt], 0, sizeof mt_cases[wt]);
    /* decode */
    mt_paths(wt, PH_DECODE, 37, 256, 1, s + 1);
    mt_paths(wt, PH_DECODE, 5, 2304, 1, s + 4);
    mt_paths(wt, PH_DECODE, 3, 9216, 1, s + 7);        /* a long row */
    mt_paths(wt, PH_DECODE, 1, 512, 1, s + 10);
    mt_case(wt, DT_F32, DT_F32, PH_DECODE, 140000, 256, 1, 1.0f, s + 13);  /* rows past one grid dimension (lanes per row by shape) */
    mt_case(wt, DT_F16, DT_F32, PH_DECODE, 6, 512, 7, 1.0f, s + 14);      /* decode kernels take T > 1 too */
    if (dtype_info[wt].blk < 256) {     /* rows that are not multiples of 256 (gemma-3-270m 640, qwen2.5-0.5b 896, gemma-3-1b 1152) */
        mt_paths(wt, PH_DECODE, 29, 640, 1, s + 15);
        mt_paths(wt, PH_PREFILL, 29, 896, 9, s + 18);
        mt_case(wt, DT_F16, DT_F16, PH_DECODE, 7, 1152, 1, 1.0f, s + 50);
    }
    /* prefill */
    mt_paths(wt, PH_PREFILL, 70, 512, 7, s + 20);
    mt_paths(wt, PH_PREFILL, 33, 256, 64, s + 23);
    mt_paths(wt, PH_PREFILL, 64, 2304, 1, s + 26);
    mt_paths(wt, PH_PREFILL, 1, 256, 17, s + 29);
    mt_case(wt, DT_F32, DT_F32, PH_PREFILL, 3, 9216, 7, 1.0f, s + 32);
    mt_case(wt, DT_F16, DT_F32, PH_PREFILL, 65, 256, 130, 1.0f, s + 35);   /* three token tiles, the last partial */
    /* large magnitudes: f32 activations of 1e15, f16 activations near the f16 limit
       (with f16 output the result saturates at +-65504, never inf) */
    for (int ph = PH_PREFILL; ph <= PH_DECODE; ph++) {
        u64 T = ph == PH_DECODE ? 1 : 7;
        mt_case(wt, DT_F32, DT_F32, (Phase)ph, 9, 512, T, 1e15f, s + 40 + ph);
        mt_case(wt, DT_F16, DT_F32, (Phase)ph, 9, 512, T, 2e4f, s + 43 + ph);
        mt_case(wt, DT_F16, DT_F16, (Phase)ph, 9, 512, T, 2e4f, s + 46 + ph);
    }
    errf("    max error / sum|w*x|  %-5s  a32/y32 %.2e  a16/y32 %.2e  a16/y16 %.2e  (%u, %u, %u cases)\n", mt_dn(wt),
         mt_max_err[wt][0], mt_max_err[wt][1], mt_max_err[wt][2], mt_cases[wt][0], mt_cases[wt][1], mt_cases[wt][2]);
    for (int pi = 0; pi < 3; pi++) CHECKF(mt_cases[wt][pi] >= 10, "%s path %d: only %u cases ran", mt_dn(wt), pi, mt_cases[wt][pi]);
}

TEST(kernel_matmul_f32_weights)    { mt_all_shapes(DT_F32); }
TEST(kernel_matmul_f16_weights)    { mt_all_shapes(DT_F16); }
TEST(kernel_matmul_bf16_weights)   { mt_all_shapes(DT_BF16); }
TEST(kernel_matmul_q8_0_weights)   { mt_all_shapes(DT_Q8_0); }
TEST(kernel_matmul_q4_0_weights)   { mt_all_shapes(DT_Q4_0); }
TEST(kernel_matmul_q4_k_weights)   { mt_all_shapes(DT_Q4_K); }
TEST(kernel_matmul_q6_k_weights)   { mt_all_shapes(DT_Q6_K); }
TEST(kernel_matmul_q4_1_weights)   { mt_all_shapes(DT_Q4_1); }
TEST(kernel_matmul_q5_0_weights)   { mt_all_shapes(DT_Q5_0); }
TEST(kernel_matmul_q5_1_weights)   { mt_all_shapes(DT_Q5_1); }
TEST(kernel_matmul_q2_k_weights)   { mt_all_shapes(DT_Q2_K); }
TEST(kernel_matmul_q3_k_weights)   { mt_all_shapes(DT_Q3_K); }
TEST(kernel_matmul_q5_k_weights)   { mt_all_shapes(DT_Q5_K); }
TEST(kernel_matmul_iq4_nl_weights) { mt_all_shapes(DT_IQ4_NL); }
TEST(kernel_matmul_iq4_xs_weights) { mt_all_shapes(DT_IQ4_XS); }

/* Every weight type of config/dtypes.def has its test above, and its block geometry is the CPU
   dequantizer's (models/quant.c). */
TEST(kernel_weight_types_table) {
    mt_types_init();
    CHECKF(mt_nw == 15, "config/dtypes.def lists %u weight types; matmul_test.c has a test for 15", mt_nw);
    for (u32 i = 0; i < mt_nw; i++) {
        DType t = mt_wtypes[i]; u32 g = mt_ggml_type(t);
        CHECKF(ggml_type_supported(g), "%s: ggml type %u has no CPU decoder", mt_dn(t), g);
        CHECKF(ggml_block_elems(g) == dtype_info[t].blk && ggml_block_bytes(g) == dtype_info[t].bytes,
               "%s: block %u elements / %u bytes, models/quant.c says %u / %u", mt_dn(t), dtype_info[t].blk, dtype_info[t].bytes,
               ggml_block_elems(g), ggml_block_bytes(g));
        char lower[16]; const char *n = ggml_type_name(g); u32 j = 0;
        for (; n[j] && j < 15; j++) lower[j] = (char)(n[j] >= 'A' && n[j] <= 'Z' ? n[j] + 32 : n[j]);
        lower[j] = 0;
        CHECKF(!strcmp(lower, mt_dn(t)), "%s: ggml id %u is %s", mt_dn(t), g, n);
    }
}

TEST(kernel_matmul_float_rows_of_any_length) {
    mt_paths(DT_F32, PH_DECODE, 13, 37, 1, 900);
    mt_paths(DT_F32, PH_PREFILL, 13, 37, 5, 903);
    mt_paths(DT_F16, PH_DECODE, 13, 38, 1, 906);
    mt_paths(DT_BF16, PH_PREFILL, 13, 38, 5, 909);
}

/* get_rows: y[:, t] = dequant(E[ids[t]]) * scale, exact up to f32 rounding of the scale product. */
static void mt_get_rows(DType wt, u64 n, u64 rows, u64 T, f32 scale, u64 seed) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    u64 eb = dtype_bytes(wt, n * rows);
    REQUIRE(vk_arena_init(vk, &a, "get-rows-test", eb + T * 4 + n * T * 4 + 3 * 256, &e));
    u64 ne[2] = { n, rows }, ni[1] = { T }, ny[2] = { n, T };
    Tensor te = vk_weight(&a, "E", wt, 2, ne), ti = vk_tensor(&a, "ids", DT_U32, 1, ni), ty = vk_tensor(&a, "y", DT_F32, 2, ny);
    u8 *wb = malloc(eb); f32 *wf = malloc(n * rows * 4), *y = malloc(n * T * 4); u32 *ids = malloc(T * 4);
    trng_seed(seed);
    mt_random_weights(wt, rows, n, wb, wf);
    for (u64 t = 0; t < T; t++) ids[t] = t == 0 ? (u32)(rows - 1) : t == 1 ? 0 : trng_u32() % (u32)rows;
    if (T > 3) ids[3] = ids[2];          /* a repeated id */
    if (T > 4) ids[4] = (u32)rows + 5;   /* past the table: zeros, never garbage */
    vk_upload(vk, &te, wb); vk_upload(vk, &ti, ids);
    f32 *junk = malloc(n * T * 4); for (u64 i = 0; i < n * T; i++) junk[i] = NAN;
    vk_upload(vk, &ty, junk);
    vk_begin(vk); op_get_rows(vk, &te, &ti, &ty, scale); vk_submit_wait(vk);
    vk_download(vk, &ty, y);
    f64 worst = 0; u32 nans = 0;
    for (u64 t = 0; t < T; t++) for (u64 i = 0; i < n; i++) {
        f64 want = ids[t] < rows ? (f64)wf[ids[t] * n + i] * scale : 0.0, got = y[t * n + i];
        if (got != got || isinf(got)) { nans++; continue; }
        f64 rel = fabs(got - want) / (fabs(want) + 1e-30);
        if (want != 0 && rel > worst) worst = rel;
        if (want == 0) CHECK(fabs(got) < 1e-30);
    }
    CHECKF(nans == 0, "get_rows %s: %u NaN/inf", mt_dn(wt), nans);
    CHECKF(worst <= 1e-6, "get_rows %s n=%llu: max relative error %g", mt_dn(wt), (unsigned long long)n, worst);
    free(wb); free(wf); free(y); free(ids); free(junk);
    vk_arena_free(&a);
}

TEST(kernel_get_rows_every_weight_type) {
    mt_types_init();
    for (u32 i = 0; i < mt_nw; i++) {
        mt_get_rows(mt_wtypes[i], 512, 70, 7, 16.0f, 300 + i);
        mt_get_rows(mt_wtypes[i], 2304, 9, 3, 1.0f, 310 + i);
        if (dtype_info[mt_wtypes[i]].blk < 256) mt_get_rows(mt_wtypes[i], 640, 11, 5, 25.3f, 330 + i);   /* gemma-3-270m's width */
    }
    mt_get_rows(DT_F32, 37, 5, 6, 0.5f, 320);
}

/* A lowered maxStorageBufferRange: every weight is bound as several aligned row chunks
   (row sizes 1024, 512, 512, 272, 144, 144 and 210 bytes). */
TEST(kernel_matmul_and_get_rows_in_row_chunks) {
    Vk *vk = test_vk();
    u64 saved = vk->caps.max_storage_range;
    vk->caps.max_storage_range = 16384;
    mt_types_init();
    for (u32 i = 0; i < mt_nw; i++) {
        DType wt = mt_wtypes[i];
        u64 rb = dtype_bytes(wt, 256), M = MAX(300, 2 * 16384 / rb + 2);
        CHECKF(M * rb > 2 * 16384, "%s: %llu bytes: fewer than 3 chunks", mt_dn(wt), (unsigned long long)(M * rb));
        mt_case(wt, DT_F32, DT_F32, PH_DECODE, M, 256, 1, 1.0f, 500 + i);
        mt_case(wt, DT_F16, DT_F16, PH_DECODE, M, 256, 1, 1.0f, 510 + i);
        mt_case(wt, DT_F32, DT_F32, PH_PREFILL, M, 256, 7, 1.0f, 520 + i);
        mt_case(wt, DT_F16, DT_F32, PH_PREFILL, M, 256, 7, 1.0f, 530 + i);
        mt_get_rows(wt, 256, M, 7, 2.0f, 540 + i);
    }
    /* Q6_K and Q8_0 chunks hold whole units of 8 blocks (vk_units) even where the offset alignment
       alone would allow others: rows of 3 blocks (Q8_0: 9), 4-byte alignment */
    u64 al = vk->caps.min_offset_align;
    vk->caps.min_offset_align = 4;
    mt_case(DT_Q6_K, DT_F32, DT_F32, PH_DECODE, 100, 768, 1, 1.0f, 550);
    mt_case(DT_Q6_K, DT_F16, DT_F32, PH_PREFILL, 100, 768, 7, 1.0f, 551);
    mt_get_rows(DT_Q6_K, 768, 100, 3, 2.0f, 552);
    mt_case(DT_Q8_0, DT_F32, DT_F32, PH_DECODE, 300, 288, 1, 1.0f, 553);
    mt_case(DT_Q8_0, DT_F16, DT_F16, PH_DECODE, 300, 288, 1, 1.0f, 554);
    mt_case(DT_Q8_0, DT_F16, DT_F32, PH_PREFILL, 300, 288, 7, 1.0f, 555);
    mt_get_rows(DT_Q8_0, 288, 300, 3, 2.0f, 556);
    vk->caps.min_offset_align = al;
    /* a row larger than the binding cannot be chunked: a clear error */
    vk->caps.max_storage_range = 1024;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "chunk-err", 16384, &e));
    u64 nw[2] = { 512, 4 }, nx[1] = { 512 }, ny[1] = { 4 };
    Tensor tw = vk_tensor(&a, "wide", DT_F32, 2, nw), tx = vk_tensor(&a, "x", DT_F32, 1, nx), ty = vk_tensor(&a, "y", DT_F32, 1, ny);
    vk_begin(vk);
    int code = 0;
    bool died = EXPECT_DIE(&code, op_matmul(vk, PH_DECODE, &tw, &tx, &ty));
    CHECKF(died && code == EXIT_DEVICE && strstr(die_trap_msg, "'wide'") && strstr(die_trap_msg, "2048 bytes"), "%s", die_trap_msg);
    vk->recording = false;
    VK_CHECK(vkEndCommandBuffer(vk->cmd));
    vk_arena_free(&a);
    vk->caps.max_storage_range = saved;
}

TEST(kernel_matmul_refuses_bad_shapes_and_keys) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "bad-shapes", 65536, &e));
    u64 nw[2] = { 256, 4 }, nx[1] = { 128 }, ny[1] = { 4 }, nq[2] = { 128, 4 }, nx2[1] = { 256 };
    Tensor tw = vk_weight(&a, "W", DT_Q8_0, 2, nw), tx = vk_tensor(&a, "x-short", DT_F32, 1, nx), ty = vk_tensor(&a, "y", DT_F32, 1, ny);
    Tensor tc = vk_tensor(&a, "q8_0-cache", DT_Q8_0, 2, nw);   /* not a weight: its bytes are not in units */
    Tensor tq = vk_tensor(&a, "q4k-128", DT_Q4_K, 2, nq), tx2 = vk_tensor(&a, "x", DT_F32, 1, nx2), tu = vk_tensor(&a, "y-u32", DT_U32, 1, ny);
    vk_begin(vk);
    int code = 0;
    bool died = EXPECT_DIE(&code, op_matmul(vk, PH_DECODE, &tw, &tx, &ty));
    CHECKF(died && code == EXIT_USAGE && strstr(die_trap_msg, "'x-short'"), "%s", die_trap_msg);
    died = EXPECT_DIE(&code, op_matmul(vk, PH_PREFILL, &tq, &tx, &ty));
    CHECKF(died && strstr(die_trap_msg, "'q4k-128'") && strstr(die_trap_msg, "whole number of blocks"), "%s", die_trap_msg);
    died = EXPECT_DIE(&code, op_matmul(vk, PH_DECODE, &tw, &tx2, &tu));
    CHECKF(died && strstr(die_trap_msg, "no kernel for op matmul, phase decode, weights q8_0, activations f32, output u32"), "%s", die_trap_msg);
    died = EXPECT_DIE(&code, op_matmul(vk, PH_DECODE, &tc, &tx2, &ty));
    CHECKF(died && code == EXIT_USAGE && strstr(die_trap_msg, "'q8_0-cache'") && strstr(die_trap_msg, "vk_weight"), "%s", die_trap_msg);
    vk->recording = false;
    VK_CHECK(vkEndCommandBuffer(vk->cmd));
    vk_arena_free(&a);
    /* one Q6_K row (210 bytes): the arena reserves whole 16-byte vectors, so 223 bytes do not
       hold it, 224 do, and the kernel may bind its last vector */
    REQUIRE(vk_arena_init(vk, &a, "tight", 223, &e));
    u64 n6[2] = { 256, 1 }, n1[1] = { 1 };
    died = EXPECT_DIE(&code, vk_weight(&a, "q6k-tight", DT_Q6_K, 2, n6));
    CHECKF(died && strstr(die_trap_msg, "'q6k-tight'") && strstr(die_trap_msg, "exhausted"), "%s", die_trap_msg);
    vk_arena_free(&a);
    REQUIRE(vk_arena_init(vk, &a, "tight", 224, &e));
    Tensor t6 = vk_weight(&a, "q6k-tight", DT_Q6_K, 2, n6);
    CHECK(t6.nbytes == 210);
    DevArena b;
    REQUIRE(vk_arena_init(vk, &b, "tight-io", 4096, &e));
    Tensor bx = vk_tensor(&b, "x", DT_F32, 1, nx2), by = vk_tensor(&b, "y", DT_F32, 1, n1);
    vk_begin(vk);
    op_matmul(vk, PH_DECODE, &t6, &bx, &by);
    vk_submit_wait(vk);
    vk_arena_free(&a); vk_arena_free(&b);
}

/* The dequant fixtures: W from the GGUF bytes as stored, reference from the fixture's .f32. */
TEST(kernel_matmul_dequant_fixtures) {
    Arena ar; arena_init(&ar, "matmul-fixtures", 16u << 20);
    u8 *idx; u64 idx_n;
    if (!gt_load(&ar, "dequant/INDEX.txt", &idx, &idx_n)) { arena_free(&ar); SKIP_UNLESS_REQUIRED("no dequant fixtures (dequant/INDEX.txt)"); }
    char *line = (char *)push_array(&ar, char, idx_n + 1);
    memcpy(line, idx, idx_n);
    int n_checked = 0, n_listed = 0;
    for (char *save = 0, *l = strtok_r(line, "\n", &save); l; l = strtok_r(0, "\n", &save)) {
        char file[128], name[128], type[16], f32file[160]; unsigned long long ne0, ne1;
        if (sscanf(l, "%127s tensor %127s [ne0 %llu, ne1 %llu] %15s -> %159s", file, name, &ne0, &ne1, type, f32file) != 6) continue;
        if (fixture_dequant_skipped(file)) continue;
        n_listed++;
        char rel[300]; u8 *gd, *want; u64 gn, wn; Gguf g; Err e;
        fmt_buf(rel, sizeof rel, "dequant/%s", file);
        REQUIRE(gt_load(&ar, rel, &gd, &gn));
        fmt_buf(rel, sizeof rel, "dequant/%s", f32file);
        REQUIRE(gt_load(&ar, rel, &want, &wn));
        REQUIRE(gguf_parse(&g, gd, gn, file, &ar, &e));
        const GgufTensor *t = gguf_find_tensor(&g, name);
        REQUIRE(t && wn == ne0 * ne1 * 4);
        DType wt = DT_COUNT;
        mt_types_init();
        for (u32 i = 0; i < mt_nw; i++) if (mt_ggml_type(mt_wtypes[i]) == t->type) wt = mt_wtypes[i];
        REQUIRE(wt != DT_COUNT);
        f32 *wf = push_array(&ar, f32, ne0 * ne1);
        memcpy(wf, want, wn);
        for (int ph = PH_PREFILL; ph <= PH_DECODE; ph++) {
            u64 T = ph == PH_DECODE ? 1 : 7;
            MtErr r1 = mt_run(wt, t->data, wf, DT_F32, DT_F32, (Phase)ph, ne1, ne0, T, 1.0f, 700 + n_checked);
            MtErr r2 = mt_run(wt, t->data, wf, DT_F16, DT_F32, (Phase)ph, ne1, ne0, T, 1.0f, 710 + n_checked);
            CHECKF(r1.nans == 0 && r2.nans == 0, "%s %s: NaN/inf", file, name);
            CHECKF(r1.worst <= 1e-5 && r2.worst <= mt_tol(wt, DT_F16, DT_F32, (Phase)ph, r2.cm) && r2.worst_orig <= 1e-3,
                   "%s %s %s: errors %g (f32 x) %g (f16 x) %g (f16 x vs f32 x)",
                   file, name, ph == PH_DECODE ? "decode" : "prefill", r1.worst, r2.worst, r2.worst_orig);
        }
        n_checked++;
    }
    CHECKF(n_checked == n_listed && n_checked >= 6, "checked %d fixture tensors, INDEX lists %d supported (at least 6)", n_checked, n_listed);
    arena_free(&ar);
}

/* ---- fused decode kernels: the separate ops' values, up to the driver's contraction ----- */
/* Q6_K's and the group types' device layout (vk_units): units of 8 blocks, the last of fewer, each
   holding its blocks' parts in turn (Q6_K: ql, qh, scales, d; the others: the quants, then the header:
   d, and m, qh or the scales); back again on download. Through the
   staging block too (the arena's mapping hidden), in more than one chunk, with a tail unit of 3
   blocks. A tensor of the same dtype made by vk_tensor (a q8_0 KV cache) keeps the bytes as they are, and a
   product refuses it as its weight. */
typedef struct { DType dt; u32 bb, n, off[4], len[4]; } UnitCase;   /* GGUF offset and length of each part, in unit order */
static const UnitCase unit_cases[] = {
    { DT_Q6_K, 210, 4, { 0, 128, 192, 208 }, { 128, 64, 16, 2 } },
    { DT_Q8_0,  34, 2, { 2, 0 }, { 32, 2 } },      /* f16 d; i8 q[32] */
    { DT_Q4_0,  18, 2, { 2, 0 }, { 16, 2 } },      /* f16 d; u8 q[16] */
    { DT_IQ4_NL, 18, 2, { 2, 0 }, { 16, 2 } },
    { DT_Q4_1,  20, 2, { 4, 0 }, { 16, 4 } },      /* f16 d, m; u8 q[16] */
    { DT_Q5_0,  22, 2, { 6, 0 }, { 16, 6 } },      /* f16 d; u8 qh[4]; u8 q[16] */
    { DT_Q5_1,  24, 2, { 8, 0 }, { 16, 8 } },      /* f16 d, m; u8 qh[4]; u8 q[16] */
    { DT_IQ4_XS, 136, 2, { 8, 0 }, { 128, 8 } },   /* f16 d; u16 scales_h; u8 scales_l[4]; u8 q[128] */
};
static void units_expect(const UnitCase *c, const u8 *src, const u8 *dev, u64 nb, u64 *bad) {
    for (u64 b = 0; b < nb; b++) {
        u64 u0 = b / 8 * 8, n = MIN(8, nb - u0), j = b - u0, before = 0;
        for (u32 q = 0; q < c->n; before += c->len[q++])
            *bad += memcmp(dev + u0 * c->bb + before * n + c->len[q] * j, src + b * c->bb + c->off[q], c->len[q]) != 0;
    }
}
TEST(weight_device_layout_in_units_round_trips) {
    Vk *vk = test_vk();
    for (u32 ci = 0; ci < sizeof unit_cases / sizeof *unit_cases; ci++) {
        const UnitCase *c = &unit_cases[ci];
        u64 nb = EDGE_VK_STAGING_BYTES / c->bb + 3;   /* two staging chunks; nb % 8 = 3 */
        if (nb % 8 != 3) nb += (3 + 8 - nb % 8) % 8;
        u64 nbytes = nb * c->bb;
        u8 *src = malloc(nbytes), *dev = malloc(nbytes), *back = malloc(nbytes);
        trng_seed(4242 + ci);
        for (u64 i = 0; i < nbytes; i++) src[i] = (u8)(trng_u32() >> 24);
        u64 bad = 0;
        vk_units(c->dt, dev, src, 19, true);          /* host: 2 units + a tail of 3 */
        units_expect(c, src, dev, 19, &bad);
        vk_units(c->dt, back, dev, 19, false);
        CHECKF(bad == 0 && !memcmp(back, src, 19 * c->bb), "%s, 19 blocks: %llu parts misplaced", mt_dn(c->dt), (unsigned long long)bad);
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "units", 2 * align_up(nbytes, 256) + 256, &e));
        u64 ne[2] = { dtype_info[c->dt].blk, nb };         /* one block per row */
        Tensor t = vk_weight(&a, "w", c->dt, 2, ne), r = vk_tensor(&a, "cache", c->dt, 2, ne);
        CHECKF(t.units && !r.units, "%s: vk_weight units %d, vk_tensor units %d", mt_dn(c->dt), t.units, r.units);
        for (int staged = 0; staged < 2; staged++) {
            u8 *mapped = a.blocks[t.block].mapped;
            if (staged) a.blocks[t.block].mapped = 0;   /* as on a device without host-visible device memory */
            vk_upload(vk, &t, src);
            memset(back, 0, nbytes);
            vk_download(vk, &t, back);
            a.blocks[t.block].mapped = mapped;
            CHECKF(!memcmp(back, src, nbytes), "%s staged=%d: the download differs from the upload", mt_dn(c->dt), staged);
            bad = 0;
            if (mapped) units_expect(c, src, mapped + t.offset, nb, &bad);
            CHECKF(bad == 0, "%s staged=%d: %llu parts misplaced on the device", mt_dn(c->dt), staged, (unsigned long long)bad);
            if (staged) a.blocks[r.block].mapped = 0;   /* not a weight: the bytes as they are */
            vk_upload(vk, &r, src);
            a.blocks[r.block].mapped = mapped;
            if (mapped) CHECKF(!memcmp(mapped + r.offset, src, nbytes), "%s staged=%d: a non-weight's upload changed the bytes", mt_dn(c->dt), staged);
            if (staged) a.blocks[r.block].mapped = 0;
            memset(back, 0, nbytes);
            vk_download(vk, &r, back);
            a.blocks[r.block].mapped = mapped;
            CHECKF(!memcmp(back, src, nbytes), "%s staged=%d: a non-weight's download differs from its upload", mt_dn(c->dt), staged);
        }
        vk_arena_free(&a);
        free(src); free(dev); free(back);
    }
}

/* The gap op_matmul_glu's y may keep from op_glu over the separate products' gate g and up u
   where the driver contracts a * b + c differently in the two (vk_test.c fuse_gap): each sum moves
   by at most MT_FMA_GAP of its natural magnitude s = sum |w x| (the roundings of its fma-able terms
   and partial sums; one missing term is ~1/K of s), and with f16 activations g and u may round to
   neighbouring f16 values (2^-10 of |g|, |u|). SiLU and GELU-tanh have |act(x)| <= |x| and slope
   <= 1.13, so y moves by (|g| + eg) eu + 1.13 eg |u|; GELU's x + 0.044715 x^3, contracted, moves
   its sigmoid's argument by 2^-24 (30 + 1.6 |g|) at most, y by a quarter of that of |g u|. f16
   outputs saturate at +-65504 on both sides: the gap is what that clamp leaves of it (none where
   act(g) u is past 65504 by more than the gap). */
#define MT_FMA_GAP 0x1p-18      /* 64 f32 steps of sum |w x| */
static f64 mt_clamp16(f64 v) { return MAX(-65504.0, MIN(65504.0, v)); }
static f64 mt_glu_gap(f64 g, f64 u, f64 sg, f64 su, bool f16, bool gelu) {
    f64 ag = fabs(g), au = fabs(u);
    f64 eg = MT_FMA_GAP * sg + (f16 ? 0x1p-10 * ag : 0), eu = MT_FMA_GAP * su + (f16 ? 0x1p-10 * au : 0);
    f64 e = (ag + eg) * eu + 1.13 * eg * au + 0x1p-24 * ag * au * (8 + ag / 2);
    if (!f16) return e;
    f64 z = gelu ? 2 * MAX(-15.0, MIN(15.0, 0.7978845608028654 * (g + 0.044715 * g * g * g))) : g;
    f64 y = g / (1 + exp(-z)) * u;      /* the kernels' act(g) u before the clamp */
    return MAX(mt_clamp16(y + e) - mt_clamp16(y), mt_clamp16(y) - mt_clamp16(y - e));
}

/* sum |w x| of gate row r (w's first M rows of K) and token t (x: T rows of K) into s[t M + r], of
   up row r (w's next M rows) into s[(T + t) M + r] */
static void mt_glu_mags(const f32 *w, const f32 *x, u64 M, u64 K, u64 T, f64 *s) {
    for (u64 h = 0; h < 2; h++) for (u64 t = 0; t < T; t++) for (u64 r = 0; r < M; r++) {
        f64 m = 0;
        for (u64 k = 0; k < K; k++) m += fabs((f64)w[(h * M + r) * K + k] * x[t * K + k]);
        s[(h * T + t) * M + r] = m;
    }
}

/* The fused ty2 against the separate ty1 with the gate tg and up tu they came from (s: mt_glu_mags) */
static FuseGap mt_glu_compare(Vk *vk, const Tensor *tg, const Tensor *tu, const Tensor *ty1, const Tensor *ty2, const f64 *s, bool gelu) {
    u64 n = ty1->nelem;
    bool f16 = ty1->dtype == DT_F16;
    f32 *g = down_f32(vk, tg), *u = down_f32(vk, tu), *y1 = down_f32(vk, ty1), *y2 = down_f32(vk, ty2);
    f64 *extra = malloc(n * sizeof *extra);
    for (u64 i = 0; i < n; i++) extra[i] = mt_glu_gap(g[i], u[i], s[i], s[n + i], f16, gelu);
    FuseGap gap = fuse_gap(y2, y1, n, f16, extra);
    free(g); free(u); free(y1); free(y2); free(extra);
    return gap;
}

/* op_matmul_glu on gate and up stored back to back against op_matmul (gate), op_matmul (up) and
   op_glu: the same lanes, reduction and rounding of gate and up to the activation dtype before the
   activation, so equal up to where the driver contracts a * b + c into an fma differently in the
   two shaders (mt_glu_gap, fuse_gap; NVIDIA does, lavapipe gives equal bits). Neither side has int8
   lanes (the *_q entries are the norm-prologue forms', op_matmul's decode never takes them), so
   op_matmul_q8_off needs no setting here; those lanes are checked against references in gen_test.c
   (op_q8_products). The separate ops are checked against references above and in attn_test.c. */
TEST(kernel_matmul_glu_equals_separate_ops) {
    Vk *vk = test_vk();
    const u64 M = 64, K = 512;          /* M rows of every type end on a 256-byte boundary: up is bindable alone */
    mt_types_init();
    for (u32 wi = 0; wi < mt_nw; wi++) for (int path = 0; path < 2; path++) for (u32 T = 1; T <= 3; T += 2) {
        DType wt = mt_wtypes[wi], at = path ? DT_F16 : DT_F32;
        if (at == DT_F16 && !(vk->caps.f16_arith && vk->caps.storage16)) continue;
        u64 rb = dtype_bytes(wt, K);
        DevArena a; Err e;
        REQUIRE(vk_arena_init(vk, &a, "glu-test", 2 * M * rb + 6 * M * T * 4 + K * T * 4 + 8 * 256, &e));
        u64 ngu[2] = { K, 2 * M }, nx[2] = { K, T }, ny[2] = { M, T };
        Tensor tgu = vk_weight(&a, "gate_up", wt, 2, ngu), tx = vk_tensor(&a, "x", at, 2, nx);
        Tensor tg = vk_tensor(&a, "gate", at, 2, ny), tu = vk_tensor(&a, "up", at, 2, ny);
        Tensor ty1 = vk_tensor(&a, "y_sep", at, 2, ny), ty2 = vk_tensor(&a, "y_fused", at, 2, ny);
        Tensor wg = tgu, wu = tgu;      /* the halves as the transformer holds them */
        wg.ne[1] = wu.ne[1] = M; wg.nelem = wu.nelem = M * K; wg.nbytes = wu.nbytes = M * rb; wu.offset += M * rb;
        u8 *wb = malloc(2 * M * rb); f32 *wf = malloc(2 * M * K * 4), *x = malloc(K * T * 4);
        u16 *x16 = malloc(K * T * 2);
        trng_seed(700 + wi * 10 + path * 3 + T);
        mt_random_weights(wt, 2 * M, K, wb, wf);
        for (u64 i = 0; i < K * T; i++) { x[i] = trng_normal() * 3; x16[i] = f16_from_f32(x[i]); }
        f64 *s = malloc(2 * M * T * sizeof *s);
        mt_glu_mags(wf, x, M, K, T, s);
        vk_upload(vk, &tgu, wb);
        vk_upload(vk, &tx, at == DT_F16 ? (void *)x16 : (void *)x);
        Tensor gu;
        CHECK(op_gate_up_view(vk, &wg, &wu, &gu) && gu.nbytes == tgu.nbytes && gu.offset == tgu.offset);
        Tensor wu_far = wu; wu_far.offset += 256;
        CHECK(!op_gate_up_view(vk, &wg, &wu_far, &gu));   /* not back to back: no view */
        if (wt == DT_Q6_K) {        /* Q6_K gate rows that end inside a unit of 8 blocks: no view */
            Tensor g3 = wg, u3 = wg;
            g3.ne[1] = u3.ne[1] = 3; g3.nelem = u3.nelem = 3 * K; g3.nbytes = u3.nbytes = 3 * rb; u3.offset += 3 * rb;
            CHECK(!op_gate_up_view(vk, &g3, &u3, &gu));
        }
        CHECK(op_gate_up_view(vk, &wg, &wu, &gu));
        for (int gelu = 0; gelu < 2; gelu++) {
            vk_begin(vk);
            op_matmul(vk, PH_DECODE, &wg, &tx, &tg); op_matmul(vk, PH_DECODE, &wu, &tx, &tu); vk_barrier(vk);
            op_glu(vk, &tg, &tu, &ty1, gelu);
            op_matmul_glu(vk, &gu, &tx, &ty2, gelu);
            vk_submit_wait(vk);
            FuseGap gap = mt_glu_compare(vk, &tg, &tu, &ty1, &ty2, s, gelu);
            CHECKF(gap.past == 0, "%s %s T=%u gelu=%d: %llu of %llu values of fused and separate past the contraction bound (largest gap %.3g)",
                   dtype_name[wt], dtype_name[at], T, gelu, (unsigned long long)gap.past, (unsigned long long)(M * T), gap.worst);
            CHECKF(!fuse_exact(vk) || gap.worst == 0, "%s %s T=%u gelu=%d: fused and separate differ by up to %.3g on a CPU device (equal bits expected)",
                   dtype_name[wt], dtype_name[at], T, gelu, gap.worst);
        }
        free(wb); free(wf); free(x); free(x16); free(s);
        vk_arena_free(&a);
    }
}

/* The int8 gate/up's lanes per row on the H200 (132 units) against what was measured there (docs/perf-log.md
   #123, #136, session 37): 4 lanes (log2 2) for llama-3.1-8b's 4,096-wide rows (+3.0% tg128) and for Gemma's
   residual prologue; 8 for qwen2.5-7b (4 lanes: -2.0%) and for the narrower rows (qwen3-4b -3.2%,
   qwen2.5-1.5b -2.4%); without a compute-unit count the wide rows keep 8. */
TEST(matmul_glu_norm_lanes_are_the_measured_fastest_on_the_h200) {
    static Vk vk;
    static const struct { const char *nm; u64 k, m; bool res; u32 units, ll; } sh[] = {
        { "llama-3.1-8b", 4096, 14336, false, 132, 2 }, { "qwen2.5-7b", 3584, 18944, false, 132, 3 },
        { "qwen3-4b", 2560, 9728, false, 132, 3 },      { "qwen2.5-1.5b", 1536, 8960, false, 132, 3 },
        { "gemma-2-2b", 2304, 9216, true, 132, 2 },     { "llama-3.1-8b, no unit count", 4096, 14336, false, 0, 3 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(sh); i++) {
        vk.caps.compute_units = sh[i].units;
        u32 ll = wq_glu_norm_lanes(&vk, DT_Q4_K, sh[i].k, sh[i].m, true, sh[i].res);
        CHECKF(ll == sh[i].ll, "%s: %u lanes a row (measured fastest %u)", sh[i].nm, 1u << ll, 1u << sh[i].ll);
    }
    vk.caps.compute_units = 132;
    CHECK(wq_glu_norm_lanes(&vk, DT_Q4_K, 4096, 14336, false, false) == 3);   /* the f16-pair lanes keep 8 */
}
