/* quant.h — ggml weight types: block geometry and CPU dequantization, bit-exact
   with ggml's block definitions (checked against ../shared/fixtures/dequant).

   API:
     ggml_type_name(t)               "Q4_K", ... ("?" for unknown ids)
     ggml_type_supported(t)          the types with a CPU decoder (quant.c's table)
     ggml_supported_list(buf, n)     their names, space-separated (for error messages)
     ggml_block_elems(t) / ggml_block_bytes(t)   elements and bytes per block (0 for unsupported)
     ggml_row_bytes(t, n, &bytes)    bytes of n elements; false if n is not a multiple of the block or overflow
     dequant_row(t, src, dst, n)     n elements (a multiple of the block) to f32               */
#ifndef EDGE_QUANT_H
#define EDGE_QUANT_H

const char *ggml_type_name(u32 t);
bool        ggml_type_supported(u32 t);
const char *ggml_supported_list(char *buf, int n);
u32         ggml_block_elems(u32 t);
u32         ggml_block_bytes(u32 t);
bool        ggml_row_bytes(u32 t, u64 n, u64 *bytes);
void        dequant_row(u32 t, const void *src, f32 *dst, u64 n);

#endif
