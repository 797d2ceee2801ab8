/* vk_test.c — the Vulkan layer and the first kernels against scalar C references
   on seeded random inputs (and inputs with large magnitudes). */

static Vk   tvk;
static int  tvk_state;          /* 0 untried, 1 up, -1 unavailable */
static char tvk_why[1024];

/* One device for the whole test binary; tests skip with the reason when there is none (fail
   under EDGE_TEST_REQUIRE=1). The caps a test changes are put back when it ends (test_save). */
static Vk *test_vk(void) {
    if (tvk_state == 0) {
        Err e;
        if (vk_init(&tvk, &e)) tvk_state = 1;
        else { tvk_state = -1; fmt_buf(tvk_why, sizeof tvk_why, "%s", e.msg); }
    }
    if (tvk_state < 0) SKIP_UNLESS_REQUIRED("no Vulkan device: %s", tvk_why);
    test_save(&tvk.caps, sizeof tvk.caps);
    return &tvk;
}

static u64 trng_state = 88172645463325252ull;
static void trng_seed(u64 s) { trng_state = s * 2685821657736338717ull + 1; }
static u32  trng_u32(void) { trng_state ^= trng_state << 13; trng_state ^= trng_state >> 7; trng_state ^= trng_state << 17; return (u32)(trng_state >> 32); }
static f32  trng_uniform(void) { return (f32)(trng_u32() >> 8) / 16777216.0f * 2.0f - 1.0f; }   /* [-1, 1) */
static f32  trng_normal(void) {
    f64 u1 = ((f64)(trng_u32() >> 8) + 0.5) / 16777216.0, u2 = (f64)(trng_u32() >> 8) / 16777216.0;
    return (f32)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ---- fused kernels against the separate ones: the gap a contraction can leave --------------
   A fused kernel runs the arithmetic of the separate kernels it replaces, but SPIR-V lets a driver
   contract a * b + c into one fma unless the shader marks it NoContraction, and a driver may
   contract differently in two shaders (NVIDIA does; lavapipe gives equal bits). So the tests
   compare them element by element within what a different contraction can move, no further. */
typedef struct FuseGap { u64 past; f64 worst; } FuseGap;   /* elements past their bound; the largest |a - b| */

/* Where the bits must agree anyway: lavapipe (a CPU device, LLVM) compiles the fused and separate
   shaders' arithmetic alike, so there a gap of any size is a real difference. */
static bool fuse_exact(const Vk *vk) { return vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }

/* A tensor of f32 or f16 downloaded as f32 (malloc'd: the caller frees it). */
static f32 *down_f32(Vk *vk, const Tensor *t) {
    f32 *v = malloc(t->nelem * 4);
    if (t->dtype == DT_F32) { vk_download(vk, t, v); return v; }
    u16 *h = malloc(t->nelem * 2);
    vk_download(vk, t, h);
    for (u64 i = 0; i < t->nelem; i++) v[i] = f32_from_f16(h[i]);
    free(h);
    return v;
}

/* a against b (n values): NaN pairs with NaN only, an infinity with the same one; else
   |a - b| <= 1e-5 max |finite a, b| (f32 roundings of a few contracted terms) + with f16
   2^-10 max(|a|, |b|) (values that differ by far less than an f16 step can round to neighbouring
   f16 values) + extra[i] where extra is given. */
static FuseGap fuse_gap(const f32 *a, const f32 *b, u64 n, bool f16, const f64 *extra) {
    f64 mx = 0;
    for (u64 i = 0; i < n; i++) {
        if (isfinite(a[i])) mx = MAX(mx, fabs((f64)a[i]));
        if (isfinite(b[i])) mx = MAX(mx, fabs((f64)b[i]));
    }
    FuseGap g = { 0, 0 };
    for (u64 i = 0; i < n; i++) {
        if (a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))) continue;
        f64 d = fabs((f64)a[i] - b[i]), tol = 1e-5 * mx + (f16 ? 0x1p-10 * MAX(fabs((f64)a[i]), fabs((f64)b[i])) : 0) + (extra ? extra[i] : 0);
        if (!isfinite(a[i]) || !isfinite(b[i]) || !(d <= tol)) g.past++;   /* NaN against a number, inf against another value */
        if (!(d <= g.worst)) g.worst = d;
    }
    return g;
}

