/* models/quant.c — ggml weight types: names, block geometry, and CPU dequantization
   of F32 F16 BF16 Q8_0 Q4_0 Q4_K Q6_K, bit-exact with ggml's block definitions
   (test/gguf_test.c checks every tensor of ../shared/fixtures/dequant, max difference 0).

   Why: the reference forward pass dequantizes weights on the fly, and the GPU
   kernels are checked against it, so these loops are the ground truth of what a
   stored weight means.

   API:
     ggml_type_name(t)               "Q4_K", ... ("?" for unknown ids)
     ggml_type_supported(t)          F32 F16 BF16 Q8_0 Q4_0 Q4_K Q6_K
     ggml_block_elems(t) / ggml_block_bytes(t)   per block (0 for unsupported types)
     ggml_row_bytes(t, n, &bytes)    bytes of n elements (n a multiple of the block; overflow-checked)
     dequant_row(t, src, dst, n)     n elements to f32

   Block layouts (little-endian, packed):
     Q8_0  32 elems,  34 bytes: f16 d; i8 q[32]                      x = d*q
     Q4_0  32 elems,  18 bytes: f16 d; u8 q[16] (lo nibbles = elems 0..15, hi = 16..31)   x = d*(q-8)
     Q4_K 256 elems, 144 bytes: f16 d, dmin; u8 scales[12] (8 x 6-bit scale + 6-bit min);
                                u8 q[128]: per 64 elems, 32 bytes: lo nibbles then hi nibbles
                                x = (d*sc)*q - (dmin*m)
     Q6_K 256 elems, 210 bytes: u8 ql[128], qh[64]; i8 scales[16]; f16 d
                                per 128 elems: 4 groups of 32 from ql lo/hi nibbles + 2 bits of qh
                                x = (d*sc)*(q-32)

   The arithmetic keeps ggml's order of operations and must not be contracted into
   fused multiply-adds (which would change the rounding), hence the pragma below. */

static const char *const ggml_type_names[GGML_TYPE_COUNT] = {
    [0] = "F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1", [6] = "Q5_0", [7] = "Q5_1",
    [8] = "Q8_0", [9] = "Q8_1", [10] = "Q2_K", [11] = "Q3_K", [12] = "Q4_K", [13] = "Q5_K",
    [14] = "Q6_K", [15] = "Q8_K", [16] = "IQ2_XXS", [17] = "IQ2_XS", [18] = "IQ3_XXS",
    [19] = "IQ1_S", [20] = "IQ4_NL", [21] = "IQ3_S", [22] = "IQ2_S", [23] = "IQ4_XS",
    [24] = "I8", [25] = "I16", [26] = "I32", [27] = "I64", [28] = "F64", [29] = "IQ1_M",
    [30] = "BF16", [34] = "TQ1_0", [35] = "TQ2_0", [39] = "MXFP4",
};

const char *ggml_type_name(u32 t) {
    if (t < GGML_TYPE_COUNT && ggml_type_names[t]) return ggml_type_names[t];
    return "?";
}

bool ggml_type_supported(u32 t) {
    switch (t) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K: return true;
    default: return false;
    }
}

u32 ggml_block_elems(u32 t) {
    switch (t) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: return 1;
    case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: return 32;
    case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K: return 256;
    default: return 0;
    }
}

u32 ggml_block_bytes(u32 t) {
    switch (t) {
    case GGML_TYPE_F32: return 4;
    case GGML_TYPE_F16: case GGML_TYPE_BF16: return 2;
    case GGML_TYPE_Q8_0: return 34;
    case GGML_TYPE_Q4_0: return 18;
    case GGML_TYPE_Q4_K: return 144;
    case GGML_TYPE_Q6_K: return 210;
    default: return 0;
    }
}

bool ggml_row_bytes(u32 t, u64 n, u64 *bytes) {
    u32 be = ggml_block_elems(t);
    if (be == 0 || n % be != 0) return false;
    return mul_u64(n / be, ggml_block_bytes(t), bytes);
}

/* ---- dequantization ------------------------------------------------------------ */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

static u16 quant_rd_u16(const u8 *p) { return (u16)(p[0] | (p[1] << 8)); }

