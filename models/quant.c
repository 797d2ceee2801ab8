/* models/quant.c — ggml weight types: names, block geometry, and CPU dequantization of
   F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS, bit-exact with
   ggml's dequantize_row_* (test/gguf_test.c checks every tensor of ../shared/fixtures/dequant,
   max difference 0).

   Why: the reference forward pass dequantizes weights on the fly, and the GPU kernels are
   checked against it, so these loops are the ground truth of what a stored weight means.

   API:
     ggml_type_name(t)               "Q4_K", ... ("?" for unknown ids)
     ggml_type_supported(t)          the types of the table below with a block decoder
     ggml_supported_list(buf, n)     their names, space-separated, in id order (for error messages)
     ggml_block_elems(t) / ggml_block_bytes(t)   per block (0 for unsupported types)
     ggml_row_bytes(t, n, &bytes)    bytes of n elements (n a multiple of the block; overflow-checked)
     dequant_row(t, src, dst, n)     n elements to f32

   Adding a type: its block decoder below and one row of ggml_types[]. Nothing else in this
   file or its callers lists types.

   Block layouts (little-endian, packed; h = f16; ggml-common.h's block_* structs):
     Q4_0    32 elems,  18 B: h d; u8 qs[16] (lo nibbles = elems 0..15, hi = 16..31)   x = d*(q-8)
     Q4_1    32 elems,  20 B: h d, m; u8 qs[16]                                        x = d*q + m
     Q5_0    32 elems,  22 B: h d; u8 qh[4] (bit j = 5th bit of elem j); u8 qs[16]     x = d*(q-16)
     Q5_1    32 elems,  24 B: h d, m; u8 qh[4]; u8 qs[16]                              x = d*q + m
     Q8_0    32 elems,  34 B: h d; i8 q[32]                                            x = d*q
     Q2_K   256 elems,  84 B: u8 scales[16] (lo 4 bits scale, hi 4 bits min); u8 qs[64]; h d, dmin
                              per 128 elems: 4 shifts x 2 halves of 16 from 2-bit fields of qs[32]
                              x = (d*sc)*q - (dmin*m)
     Q3_K   256 elems, 110 B: u8 hmask[32]; u8 qs[64]; u8 scales[12] (16 x 6-bit, offset 32); h d
                              x = (d*(sc-32))*(q - (hmask bit ? 0 : 4))
     Q4_K   256 elems, 144 B: h d, dmin; u8 scales[12] (8 x 6-bit scale + 6-bit min);
                              u8 q[128]: per 64 elems, 32 bytes: lo nibbles then hi nibbles
                              x = (d*sc)*q - (dmin*m)
     Q5_K   256 elems, 176 B: h d, dmin; u8 scales[12] (as Q4_K); u8 qh[32]; u8 qs[128]
                              x = (d*sc)*(q + 16*hbit) - (dmin*m)
     Q6_K   256 elems, 210 B: u8 ql[128], qh[64]; i8 scales[16]; h d
                              per 128 elems: 4 groups of 32 from ql lo/hi nibbles + 2 bits of qh
                              x = (d*sc)*(q-32)
     IQ4_NL  32 elems,  18 B: h d; u8 qs[16] (nibbles index kvalues_iq4nl)             x = d*kv[q]
     IQ4_XS 256 elems, 136 B: h d; u16 scales_h; u8 scales_l[4]; u8 qs[128]
                              8 x 6-bit scales (offset 32); per 32 elems as IQ4_NL    x = (d*(ls-32))*kv[q]

   The arithmetic keeps ggml's order of operations and must not be contracted into fused
   multiply-adds (which would change the rounding), hence the pragma below. */

/* ---- block decoders ------------------------------------------------------------------ */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

static u16 quant_rd_u16(const u8 *p) { return (u16)(p[0] | (p[1] << 8)); }
static f32 quant_rd_f16(const u8 *p) { return f32_from_f16(quant_rd_u16(p)); }
static u32 quant_rd_u32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }

/* ggml's non-linear 4-bit grid of IQ4_NL and IQ4_XS. */
static const i8 quant_iq4nl_grid[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

static void dequant_f32(const u8 *s, f32 *dst, u64 n)  { memcpy(dst, s, n * 4); }
static void dequant_f16(const u8 *s, f32 *dst, u64 n)  { for (u64 i = 0; i < n; i++) dst[i] = quant_rd_f16(s + 2 * i); }
static void dequant_bf16(const u8 *s, f32 *dst, u64 n) { for (u64 i = 0; i < n; i++) dst[i] = f32_from_bf16(quant_rd_u16(s + 2 * i)); }

static void dequant_q8_0(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 34, dst += 32) {
        f32 d = quant_rd_f16(src);
        for (u32 j = 0; j < 32; j++) dst[j] = (f32)(i8)src[2 + j] * d;
    }
}

static void dequant_q4_0(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 18, dst += 32) {
        f32 d = quant_rd_f16(src);
        const u8 *q = src + 2;
        for (u32 j = 0; j < 16; j++) {
            dst[j]      = (f32)((i32)(q[j] & 0xF) - 8) * d;
            dst[j + 16] = (f32)((i32)(q[j] >> 4) - 8) * d;
        }
    }
}

static void dequant_q4_1(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 20, dst += 32) {
        f32 d = quant_rd_f16(src), m = quant_rd_f16(src + 2);
        const u8 *q = src + 4;
        for (u32 j = 0; j < 16; j++) {
            dst[j]      = (f32)(q[j] & 0xF) * d + m;
            dst[j + 16] = (f32)(q[j] >> 4) * d + m;
        }
    }
}

/* Q5_0 (has_min false: 22-byte blocks, offset -16) and Q5_1 (24 bytes: d, m; no offset). */
static void dequant_q5(const u8 *src, f32 *dst, u64 nb, bool has_min) {
    u32 bytes = has_min ? 24 : 22, hdr = has_min ? 4 : 2;
    for (u64 b = 0; b < nb; b++, src += bytes, dst += 32) {
        f32 d = quant_rd_f16(src), m = has_min ? quant_rd_f16(src + 2) : 0.0f;
        u32 qh = quant_rd_u32(src + hdr);
        const u8 *q = src + hdr + 4;
        for (u32 j = 0; j < 16; j++) {
            i32 x0 = (i32)((q[j] & 0xF) | (((qh >> j) << 4) & 0x10));
            i32 x1 = (i32)((q[j] >> 4)  | ((qh >> (j + 12)) & 0x10));
            if (has_min) { dst[j] = (f32)x0 * d + m;       dst[j + 16] = (f32)x1 * d + m; }
            else         { dst[j] = (f32)(x0 - 16) * d;    dst[j + 16] = (f32)(x1 - 16) * d; }
        }
    }
}
static void dequant_q5_0(const u8 *src, f32 *dst, u64 nb) { dequant_q5(src, dst, nb, false); }
static void dequant_q5_1(const u8 *src, f32 *dst, u64 nb) { dequant_q5(src, dst, nb, true); }

static void dequant_q2_k(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 84) {
        const u8 *sc = src, *q = src + 16;
        f32 d = quant_rd_f16(src + 80), dmin = quant_rd_f16(src + 82);
        for (u32 h = 0; h < 2; h++, q += 32)            /* 128 elements per half */
            for (u32 shift = 0; shift < 8; shift += 2)
                for (u32 k = 0; k < 2; k++, sc++) {     /* 16 elements per scale */
                    f32 dl = d * (f32)(*sc & 0xF), ml = dmin * (f32)(*sc >> 4);
                    for (u32 l = 0; l < 16; l++) *dst++ = dl * (f32)((q[l + 16 * k] >> shift) & 3) - ml;
                }
    }
}

/* The 16 6-bit scales of a Q3_K block (offset 32 not yet removed): low 4 bits from bytes 0..7,
   high 2 bits from bytes 8..11. */
static void q3k_scales(const u8 *s, i32 out[16]) {
    for (u32 j = 0; j < 16; j++) {
        u32 lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
        u32 hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (i32)(lo | hi << 4);
    }
}

static void dequant_q3_k(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 110) {
        const u8 *hm = src, *q = src + 32;
        f32 d = quant_rd_f16(src + 108);
        i32 sc[16]; q3k_scales(src + 96, sc);
        u32 is = 0; u8 m = 1;
        for (u32 h = 0; h < 2; h++, q += 32)
            for (u32 shift = 0; shift < 8; shift += 2, m <<= 1)
                for (u32 k = 0; k < 2; k++) {
                    f32 dl = d * (f32)(sc[is++] - 32);
                    for (u32 l = 0; l < 16; l++) {
                        u32 i = l + 16 * k;
                        *dst++ = dl * (f32)((i32)((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4));
                    }
                }
    }
}