TEST(kernel_table_is_tint_spirv_with_reflected_bindings) {
    REQUIRE(KERNEL_TABLE_COUNT > 0);
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
        const KernelInfo *k = &kernel_table[i];
        CHECKF(k->spv[0] == 0x07230203u, "%s: magic %08x", k->name, k->spv[0]);
        CHECKF((k->spv[2] >> 16) == 23, "%s: generator %08x is not Google Tint (23)", k->name, k->spv[2]);
        CHECKF(k->wg[0] * k->wg[1] * k->wg[2] > 0, "%s", k->name);
        CHECKF(k->n_bindings > 0, "%s", k->name);
        for (u32 b = 0; b < k->n_bindings; b++) {
            CHECKF(k->bindings[b].elem == KE_F32 || k->bindings[b].elem == KE_F16 || k->bindings[b].elem == KE_U32 ||
                   k->bindings[b].elem == KE_I32, "%s binding %u elem %u", k->name, b, k->bindings[b].elem);
            CHECKF(k->bindings[b].set == 0, "%s", k->name);
        }
    }
    /* spot-check the reflection against what the WGSL declares */
    const KernelInfo *a = &kernel_table[vk_kernel_find("add_f32")];
    CHECK(a->n_bindings == 3 && a->push_size == 4 && a->wg[0] == 256);
    for (u32 b = 0; b < 3; b++) {
        const KBinding *kb = &a->bindings[b];
        CHECK(kb->elem == KE_F32 && kb->vec == 1);
        CHECK(kb->writable == (kb->binding == 2));
    }
    const KernelInfo *m = &kernel_table[vk_kernel_find("get_rows_f16")];    /* f16 weights bound as 16-byte vectors of u32 */
    CHECK(m->n_bindings == 3);
    for (u32 b = 0; b < m->n_bindings; b++) {
        const KBinding *kb = &m->bindings[b];
        if (kb->binding == 0) CHECK(kb->elem == KE_U32 && kb->vec == 4 && !kb->writable && !strcmp(kb->name, "w"));
        if (kb->binding == 1) CHECK(kb->elem == KE_U32 && kb->vec == 1 && !kb->writable && !strcmp(kb->name, "ids"));
        if (kb->binding == 2) CHECK(kb->elem == KE_F32 && kb->vec == 1 && kb->writable && !strcmp(kb->name, "yr"));
    }
    const KernelInfo *h = &kernel_table[vk_kernel_find("glu_f16")];         /* f16 storage (alias A = f16) */
    CHECK(h->n_bindings == 3 && h->cap_s16);
    for (u32 b = 0; b < h->n_bindings; b++) CHECK(h->bindings[b].elem == KE_F16 && h->bindings[b].writable == (h->bindings[b].binding == 2));
    const KernelInfo *r = &kernel_table[vk_kernel_find("rmsnorm_f32")];
    CHECK(r->push_size == 12);
}

TEST(every_kernel_def_names_an_embedded_kernel_whose_bindings_fit) {
    for (i32 i = 0; i < KDEF_COUNT; i++) {
        i32 k = vk_kernel_find(kdefs[i].kernel);
        CHECKF(k >= 0, "kernels.def entry '%s' has no embedded kernel", kdefs[i].kernel);
        if (k < 0) continue;
        CHECKF(kdef_find(kdefs[i].op, kdefs[i].phase, kdefs[i].wtype, kdefs[i].atype, kdefs[i].otype) == i,
               "key of '%s' is not unique", kdefs[i].kernel);
        /* the output binding is the last written one, and holds the output dtype (the *_res_norm
           entries also store the updated f32 residual row, binding `xw`, after it) */
        const KernelInfo *ki = &kernel_table[k];
        const KBinding *ob = 0;
        for (u32 b = 0; b < ki->n_bindings; b++) if (ki->bindings[b].writable && strcmp(ki->bindings[b].name, "xw")) ob = &ki->bindings[b];
        CHECKF(ob && dtype_fits(kdefs[i].otype, ob), "%s: output binding does not hold %s", ki->name, dtype_name[kdefs[i].otype]);
    }
}

