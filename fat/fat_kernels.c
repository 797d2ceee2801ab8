/* fat_kernels.c — the kernel and numeric-trap checks of `edge fat` (see fat.h).

   Why: drivers on Mali and Adreno have miscompiled exact shader bytes; the only defence is
   to run every shipped kernel variant on the board and compare it with a CPU reference.
   Each variant of config/kernels.def runs through its op_* wrapper (the exact path the
   forward pass takes) at the shapes of config/models.def, on seeded random inputs; the
   reference is plain f64 C written here (dequantization: dequant_row, models/quant.c).

   Error measure: |got - want| / natural magnitude (the size of the terms that make up the
   result: sum|w*x| for dot products, |a|+|b| for sums, the cap for softcap), against a
   per-kernel tolerance: f32 outputs 1e-5 (get_rows 1e-6, softcap 1e-6 of the cap), f16
   outputs or f16 inputs 1e-3; ids and top-k values exactly. Any NaN/Inf from finite
   inputs fails. Measured on lavapipe: f32 paths <= 4e-7, f16 paths <= 2.5e-4.

   Test-only fault injector: EDGE_FAT_PERTURB=KERNEL moves one element of that kernel's
   downloaded result by 8x its tolerance inside fat_cmp, right before the comparison: the
   path a real miscompile takes.

   API (fat.h): fat_kernel_checks(f), fat_trap_checks(f). */

/* ---- seeded random numbers (splitmix64) ----------------------------------------------- */
static u64 fat_rs;
static void fat_seed(u64 s) { fat_rs = s * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }
static u32 fat_u32(void) {
    u64 z = (fat_rs += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (u32)((z ^ (z >> 31)) >> 32);
}
static f32 fat_unif(void) { return (f32)(fat_u32() >> 8) * (1.0f / 16777216.0f); }      /* [0, 1) */
static f32 fat_normal(void) {
    f32 u = fat_unif() + 1e-7f, v = fat_unif();
    return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

/* ---- one kernel variant's running result ---------------------------------------------- */
typedef struct FatK {
    Fat            *f;
    const KernelDef *d;
    const char     *name;
    f64             worst, worst_err, worst_tol;   /* worst err/tol ratio, and its error and tolerance */
    u32             bad, cases;                    /* non-finite outputs, cases run */
    u64             hash;                          /* FNV-1a of every downloaded result (soak drift) */
    bool            perturbed;
    char            where[96];                     /* the case of the worst error */
} FatK;

static u64 fat_fnv(u64 h, const void *p, u64 n) {
    const u8 *b = p;
    for (u64 i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ull; }
    return h;
}

/* Compares one case: got (modifiable host copy of the device result) against want, with
   error |got - want| / mag and tolerance tol (0: exact). The fault injector acts here. */
static void fat_cmp(FatK *k, const char *cs, f32 *got, const f64 *want, const f64 *mag, u64 n, f64 tol) {
    k->hash = fat_fnv(k->hash, got, n * sizeof *got);
    k->cases++;
    if (k->cases == 1) k->worst_tol = tol;
    if (k->f->perturb && !strcmp(k->f->perturb, k->name) && !k->perturbed && n) {
        u64 i = n / 2;
        f64 dlt = 8 * tol * mag[i];
        if (dlt == 0) dlt = 1;
        f32 v = (f32)((f64)got[i] + dlt);
        got[i] = v == got[i] ? nextafterf(v, INFINITY) : v;
        k->perturbed = true;
    }
    for (u64 i = 0; i < n; i++) {
        if (!isfinite(got[i])) { k->bad++; if (!k->where[0]) fmt_buf(k->where, sizeof k->where, "%s: NaN/Inf at %llu", cs, (unsigned long long)i); continue; }
        f64 err = fabs((f64)got[i] - want[i]) / mag[i];
        f64 r = tol > 0 ? err / tol : (err > 0 ? 1e300 : 0);
        if (r > k->worst) { k->worst = r; k->worst_err = err; k->worst_tol = tol; fmt_buf(k->where, sizeof k->where, "%s", cs); }
    }
}

/* ---- device helpers --------------------------------------------------------------------- */
static u64 fat_tbytes(DType t, u64 n) { return align_up(dtype_bytes(t, n), 4) + 256; }

static void fat_round(DType t, f32 *x, u64 n) { if (t == DT_F16) for (u64 i = 0; i < n; i++) x[i] = f32_from_f16(f16_from_f32(x[i])); }
/* what the *_q kernels compute with: each block of 32 as q max|x| / 127, q = round(127 x / max|x|)
   (as the kernel rounds: x (1 / max) clamped to [-1, 1], times 127, rounded to even) */
static void fat_q8_blocks(f32 *x, u64 n, u64 blk) {
    for (u64 b = 0; b + blk <= n; b += blk) {
        f32 m = 0;
        for (u64 i = b; i < b + blk; i++) m = MAX(m, fabsf(x[i]));
        f32 inv = m == 0 ? 0.0f : 1.0f / m, d = m / 127.0f;
        for (u64 i = b; i < b + blk; i++) { volatile f32 v = x[i] * inv; v = MAX(-1.0f, MIN(1.0f, v)); volatile f32 q = rintf(v * 127.0f); x[i] = q * d; }
    }
}
static void fat_q8(f32 *x, u64 n) { fat_q8_blocks(x, n, 32); }
/* what matmul_q computes with: each 16 as q max|x| / 127, q = round(x (127 / max|x|)), ties to even */
static void fat_q8_tile(f32 *x, u64 n) {
    for (u64 b = 0; b + 16 <= n; b += 16) {
        f32 m = 0;
        for (u64 i = b; i < b + 16; i++) m = MAX(m, fabsf(x[i]));
        f32 inv = m == 0 ? 0.0f : 127.0f / m, d = m / 127.0f;
        for (u64 i = b; i < b + 16; i++) { volatile f32 v = x[i] * inv; x[i] = rintf(v) * d; }
    }
}

static void fat_up(Vk *vk, const Tensor *t, const f32 *src) {
    if (t->dtype != DT_F16) { vk_upload(vk, t, src); return; }
    u16 *h = malloc(t->nelem * 2);
    for (u64 i = 0; i < t->nelem; i++) h[i] = f16_from_f32(src[i]);
    vk_upload(vk, t, h); free(h);
}

static void fat_down(Vk *vk, const Tensor *t, f32 *dst) {
    if (t->dtype == DT_F32) { vk_download(vk, t, dst); return; }
    if (t->dtype == DT_U32) { u32 *u = malloc(t->nelem * 4); vk_download(vk, t, u); for (u64 i = 0; i < t->nelem; i++) dst[i] = (f32)u[i]; free(u); return; }
    u16 *h = malloc(t->nelem * 2);
    vk_download(vk, t, h);
    for (u64 i = 0; i < t->nelem; i++) dst[i] = f32_from_f16(h[i]);
    free(h);
}

/* A q8_0 KV cache (kernels/common/kvq8.wgsl's rows of width = op_kv_width quants, then the f16 scales)
   from rows of kvd values through the CPU twin (quant_q8_0_block), and back to values (q d); padding
   (a kv_dim of 32 (mod 64): one block) is zeros. */
static void fat_q8_pack(const f32 *x, u64 kvd, u64 width, u64 rows, u8 *b) {
    u64 rb = dtype_bytes(DT_Q8_0, width);
    memset(b, 0, rb * rows);
    for (u64 r = 0; r < rows; r++)
        for (u64 k = 0; k < kvd / 32; k++) {
            u16 d; quant_q8_0_block(x + r * kvd + 32 * k, &d, (i8 *)(b + r * rb + 32 * k));
            b[r * rb + width + 2 * k] = (u8)d; b[r * rb + width + 2 * k + 1] = (u8)(d >> 8);
        }
}
static void fat_q8_unpack(const u8 *b, u64 kvd, u64 width, u64 rows, f32 *x) {
    u64 rb = dtype_bytes(DT_Q8_0, width);
    for (u64 r = 0; r < rows; r++)
        for (u64 c = 0; c < kvd; c++) {
            u64 k = c / 32;
            u16 d = (u16)(b[r * rb + width + 2 * k] | b[r * rb + width + 2 * k + 1] << 8);
            x[r * kvd + c] = (f32)(i8)b[r * rb + c] * f32_from_f16(d);
        }
}
/* host values -> the q8_0 round trip the cache applies (what a reference computes with) */
static void fat_q8_round(f32 *x, u64 kvd, u64 rows) {
    u64 w = op_kv_width(DT_Q8_0, kvd);
    u8 *b = malloc(dtype_bytes(DT_Q8_0, w * rows));
    fat_q8_pack(x, kvd, w, rows, b); fat_q8_unpack(b, kvd, w, rows, x);
    free(b);
}

/* kvd: the values per row of a q8_0 cache tensor (rows of op_kv_width elements); unused otherwise */
static void fat_up_kv(Vk *vk, const Tensor *t, const f32 *src, u64 kvd) {
    if (t->dtype == DT_Q8_0) {
        u64 rows = t->nelem / t->ne[0];
        u8 *b = malloc(t->nbytes);
        fat_q8_pack(src, kvd, t->ne[0], rows, b);
        vk_upload(vk, t, b); free(b); return;
    }
    fat_up(vk, t, src);
}
static void fat_down_kv(Vk *vk, const Tensor *t, f32 *dst, u64 kvd) {
    if (t->dtype == DT_Q8_0) {
        u8 *b = malloc(t->nbytes);
        vk_download(vk, t, b);
        fat_q8_unpack(b, kvd, t->ne[0], t->nelem / t->ne[0], dst); free(b); return;
    }
    fat_down(vk, t, dst);
}

static bool fat_arena(FatK *k, DevArena *a, u64 bytes) {
    Err e;
    if (vk_arena_init(&k->f->vk, a, "fat", bytes, &e)) return true;
    k->bad++; fmt_buf(k->where, sizeof k->where, "%s", e.msg);
    return false;
}

static u32 fat_ggml(DType t) { return dtype_info[t].role == DR_WEIGHT ? (u32)dtype_info[t].ggml : GGML_TYPE_F32; }

static void fat_put_f16(u8 *p, f32 v) { u16 h = f16_from_f32(v); p[0] = (u8)h; p[1] = (u8)(h >> 8); }
static f32  fat_scale(void) { f32 d = 1e-3f + 0.099f * fat_unif(); return fat_u32() & 1 ? -d : d; }

/* Random valid weight bytes: `rows` rows of k elements (block scales finite, 1e-3..1e-1). */
static void fat_weights(DType t, u64 rows, u64 k, u8 *b) {
    u64 n = rows * dtype_bytes(t, k);
    if (t == DT_F32 || t == DT_F16 || t == DT_BF16) {
        for (u64 i = 0; i < rows * k; i++) {
            f32 v = fat_normal() * 0.05f; u32 u; memcpy(&u, &v, 4);
            if (t == DT_F32) memcpy(b + 4 * i, &v, 4);
            else if (t == DT_F16) fat_put_f16(b + 2 * i, v);
            else { b[2 * i] = (u8)(u >> 16); b[2 * i + 1] = (u8)(u >> 24); }
        }
        return;
    }
    for (u64 i = 0; i + 4 <= n; i += 4) { u32 r = fat_u32(); memcpy(b + i, &r, 4); }
    for (u64 i = n & ~(u64)3; i < n; i++) b[i] = (u8)fat_u32();
    u32 bb = ggml_block_bytes(fat_ggml(t));
    for (u64 o = 0; o < n; o += bb)     /* the block's f16 scale fields (config/dtypes.def hf) */
        for (int f = 0; f < 2; f++) if (dtype_info[t].hf[f] >= 0) fat_put_f16(b + o + dtype_info[t].hf[f], fat_scale());
}

/* ---- matmul / matvec (every weight type, decode and prefill) --------------------------- */
/* Y = W . X against f64 products. split > 0: through op_matmul_split in `split` k slices (the
   matmul_split_* kernel of k->d, or for splitk_sum_* Q4_K weights with an output of its dtype),
   acc: Y starts random and the product is added to it. The matmul_cm_b kernels (key PH_DECODE) go
   through op_matmul_rows and op_matmul_split_begin / _end with rows, as a batched step's products. */
static void fat_matmul_mode(FatK *k, u64 M, u64 K, u64 T, f32 xs, u32 split, bool acc) {
    Vk *vk = &k->f->vk;
    const KernelDef *d = k->d;
    DType wt = d->wtype, at = d->atype, ot = d->otype;
    if (d->op == OP_SPLITK_SUM) { wt = DT_Q4_K; at = ot == DT_F16 ? DT_F16 : DT_F32; }
    DevArena a;
    /* + 128 tokens of room: matmul_cm binds X up to a whole tile of tokens */
    if (!fat_arena(k, &a, fat_tbytes(wt, M * K) + fat_tbytes(at, K * T) + fat_tbytes(ot, M * T) + (split ? fat_tbytes(DT_F32, split * M * T) : 0) + fat_tbytes(at, K * 128))) return;
    u64 nw[2] = { K, M }, nx[2] = { K, T }, ny[2] = { M, T }, np[1] = { split ? split * M * T : 1 };
    Tensor tw = vk_weight(&a, "W", wt, 2, nw), tx = vk_tensor(&a, "X", at, 2, nx), ty = vk_tensor(&a, "Y", ot, 2, ny);
    Tensor tp = split ? vk_tensor(&a, "partials", DT_F32, 1, np) : tw;
    u8 *wb = malloc(dtype_bytes(wt, M * K));
    f32 *x = malloc(K * T * 4), *y = malloc(M * T * 4), *row = malloc(K * 4), *y0 = calloc(M * T, 4);
    f64 *want = malloc(M * T * 8), *mag = malloc(M * T * 8);
    fat_seed(M * 31 + K * 7 + T + (u64)wt * 1000 + split);
    fat_weights(wt, M, K, wb);
    for (u64 i = 0; i < K * T; i++) { x[i] = fat_normal() * xs; if (at == DT_F16) x[i] = MAX(-60000.f, MIN(60000.f, x[i])); }
    fat_round(at, x, K * T);
    /* matmul_q: each 16 of a token's row as int8, here as the CPU twin rounds them. Its class (5e-4): a
       device's 1 / max|x| (a division: 2.5 ulp in Vulkan) can put a value on the neighbouring int8 step,
       max|x| / 127 of its 16 (measured 1.3-1.8e-4 at k = 512 on the H200 and lavapipe, 4e-8 without) */
    bool q8 = d->op == OP_MATMUL_Q8 || d->op == OP_MATMUL_Q8_SPLIT;
    if (acc) { for (u64 i = 0; i < M * T; i++) y0[i] = fat_normal() * 3; fat_up(vk, &ty, y0); }
    vk_upload(vk, &tw, wb); fat_up(vk, &tx, x);
    for (u64 t = 0; q8 && t < T; t++) fat_q8_tile(x + t * K, K);
    u64 n8 = op_q8t_products;
    bool rows = d->phase == PH_DECODE && (d->op == OP_MATMUL_CM || d->op == OP_MATMUL_CM_SPLIT);   /* matmul_cm_b: a batched step's */
    u64 used = 0; OpSplit sp;
    vk_begin(vk);
    if (!split && rows) op_matmul_rows(vk, &tw, &tx, &ty, acc);
    else if (!split && acc) op_matmul_acc(vk, d->phase, &tw, &tx, &ty);
    else if (!split) op_matmul(vk, d->phase, &tw, &tx, &ty);
    else if (rows && op_matmul_split_begin(vk, &tw, &tx, &ty, acc, &tp, &used, split, true, &sp)) { vk_barrier(vk); op_matmul_split_end(vk, &sp); }
    else if (rows || !op_matmul_split(vk, &tw, &tx, &ty, acc, &tp, split)) {
        k->bad++; fmt_buf(k->where, sizeof k->where, "M=%llu K=%llu T=%llu: the split product refused %u slices", (unsigned long long)M, (unsigned long long)K, (unsigned long long)T, split);
    }
    vk_submit_wait(vk);
    if ((op_q8t_products > n8) != q8) { k->bad++; fmt_buf(k->where, sizeof k->where, "matmul_q %s", q8 ? "did not run" : "ran in place of the f32 tiles"); }
    fat_down(vk, &ty, y);
    u64 rb = dtype_bytes(wt, K);
    f64 ymax = ot == DT_F16 ? 65504.0 : 3.4e38;
    for (u64 m = 0; m < M; m++) {
        dequant_row(fat_ggml(wt), wb + m * rb, row, K);
        for (u64 t = 0; t < T; t++) {
            f64 s = 0, sa = 0;
            for (u64 i = 0; i < K; i++) { f64 p = (f64)row[i] * x[t * K + i]; s += p; sa += fabs(p); }
            s += y0[t * M + m]; sa += fabs(y0[t * M + m]);
            want[t * M + m] = MAX(-ymax, MIN(ymax, s)); mag[t * M + m] = sa + 1e-30;
        }
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "M=%llu K=%llu T=%llu x*%g%s split %u", (unsigned long long)M, (unsigned long long)K, (unsigned long long)T, (f64)xs, acc ? " acc" : "", split);
    fat_cmp(k, cs, y, want, mag, M * T, ot == DT_F16 ? 1e-3 : q8 ? 5e-4 : at == DT_F16 ? 1e-3 : 1e-5);
    free(wb); free(x); free(y); free(row); free(want); free(mag); free(y0);
    vk_arena_free(&a);
}
static void fat_matmul(FatK *k, u64 M, u64 K, u64 T, f32 xs) { fat_matmul_mode(k, M, K, T, xs, 0, false); }

/* matvec_glu: act(gate . x) * (up . x) with gate and up stored back to back, against the f64
   products rounded to the output dtype (as the kernel does) and the f64 activation. */
static f64 fat_gelu(f64 x);
static f64 fat_silu(f64 x);
/* The *_norm entries' input: x (the f32 residual) becomes rmsnorm(x) * w rounded to the activation
   dtype, as rmsnorm.wgsl computes it; fills the norm weight w. */
static void fat_norm_input(DType at, f32 *x, f32 *w, u64 K, u64 rows, f32 eps) {   /* (x: rows of K, each normalized) */
    for (u64 i = 0; i < K; i++) w[i] = 1.0f + 0.2f * fat_normal();
    for (u64 r = 0; r < rows; r++, x += K) {
        f64 ss = 0;
        for (u64 i = 0; i < K; i++) ss += (f64)x[i] * x[i];
        f64 inv = 1.0 / sqrt(ss / (f64)K + eps);
        for (u64 i = 0; i < K; i++) x[i] = (f32)(x[i] * inv * w[i]);
        fat_round(at, x, K);
    }
}

static void fat_matmul_glu(FatK *k, u64 M, u64 K, f32 xs) {   /* xs: the input scale */
    Vk *vk = &k->f->vk;
    const KernelDef *d = k->d;
    DType wt = d->wtype, at = d->atype, ot = d->otype;
    /* res: Gemma's post-attention residual first, x' = x + rmsnorm(o) * pw, stored by the kernel */
    Op op = op_norm_narrow(d->op);
    bool res = op == OP_MATMUL_GLU_RES_NORM || op == OP_MATMUL_GLU_RES_NORM_Q8;
    bool norm = op == OP_MATMUL_GLU_NORM || op == OP_MATMUL_GLU_NORM_Q8 || op == OP_MATMUL_GLU_NORM_S8 || res;   /* x is the f32 residual, normalized in the kernel */
    DType xt = norm ? DT_F32 : at;
    u64 rb = dtype_bytes(wt, K);
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(wt, 2 * M * K) + fat_tbytes(xt, K) + 4 * fat_tbytes(DT_F32, K) + fat_tbytes(ot, M))) return;
    u64 nw[2] = { K, 2 * M }, nx[1] = { K }, ny[1] = { M };
    Tensor tw = vk_weight(&a, "gate_up", wt, 2, nw), tx = vk_tensor(&a, "x", xt, 1, nx), ty = vk_tensor(&a, "y", ot, 1, ny);
    Tensor tn = vk_tensor(&a, "norm", DT_F32, 1, nx);
    Tensor to = vk_tensor(&a, "o", DT_F32, 1, nx), tp = vk_tensor(&a, "post_norm", DT_F32, 1, nx), txo = vk_tensor(&a, "x_out", DT_F32, 1, nx);
    u8 *wb = malloc(2 * M * rb);
    f32 *x = malloc(K * 4), *y = malloc(M * 4), *row = malloc(K * 4), *nwv = malloc(K * 4), *o = malloc(K * 4), *pw = malloc(K * 4), *xo = malloc(K * 4);
    f64 *want = malloc(M * 2 * 8), *mag = malloc(M * 2 * 8), *want_x = malloc(K * 8), *mag_x = malloc(K * 8), gu[2], sa[2];
    fat_seed(M * 17 + K + (u64)wt * 333 + res);
    fat_weights(wt, 2 * M, K, wb);
    for (u64 i = 0; i < K; i++) x[i] = fat_normal() * 2 * xs;
    fat_round(xt, x, K);
    vk_upload(vk, &tw, wb); fat_up(vk, &tx, x);
    if (res) {      /* o at the residual's scale (1e20: its squares overflow f32 too) */
        f64 ss = 0;
        for (u64 i = 0; i < K; i++) { o[i] = fat_normal() * 3 * xs; pw[i] = 1.0f + 0.2f * fat_normal(); ss += (f64)o[i] * o[i]; }
        f64 inv = 1.0 / sqrt(ss / (f64)K + 1e-6);
        for (u64 i = 0; i < K; i++) {
            f64 r = (f64)o[i] * inv * pw[i];
            want_x[i] = (f64)x[i] + r; mag_x[i] = fabs((f64)x[i]) + fabs(r) + 1e-30;
            x[i] = (f32)want_x[i];      /* the norm below starts from x' */
        }
        fat_up(vk, &to, o); fat_up(vk, &tp, pw);
    }
    bool q8 = op == OP_MATMUL_GLU_NORM_Q8 || op == OP_MATMUL_GLU_RES_NORM_Q8 || op == OP_MATMUL_GLU_NORM_S8;   /* the normalized row (f32, not rounded to A) as int8 blocks */
    if (norm) { fat_norm_input(q8 ? DT_F32 : at, x, nwv, K, 1, 1e-6f); vk_upload(vk, &tn, nwv); }
    if (q8) fat_q8(x, K);
    f64 lim = ot == DT_F16 ? 65504.0 : 3.4028234663852886e38;
    for (int gelu = 0; gelu < 2; gelu++) {
        vk_begin(vk);
        if (res) op_matmul_glu_res_norm(vk, &tw, &tx, &to, &tp, &txo, &tn, 1e-6f, &ty, gelu);
        else if (norm) op_matmul_glu_norm(vk, &tw, &tx, &tn, 1e-6f, &ty, gelu); else op_matmul_glu(vk, &tw, &tx, &ty, gelu);
        vk_submit_wait(vk);
        fat_down(vk, &ty, y);
        if (res) {
            fat_down(vk, &txo, xo);
            char cx[96]; fmt_buf(cx, sizeof cx, "x' K=%llu", (unsigned long long)K);
            fat_cmp(k, cx, xo, want_x, mag_x, K, 1e-5);
        }
        for (u64 m = 0; m < M; m++) {
            for (int h = 0; h < 2; h++) {
                dequant_row(fat_ggml(wt), wb + (m + (u64)h * M) * rb, row, K);
                f64 s = 0, s1 = 0;
                for (u64 i = 0; i < K; i++) { s += (f64)row[i] * x[i]; s1 += fabs((f64)row[i] * x[i]); }
                s = MAX(-lim, MIN(lim, s));
                gu[h] = ot == DT_F16 ? f32_from_f16(f16_from_f32((f32)s)) : s; sa[h] = s1;
            }
            f64 act = gelu ? fat_gelu(gu[0]) : fat_silu(gu[0]);
            want[m] = MAX(-lim, MIN(lim, act * gu[1]));
            /* an error e in a product moves y by about |act'| |up| e (|act'| <= 1.13) or |act| e */
            mag[m] = 1.13 * fabs(gu[1]) * (sa[0] + fabs(gu[0])) + fabs(act) * (sa[1] + fabs(gu[1])) + 1e-30;
        }
        char cs[96]; fmt_buf(cs, sizeof cs, "M=%llu K=%llu %s", (unsigned long long)M, (unsigned long long)K, gelu ? "gelu" : "silu");
        fat_cmp(k, cs, y, want, mag, M, ot == DT_F16 ? 1e-3 : 1e-5);
    }
    free(wb); free(x); free(y); free(row); free(nwv); free(o); free(pw); free(xo); free(want); free(mag); free(want_x); free(mag_x);
    vk_arena_free(&a);
}

