// common/rows.wgsl — the rows table of a batch (kernels/ops.h op_rows_fill), included by the kernels
// that bind it as `pos`: pos[0] = T (rows of the batch), pos[1] = 0, then per row t its position
// pos[2 + 2t] and its sequence slot pos[3 + 2t]. A slot's KV cache rows are slot * n_ctx .. + n_ctx - 1
// (the caches hold n_seq slots of n_ctx rows); a prefill batch is one slot at consecutive positions,
// a batched decode step one row per sequence.
fn rows_n() -> u32 { return pos[0]; }
fn row_pos(t: u32) -> u32 { return pos[2u + 2u * t]; }
fn row_slot(t: u32) -> u32 { return pos[3u + 2u * t]; }