TEST(device_arena_exact_sizes_and_alignment) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "test-arena", 4096, &e));
    u64 ne1[1] = { 3 }, ne2[2] = { 5, 7 };
    Tensor t1 = vk_tensor(&a, "t1", DT_F32, 1, ne1);
    Tensor t2 = vk_tensor(&a, "t2", DT_F16, 2, ne2);
    CHECK(t1.nbytes == 12 && t1.nelem == 3);
    CHECK(t2.nbytes == 70 && t2.nelem == 35);
    CHECK(t2.offset % vk->caps.min_offset_align == 0);
    CHECK(t2.offset >= t1.offset + t1.nbytes);
    CHECK(t2.offset - (t1.offset + t1.nbytes) < vk->caps.min_offset_align);   /* nothing but alignment between */
    CHECK(a.used == 82);
    u64 big[1] = { 2000 };
    int code = 0;
    bool died = EXPECT_DIE(&code, vk_tensor(&a, "too-big", DT_F32, 1, big));
    CHECK(died && code == EXIT_DEVICE);
    CHECKF(strstr(die_trap_msg, "'test-arena'") && strstr(die_trap_msg, "'too-big'") && strstr(die_trap_msg, "8000 bytes")
           && strstr(die_trap_msg, "used 82 of 4096") && strstr(die_trap_msg, "vk_test.c:"), "%s", die_trap_msg);
    u64 q[1] = { 100 };
    died = EXPECT_DIE(&code, vk_tensor(&a, "bad-q4k", DT_Q4_K, 1, q));
    CHECKF(died && strstr(die_trap_msg, "not whole q4_k blocks"), "%s", die_trap_msg);
    vk_arena_free(&a);
}

/* y = a op b against C, on random values and on large magnitudes (overflow to inf matches IEEE). */
static void check_binary(Op op) {
    Vk *vk = test_vk();
    const u32 n = 10007;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "binary", 3 * n * 4 + 1024, &e));
    u64 ne[1] = { n };
    Tensor ta = vk_tensor(&a, "a", DT_F32, 1, ne), tb = vk_tensor(&a, "b", DT_F32, 1, ne), ty = vk_tensor(&a, "y", DT_F32, 1, ne);
    f32 *ha = malloc(n * 4), *hb = malloc(n * 4), *hy = malloc(n * 4);
    for (int round = 0; round < 2; round++) {
        trng_seed(11 + round);
        f32 scale = round ? 3e19f : 1.0f;     /* round 1: products and sums near/over f32 range */
        for (u32 i = 0; i < n; i++) { ha[i] = trng_normal() * scale; hb[i] = trng_normal() * scale; }
        vk_upload(vk, &ta, ha); vk_upload(vk, &tb, hb);
        vk_begin(vk);
        if (op == OP_ADD) op_add(vk, &ta, &tb, &ty); else op_mul(vk, &ta, &tb, &ty);
        vk_submit_wait(vk);
        vk_download(vk, &ty, hy);
        u32 bad = 0;
        for (u32 i = 0; i < n; i++) {
            f32 want = op == OP_ADD ? ha[i] + hb[i] : ha[i] * hb[i];
            if (!(hy[i] == want)) { if (bad < 3) errf("  [%u] got %g want %g\n", i, (f64)hy[i], (f64)want); bad++; }
        }
        CHECKF(bad == 0, "%u of %u elements differ (round %d)", bad, n, round);
    }
    free(ha); free(hb); free(hy);
    vk_arena_free(&a);
}

TEST(kernel_add_matches_c) { check_binary(OP_ADD); }
TEST(kernel_mul_matches_c) { check_binary(OP_MUL); }