/* matvec_k_norm_q (the output norm + LM head on int8 activations): y (M) f32 = W . Q8(rmsnorm(x) * g),
   against the f64 product with the same int8 rounding of the normalized row (fat_q8), so only
   f32 rounding is left: 1e-4 of sum |w x| (a rounding step that flips one q costs ~1e-5 at K 2048) */
/* matvec_norm_q8 (the LM head: int8 rows) and matvec_norm (q/k/v of the q/k-norm models: the row
   rounded to the activation dtype) */
static void fat_matmul_norm(FatK *k, u64 M, u64 K, f32 xs) {
    Vk *vk = &k->f->vk;
    DType wt = k->d->wtype, at = k->d->atype;
    bool q8 = op_norm_narrow(k->d->op) == OP_MATMUL_NORM_Q8;
    const u64 T = 2;                     /* two rows: a batched decode step (edge run -np), a token each */
    u64 rb = dtype_bytes(wt, K);
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(wt, M * K) + fat_tbytes(DT_F32, K * T) + fat_tbytes(DT_F32, K) + fat_tbytes(DT_F32, M * T))) return;
    u64 nw[2] = { K, M }, nx[2] = { K, T }, nn[1] = { K }, ny[2] = { M, T };
    Tensor tw = vk_weight(&a, "w", wt, 2, nw), tx = vk_tensor(&a, "x", DT_F32, 2, nx), tn = vk_tensor(&a, "norm", DT_F32, 1, nn);
    Tensor ty = vk_tensor(&a, "y", DT_F32, 2, ny);
    u8 *wb = malloc(M * rb);
    f32 *x = malloc(K * T * 4), *y = malloc(M * T * 4), *row = malloc(K * 4), *nwv = malloc(K * 4);
    f64 *want = malloc(M * T * 8), *mag = malloc(M * T * 8);
    fat_seed(M * 29 + K + (u64)wt * 101);
    fat_weights(wt, M, K, wb);
    for (u64 i = 0; i < K * T; i++) x[i] = fat_normal() * 2 * xs * (i < K ? 1.0f : 0.5f);
    vk_upload(vk, &tw, wb); fat_up(vk, &tx, x);
    fat_norm_input(q8 ? DT_F32 : at, x, nwv, K, T, 1e-6f); vk_upload(vk, &tn, nwv);
    for (u64 t = 0; q8 && t < T; t++) fat_q8(x + t * K, K);
    vk_begin(vk);
    if (q8) op_matmul_norm(vk, &tw, &tx, &tn, 1e-6f, &ty);
    else op_matmul_normed(vk, &tw, &tx, &tn, 1e-6f, at, &ty);
    vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    for (u64 t = 0; t < T; t++) for (u64 m = 0; m < M; m++) {
        dequant_row(fat_ggml(wt), wb + m * rb, row, K);
        f64 sv = 0, s1 = 0;
        for (u64 i = 0; i < K; i++) { sv += (f64)row[i] * x[t * K + i]; s1 += fabs((f64)row[i] * x[t * K + i]); }
        want[t * M + m] = sv; mag[t * M + m] = s1 + 1e-30;
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "M=%llu K=%llu x~%g rows=%llu", (unsigned long long)M, (unsigned long long)K, (f64)xs, (unsigned long long)T);
    fat_cmp(k, cs, y, want, mag, M * T, q8 ? 1e-4 : at == DT_F16 ? 1e-3 : 1e-5);
    free(wb); free(x); free(y); free(row); free(nwv); free(want); free(mag);
    vk_arena_free(&a);
}

