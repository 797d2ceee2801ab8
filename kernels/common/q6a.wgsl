// common/q6a.wgsl — included by matmul.wgsl and matmul_cm.wgsl: where Q6_K's and Q8_0's parts lie on the
// device. The upload (vk.c vk_units) regroups a tensor's 210-byte super-blocks in units of 8 (its last
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
// Q8_0, regrouped by the upload likewise (34-byte blocks in units of 8): a unit of n blocks holds their
// qs (32 bytes each: 16-byte aligned), then their d (2 each). q8a_at gives block bi's qs and d byte
// offsets (bi and nb as q6a_at's; nb = floor(range / 34)).
fn q8a_at(bi: u32, nb: u32) -> vec2<u32> {
    let u0 = bi & ~7u;
    let ub = u0 * 34u;
    return vec2<u32>(ub + 32u * (bi - u0), ub + 32u * min(8u, nb - u0) + 2u * (bi - u0));
}