/* The j-th (0..7) 6-bit scale and min of a Q4_K / Q5_K block's 12 packed bytes. */
static void q4k_scale_min(u32 j, const u8 *s, u8 *sc, u8 *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m  = s[j + 4] & 63;
    } else {
        *sc = (u8)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m  = (u8)((s[j + 4] >> 4)  | ((s[j] >> 6) << 4));
    }
}

/* Q4_K (qh NULL: 144-byte blocks) and Q5_K (176 bytes: a fifth bit per element from qh). */
static void dequant_k4(const u8 *src, f32 *dst, u64 nb, bool fifth) {
    u32 bytes = fifth ? 176 : 144;
    for (u64 b = 0; b < nb; b++, src += bytes) {
        f32 d = quant_rd_f16(src), dmin = quant_rd_f16(src + 2);
        const u8 *scales = src + 4, *qh = src + 16, *q = src + (fifth ? 48 : 16);
        for (u32 g = 0; g < 4; g++, q += 32) {          /* 64 elements per group */
            u8 sc, m;
            q4k_scale_min(2 * g, scales, &sc, &m);
            f32 d1 = d * (f32)sc, m1 = dmin * (f32)m;
            q4k_scale_min(2 * g + 1, scales, &sc, &m);
            f32 d2 = d * (f32)sc, m2 = dmin * (f32)m;
            u8 u1 = (u8)(1u << 2 * g), u2 = (u8)(2u << 2 * g);
            for (u32 l = 0; l < 32; l++) *dst++ = d1 * (f32)((q[l] & 0xF) + (fifth && (qh[l] & u1) ? 16 : 0)) - m1;
            for (u32 l = 0; l < 32; l++) *dst++ = d2 * (f32)((q[l] >> 4)  + (fifth && (qh[l] & u2) ? 16 : 0)) - m2;
        }
    }
}
static void dequant_q4_k(const u8 *src, f32 *dst, u64 nb) { dequant_k4(src, dst, nb, false); }
static void dequant_q5_k(const u8 *src, f32 *dst, u64 nb) { dequant_k4(src, dst, nb, true); }

static void dequant_q6_k(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 210) {
        const u8 *ql = src, *qh = src + 128;
        const i8 *sc = (const i8 *)(src + 192);
        f32 d = quant_rd_f16(src + 208);
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

/* 32 elements from 16 bytes of IQ4 nibbles at scale d (lo nibbles first). */
static void iq4_run(const u8 *q, f32 d, f32 *dst) {
    for (u32 j = 0; j < 16; j++) {
        dst[j]      = d * (f32)quant_iq4nl_grid[q[j] & 0xF];
        dst[j + 16] = d * (f32)quant_iq4nl_grid[q[j] >> 4];
    }
}

static void dequant_iq4_nl(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 18, dst += 32) iq4_run(src + 2, quant_rd_f16(src), dst);
}

static void dequant_iq4_xs(const u8 *src, f32 *dst, u64 nb) {
    for (u64 b = 0; b < nb; b++, src += 136) {
        f32 d = quant_rd_f16(src);
        u16 sh = quant_rd_u16(src + 2);
        for (u32 ib = 0; ib < 8; ib++, dst += 32) {
            i32 ls = (i32)(((src[4 + ib / 2] >> 4 * (ib % 2)) & 0xF) | (((sh >> 2 * ib) & 3) << 4));
            iq4_run(src + 8 + 16 * ib, d * (f32)(ls - 32), dst);
        }
    }
}

#if defined(__clang__)
#pragma clang fp contract(on)
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif

/* ---- the type table ------------------------------------------------------------------- */
/* Every ggml type id GGUF files use, by id. A row with a decoder is supported (it reads `blocks`
   whole blocks); the others carry only their name, for error messages. */