/* ---- get_rows (embedding lookup), including the 256000-row gemma table ---------------- */
static void fat_get_rows(FatK *k, u64 n, u64 rows, f32 scale) {
    Vk *vk = &k->f->vk;
    DType wt = k->d->wtype;
    const u64 T = 4;
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(wt, n * rows) + fat_tbytes(DT_U32, T) + fat_tbytes(DT_F32, n * T))) return;
    u64 ne[2] = { n, rows }, ni[1] = { T }, ny[2] = { n, T };
    Tensor te = vk_weight(&a, "E", wt, 2, ne), ti = vk_tensor(&a, "ids", DT_U32, 1, ni), ty = vk_tensor(&a, "y", DT_F32, 2, ny);
    u8 *wb = malloc(dtype_bytes(wt, n * rows));
    f32 *y = malloc(n * T * 4), *row = malloc(n * 4);
    f64 *want = malloc(n * T * 8), *mag = malloc(n * T * 8);
    fat_seed(n * 13 + rows + (u64)wt * 77);
    fat_weights(wt, rows, n, wb);
    u32 ids[4] = { (u32)rows - 1, 0, fat_u32() % (u32)rows, (u32)(rows / 2) };
    vk_upload(vk, &te, wb); vk_upload(vk, &ti, ids);
    vk_begin(vk); op_get_rows(vk, &te, &ti, &ty, scale); vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    u64 rb = dtype_bytes(wt, n);
    for (u64 t = 0; t < T; t++) {
        dequant_row(fat_ggml(wt), wb + ids[t] * rb, row, n);
        for (u64 i = 0; i < n; i++) { want[t * n + i] = (f64)row[i] * scale; mag[t * n + i] = fabs(want[t * n + i]) + 1e-30; }
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "n=%llu rows=%llu", (unsigned long long)n, (unsigned long long)rows);
    fat_cmp(k, cs, y, want, mag, n * T, 1e-6);
    free(wb); free(y); free(row); free(want); free(mag);
    vk_arena_free(&a);
}

/* ---- elementwise, rmsnorm, bias --------------------------------------------------------- */
static void fat_binary(FatK *k, u64 n) {
    Vk *vk = &k->f->vk;
    DevArena a;
    if (!fat_arena(k, &a, 3 * fat_tbytes(DT_F32, n))) return;
    u64 ne[1] = { n };
    Tensor ta = vk_tensor(&a, "a", DT_F32, 1, ne), tb = vk_tensor(&a, "b", DT_F32, 1, ne), ty = vk_tensor(&a, "y", DT_F32, 1, ne);
    f32 *x = malloc(n * 4), *z = malloc(n * 4), *y = malloc(n * 4);
    f64 *want = malloc(n * 8), *mag = malloc(n * 8);
    fat_seed(n + 5);
    for (u64 i = 0; i < n; i++) { x[i] = fat_normal() * (i % 7 ? 1.0f : 1e15f); z[i] = fat_normal(); }
    vk_upload(vk, &ta, x); vk_upload(vk, &tb, z);
    vk_begin(vk);
    if (k->d->op == OP_ADD) op_add(vk, &ta, &tb, &ty); else op_mul(vk, &ta, &tb, &ty);
    vk_submit_wait(vk);
    vk_download(vk, &ty, y);
    for (u64 i = 0; i < n; i++) {
        bool add = k->d->op == OP_ADD;
        want[i] = add ? (f64)x[i] + z[i] : (f64)x[i] * z[i];
        mag[i] = (add ? fabs(x[i]) + fabs(z[i]) : fabs((f64)x[i] * z[i])) + 1e-30;
    }
    fat_cmp(k, "n", y, want, mag, n, 1e-6);
    free(x); free(z); free(y); free(want); free(mag);
    vk_arena_free(&a);
}

static void fat_rmsnorm(FatK *k, u64 n, u64 rows) {
    Vk *vk = &k->f->vk;
    bool fused = k->d->op == OP_RMSNORM_ADD, twice = k->d->op == OP_RMSNORM_ADD_NORM;
    DType ot = k->d->otype;
    DevArena a;
    if (!fat_arena(k, &a, 3 * fat_tbytes(DT_F32, n * rows) + 2 * fat_tbytes(DT_F32, n) + fat_tbytes(ot, n * rows))) return;
    u64 nx[2] = { n, rows }, nw[1] = { n };
    Tensor tx = vk_tensor(&a, "x", DT_F32, 2, nx), tw = vk_tensor(&a, "w", DT_F32, 1, nw), ty = vk_tensor(&a, "y", ot, 2, nx);
    Tensor tr = vk_tensor(&a, "res", DT_F32, 2, nx), tw2 = vk_tensor(&a, "w2", DT_F32, 1, nw);
    f32 *x = malloc(n * rows * 4), *w = malloc(n * 4), *w2 = malloc(n * 4), *r0 = malloc(n * rows * 4), *y = malloc(n * rows * 4);
    f64 *want = malloc(n * rows * 8), *mag = malloc(n * rows * 8), *res = malloc(n * rows * 8);
    fat_seed(n * 3 + rows);
    const f32 sc[4] = { 1.0f, 1e-20f, 3e4f, 1e25f };
    for (u64 j = 0; j < rows; j++) for (u64 i = 0; i < n; i++) { x[j * n + i] = fat_normal() * sc[j % 4]; r0[j * n + i] = fat_normal() * 3 * (twice && j == rows - 1 ? 1e25f : 1.0f); }   /* twice: the last residual row's squares overflow f32 */
    for (u64 i = 0; i < n; i++) { w[i] = 1.0f + 0.1f * fat_normal(); w2[i] = 1.0f + 0.1f * fat_normal(); }
    vk_upload(vk, &tx, x); vk_upload(vk, &tw, w);
    if (fused) vk_upload(vk, &ty, r0);
    if (twice) { vk_upload(vk, &tr, r0); vk_upload(vk, &tw2, w2); }
    const f32 eps = 1e-6f;
    vk_begin(vk);
    if (fused) op_rmsnorm_add(vk, &tx, &tw, &ty, eps);
    else if (twice) op_rmsnorm_add_norm(vk, &tx, &tw, &tr, &tw2, &ty, eps);
    else op_rmsnorm(vk, &tx, &tw, &ty, eps);
    vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    for (u64 j = 0; j < rows; j++) {
        f64 ss = 0; for (u64 i = 0; i < n; i++) ss += (f64)x[j * n + i] * x[j * n + i];
        f64 inv = 1.0 / sqrt(ss / (f64)n + eps), ss2 = 0;
        for (u64 i = 0; i < n; i++) {
            f64 nv = x[j * n + i] * inv * w[i];
            res[j * n + i] = r0[j * n + i] + nv; ss2 += res[j * n + i] * res[j * n + i];
            want[j * n + i] = fused ? r0[j * n + i] + nv : nv;
            mag[j * n + i] = fused ? fabs(r0[j * n + i]) + fabs(nv) + 1e-30 : fabs(nv) + (ot == DT_F16 ? 1e-4 : 1e-30);
        }
        if (!twice) continue;
        /* the second norm of the updated residual: its rounding to f32 counts as an input error */
        f64 inv2 = 1.0 / sqrt(ss2 / (f64)n + eps);
        for (u64 i = 0; i < n; i++) {
            u64 e = j * n + i;
            want[e] = res[e] * inv2 * w2[i];
            mag[e] = (fabs(r0[e]) + fabs(x[e] * inv * w[i])) * inv2 * fabs(w2[i]) + (ot == DT_F16 ? 1e-4 : 1e-30);
        }
    }
    char cs[64]; fmt_buf(cs, sizeof cs, "n=%llu", (unsigned long long)n);
    fat_cmp(k, cs, y, want, mag, n * rows, ot == DT_F16 ? 1e-3 : 1e-5);
    if (twice) {                        /* the residual was updated too */
        f32 *r = malloc(n * rows * 4);
        vk_download(vk, &tr, r);
        for (u64 e = 0; e < n * rows; e++) { want[e] = res[e]; mag[e] = fabs(r0[e]) + fabs(res[e] - r0[e]) + 1e-30; }
        fmt_buf(cs, sizeof cs, "n=%llu residual", (unsigned long long)n);
        fat_cmp(k, cs, r, want, mag, n * rows, 1e-5);
        free(r);
    }
    free(x); free(w); free(w2); free(r0); free(y); free(want); free(mag); free(res);
    vk_arena_free(&a);
}

static void fat_bias(FatK *k, u64 n, u64 T) {
    Vk *vk = &k->f->vk;
    DType at = k->d->atype;
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(DT_F32, n) + fat_tbytes(at, n * T))) return;
    u64 nb[1] = { n }, ny[2] = { n, T };
    Tensor tb = vk_tensor(&a, "b", DT_F32, 1, nb), ty = vk_tensor(&a, "y", at, 2, ny);
    f32 *b = malloc(n * 4), *y0 = malloc(n * T * 4), *y = malloc(n * T * 4);
    f64 *want = malloc(n * T * 8), *mag = malloc(n * T * 8);
    fat_seed(n + T * 3);
    for (u64 i = 0; i < n; i++) b[i] = fat_normal();
    for (u64 i = 0; i < n * T; i++) y0[i] = fat_normal() * (i % 7 == 0 ? 1000.0f : 1.0f);
    fat_round(at, y0, n * T);
    vk_upload(vk, &tb, b); fat_up(vk, &ty, y0);
    vk_begin(vk); op_add_bias(vk, &tb, &ty); vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    for (u64 i = 0; i < n * T; i++) { want[i] = (f64)y0[i] + b[i % n]; mag[i] = fabs(y0[i]) + fabs(b[i % n]) + 1e-30; }
    fat_cmp(k, "bias", y, want, mag, n * T, at == DT_F16 ? 1e-3 : 1e-5);
    free(b); free(y0); free(y); free(want); free(mag);
    vk_arena_free(&a);
}

/* ---- rope and the KV store -------------------------------------------------------------- */
/* The f64 rotation of one head x (hd values) at position pos into want, with the error scale
   in mag: NORM pairs (2i, 2i+1), NEOX (i, i + n_rot/2), dims past n_rot unchanged. */
static void fat_rope_want(const f32 *x, u32 hd, u32 n_rot, bool neox, u32 pos, f32 base, const f32 *ff, f64 tol, f64 *want, f64 *mag) {
    for (u32 i = 0; i < hd / 2; i++) {
        u32 ia = 2 * i, ib = 2 * i + 1;
        f64 ra = x[ia], rb = x[ib], theta = 0;
        if (2 * i < n_rot) {
            if (neox) { ia = i; ib = i + n_rot / 2; }
            theta = (f64)pos * pow(base, -2.0 * i / n_rot) / ff[i];
            f64 c = cos(theta), s = sin(theta);
            ra = x[ia] * c - x[ib] * s; rb = x[ia] * s + x[ib] * c;
        }
        /* f32 angles: theta = p * exp2(-log2(base) * 2i/n_rot) carries the rounding of an
           exponent up to ~13 (about 5.5e-7 of theta) plus the product: allow 1e-6 * theta */
        f64 m = (fabs(x[ia]) + fabs(x[ib]) + 1e-30) * (tol + 1e-6 * theta) / tol;
        want[ia] = ra; want[ib] = rb; mag[ia] = mag[ib] = m;
    }
}

