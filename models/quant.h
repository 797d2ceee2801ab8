/* quant.h — ggml weight types: block geometry and CPU dequantization, bit-exact
   with ggml's block definitions (checked against ../shared/fixtures/dequant).

   API:
     ggml_type_name(t)               "Q4_K", ... ("?" for unknown ids)
     ggml_type_supported(t)          the types with a CPU decoder (quant.c's table)
     ggml_supported_list(buf, n)     their names, space-separated (for error messages)
     ggml_block_elems(t) / ggml_block_bytes(t)   elements and bytes per block (0 for unsupported)
     ggml_row_bytes(t, n, &bytes)    bytes of n elements; false if n is not a multiple of the block or overflow
     dequant_row(t, src, dst, n)     n elements (a multiple of the block) to f32
     quant_q8_0_block(x, &d, q)      32 values to one Q8_0 block as ggml's reference quantizer   */
#ifndef EDGE_QUANT_H
#define EDGE_QUANT_H

const char *ggml_type_name(u32 t);
bool        ggml_type_supported(u32 t);
const char *ggml_supported_list(char *buf, int n);
u32         ggml_block_elems(u32 t);
u32         ggml_block_bytes(u32 t);
bool        ggml_row_bytes(u32 t, u64 n, u64 *bytes);
void        dequant_row(u32 t, const void *src, f32 *dst, u64 n);
/* One Q8_0 block as ggml's quantize_row_q8_0_ref: d = amax / 127 (stored f16; saturated at 65504 as edge's
   f16 values), q = roundf(x / d) (halves away from zero; all 0 where d = 0). The q8_0 KV cache's CPU twin
   (kernels/kv_store.wgsl kv_store_q8; checked by edge fat). */
void        quant_q8_0_block(const f32 x[32], u16 *d, i8 q[32]);

#endif