TEST(kernel_rmsnorm_matches_reference) {
    Vk *vk = test_vk();
    const u32 n = 1000, rows = 6;
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "rmsnorm", (2 * n * rows + n) * 4 + 1024, &e));
    u64 nx[2] = { n, rows }, nw[1] = { n };
    Tensor tx = vk_tensor(&a, "x", DT_F32, 2, nx), tw = vk_tensor(&a, "w", DT_F32, 1, nw), ty = vk_tensor(&a, "y", DT_F32, 2, nx);
    f32 *hx = malloc(n * rows * 4), *hw = malloc(n * 4), *hy = malloc(n * rows * 4);
    trng_seed(5);
    const f32 row_scale[6] = { 1.0f, 1e-20f, 3e4f, 1e25f, 0.0f, 1e-3f };   /* tiny, large, overflowing squares, zero */
    for (u32 r = 0; r < rows; r++) for (u32 i = 0; i < n; i++) hx[r * n + i] = trng_normal() * row_scale[r];
    for (u32 i = 0; i < n; i++) hw[i] = 1.0f + 0.1f * trng_normal();
    vk_upload(vk, &tx, hx); vk_upload(vk, &tw, hw);
    const f32 eps = 1e-6f;
    vk_begin(vk); op_rmsnorm(vk, &tx, &tw, &ty, eps); vk_submit_wait(vk);
    vk_download(vk, &ty, hy);
    f64 worst = 0; u32 nans = 0;
    for (u32 r = 0; r < rows; r++) {
        f64 ss = 0; for (u32 i = 0; i < n; i++) ss += (f64)hx[r * n + i] * hx[r * n + i];
        f64 inv = 1.0 / sqrt(ss / n + eps);
        for (u32 i = 0; i < n; i++) {
            f64 want = hx[r * n + i] * inv * hw[i], got = hy[r * n + i];
            if (got != got || isinf(got)) { nans++; continue; }
            f64 rel = fabs(got - want) / (fabs(want) + 1e-30);
            if (fabs(want) > 1e-30 && rel > worst) worst = rel;
            if (want == 0) CHECK(got == 0);
        }
    }
    CHECKF(nans == 0, "%u NaN/Inf outputs from finite inputs", nans);
    CHECKF(worst <= 1e-5, "max relative error %g", worst);
    free(hx); free(hw); free(hy);
    vk_arena_free(&a);
}

/* matvec (op_matmul, decode phase, one token): |y - ref| <= tol * sum_k |w x| (the dot
   product's own scale), ref in f64. */
static void check_matvec(DType wt, u32 rows, u32 k, f64 tol, f32 xscale, u64 seed) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    u64 wbytes = dtype_bytes(wt, (u64)rows * k);
    REQUIRE(vk_arena_init(vk, &a, "matvec", wbytes + ((u64)k + rows) * 4 + 1024, &e));
    u64 nw[2] = { k, rows }, nx[1] = { k }, ny[1] = { rows };
    Tensor tw = vk_weight(&a, "W", wt, 2, nw), tx = vk_tensor(&a, "x", DT_F32, 1, nx), ty = vk_tensor(&a, "y", DT_F32, 1, ny);
    f32 *w = malloc((u64)rows * k * 4), *x = malloc((u64)k * 4), *y = malloc((u64)rows * 4);
    u16 *w16 = malloc((u64)rows * k * 2);
    trng_seed(seed);
    for (u64 i = 0; i < (u64)rows * k; i++) w[i] = trng_normal() * 0.05f;
    for (u32 i = 0; i < k; i++) x[i] = trng_normal() * xscale;
    if (wt == DT_F16) {
        for (u64 i = 0; i < (u64)rows * k; i++) { w16[i] = f16_from_f32(w[i]); }
        vk_upload(vk, &tw, w16);
    } else vk_upload(vk, &tw, w);
    vk_upload(vk, &tx, x);
    vk_begin(vk); op_matmul(vk, PH_DECODE, &tw, &tx, &ty); vk_submit_wait(vk);
    vk_download(vk, &ty, y);
    f64 worst = 0, worst_orig = 0; u32 nans = 0;
    for (u32 r = 0; r < rows; r++) {
        f64 s = 0, sa = 0, so = 0;
        for (u32 i = 0; i < k; i++) {
            f64 wv = wt == DT_F16 ? (f64)f32_from_f16(w16[(u64)r * k + i]) : (f64)w[(u64)r * k + i];
            s += wv * x[i]; sa += fabs(wv * x[i]); so += (f64)w[(u64)r * k + i] * x[i];
        }
        if (y[r] != y[r] || isinf(y[r])) { nans++; continue; }
        f64 rel = fabs(y[r] - s) / (sa + 1e-30), relo = fabs(y[r] - so) / (sa + 1e-30);
        if (rel > worst) worst = rel;
        if (relo > worst_orig) worst_orig = relo;
    }
    CHECKF(nans == 0, "%u NaN/Inf", nans);
    CHECKF(worst <= tol, "%s %ux%u: max error %g of sum|w*x| (tolerance %g)", dtype_name[wt], rows, k, worst, tol);
    if (wt == DT_F16) CHECKF(worst_orig <= 1e-3, "f16 weights vs the f32 originals: %g", worst_orig);
    free(w); free(x); free(y); free(w16);
    vk_arena_free(&a);
}