static void fat_rope(FatK *k, u32 hd, u32 n_rot, bool neox, u32 p0, f32 base) {
    Vk *vk = &k->f->vk;
    DType at = k->d->atype;
    const u32 nh = 2, T = 3;
    u64 n = (u64)hd * nh * T;
    DevArena a;
    if (!fat_arena(k, &a, 2 * fat_tbytes(at, n) + fat_tbytes(DT_U32, 2) + fat_tbytes(DT_F32, n_rot / 2))) return;
    u64 nx[3] = { hd, nh, T }, np[1] = { op_rows_words(T) }, nf[1] = { n_rot / 2 };
    Tensor tx = vk_tensor(&a, "x", at, 3, nx), ty = vk_tensor(&a, "y", at, 3, nx), tp = vk_tensor(&a, "pos", DT_U32, 1, np);
    Tensor tf = vk_tensor(&a, "ff", DT_F32, 1, nf);
    f32 *x = malloc(n * 4), *y = malloc(n * 4), ff[EDGE_MAX_HEAD_DIM / 2];
    f64 *want = malloc(n * 8), *mag = malloc(n * 8);
    fat_seed(hd * 5 + p0 + (neox ? 1 : 0));
    for (u32 i = 0; i < n_rot / 2; i++) ff[i] = 1.0f + (f32)(i % 8);      /* Llama 3 style frequency factors */
    vk_upload(vk, &tf, ff);
    for (u64 i = 0; i < n; i++) x[i] = fat_normal() * (i % 11 == 0 ? 100.0f : 1.0f);
    fat_round(at, x, n);
    fat_up(vk, &tx, x); op_rows_upload(vk, &tp, T, p0, 0);
    vk_begin(vk); op_rope(vk, &tx, &tp, &tf, &ty, n_rot, base, 1.0f, neox); vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    f64 tol = at == DT_F16 ? 1e-3 : 1e-5;
    for (u32 t = 0; t < T; t++) for (u32 h = 0; h < nh; h++) {
        u64 o = ((u64)t * nh + h) * hd;
        fat_rope_want(x + o, hd, n_rot, neox, p0 + t, base, ff, tol, want + o, mag + o);
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "hd=%u rot=%u %s p0=%u", hd, n_rot, neox ? "neox" : "norm", p0);
    fat_cmp(k, cs, y, want, mag, n, tol);
    free(x); free(y); free(want); free(mag);
    vk_arena_free(&a);
}

/* rope_kv: RoPE of q into qo, RoPE of k and v into cache rows p0..p0+T-1 (rows past the
   context dropped), against the same f64 rotation as fat_rope and the stored values.
   rope_kv_norm: f32 q, k and v, each head of q and k first normalized (f64 RMSNorm, eps 1e-6) by its weight. */
static void fat_rope_kv(FatK *k, u32 hd, u32 n_rot, bool neox, u32 nh, u32 nkv) {
    Vk *vk = &k->f->vk;
    DType at = k->d->atype, ct = k->d->otype;
    bool norm = k->d->op == OP_ROPE_KV_NORM;
    DType xt = norm ? DT_F32 : at;                      /* q and k */
    const u32 T = 3, n_ctx = 40, p0 = 38;               /* the last token's position lies past the cache's rows: it wraps to row 0 (a ring) */
    const f32 base = 500000.0f;
    u64 nq = (u64)hd * nh * T, kvd = (u64)hd * nkv, nk = kvd * T, ncache = kvd * n_ctx, nall = nq + 2 * ncache;
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(xt, nq) + fat_tbytes(at, nq) + 2 * fat_tbytes(xt, nk) + 2 * fat_tbytes(ct, ncache) + fat_tbytes(DT_U32, 2) + fat_tbytes(DT_F32, n_rot / 2) + 2 * fat_tbytes(DT_F32, hd))) return;
    u64 sq[3] = { hd, nh, T }, sk[3] = { hd, nkv, T }, sc[2] = { kvd, n_ctx }, np[1] = { op_rows_words(T) }, nf[1] = { n_rot / 2 };
    Tensor tq = vk_tensor(&a, "q", xt, 3, sq), tk = vk_tensor(&a, "k", xt, 3, sk), tv = vk_tensor(&a, "v", xt, 3, sk);
    Tensor tqo = vk_tensor(&a, "qo", at, 3, sq), tkc = vk_tensor(&a, "kc", ct, 2, sc), tvc = vk_tensor(&a, "vc", ct, 2, sc);
    Tensor tp = vk_tensor(&a, "pos", DT_U32, 1, np), tf = vk_tensor(&a, "ff", DT_F32, 1, nf);
    u64 nw[1] = { hd };
    Tensor tqn = vk_tensor(&a, "q_norm", DT_F32, 1, nw), tkn = vk_tensor(&a, "k_norm", DT_F32, 1, nw);
    f32 *q = malloc(nq * 4), *kk = malloc(nk * 4), *v = malloc(nk * 4), *c0 = malloc(ncache * 4), *got = malloc(nall * 4), ff[EDGE_MAX_HEAD_DIM / 2];
    f32 wn[2][EDGE_MAX_HEAD_DIM], xn[EDGE_MAX_HEAD_DIM];
    f64 *want = malloc(nall * 8), *mag = malloc(nall * 8);
    fat_seed(hd * 3 + nh + (neox ? 1 : 0));
    for (u32 i = 0; i < n_rot / 2; i++) ff[i] = 1.0f + (f32)(i % 8);
    for (u64 i = 0; i < nq; i++) q[i] = fat_normal() * (i % 11 == 0 ? 100.0f : 1.0f);
    for (u64 i = 0; i < nk; i++) { kk[i] = fat_normal(); v[i] = fat_normal() * 10; }
    for (u64 i = 0; i < ncache; i++) c0[i] = 7.0f;
    for (u32 i = 0; i < 2 * hd; i++) wn[i / hd][i % hd] = 0.5f + fat_unif();
    fat_round(xt, q, nq); fat_round(xt, kk, nk); fat_round(xt, v, nk);
    fat_up(vk, &tq, q); fat_up(vk, &tk, kk); fat_up(vk, &tv, v); fat_up(vk, &tkc, c0); fat_up(vk, &tvc, c0);
    op_rows_upload(vk, &tp, T, p0, 0); vk_upload(vk, &tf, ff); vk_upload(vk, &tqn, wn[0]); vk_upload(vk, &tkn, wn[1]);
    vk_begin(vk);
    if (norm) op_rope_kv_norm(vk, &tq, &tk, &tv, &tp, &tf, &tqo, &tkc, &tvc, &tqn, &tkn, 1e-6f, n_rot, base, 1.0f, neox, 0, 0);
    else op_rope_kv(vk, &tq, &tk, &tv, &tp, &tf, &tqo, &tkc, &tvc, n_rot, base, 1.0f, neox, 0, 0, 0, 0, 0);
    vk_submit_wait(vk);
    fat_down(vk, &tqo, got); fat_down(vk, &tkc, got + nq); fat_down(vk, &tvc, got + nq + ncache);
    f64 tol = at == DT_F16 || ct == DT_F16 ? 1e-3 : 1e-5;
    for (u64 i = 0; i < ncache; i++) { want[nq + i] = want[nq + ncache + i] = 7.0; mag[nq + i] = mag[nq + ncache + i] = 7.0; }
    for (int which = 0; which < 2; which++) {            /* 0: q -> qo, 1: k -> key cache rows */
        u32 heads = which ? nkv : nh;
        const f32 *x = which ? kk : q;
        for (u32 t = 0; t < T; t++) for (u32 h = 0; h < heads; h++) {
            u64 o = ((u64)t * heads + h) * hd, dst = which ? nq + (u64)((p0 + t) % n_ctx) * kvd + (u64)h * hd : o;
            const f32 *xh = x + o;
            if (norm) {
                f64 ss = 0;
                for (u32 d = 0; d < hd; d++) ss += (f64)xh[d] * xh[d];
                for (u32 d = 0; d < hd; d++) xn[d] = (f32)(xh[d] / sqrt(ss / hd + 1e-6) * wn[which][d]);
                xh = xn;
            }
            fat_rope_want(xh, hd, n_rot, neox, p0 + t, base, ff, tol, want + dst, mag + dst);
        }
    }
    for (u32 t = 0; t < T; t++) for (u64 i = 0; i < kvd; i++) {
        u64 dst = nq + ncache + (u64)((p0 + t) % n_ctx) * kvd + i;
        want[dst] = v[(u64)t * kvd + i]; mag[dst] = fabs(v[(u64)t * kvd + i]) + 1e-30;
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "hd=%u rot=%u %s heads=%u/%u p0=%u", hd, n_rot, neox ? "neox" : "norm", nh, nkv, p0);
    fat_cmp(k, cs, got, want, mag, nall, tol);
    free(q); free(kk); free(v); free(c0); free(got); free(want); free(mag);
    vk_arena_free(&a);
}

/* matvec_k_rope: q|k|v rows of K, one token at p0 (< n_ctx), optional biases: q out, cache row p0 */
static void fat_matmul_rope(FatK *k, u32 hd, u32 n_rot, bool neox, u32 nh, u32 nkv, bool bias, u64 K) {
    Vk *vk = &k->f->vk;
    DType wt = k->d->wtype, at = k->d->atype, ct = k->d->otype;
    bool norm = op_norm_narrow(k->d->op) == OP_MATMUL_ROPE_NORM;    /* x is the f32 residual, normalized in the kernel */
    DType xt = norm ? DT_F32 : at;
    /* a batched decode step's rows (edge run -np): token t at position pos[t] of sequence slot[t], caches of
       2 slots of n_ctx rows (the last position wraps: a sliding-window ring) */
    enum { T = 3 };
    const u32 n_ctx = 24, n_seq = 2, pos[T] = { 21, 5, 25 }, slot[T] = { 0, 1, 0 };
    const f32 base = 10000.0f;
    u64 nq = (u64)hd * nh, kvd = (u64)hd * nkv, M = nq + 2 * kvd, ncache = kvd * n_ctx * n_seq, nall = nq * T + 2 * ncache, rb = dtype_bytes(wt, K);
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(wt, M * K) + fat_tbytes(xt, K * T) + fat_tbytes(DT_F32, K) + fat_tbytes(at, nq * T) + 2 * fat_tbytes(ct, ncache) +
                          fat_tbytes(DT_U32, op_rows_words(T)) + fat_tbytes(DT_F32, n_rot / 2) + fat_tbytes(DT_F32, nq) + 2 * fat_tbytes(DT_F32, kvd))) return;
    u64 sw[2] = { K, M }, sx[2] = { K, T }, sn[1] = { K }, sq[3] = { hd, nh, T }, sc[3] = { kvd, n_ctx, n_seq }, np[1] = { op_rows_words(T) },
        nf[1] = { n_rot / 2 }, nbq[1] = { nq }, nbk[1] = { kvd };
    Tensor tw = vk_weight(&a, "wqkv", wt, 2, sw), tx = vk_tensor(&a, "x", xt, 2, sx), tq = vk_tensor(&a, "qo", at, 3, sq);
    Tensor tn = vk_tensor(&a, "norm", DT_F32, 1, sn);
    Tensor tkc = vk_tensor(&a, "kc", ct, 3, sc), tvc = vk_tensor(&a, "vc", ct, 3, sc), tp = vk_tensor(&a, "pos", DT_U32, 1, np);
    Tensor tf = vk_tensor(&a, "ff", DT_F32, 1, nf), tbq = vk_tensor(&a, "bq", DT_F32, 1, nbq), tbk = vk_tensor(&a, "bk", DT_F32, 1, nbk),
           tbv = vk_tensor(&a, "bv", DT_F32, 1, nbk);
    u8 *wb = malloc(M * rb);
    f32 *x = malloc(K * T * 4), *row = malloc(K * 4), *val = malloc(M * T * 4), *b = malloc(M * 4), *c0 = malloc(ncache * 4), *got = malloc(nall * 4), ff[EDGE_MAX_HEAD_DIM / 2];
    f32 *nwv = malloc(K * 4);
    f64 *sa = malloc(M * T * 8), *want = malloc(nall * 8), *mag = malloc(nall * 8);
    fat_seed(hd * 7 + nh + K + (u64)wt * 31 + (bias ? 5 : 0));
    fat_weights(wt, M, K, wb);
    for (u64 i = 0; i < K * T; i++) x[i] = fat_normal() * (norm ? 50.0f : 1.0f);
    for (u64 i = 0; i < M; i++) b[i] = fat_normal();
    for (u32 i = 0; i < n_rot / 2; i++) ff[i] = 1.0f + (f32)(i % 3);
    for (u64 i = 0; i < ncache; i++) c0[i] = 7.0f;
    fat_round(xt, x, K * T);
    fat_up(vk, &tx, x);
    if (norm) { fat_norm_input(at, x, nwv, K, T, 1e-6f); vk_upload(vk, &tn, nwv); }
    f64 lim = at == DT_F16 ? 65504.0 : 3.4028234663852886e38;
    for (u32 t = 0; t < T; t++) for (u64 m = 0; m < M; m++) {   /* the projection rounded to A, then the bias rounded to A */
        dequant_row(fat_ggml(wt), wb + m * rb, row, K);
        f64 s = 0, s1 = 0;
        for (u64 i = 0; i < K; i++) { s += (f64)row[i] * x[t * K + i]; s1 += fabs((f64)row[i] * x[t * K + i]); }
        f32 *vm = val + t * M + m;
        *vm = (f32)MAX(-lim, MIN(lim, s)); fat_round(at, vm, 1);
        if (bias) { *vm = (f32)MAX(-lim, MIN(lim, (f64)*vm + b[m])); fat_round(at, vm, 1); }
        sa[t * M + m] = s1;
    }
    u32 rt[2 + 2 * T];                    /* the rows table (ops.h) */
    rt[0] = T; rt[1] = 0;
    for (u32 t = 0; t < T; t++) { rt[2 + 2 * t] = pos[t]; rt[3 + 2 * t] = slot[t]; }
    vk_upload(vk, &tw, wb); fat_up(vk, &tkc, c0); fat_up(vk, &tvc, c0);
    vk_upload(vk, &tp, rt); vk_upload(vk, &tf, ff); vk_upload(vk, &tbq, b); vk_upload(vk, &tbk, b + nq); vk_upload(vk, &tbv, b + nq + kvd);
    vk_begin(vk);
    op_matmul_rope(vk, &tw, &tx, norm ? &tn : 0, 1e-6f, &tp, &tf, &tq, &tkc, &tvc, nh, nkv, n_rot, base, 1.0f, neox,
                   bias ? &tbq : 0, bias ? &tbk : 0, bias ? &tbv : 0, 0);
    vk_submit_wait(vk);
    fat_down(vk, &tq, got); fat_down(vk, &tkc, got + nq * T); fat_down(vk, &tvc, got + nq * T + ncache);
    f64 tol = at == DT_F16 || ct == DT_F16 ? 1e-3 : 1e-5;
    for (u64 i = 0; i < 2 * ncache; i++) { want[nq * T + i] = 7.0; mag[nq * T + i] = 7.0; }
    for (u32 t = 0; t < T; t++) {
        u64 crow = (u64)slot[t] * n_ctx + pos[t] % n_ctx;
        const f32 *vt = val + t * M; const f64 *st = sa + t * M;
        for (u32 h = 0; h < nh + nkv; h++) {   /* q heads into row t of qo, then k heads into the token's cache row */
            u64 src = (u64)h * hd, dst = h < nh ? t * nq + src : nq * T + crow * kvd + (src - nq);
            fat_rope_want(vt + src, hd, n_rot, neox, pos[t], base, ff, tol, want + dst, mag + dst);
            for (u32 i = 0; i < hd; i++) mag[dst + i] += 2 * (st[src + i] + (bias ? fabs(b[src + i]) : 0));   /* the product's own error */
        }
        for (u64 i = 0; i < kvd; i++) {
            u64 dst = nq * T + ncache + crow * kvd + i;
            want[dst] = vt[nq + kvd + i]; mag[dst] = fabs(vt[nq + kvd + i]) + st[nq + kvd + i] + 1e-30;
        }
    }
    for (u64 i = nq * T; i < nall; i++) if (ct == DT_F16) want[i] = f32_from_f16(f16_from_f32((f32)want[i]));
    char cs[96]; fmt_buf(cs, sizeof cs, "hd=%u rot=%u %s heads=%u/%u K=%llu%s rows=%u", hd, n_rot, neox ? "neox" : "norm", nh, nkv,
                         (unsigned long long)K, bias ? " bias" : "", (u32)T);
    fat_cmp(k, cs, got, want, mag, nall, tol);
    free(wb); free(x); free(row); free(val); free(b); free(c0); free(got); free(sa); free(want); free(mag); free(nwv);
    vk_arena_free(&a);
}

