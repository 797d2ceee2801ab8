// common/keys.wgsl — the keys a query attends to, for the attention kernels (push constant p.window:
// 0 = every key up to the query's, else the last `window` of them). The host keeps positions inside
// the context.
fn key_range(p0: u32) -> vec2<u32> {
    var lo = 0u;
    if (p.window > 0u && p0 + 1u > p.window) { lo = p0 + 1u - p.window; }
    return vec2<u32>(lo, p0);
}