TEST(kernel_matvec_f32_matches_reference) {
    check_matvec(DT_F32, 300, 1000, 1e-5, 1.0f, 1);
    check_matvec(DT_F32, 64, 9216, 1e-5, 1.0f, 2);       /* a long row */
    check_matvec(DT_F32, 70000, 8, 1e-5, 1.0f, 3);       /* more rows than one grid dimension holds */
    check_matvec(DT_F32, 33, 512, 1e-5, 1e15f, 4);       /* large magnitudes */
}

TEST(kernel_matvec_f16_weights_matches_reference) {
    check_matvec(DT_F16, 300, 1000, 1e-5, 1.0f, 7);
    check_matvec(DT_F16, 70000, 16, 1e-5, 1.0f, 8);
    check_matvec(DT_F16, 16, 9216, 1e-5, 1e10f, 9);
}

TEST(dispatch_refuses_a_tensor_of_the_wrong_dtype) {
    Vk *vk = test_vk();
    DevArena a; Err e;
    REQUIRE(vk_arena_init(vk, &a, "dtype", 4096, &e));
    u64 ne[1] = { 16 };
    Tensor f = vk_tensor(&a, "activations", DT_F32, 1, ne), h = vk_tensor(&a, "half-buffer", DT_F16, 1, ne);
    VkPipe *p = vk_pipeline(vk, vk_kernel_find("add_f32"));
    const Tensor *ts[3] = { &f, &f, &h };            /* f16 tensor into the f32 output binding */
    u32 push = 16; int code = 0;
    vk_begin(vk);
    bool died = EXPECT_DIE(&code, vk_dispatch(vk, p, ts, 3, &push, 4, 1, 1, 1));
    CHECK(died && code == EXIT_USAGE);
    CHECKF(strstr(die_trap_msg, "add_f32") && strstr(die_trap_msg, "binding 2") && strstr(die_trap_msg, "'half-buffer' is f16"), "%s", die_trap_msg);
    u64 one[1] = { 1 };
    Tensor ids = vk_tensor(&a, "ids", DT_U32, 1, ne), y1 = vk_tensor(&a, "y1", DT_F32, 1, one);
    died = EXPECT_DIE(&code, op_matmul(vk, PH_DECODE, &ids, &f, &y1));     /* no kernel takes u32 weights */
    CHECKF(died && code == EXIT_USAGE && strstr(die_trap_msg, "no kernel for op matmul, phase decode, weights u32"), "%s", die_trap_msg);
    vk->recording = false;
    VK_CHECK(vkEndCommandBuffer(vk->cmd));
    vk_arena_free(&a);
}

/* ---- pipeline cache ---------------------------------------------------------------------------- */
/* Builds one pipeline (the first kernel this device may run) and returns whether it exists. */
static bool tpc_build_one(Vk *vk) {
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
        Err e;
        if (!vk_kernel_check(&vk->caps, &kernel_table[i], &e)) continue;
        return vk_pipeline(vk, i)->pipe != 0;
    }
    return false;
}