/* kv_store: rows t of k into cache rows p0 + t of a 16-row cache (the others keep their 7s); f32 and f16
   caches within their rounding, a q8_0 cache exactly as the CPU twin quantizes each block (quant_q8_0_block:
   every quant and scale, compared as their values q d, tolerance 0). */
static void fat_kv_store(FatK *k, u32 kvd) {
    Vk *vk = &k->f->vk;
    DType at = k->d->atype, ct = k->d->otype;
    const u32 T = 3, n_ctx = 16, p0 = 5;
    u64 nc = (u64)kvd * n_ctx, w = op_kv_width(ct, kvd);
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(at, (u64)kvd * T) + fat_tbytes(ct, w * n_ctx) + fat_tbytes(DT_U32, 2))) return;
    u64 nk[2] = { kvd, T }, shc[2] = { w, n_ctx }, np[1] = { op_rows_words(T) };
    Tensor tk = vk_tensor(&a, "k", at, 2, nk), tc = vk_tensor(&a, "cache", ct, 2, shc), tp = vk_tensor(&a, "pos", DT_U32, 1, np);
    f32 *x = malloc((u64)kvd * T * 4), *c0 = malloc(nc * 4), *c = malloc(nc * 4), *wv = malloc(nc * 4);
    f64 *want = malloc(nc * 8), *mag = malloc(nc * 8);
    fat_seed(kvd + 17);
    for (u64 i = 0; i < (u64)kvd * T; i++) x[i] = fat_normal() * (i % 97 == 0 ? 1e-4f : 10.0f);   /* (some blocks with f16-subnormal scales) */
    for (u64 i = 0; i < 32 && ct == DT_Q8_0; i++) x[kvd + i] = 0;                            /* a block of zeros: d = 0 */
    for (u64 i = 0; i < 32 && ct == DT_Q8_0; i++) x[2 * kvd + i] = i ? (f32)((i32)(i % 9) - 4) + 0.5f : 127.0f;   /* d = 1: exact halves, away from zero */
    for (u64 i = 0; i < nc; i++) c0[i] = 7.0f;
    fat_round(at, x, (u64)kvd * T);
    fat_up(vk, &tk, x); fat_up_kv(vk, &tc, c0, kvd); op_rows_upload(vk, &tp, T, p0, 0);
    vk_begin(vk); op_kv_store(vk, &tk, &tp, &tc); vk_submit_wait(vk);
    fat_down_kv(vk, &tc, c, kvd);
    for (u64 j = 0; j < n_ctx; j++) for (u64 i = 0; i < kvd; i++) wv[j * kvd + i] = j >= p0 && j < p0 + T ? x[(j - p0) * kvd + i] : 7.0f;
    if (ct == DT_F16) fat_round(ct, wv, nc);
    if (ct == DT_Q8_0) fat_q8_round(wv, kvd, n_ctx);
    for (u64 i = 0; i < nc; i++) { want[i] = wv[i]; mag[i] = fabs(wv[i]) + 1e-30; }
    char cs[64]; fmt_buf(cs, sizeof cs, "kv_dim=%u", kvd);
    fat_cmp(k, cs, c, want, mag, nc, ct == DT_F16 ? 1e-3 : ct == DT_Q8_0 ? 0 : 1e-7);
    free(x); free(c0); free(c); free(wv); free(want); free(mag);
    vk_arena_free(&a);
}

/* ---- attention (head dims and GQA ratios of the shipped configs) ------------------------ */
typedef struct FatAttn { u32 hd, nh, nkv, T, p0, n_ctx, window; f32 softcap, qscale; u32 spike; } FatAttn;   /* spike: below */

/* Runs one attention case; the reference (in want) only when want != NULL. vs gets the
   values' range check of the trap sweep: every output lies within the attended v's. */
/* The activation and cache dtypes a kernel is checked with: attention and attn_split are keyed
   (cache, act, out); attn_merge (f32 partials, f32, act) runs after the split of the same act. */
static void fat_attn_types(const KernelDef *d, DType *at, DType *ct) {
    if (d->op == OP_ATTN_MERGE) { *at = *ct = d->otype; return; }
    *at = d->atype; *ct = d->wtype;
}

static bool fat_attention_run(Fat *f, const KernelDef *d, const FatAttn *c, const f32 *qin, f32 *o, f32 *kc, f32 *vc, char *err, int errn) {
    Vk *vk = &f->vk;
    DType at, ct; fat_attn_types(d, &at, &ct);
    bool shrt = d->op == OP_ATTN_SHORT || d->op == OP_ATTN_SHORT_N;
    bool split = d->op == OP_ATTN_SPLIT || d->op == OP_ATTN_MERGE || shrt;     /* op_attention_split */
    u64 kvd = (u64)c->hd * c->nkv, nq = (u64)c->hd * c->nh * c->T, nc = op_kv_width(ct, kvd) * c->n_ctx, ns = (u64)c->n_ctx * c->nh * c->T;
    DevArena a; Err e;
    u64 npart = (u64)op_attn_part_row(c->hd) * op_attn_chunks(c->n_ctx) * c->nh * c->T;
    if (!vk_arena_init(vk, &a, "fat-attn", 2 * fat_tbytes(at, nq) + 2 * fat_tbytes(ct, nc) + fat_tbytes(DT_F32, ns) + fat_tbytes(DT_F32, npart) + 16 * 1024, &e)) {
        fmt_buf(err, errn, "%s", e.msg); return false;
    }
    u64 shq[3] = { c->hd, c->nh, c->T }, shc[2] = { op_kv_width(ct, kvd), c->n_ctx }, shs[3] = { c->n_ctx, c->nh, c->T }, shp[1] = { op_rows_words(c->T) };
    Tensor tq = vk_tensor(&a, "q", at, 3, shq), tkc = vk_tensor(&a, "kc", ct, 2, shc), tvc = vk_tensor(&a, "vc", ct, 2, shc);
    Tensor tp = vk_tensor(&a, "pos", DT_U32, 1, shp), ts = vk_tensor(&a, "scores", DT_F32, 3, shs), to = vk_tensor(&a, "out", at, 3, shq);
    u64 shpart[4] = { op_attn_part_row(c->hd), op_attn_chunks(c->n_ctx), c->nh, c->T };
    Tensor tpart = vk_tensor(&a, "attn_part", DT_F32, 4, shpart);
    fat_up(vk, &tq, qin); fat_up_kv(vk, &tkc, kc, kvd); fat_up_kv(vk, &tvc, vc, kvd); op_rows_upload(vk, &tp, c->T, c->p0, 0);
    vk_begin(vk);
    bool cm = vk->caps.coopmat;                    /* attn_tile runs where there are no matrix units: so here too */
    if (op_is_attn_tile(d->op)) vk->caps.coopmat = false;
    if (d->op == OP_ATTN_FLASH || d->op == OP_ATTN_FLASH_W || op_is_attn_cm(d->op) || op_is_attn_tile(d->op))
        op_attention_flash_with(vk, d->op, &tq, &tkc, &tvc, &tp, &to, c->nh, c->nkv, 1.0f / sqrtf((f32)c->hd), c->softcap, c->window);
    else if (split) {                              /* attn_short where it fits, only when it is the kernel checked */
        op_attn_short_off = !shrt;
        op_attn_short_narrow = d->op == OP_ATTN_SHORT_N;
        op_attention_split(vk, &tq, &tkc, &tvc, &tp, &tpart, &to, c->nh, c->nkv, 1.0f / sqrtf((f32)c->hd), c->softcap, c->window, c->T == 1, 0);
        op_attn_short_off = op_attn_short_narrow = false;
    }
    else op_attention(vk, &tq, &tkc, &tvc, &tp, &ts, &to, c->nh, c->nkv, 1.0f / sqrtf((f32)c->hd), c->softcap, c->window);
    vk_submit_wait(vk);
    vk->caps.coopmat = cm;
    fat_down(vk, &to, o);
    vk_arena_free(&a);
    return true;
}

static void fat_attention(FatK *k, const FatAttn *c) {
    DType at, ct; fat_attn_types(k->d, &at, &ct);
    u64 kvd = (u64)c->hd * c->nkv, nq = (u64)c->hd * c->nh * c->T, nc = kvd * c->n_ctx;
    f32 *q = malloc(nq * 4), *kc = malloc(nc * 4), *vc = malloc(nc * 4), *o = malloc(nq * 4);
    u32 keys = c->p0 + c->T;                       /* key j in cache row j % n_ctx (a ring where keys > n_ctx) */
    f64 *want = malloc(nq * 8), *mag = malloc(nq * 8), *p = malloc((u64)keys * 8);
    fat_seed(c->hd * 101 + c->nh * 7 + c->nkv + c->T);
    for (u64 i = 0; i < nq; i++) q[i] = fat_normal() * c->qscale;
    for (u64 i = 0; i < nc; i++) { kc[i] = fat_normal(); vc[i] = fat_normal() * (i % 13 == 0 ? 50.0f : 1.0f); }
    /* spike: key row `spike` of every KV head is twice query 0 of the head's first query head, so query 0's
       maximum jumps far past its first keys' there (attn_cm's rescale of a nonzero output mid-prompt) */
    if (c->spike) for (u32 hk = 0; hk < c->nkv; hk++) for (u32 dd = 0; dd < c->hd; dd++)
        kc[(u64)c->spike * kvd + hk * c->hd + dd] = 2.0f * q[(u64)hk * (c->nh / c->nkv) * c->hd + dd];
    /* rows past the batch's keys hold NaN (a cache row no query attends may hold anything: stale rows of an
       earlier sequence, never-written memory); no kernel may read them into a result. (Not in a q8_0
       cache: the host quantizer would convert NaN to an integer.) */
    if (ct != DT_Q8_0) for (u64 i = (u64)(c->p0 + c->T) * kvd; i < nc; i++) kc[i] = vc[i] = NAN;
    fat_round(at, q, nq); fat_round(ct, kc, nc); fat_round(ct, vc, nc);
    if (ct == DT_Q8_0) { fat_q8_round(kc, kvd, c->n_ctx); fat_q8_round(vc, kvd, c->n_ctx); }   /* the reference reads the cache's values */
    char err[160];
    if (!fat_attention_run(k->f, k->d, c, q, o, kc, vc, err, sizeof err)) { k->bad++; fmt_buf(k->where, sizeof k->where, "%s", err); goto done; }
    f32 scale = 1.0f / sqrtf((f32)c->hd);
    f64 tol = at == DT_F16 ? 1e-3 : 1e-5;
    for (u32 t = 0; t < c->T; t++) for (u32 h = 0; h < c->nh; h++) {
        u32 qp = c->p0 + t, hk = h / (c->nh / c->nkv);
        u32 lo = c->window && qp + 1 > c->window ? qp + 1 - c->window : 0;
        const f32 *qr = q + ((u64)t * c->nh + h) * c->hd;
        f64 m = -INFINITY, smag = 0;
        for (u32 j = 0; j < keys; j++) {
            if (j > qp || j < lo) { p[j] = -INFINITY; continue; }
            f64 s = 0, sa = 0;
            for (u32 dd = 0; dd < c->hd; dd++) { f64 term = (f64)(f32)(qr[dd] * scale) * kc[(u64)(j % c->n_ctx) * kvd + hk * c->hd + dd]; s += term; sa += fabs(term); }
            smag = MAX(smag, sa);
            if (c->softcap > 0) s = c->softcap * tanh(s / c->softcap);
            p[j] = s; m = MAX(m, s);
        }
        f64 sum = 0;
        for (u32 j = 0; j < keys; j++) { p[j] = exp(p[j] - m); sum += p[j]; }
        for (u32 dd = 0; dd < c->hd; dd++) {
            f64 w = 0, mg = 0;
            for (u32 j = 0; j < keys; j++) {
                if (p[j] == 0) continue;          /* (masked: the rows past the keys hold NaN) */
                f64 v = vc[(u64)(j % c->n_ctx) * kvd + hk * c->hd + dd]; w += p[j] / sum * v; mg += p[j] / sum * fabs(v);
            }
            u64 i = ((u64)t * c->nh + h) * c->hd + dd;
            /* a score error of a few f32 ulps of sum|q k| moves the output by about as much (relative) */
            /* f16 outputs: below f16's normal range (6.1e-5) its steps are 2^-24 whatever the value (a q8_0
               cache's coarse values make some outputs ~1e-27, stored as 0) */
            want[i] = w; mag[i] = MAX((mg + 1e-30) * (tol + 4 * 6e-8 * smag) / tol, at == DT_F16 ? 0x1p-24 / tol : 0);
        }
    }
    char cs[96]; fmt_buf(cs, sizeof cs, "hd=%u heads=%u/%u T=%u p0=%u win=%u cap=%g", c->hd, c->nh, c->nkv, c->T, c->p0, c->window, (f64)c->softcap);
    fat_cmp(k, cs, o, want, mag, nq, tol);
done:
    free(q); free(kc); free(vc); free(o); free(want); free(mag); free(p);
}