typedef void (*QuantDecode)(const u8 *src, f32 *dst, u64 blocks);
static const struct { const char *name; u32 block_elems, block_bytes; QuantDecode decode; } ggml_types[GGML_TYPE_COUNT] = {
    /* id               name       elems bytes  decoder          */
    [GGML_TYPE_F32]  = { "F32",       1,   4,  dequant_f32    },
    [GGML_TYPE_F16]  = { "F16",       1,   2,  dequant_f16    },
    [GGML_TYPE_Q4_0] = { "Q4_0",     32,  18,  dequant_q4_0   },
    [GGML_TYPE_Q4_1] = { "Q4_1",     32,  20,  dequant_q4_1   },
    [GGML_TYPE_Q5_0] = { "Q5_0",     32,  22,  dequant_q5_0   },
    [GGML_TYPE_Q5_1] = { "Q5_1",     32,  24,  dequant_q5_1   },
    [GGML_TYPE_Q8_0] = { "Q8_0",     32,  34,  dequant_q8_0   },
    [GGML_TYPE_Q8_1] = { .name = "Q8_1" },
    [GGML_TYPE_Q2_K] = { "Q2_K",    256,  84,  dequant_q2_k   },
    [GGML_TYPE_Q3_K] = { "Q3_K",    256, 110,  dequant_q3_k   },
    [GGML_TYPE_Q4_K] = { "Q4_K",    256, 144,  dequant_q4_k   },
    [GGML_TYPE_Q5_K] = { "Q5_K",    256, 176,  dequant_q5_k   },
    [GGML_TYPE_Q6_K] = { "Q6_K",    256, 210,  dequant_q6_k   },
    [GGML_TYPE_Q8_K] = { .name = "Q8_K" },
    [16] = { .name = "IQ2_XXS" }, [17] = { .name = "IQ2_XS" }, [18] = { .name = "IQ3_XXS" }, [19] = { .name = "IQ1_S" },
    [GGML_TYPE_IQ4_NL] = { "IQ4_NL",  32,  18,  dequant_iq4_nl },
    [21] = { .name = "IQ3_S" }, [22] = { .name = "IQ2_S" },
    [GGML_TYPE_IQ4_XS] = { "IQ4_XS", 256, 136,  dequant_iq4_xs },
    [24] = { .name = "I8" }, [25] = { .name = "I16" }, [26] = { .name = "I32" }, [27] = { .name = "I64" }, [28] = { .name = "F64" }, [29] = { .name = "IQ1_M" },
    [GGML_TYPE_BF16] = { "BF16",      1,   2,  dequant_bf16   },
    [34] = { .name = "TQ1_0" }, [35] = { .name = "TQ2_0" }, [39] = { .name = "MXFP4" },
};

const char *ggml_type_name(u32 t) {
    if (t < GGML_TYPE_COUNT && ggml_types[t].name) return ggml_types[t].name;
    return "?";
}

bool ggml_type_supported(u32 t) { return t < GGML_TYPE_COUNT && ggml_types[t].decode; }
u32  ggml_block_elems(u32 t)    { return ggml_type_supported(t) ? ggml_types[t].block_elems : 0; }
u32  ggml_block_bytes(u32 t)    { return ggml_type_supported(t) ? ggml_types[t].block_bytes : 0; }

const char *ggml_supported_list(char *buf, int n) {
    int k = 0;
    buf[0] = 0;
    for (u32 t = 0; t < GGML_TYPE_COUNT; t++)
        if (ggml_type_supported(t) && k < n) k += fmt_buf(buf + k, n - k, "%s%s", k ? " " : "", ggml_types[t].name);
    return buf;
}

bool ggml_row_bytes(u32 t, u64 n, u64 *bytes) {
    u32 be = ggml_block_elems(t);
    if (be == 0 || n % be != 0) return false;
    return mul_u64(n / be, ggml_block_bytes(t), bytes);
}

void dequant_row(u32 t, const void *src, f32 *dst, u64 n) {
    if (!ggml_type_supported(t)) die(EXIT_MODEL, "dequant_row: type %s (%u) is not supported", ggml_type_name(t), t);
    ggml_types[t].decode((const u8 *)src, dst, n / ggml_types[t].block_elems);
}

void quant_q8_0_block(const f32 x[32], u16 *d, i8 q[32]) {
    f32 amax = 0;
    for (int j = 0; j < 32; j++) amax = MAX(amax, fabsf(x[j]));
    f32 dd = amax / 127, id = dd != 0 ? 1.0f / dd : 0.0f;
    *d = f16_from_f32(MIN(dd, 65504.0f));
    for (int j = 0; j < 32; j++) q[j] = (i8)roundf(x[j] * id);
}
