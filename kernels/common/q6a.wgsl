// common/q6a.wgsl — included by matmul.wgsl, matmul_tile.wgsl and matmul_cm.wgsl: where Q6_K's and the group types' parts
// lie on the device. The upload (vk.c vk_units) regroups a tensor's 210-byte super-blocks in units of 8 (its last
// unit may hold fewer, n): a unit holds the n blocks' ql (128 bytes each), then their qh (64 each),
// scales (16 each) and d (2 each), in the same 210 n bytes. Every part but d then starts on a 16-byte
// boundary, so the lanes read whole words and 16-byte vectors. q6a_at gives the byte offsets of
// super-block bi's parts, bi counted from the binding's first block, nb the binding's block count: a
// binding holds whole units but for the tensor's last (ops_matmul.c: chunks and row concatenations
// keep that), and its range is its bytes rounded up to 16 (wq_view), so nb = floor(range / 210).
struct Q6A { ql: u32, qh: u32, sc: u32, d: u32 }
fn q6a_at(bi: u32, nb: u32) -> Q6A {
    let u0 = bi & ~7u;
    let n = min(8u, nb - u0);
    let j = bi - u0;
    let ub = u0 * 210u;
    return Q6A(ub + 128u * j, ub + 128u * n + 64u * j, ub + 192u * n + 16u * j, ub + 208u * n + 2u * j);
}
// The group types (Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL IQ4_XS), regrouped by the upload likewise (units of 8
// blocks of BB bytes): a unit of n blocks holds their quants (the GGUF bytes HDR .. BB - 1 of each: 16-byte
// aligned), then their headers (bytes 0 .. HDR - 1: d, and m, qh or scales where the type has them; even
// offsets). HDR is the including file's override, set by build.sh from config/dtypes.def's up column
// (G2..G8). gu_at gives block bi's quants (x) and header (y) byte offsets (bi and nb as q6a_at's;
// nb = floor(range / BB)): a field at GGUF byte f of the block is at y + f (f < HDR), or at x + f - HDR.
fn gu_at(bi: u32, nb: u32) -> vec2<u32> {
    let u0 = bi & ~7u;
    let ub = u0 * BB;
    let qb = BB - HDR;
    return vec2<u32>(ub + qb * (bi - u0), ub + qb * min(8u, nb - u0) + HDR * (bi - u0));
}