/* ---- GLU, softcap, argmax, top-k -------------------------------------------------------- */
static f64 fat_gelu(f64 x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static f64 fat_silu(f64 x) { return x / (1 + exp(-x)); }

/* y = act(g) * u through op_glu; compares against the f64 formula (f16 outputs saturate). */
static void fat_glu_cmp(FatK *k, const char *cs, f32 *g, f32 *u, u64 n, bool gelu) {
    Vk *vk = &k->f->vk;
    DType at = k->d->atype;
    DevArena a;
    if (!fat_arena(k, &a, 3 * fat_tbytes(at, n))) return;
    u64 ne[1] = { n };
    Tensor tg = vk_tensor(&a, "gate", at, 1, ne), tu = vk_tensor(&a, "up", at, 1, ne), ty = vk_tensor(&a, "y", at, 1, ne);
    f32 *y = malloc(n * 4); f64 *want = malloc(n * 8), *mag = malloc(n * 8);
    fat_round(at, g, n); fat_round(at, u, n);
    fat_up(vk, &tg, g); fat_up(vk, &tu, u);
    vk_begin(vk); op_glu(vk, &tg, &tu, &ty, gelu); vk_submit_wait(vk);
    fat_down(vk, &ty, y);
    for (u64 i = 0; i < n; i++) {
        f64 w = (gelu ? fat_gelu(g[i]) : fat_silu(g[i])) * u[i];
        f64 lim = at == DT_F16 ? 65504.0 : 3.4028234663852886e38;     /* outputs saturate */
        w = MAX(-lim, MIN(lim, w));
        want[i] = w; mag[i] = fabs((f64)g[i] * u[i]) + (at == DT_F16 ? 1e-4 : 1e-30);
    }
    fat_cmp(k, cs, y, want, mag, n, at == DT_F16 ? 1e-3 : 1e-5);
    free(y); free(want); free(mag);
    vk_arena_free(&a);
}

static void fat_glu(FatK *k, u64 n) {
    DType at = k->d->atype;
    f32 *g = malloc(n * 4), *u = malloc(n * 4);
    for (int gelu = 0; gelu < 2; gelu++) {
        fat_seed(n + (u64)gelu);
        const f32 s32[6] = { 1, 5, 30, 1e4f, 1e15f, 1e30f }, s16[6] = { 1, 5, 30, 300, 3000, 1e4f };
        for (u64 i = 0; i < n; i++) { g[i] = fat_normal() * (at == DT_F16 ? s16 : s32)[i % 6]; u[i] = fat_normal(); }
        fat_glu_cmp(k, gelu ? "gelu" : "silu", g, u, n, gelu);
    }
    free(g); free(u);
}

static void fat_softcap_cmp(FatK *k, const char *cs, const f32 *x, u64 n, f32 cap) {
    Vk *vk = &k->f->vk;
    DevArena a;
    if (!fat_arena(k, &a, 2 * fat_tbytes(DT_F32, n))) return;
    u64 ne[1] = { n };
    Tensor tx = vk_tensor(&a, "x", DT_F32, 1, ne), ty = vk_tensor(&a, "y", DT_F32, 1, ne);
    f32 *y = malloc(n * 4); f64 *want = malloc(n * 8), *mag = malloc(n * 8);
    vk_upload(vk, &tx, x);
    vk_begin(vk); op_softcap(vk, &tx, &ty, cap); vk_submit_wait(vk);
    vk_download(vk, &ty, y);
    for (u64 i = 0; i < n; i++) { want[i] = cap * tanh((f64)x[i] / cap); mag[i] = cap; }
    fat_cmp(k, cs, y, want, mag, n, 1e-6);
    free(y); free(want); free(mag);
    vk_arena_free(&a);
}

static void fat_softcap(FatK *k, u64 n) {
    f32 *x = malloc(n * 4);
    fat_seed(n + 9);
    const f32 sc[5] = { 1, 30, 100, 1e4f, 1e30f };
    for (u64 i = 0; i < n; i++) x[i] = fat_normal() * sc[i % 5];
    x[0] = 3.4e38f; x[1] = -3.4e38f; x[2] = 0;
    fat_softcap_cmp(k, "logits n=256000", x, n, 30.0f);
    free(x);
}

/* argmax and top-k over rows of gemma's vocabulary: ids (and values) exactly. */
static void fat_select(FatK *k, u64 nv, u32 K) {
    Vk *vk = &k->f->vk;
    bool topk = k->d->op == OP_TOPK, split = k->d->op == OP_ARGMAX_PART || k->d->op == OP_ARGMAX_MERGE;
    bool check = k->d->op == OP_ARGMAX_CHECK || split;  /* argmax_part + argmax_merge: argmax_check split over G slices */
    u32 G = split ? op_argmax_slices(nv) : 1;
    const u64 rows = 2;
    if (!topk) K = 1;
    if (check) K = 2;                                   /* (id, NaN/Inf flag) per row */
    DevArena a;
    if (!fat_arena(k, &a, fat_tbytes(DT_F32, nv * rows) + 2 * fat_tbytes(DT_F32, (u64)K * rows) + fat_tbytes(DT_U32, 3 * (u64)G * rows))) return;
    u64 nl[2] = { nv, rows }, nk[2] = { K, rows }, np[2] = { 3 * (u64)G, rows };
    Tensor tl = vk_tensor(&a, "logits", DT_F32, 2, nl), ti = vk_tensor(&a, "ids", DT_U32, 2, nk), tv = vk_tensor(&a, "vals", DT_F32, 2, nk);
    Tensor tp = vk_tensor(&a, "argmax_part", DT_U32, 2, np);
    f32 *l = malloc(nv * rows * 4), *got = malloc((u64)K * rows * 2 * 4);
    f64 *want = malloc((u64)K * rows * 2 * 8), *mag = malloc((u64)K * rows * 2 * 8);
    fat_seed(nv + K);
    for (u64 i = 0; i < nv * rows; i++) l[i] = fat_normal() * 3;
    l[nv - 1] = 40; l[17] = 40; l[5000] = 40;                        /* row 0: ties, the lowest id wins */
    for (u64 i = 0; i < nv; i++) l[nv + i] = (f32)(fat_u32() % 50);  /* row 1: ties everywhere */
    vk_upload(vk, &tl, l);
    vk_begin(vk);
    if (topk) op_topk(vk, &tl, &ti, &tv, K); else if (check) op_argmax_check(vk, &tl, &ti, split ? &tp : 0); else op_argmax(vk, &tl, &ti);
    vk_submit_wait(vk);
    fat_down(vk, &ti, got);
    if (topk) fat_down(vk, &tv, got + (u64)K * rows);
    for (u64 r = 0; r < rows; r++) {
        const f32 *lr = l + r * nv;
        f32 pv = 0; u32 pi = ~0u;
        for (u32 kk = 0; kk < (check ? 1u : K); kk++) {               /* K passes of "best after the previous pick" */
            u32 bi = ~0u; f32 bv = -INFINITY;
            for (u32 i = 0; i < nv; i++) {
                f32 x = lr[i];
                if (kk > 0 && !(x < pv || (x == pv && i > pi))) continue;
                if (bi == ~0u || x > bv || (x == bv && i < bi)) { bv = x; bi = i; }
            }
            want[r * K + kk] = bi; want[(u64)K * rows + r * K + kk] = bv;
            pv = bv; pi = bi;
        }
        if (check) want[r * K + 1] = 0;                 /* finite rows: no flag */
    }
    for (u64 i = 0; i < (u64)K * rows * 2; i++) mag[i] = 1;
    char cs[64]; fmt_buf(cs, sizeof cs, "vocab=%llu k=%u", (unsigned long long)nv, K);
    fat_cmp(k, cs, got, want, mag, (u64)K * rows * (topk ? 2 : 1), 0);
    free(l); free(got); free(want); free(mag);
    vk_arena_free(&a);
}

/* ---- shapes of the shipped configs -------------------------------------------------------- */
static bool fat_is_fixture(const ModelEntry *m) { return !strncmp(m->name, "tiny-", 5); }

/* attn_tile would run for head_dim on this device were it without cooperative matrices */
static bool fat_tile_fits(Vk *vk, u32 head_dim) {
    bool cm = vk->caps.coopmat;
    vk->caps.coopmat = false;
    bool fits = op_attention_tile_fits(vk, head_dim, DT_F16, DT_F16);
    vk->caps.coopmat = cm;
    return fits;
}

static void fat_attention_cases(FatK *k) {
    u32 seen[MODEL_COUNT][3]; u32 ns = 0, long_hd[MODEL_COUNT], nl = 0;
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *m = &model_table[i];
        if (fat_is_fixture(m)) continue;
        bool dup = false;
        for (u32 s = 0; s < ns; s++) if (seen[s][0] == m->head_dim && seen[s][1] == m->n_head && seen[s][2] == m->n_head_kv) dup = true;
        if (dup) continue;
        seen[ns][0] = m->head_dim; seen[ns][1] = m->n_head; seen[ns][2] = m->n_head_kv; ns++;
        u32 win = m->swa_window && k->d->op != OP_ATTN_CM_H256 ? 7 : 0;   /* (attn_cm_h256: gemma's global layers) */
        FatAttn dec = { m->head_dim, m->n_head, m->n_head_kv, 1, 40, 48, win, m->attn_softcap, 1, 0 };
        bool split = k->d->op == OP_ATTN_SPLIT || k->d->op == OP_ATTN_MERGE, cm = op_is_attn_cm(k->d->op), tile = op_is_attn_tile(k->d->op);
        bool shrt = k->d->op == OP_ATTN_SHORT || k->d->op == OP_ATTN_SHORT_N;
        if (shrt) {                                /* decode steps over up to 128 keys: one, a ring, a whole 128, three rows */
            op_attn_short_narrow = k->d->op == OP_ATTN_SHORT_N;
            bool fits = op_attention_short_fits(&k->f->vk, m->head_dim, k->d->wtype, k->d->atype, 128);
            op_attn_short_narrow = false;
            if (!fits) continue;
            FatAttn c1 = { m->head_dim, m->n_head, m->n_head_kv, 1, 40, 48, win, m->attn_softcap, 1, 0 };
            FatAttn c2 = { m->head_dim, m->n_head, m->n_head_kv, 1, 127, 128, win ? 100 : 0, m->attn_softcap, 2, 0 };
            FatAttn c3 = { m->head_dim, m->n_head, m->n_head_kv, 1, 44, 45, win, m->attn_softcap, 3, 0 };
            FatAttn c4 = { m->head_dim, m->n_head, m->n_head_kv, 1, 130, 20, win ? 20 : 0, m->attn_softcap, 1, 0 };   /* a ring of 20 rows */
            fat_attention(k, &c1); fat_attention(k, &c2); fat_attention(k, &c3);
            if (win) fat_attention(k, &c4);
            continue;
        }
        FatAttn pre = { m->head_dim, m->n_head, m->n_head_kv, 5, 3, cm ? OP_ATTN_CM_ROWS : 16, win, m->attn_softcap, 2, 0 };
        bool flash = k->d->op == OP_ATTN_FLASH || k->d->op == OP_ATTN_FLASH_W || cm || tile;
        if (tile && (op_attention_tile_op(m->head_dim) != k->d->op || !fat_tile_fits(&k->f->vk, m->head_dim))) continue;
        if (cm && (op_attention_cm_op(m->head_dim, win) != k->d->op || !op_attention_cm_fits(&k->f->vk, m->head_dim, k->d->wtype, k->d->atype, win, OP_ATTN_CM_ROWS))) continue;
        if (split && !op_attention_split_fits(m->head_dim, 2048)) continue;
        if (flash && !cm && !tile && !op_attention_flash_fits(&k->f->vk, m->head_dim, k->d->wtype, k->d->atype)) continue;
        if (k->d->op == OP_ATTN_FLASH_W && op_attention_flash_kernel(&k->f->vk, m->head_dim, k->d->wtype, k->d->atype) != OP_ATTN_FLASH_W) continue;
        if (!flash) fat_attention(k, &dec);        /* attn_flash is a batch kernel */
        FatAttn dodd = { m->head_dim, m->n_head, m->n_head_kv, 1, 44, 45, win, m->attn_softcap, 1, 0 };   /* (an odd cache: above) */
        if (!flash) fat_attention(k, &dodd);
        /* the long contexts once per head size, window and softcap (their loops do not see the head counts) */
        u32 lkey = m->head_dim * 4 + (win ? 2 : 0) + (m->attn_softcap != 0), lseen = 0;
        for (u32 s = 0; s < nl; s++) lseen |= long_hd[s] == lkey;
        if (k->d->op == OP_ATTN_MERGE && (!lseen || k->f->full)) {   /* more than 256 key chunks: past its preloads */
            long_hd[nl++] = lkey;
            FatAttn mid = { m->head_dim, m->n_head, m->n_head_kv, 1, 8300, 8320, win ? 300 : 0, m->attn_softcap, 4, 0 };
            fat_attention(k, &mid);
            /* a long context at an early position: more chunks in the grid than attn_merge preloads
               before it knows the position, few up to the position */
            FatAttn early = { m->head_dim, m->n_head, m->n_head_kv, 1, 40, 4096, win, m->attn_softcap, 5, 0 };
            fat_attention(k, &early);
        }
        fat_attention(k, &pre);
        if (flash) {                               /* several query blocks and key chunks, a window across them */
            FatAttn blk = { m->head_dim, m->n_head, m->n_head_kv, 37, 30, 96, win ? 20 : 0, m->attn_softcap, 1, 0 };
            fat_attention(k, &blk);
            /* an odd context: attn_cm's chunks (16 rows, the last ending at the last key); a q8_0 cache
               of 34-word rows whose bytes are no multiple of 16 (its binding rounded up) */
            FatAttn odd = { m->head_dim, m->n_head, m->n_head_kv, 50, 27, 81, win ? 20 : 0, m->attn_softcap, 3, 0 };
            fat_attention(k, &odd);
            /* several of attn_cm's 64-key chunks, each query's running maximum moving between them (key 150
               made dominant for query 0: a rescale of a nonzero output in the third chunk) */
            FatAttn many = { m->head_dim, m->n_head, m->n_head_kv, 40, 200, 256, win ? 20 : 0, m->attn_softcap, 2, 150 };
            fat_attention(k, &many);
            /* a sliding layer's ring (window + batch - 1 rows, as the engine plans it): the batch's keys wrap it */
            FatAttn ring = { m->head_dim, m->n_head, m->n_head_kv, 64, 130, 20 + 64 - 1, 20, m->attn_softcap, 1, 0 };
            if (win) fat_attention(k, &ring);
        }
        if (k->f->full) { FatAttn lng = { m->head_dim, m->n_head, m->n_head_kv, 1, 2047, 2048, win ? 512 : 0, m->attn_softcap, 3, 0 }; fat_attention(k, &lng); }
    }
}