static void dequant_q8_0(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 34, dst += 32) {
        f32 d = f32_from_f16(quant_rd_u16(src));
        for (u32 j = 0; j < 32; j++) dst[j] = (f32)(i8)src[2 + j] * d;
    }
}

static void dequant_q4_0(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 18, dst += 32) {
        f32 d = f32_from_f16(quant_rd_u16(src));
        const u8 *q = src + 2;
        for (u32 j = 0; j < 16; j++) {
            dst[j]      = (f32)((i32)(q[j] & 0xF) - 8) * d;
            dst[j + 16] = (f32)((i32)(q[j] >> 4) - 8) * d;
        }
    }
}

/* The j-th (0..7) 6-bit scale and min of a Q4_K block's 12 packed bytes. */
static void q4k_scale_min(u32 j, const u8 *s, u8 *sc, u8 *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m  = s[j + 4] & 63;
    } else {
        *sc = (u8)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m  = (u8)((s[j + 4] >> 4)  | ((s[j] >> 6) << 4));
    }
}

static void dequant_q4_k(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 144) {
        f32 d    = f32_from_f16(quant_rd_u16(src));
        f32 dmin = f32_from_f16(quant_rd_u16(src + 2));
        const u8 *scales = src + 4, *q = src + 16;
        for (u32 g = 0; g < 4; g++, q += 32) {          /* 64 elements per group */
            u8 sc, m;
            q4k_scale_min(2 * g, scales, &sc, &m);
            f32 d1 = d * (f32)sc, m1 = dmin * (f32)m;
            q4k_scale_min(2 * g + 1, scales, &sc, &m);
            f32 d2 = d * (f32)sc, m2 = dmin * (f32)m;
            for (u32 l = 0; l < 32; l++) *dst++ = d1 * (f32)(q[l] & 0xF) - m1;
            for (u32 l = 0; l < 32; l++) *dst++ = d2 * (f32)(q[l] >> 4) - m2;
        }
    }
}

static void dequant_q6_k(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 210) {
        const u8 *ql = src, *qh = src + 128;
        const i8 *sc = (const i8 *)(src + 192);
        f32 d = f32_from_f16(quant_rd_u16(src + 208));
        for (u32 h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8, dst += 128) {
            for (u32 l = 0; l < 32; l++) {
                u32 is = l / 16;
                i32 q1 = (i32)((ql[l]      & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                i32 q2 = (i32)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                i32 q3 = (i32)((ql[l]      >> 4)  | (((qh[l] >> 4) & 3) << 4)) - 32;
                i32 q4 = (i32)((ql[l + 32] >> 4)  | (((qh[l] >> 6) & 3) << 4)) - 32;
                dst[l]      = d * (f32)sc[is + 0] * (f32)q1;
                dst[l + 32] = d * (f32)sc[is + 2] * (f32)q2;
                dst[l + 64] = d * (f32)sc[is + 4] * (f32)q3;
                dst[l + 96] = d * (f32)sc[is + 6] * (f32)q4;
            }
        }
    }
}

void dequant_row(u32 t, const void *src, f32 *dst, u64 n) {
    const u8 *s = (const u8 *)src;
    switch (t) {
    case GGML_TYPE_F32:  memcpy(dst, s, n * 4); break;
    case GGML_TYPE_F16:  for (u64 i = 0; i < n; i++) dst[i] = f32_from_f16(quant_rd_u16(s + 2 * i)); break;
    case GGML_TYPE_BF16: for (u64 i = 0; i < n; i++) dst[i] = f32_from_bf16(quant_rd_u16(s + 2 * i)); break;
    case GGML_TYPE_Q8_0: dequant_q8_0(s, dst, n / 32); break;
    case GGML_TYPE_Q4_0: dequant_q4_0(s, dst, n / 32); break;
    case GGML_TYPE_Q4_K: dequant_q4_k(s, dst, n / 256); break;
    case GGML_TYPE_Q6_K: dequant_q6_k(s, dst, n / 256); break;
    default: die(EXIT_MODEL, "dequant_row: type %s (%u) is not supported", ggml_type_name(t), t);
    }
}

#if defined(__clang__)
#pragma clang fp contract(on)
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