static bool tpc_write(const char *path, const u8 *d, u64 n) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(d, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

TEST(pipeline_cache_reused_corrupt_and_foreign_ignored) {
    Vk *dev = test_vk();                      /* skips without a device */
    (void)dev;
    char dir[] = "/tmp/edge-pcache-XXXXXX";
    REQUIRE(mkdtemp(dir));
    TEST_OPTION(xdg_cache_home, dir);         /* options put back when the test ends */
    TEST_OPTION(no_pipeline_cache, false);
    Vk vk;
    Err e;
    char path[512];
    Arena a;
    arena_init(&a, "pcache test", 1u << 20);
    /* 1. no file yet: a cache is created and written at shutdown */
    REQUIRE(vk_init(&vk, &e));
    CHECK(vk.pcache != 0 && !vk.pcache_loaded);
    REQUIRE(vk_pcache_path(&vk, path, sizeof path));
    CHECKF(strncmp(path, dir, strlen(dir)) == 0 && strstr(path, "/edge/pipelines-"), "%s", path);
    CHECK(tpc_build_one(&vk));
    VkPhysicalDeviceProperties props = vk.props;
    vk_shutdown(&vk);
    u8 *data; u64 n;
    REQUIRE(read_file_all(&a, path, &data, &n, &e));
    CHECKF(n >= 32, "cache file of %llu bytes", (unsigned long long)n);
    u32 vendor; memcpy(&vendor, data + 8, 4);
    CHECK(vendor == props.vendorID && memcmp(data + 16, props.pipelineCacheUUID, VK_UUID_SIZE) == 0);
    /* 2. the second vk_init reads it */
    REQUIRE(vk_init(&vk, &e));
    CHECK(vk.pcache_loaded);
    CHECK(tpc_build_one(&vk));
    vk_shutdown(&vk);
    /* 3. corrupt, truncated and foreign files: ignored, pipelines still build, replaced by a valid file */
    u8 junk[200];
    for (u32 i = 0; i < sizeof junk; i++) junk[i] = (u8)(i * 37 + 11);
    u8 *foreign = push_array(&a, u8, n);
    memcpy(foreign, data, n);
    foreign[16] ^= 0xff;                      /* another pipelineCacheUUID */
    u8 *other_dev = push_array(&a, u8, n);
    memcpy(other_dev, data, n);
    other_dev[12] ^= 0x01;                    /* another deviceID */
    struct { const char *what; const u8 *d; u64 n; } bad[] = {
        { "junk", junk, sizeof junk }, { "truncated", data, 10 }, { "empty", data, 0 },
        { "foreign uuid", foreign, n }, { "other device", other_dev, n },
    };
    for (u32 i = 0; i < ARRAY_COUNT(bad); i++) {
        REQUIRE(tpc_write(path, bad[i].d, bad[i].n));
        REQUIRE(vk_init(&vk, &e));
        CHECKF(!vk.pcache_loaded, "%s: loaded", bad[i].what);
        CHECKF(vk_pcache_reject(&vk, bad[i].d, bad[i].n) != 0, "%s: not rejected", bad[i].what);
        CHECKF(tpc_build_one(&vk), "%s: no pipeline", bad[i].what);
        vk_shutdown(&vk);
        u8 *d2; u64 n2;
        REQUIRE(read_file_all(&a, path, &d2, &n2, &e));
        CHECKF(n2 >= 32 && memcmp(d2 + 16, props.pipelineCacheUUID, VK_UUID_SIZE) == 0, "%s: not replaced", bad[i].what);
    }
    /* 4. EDGE_NO_PIPELINE_CACHE=1: none */
    edge_opt.no_pipeline_cache = true;
    REQUIRE(vk_init(&vk, &e));
    CHECK(vk.pcache == 0);
    CHECK(tpc_build_one(&vk));
    vk_shutdown(&vk);
    char cmd[600];
    fmt_buf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    arena_free(&a);
}

/* A vk_init that fails after making the instance (a device index past the last) says which index and
   how many devices there are, and leaves nothing behind: the instance and the loader are released
   and the Vk is zero, as after vk_shutdown. */
TEST(vk_init_failure_releases_what_it_made) {
    test_vk();                                      /* the suite's device stays usable afterwards */
    const char *saved = edge_opt.device;
    edge_opt.device = "99";
    Vk v; Err e;
    memset(&v, 0xab, sizeof v);
    bool ok = vk_init(&v, &e);
    edge_opt.device = saved;
    CHECK(!ok);
    CHECKF(e.code == EXIT_DEVICE && strstr(e.msg, "EDGE_DEVICE=99: no such device"), "%d %s", e.code, e.msg);
    static const Vk zero;
    CHECKF(!memcmp(&v, &zero, sizeof v), "vk_init left instance %p, library %p behind", (void *)v.instance, v.lib);
    CHECK(test_vk()->dev != 0);
}