static void fat_rope_cases(FatK *k) {
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *m = &model_table[i];
        if (fat_is_fixture(m)) continue;
        bool dup = false;
        for (u32 j = 0; j < i; j++) if (!fat_is_fixture(&model_table[j]) && model_table[j].head_dim == m->head_dim &&
                                         model_table[j].rope_dim == m->rope_dim && model_table[j].arch == m->arch) dup = true;
        if (dup && !k->f->full) continue;
        u32 ctx = MIN(m->ctx, EDGE_FAT_CTX);
        fat_rope(k, m->head_dim, m->rope_dim, m->arch != ARCH_LLAMA, ctx - 3, m->rope_base);
    }
}

static void fat_matmul_cases(FatK *k) {
    const KernelDef *d = k->d;
    bool f32w = d->wtype == DT_F32;
    f32 big = d->atype == DT_F16 ? 2e4f : 1e15f;           /* large activations: no NaN/Inf, f16 saturates */
    if (d->phase == PH_DECODE) {
        fat_matmul(k, 4, 9216, 1, 1);                      /* gemma-2 n_ff: a long row */
        fat_matmul(k, 33, 2304, 1, 1);                     /* gemma-2 n_embd */
        fat_matmul(k, 9, 512, 1, big);
        fat_matmul(k, 33, 2304, 3, 1);                     /* a batched decode step's rows (edge run -np): the token in grid z */
        if (f32w && d->atype == DT_F32 && !k->f->full) fat_matmul(k, 256000, 32, 1, 1);   /* gemma vocab rows (grid y) */
    } else {
        fat_matmul(k, 70, 2304, 7, 1);
        fat_matmul(k, 9, 512, 7, big);
    }
    if (dtype_info[d->wtype].blk <= 32) fat_matmul(k, 29, 640, d->phase == PH_DECODE ? 1 : 9, 1);   /* gemma-3-270m's rows (not of 256) */
    if (!k->f->full) return;
    u32 seen[2 * MODEL_COUNT]; u32 ns = 0;
    for (u32 i = 0; i < MODEL_COUNT; i++) {
        const ModelEntry *m = &model_table[i];
        u32 ks[2] = { m->n_embd, m->n_ff };
        for (int j = 0; j < 2; j++) {
            bool dup = ks[j] % dtype_info[d->wtype].blk != 0;     /* rows of 640, 896, 1152 for the 32-element blocks */
            for (u32 s = 0; s < ns; s++) if (seen[s] == ks[j]) dup = true;
            if (dup) continue;
            seen[ns++] = ks[j];
            fat_matmul(k, d->phase == PH_DECODE ? 5 : 66, ks[j], d->phase == PH_DECODE ? 1 : 9, 1);
        }
    }
    if (d->phase == PH_DECODE) fat_matmul(k, 256000, MAX(dtype_info[d->wtype].blk, 32), 1, 1);   /* one block per row */
    else fat_matmul(k, 64, 2048, 64, 1);
}

/* The fused decode products (norm prologues, RoPE epilogue): residual rows of 300 and of 1e20 (whose
   squares overflow f32); the *_W ops (the *_norm_w entries) run for rows past 3,072 only: llama-3.1-8b's
   4,096 and qwen2.5-7b's 3,584. short_rows: rows of 640, 896, 1152 are whole blocks of the type. */
static void fat_fused_cases(FatK *k, bool short_rows) {
    Vk *vk = &k->f->vk;
    Op op = op_norm_narrow(k->d->op);
    bool wide = op != k->d->op, idot = vk->caps.idot;
    /* the f16-pair glu lanes also where the int8 lanes would run; the int8 kernels also where
       unaccelerated (vk_kernel_check passed) */
    op_matmul_q8_off = op == OP_MATMUL_GLU_NORM || op == OP_MATMUL_GLU_RES_NORM;
    op_matmul_s8_on = op == OP_MATMUL_GLU_NORM_S8;
    if (op == OP_MATMUL_GLU_NORM_Q8 || op == OP_MATMUL_GLU_RES_NORM_Q8 || op == OP_MATMUL_NORM_Q8) vk->caps.idot = true;
    switch (op) {
    case OP_MATMUL_GLU_NORM: case OP_MATMUL_GLU_NORM_Q8: case OP_MATMUL_GLU_RES_NORM: case OP_MATMUL_GLU_RES_NORM_Q8: case OP_MATMUL_GLU_NORM_S8:
        if (wide) { fat_matmul_glu(k, 40, 4096, 300); fat_matmul_glu(k, 19, 3584, 300); fat_matmul_glu(k, 5, 4096, 1e20f); break; }
        fat_matmul_glu(k, 37, 2304, 300); fat_matmul_glu(k, 300, 3072, 300); fat_matmul_glu(k, 5, 256, 1e20f);
        if (short_rows) fat_matmul_glu(k, 29, 1152, 300);   /* gemma-3-1b's rows (not of 256: a group lane's last unit is partial) */
        break;
    case OP_MATMUL_NORM: case OP_MATMUL_NORM_Q8:   /* qwen3-1.7b's q|k|v rows (2048 + 2 x 1024 of 2048); the LM head */
        if (wide) { fat_matmul_norm(k, 300, 4096, 300); fat_matmul_norm(k, 37, 3584, 1); fat_matmul_norm(k, 5, 4096, 1e20f); break; }
        fat_matmul_norm(k, 300, 2048, 300); fat_matmul_norm(k, 37, 3072, 1); fat_matmul_norm(k, 5, 256, 1e20f);
        if (short_rows && op == OP_MATMUL_NORM) fat_matmul_norm(k, 40, 1152, 1);   /* gemma-3-1b's rows */
        if (short_rows && op == OP_MATMUL_NORM_Q8) fat_matmul_norm(k, 37, 640, 1);  /* gemma-3-270m's */
        break;
    default:                                        /* llama (norm pairs), qwen (neox, biases), gemma (head 256) shapes, scaled down */
        if (wide) { fat_matmul_rope(k, 128, 128, false, 4, 2, false, 4096); fat_matmul_rope(k, 128, 128, true, 4, 2, true, 3584); break; }
        fat_matmul_rope(k, 64, 64, false, 8, 2, false, 2048); fat_matmul_rope(k, 128, 128, true, 4, 2, true, 1536);
        fat_matmul_rope(k, 256, 256, true, 2, 1, false, 2304); fat_matmul_rope(k, 64, 32, true, 4, 4, false, 256);
        if (short_rows) fat_matmul_rope(k, 64, 64, true, 4, 1, true, 896);   /* qwen2.5-0.5b's rows */
        break;
    }
    op_matmul_q8_off = op_matmul_s8_on = false; vk->caps.idot = idot;
}

/* ---- the kernel check: one line per variant --------------------------------------------- */
static void fat_kernel_one(Fat *f, i32 di) {
    const KernelDef *d = &kdefs[di];
    char name[64]; fmt_buf(name, sizeof name, "kernel.%s", d->kernel);
    FatCheck *c = fat_check_begin(f, name);
    i32 ki = vk_kernel_find(d->kernel);
    if (ki < 0) { fat_check_end(f, c, FAT_FAIL, "config/kernels.def names '%s', which is not embedded", d->kernel); return; }
    const KernelInfo *kin = &kernel_table[ki];
    if ((kin->cap_f16 && !f->vk.caps.f16_arith) || (kin->cap_s16 && !f->vk.caps.storage16)) {
        fat_check_end(f, c, FAT_SKIP, "needs f16 (shaderFloat16 + storageBuffer16BitAccess); this device uses the f32 path"); return;
    }
    Err ke;
    if (!vk_kernel_check(&f->vk.caps, kin, &ke)) { fat_check_end(f, c, FAT_SKIP, "%s", ke.msg); return; }
    if (kin->cap_sub_arith && !(f->vk.caps.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT)) {
        fat_check_end(f, c, FAT_SKIP, "needs subgroup arithmetic, which this device lacks (portable variant used)"); return;
    }
    FatK k = { .f = f, .d = d, .name = d->kernel, .hash = 0xcbf29ce484222325ull };
    bool short_rows = d->wtype < DT_COUNT && dtype_info[d->wtype].blk <= 32;   /* rows of 640, 896, 1152 are whole blocks */
    switch (d->op) {
    case OP_ADD: case OP_MUL:  fat_binary(&k, 9216 * 3); break;
    case OP_RMSNORM: case OP_RMSNORM_ADD: case OP_RMSNORM_ADD_NORM:
        fat_rmsnorm(&k, 2304, 4); fat_rmsnorm(&k, 3072, 2); fat_rmsnorm(&k, 64, 3); break;
    case OP_MATMUL:   /* the plain tiles, also where matmul_cm or matmul_q would run */
        op_matmul_cm_off = op_matmul_q8t_off = true; fat_matmul_cases(&k); op_matmul_cm_off = op_matmul_q8t_off = false; break;
    case OP_MATMUL_Q8: case OP_MATMUL_Q8_SPLIT: {   /* also where unaccelerated (vk_kernel_check passed), not matmul_cm */
        bool idot = f->vk.caps.idot;
        f->vk.caps.idot = op_matmul_cm_off = true;
        if (d->op == OP_MATMUL_Q8) fat_matmul_cases(&k);
        else { fat_matmul_mode(&k, 70, 2304, 7, 1, 2, false); fat_matmul_mode(&k, 9, 1792, 67, 1, 3, false); }
        f->vk.caps.idot = idot; op_matmul_cm_off = false;
        break;
    }
    case OP_MATMUL_CM: {                                  /* ragged row and token tiles over 4 x 2 tiles (matmul_cm_b: 4 x 5), the fused add */
        u64 n0 = op_cm_products;
        fat_matmul_cases(&k); fat_matmul_mode(&k, 200, 512, 130, 1, 0, false);
        if (d->otype == DT_F32) fat_matmul_mode(&k, 70, 768, 9, 1, 0, true);
        if (op_cm_products == n0) { k.bad++; fmt_buf(k.where, sizeof k.where, "op_matmul recorded no matmul_cm dispatch"); }
        break;
    }
    case OP_MATMUL_SPLIT: case OP_SPLITK_SUM: case OP_MATMUL_CM_SPLIT: {   /* uneven last slice, a ragged row tile and token tile, the fused add */
        u64 n0 = op_cm_products;
        op_matmul_cm_off = op_matmul_q8t_off = d->op != OP_MATMUL_CM_SPLIT;   /* the plain split kernels also where matmul_cm_split / matmul_q would run */
        fat_matmul_mode(&k, 70, 2304, 7, 1, 2, false); fat_matmul_mode(&k, 9, 1792, 67, 1, 3, false);
        if ((k.d->op == OP_SPLITK_SUM && k.d->otype == DT_F32) || k.d->op == OP_MATMUL_CM_SPLIT) fat_matmul_mode(&k, 66, 2048, 9, 1, 4, true);
        if (k.d->op == OP_MATMUL_CM_SPLIT) fat_matmul_mode(&k, 200, 1024, 130, 1, 4, false);
        op_matmul_cm_off = op_matmul_q8t_off = false;
        if (d->op == OP_MATMUL_CM_SPLIT && op_cm_products == n0) { k.bad++; fmt_buf(k.where, sizeof k.where, "op_matmul_split recorded no matmul_cm_split dispatch"); }
        break;
    }
    case OP_GET_ROWS: {
        fat_get_rows(&k, 2304, 9, 48.0f);
        if (dtype_info[d->wtype].blk <= 32) fat_get_rows(&k, 640, 9, 25.3f);   /* gemma-3-270m's width */
        fat_get_rows(&k, MAX(dtype_info[d->wtype].blk, 32), 256000, 1.0f);     /* gemma's 256000-row table, a few rows read */
        break;
    }
    case OP_ADD_BIAS: fat_bias(&k, 896, 5); fat_bias(&k, 256, 3); break;   /* qwen2.5-0.5b q dim, k/v dim */
    case OP_ROPE:     fat_rope_cases(&k); break;
    case OP_KV_STORE: fat_kv_store(&k, 1024); fat_kv_store(&k, 256); fat_kv_store(&k, 128); fat_kv_store(&k, 96); break;   /* (96: a q8_0 row padded to 128) */
    case OP_ATTENTION: case OP_ATTN_SPLIT: case OP_ATTN_MERGE: case OP_ATTN_FLASH: case OP_ATTN_FLASH_W: case OP_ATTN_CM: case OP_ATTN_CM_H64: case OP_ATTN_CM_H256:
    case OP_ATTN_CM_H256W: case OP_ATTN_TILE: case OP_ATTN_TILE_H64: case OP_ATTN_TILE_H256: case OP_ATTN_SHORT: case OP_ATTN_SHORT_N: fat_attention_cases(&k); break;
    case OP_ROPE_KV: case OP_ROPE_KV_NORM:
        fat_rope_kv(&k, 64, 64, false, 8, 2); fat_rope_kv(&k, 128, 128, true, 2, 2); fat_rope_kv(&k, 256, 256, true, 4, 1); break;
    case OP_MATMUL_GLU: fat_matmul_glu(&k, 37, 2304, 1); fat_matmul_glu(&k, 5, 9216, 1); if (short_rows) fat_matmul_glu(&k, 7, 1152, 1); break;
    case OP_MATMUL_GLU_NORM: case OP_MATMUL_GLU_NORM_Q8: case OP_MATMUL_GLU_RES_NORM: case OP_MATMUL_GLU_RES_NORM_Q8: case OP_MATMUL_GLU_NORM_S8:
    case OP_MATMUL_NORM: case OP_MATMUL_NORM_Q8: case OP_MATMUL_ROPE: case OP_MATMUL_ROPE_NORM:
    case OP_MATMUL_GLU_NORM_W: case OP_MATMUL_GLU_NORM_Q8_W: case OP_MATMUL_GLU_RES_NORM_W: case OP_MATMUL_GLU_RES_NORM_Q8_W:
    case OP_MATMUL_NORM_W: case OP_MATMUL_NORM_Q8_W: case OP_MATMUL_ROPE_NORM_W:
        fat_fused_cases(&k, short_rows); break;
    case OP_GLU:      fat_glu(&k, 9216); break;
    case OP_SOFTCAP:  fat_softcap(&k, 256000); break;
    case OP_ARGMAX: case OP_TOPK: case OP_ARGMAX_CHECK: case OP_ARGMAX_PART: case OP_ARGMAX_MERGE:
        fat_select(&k, 256000, EDGE_TOPK_MAX); break;
    default: fat_check_end(f, c, FAT_FAIL, "no check for op %d (add one to fat/fat_kernels.c)", (int)d->op); return;
    }
    if (!f->vk.pipes[ki].pipe) { fat_check_end(f, c, FAT_FAIL, "the op did not dispatch kernel '%s' (key mismatch)", d->kernel); return; }
    fat_num(c, "cases", k.cases); fat_num(c, "max_err", k.worst_err); fat_num(c, "tol", k.worst_tol); fat_num(c, "nonfinite", k.bad);
    bool drift = false;
    if (f->rep == 0) f->khash[di] = k.hash; else drift = f->khash[di] != k.hash;
    fat_num(c, "drift", drift);
    if (k.bad) fat_check_end(f, c, FAT_FAIL, "%u NaN/Inf or errors (%s)", k.bad, k.where);
    else if (k.worst > 1) fat_check_end(f, c, FAT_FAIL, "max err %.3g > tol %.3g at %s (%u cases)", k.worst_err, k.worst_tol, k.where, k.cases);
    else if (drift) fat_check_end(f, c, FAT_FAIL, "output differs from soak repetition 0 (drift), %u cases", k.cases);
    else if (k.worst_tol == 0) fat_check_end(f, c, FAT_PASS, "%u cases, exact", k.cases);
    else fat_check_end(f, c, FAT_PASS, "%u cases, max err %.2g (tol %.0e)", k.cases, k.worst_err, k.worst_tol);
}

void fat_kernel_checks(Fat *f) {
    for (i32 i = 0; i < KDEF_COUNT; i++) {
        if (f->only && !fat_want(f, kdefs[i].kernel) && !fat_want(f, "kernels")) continue;
        fat_kernel_one(f, i);
    }
}

/* ---- numeric traps: every finite f16 value and large f32 values ------------------------- */
/* Fills x with every finite f16 value (63488 of them), then `extra` large f32 values. */
static u64 fat_sweep(f32 *x, bool with_f32) {
    u64 n = 0;
    for (u32 h = 0; h < 65536; h++) if (((h >> 10) & 31) != 31) x[n++] = f32_from_f16((u16)h);
    if (with_f32) {
        const f32 big[] = { 1e5f, 1e10f, 1e20f, 1e30f, 1e38f, 3.4028235e38f, 88.7f, 89.0f, 710.0f, 1e-38f, 1e-45f };
        for (u32 i = 0; i < ARRAY_COUNT(big); i++) { x[n++] = big[i]; x[n++] = -big[i]; }
    }
    return n;
}

static void fat_trap_glu(Fat *f, i32 di) {
    const KernelDef *d = &kdefs[di];
    char name[64]; fmt_buf(name, sizeof name, "trap.%s", d->kernel);
    FatCheck *c = fat_check_begin(f, name);
    if (d->atype == DT_F16 && !f->f16) { fat_check_end(f, c, FAT_SKIP, "device lacks f16"); return; }
    FatK k = { .f = f, .d = d, .name = d->kernel, .hash = 0xcbf29ce484222325ull };
    f32 *g = malloc(65600 * 4), *u = malloc(65600 * 4);
    u64 n = fat_sweep(g, d->atype == DT_F32);
    for (int gelu = 0; gelu < 2; gelu++) for (int up = 0; up < 2; up++) {
        n = fat_sweep(g, d->atype == DT_F32);
        for (u64 i = 0; i < n; i++) u[i] = up ? 3.0f : 1.0f;           /* up = 3: products past the f16 range */
        char cs[64]; fmt_buf(cs, sizeof cs, "%s, up=%d, every f16%s", gelu ? "gelu" : "silu", up ? 3 : 1, d->atype == DT_F32 ? " + large f32" : "");
        fat_glu_cmp(&k, cs, g, u, n, gelu);
    }
    free(g); free(u);
    fat_num(c, "inputs", (f64)n); fat_num(c, "nonfinite", k.bad); fat_num(c, "max_err", k.worst_err);
    if (k.bad || k.worst > 1) fat_check_end(f, c, FAT_FAIL, "%u NaN/Inf, max err %.3g (tol %.0e) at %s", k.bad, k.worst_err, k.worst_tol, k.where);
    else fat_check_end(f, c, FAT_PASS, "%llu inputs x GELU/SiLU x up 1,3: finite, max err %.2g", (unsigned long long)n, k.worst_err);
}

static void fat_trap_softcap(Fat *f) {
    i32 di = kdef_find(OP_SOFTCAP, PH_ANY, DT_F32, DT_F32, DT_F32);
    FatCheck *c = fat_check_begin(f, "trap.softcap_f32");
    FatK k = { .f = f, .d = &kdefs[di], .name = kdefs[di].kernel, .hash = 0xcbf29ce484222325ull };
    f32 *x = malloc(65600 * 4);
    u64 n = fat_sweep(x, true);
    fat_softcap_cmp(&k, "cap 30", x, n, 30.0f);
    fat_softcap_cmp(&k, "cap 50", x, n, 50.0f);
    free(x);
    fat_num(c, "inputs", (f64)n); fat_num(c, "nonfinite", k.bad); fat_num(c, "max_err", k.worst_err);
    if (k.bad || k.worst > 1) fat_check_end(f, c, FAT_FAIL, "%u NaN/Inf, max err %.3g at %s", k.bad, k.worst_err, k.where);
    else fat_check_end(f, c, FAT_PASS, "%llu inputs x caps 30,50: finite, max err %.2g of cap", (unsigned long long)n, k.worst_err);
}

/* Softmax/exp through attention: queries carry every finite f16 value (256 per row) and,
   for f32 activations, huge f32 values; every output must be finite and lie within the
   range of the values it averages. */
static void fat_trap_attention(Fat *f, i32 di) {
    const KernelDef *d = &kdefs[di];
    char name[64]; fmt_buf(name, sizeof name, "trap.%s", d->kernel);
    FatCheck *c = fat_check_begin(f, name);
    if ((d->atype == DT_F16 || d->wtype == DT_F16) && !f->f16) { fat_check_end(f, c, FAT_SKIP, "device lacks f16"); return; }
    i32 ki = vk_kernel_find(d->kernel); Err ke;
    if (ki < 0 || !vk_kernel_check(&f->vk.caps, &kernel_table[ki], &ke)) { fat_check_end(f, c, FAT_SKIP, "%s", ki < 0 ? "kernel not embedded" : ke.msg); return; }
    u32 hd = d->op == OP_ATTN_CM_H64 || d->op == OP_ATTN_TILE_H64 ? 64 : d->op == OP_ATTN_CM || d->op == OP_ATTN_TILE ? 128 : 256;   /* (attn_cm, attn_tile: the build's head_dim) */
    if (op_is_attn_tile(d->op) && !fat_tile_fits(&f->vk, hd)) { fat_check_end(f, c, FAT_SKIP, "attn_tile does not fit the device"); return; }
    f32 *sw = malloc(65600 * 4);
    u64 n = fat_sweep(sw, d->atype == DT_F32);
    u32 win = d->op == OP_ATTN_CM_H256W ? 4096 : 0;                             /* (a window past every key) */
    FatAttn a = { hd, 1, 1, 0, 32, 0, win, 0, 1, 0 };         /* gemma's head dim (attn_cm: its build's): hd sweep values per query */
    a.T = (u32)((n + hd - 1) / hd); a.n_ctx = a.p0 + a.T;
    u64 nq = (u64)a.T * hd, nc = (u64)a.n_ctx * hd;
    f32 *q = calloc(nq, 4), *o = malloc(nq * 4), *kc = malloc(nc * 4), *vc = malloc(nc * 4);
    memcpy(q, sw, n * 4);
    fat_seed(4242);
    for (u64 i = 0; i < nc; i++) { kc[i] = fat_normal(); vc[i] = fat_normal(); }
    fat_round(d->wtype, kc, nc); fat_round(d->wtype, vc, nc);
    if (d->wtype == DT_Q8_0) { fat_q8_round(kc, hd, a.n_ctx); fat_q8_round(vc, hd, a.n_ctx); }
    f32 vmax = 0; for (u64 i = 0; i < nc; i++) vmax = MAX(vmax, fabsf(vc[i]));
    u64 bad = 0, out_of_range = 0; char err[160] = "";
    for (int cap = 0; cap < 2; cap++) {
        a.softcap = cap ? 50.0f : 0.0f;
        if (!fat_attention_run(f, d, &a, q, o, kc, vc, err, sizeof err)) { bad++; break; }
        if (f->perturb && !strcmp(f->perturb, d->kernel) && cap == 0) o[nq / 2] = NAN;   /* fault injector */
        for (u64 i = 0; i < nq; i++) {
            if (!isfinite(o[i])) bad++;
            else if (fabsf(o[i]) > vmax * 1.002f + 1e-6f) out_of_range++;
        }
    }
    fat_num(c, "queries", a.T); fat_num(c, "nonfinite", (f64)bad); fat_num(c, "out_of_range", (f64)out_of_range);
    if (bad || out_of_range) fat_check_end(f, c, FAT_FAIL, "%llu NaN/Inf, %llu outputs outside the values' range %s", (unsigned long long)bad, (unsigned long long)out_of_range, err);
    else fat_check_end(f, c, FAT_PASS, "%u queries over every finite f16%s, softcap 0/50: finite, within range", a.T, d->atype == DT_F32 ? " + large f32" : "");
    free(sw); free(q); free(o); free(kc); free(vc);
}

void fat_trap_checks(Fat *f) {
    for (i32 i = 0; i < KDEF_COUNT; i++) {
        if (kdefs[i].op == OP_GLU) fat_trap_glu(f, i);
        if (kdefs[i].op == OP_ATTENTION || kdefs[i].op == OP_ATTN_FLASH || kdefs[i].op == OP_ATTN_FLASH_W || op_is_attn_cm(kdefs[i].op) || op_is_attn_tile(kdefs[i].op))
            fat_trap_attention(f, i);
    }
    fat_trap_softcap(f);
}
