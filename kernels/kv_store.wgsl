// kv_store.wgsl — copies row t of k (kv_dim, T) into the cache (kv_dim, n_ctx, n_seq) at its slot's
// row for its position (the rows table: common/rows.wgsl): row position % n_ctx, so a sliding-window
// layer's cache of fewer rows than the context is a ring. A is the activation dtype, C the cache dtype.
//! variant kv_store_f32_f32c kv_store
//! variant kv_store_f32_f16c kv_store alias:C=f16 OUT_MAX=65504
//! variant kv_store_f16_f32c kv_store alias:A=f16
//! variant kv_store_f16_f16c kv_store alias:A=f16 alias:C=f16
alias A = f32;
alias C = f32;
// OUT_MAX: cache values are clamped to +-OUT_MAX (65504 in f16 variants: a too-large value saturates
// instead of becoming inf, which would turn into NaN downstream).
override OUT_MAX: f32 = 3.4028234e38;
struct Params { kv_dim: u32, t_cap: u32, n_ctx: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> k: array<A>;           // (kv_dim, T)
@group(0) @binding(1) var<storage, read> pos: array<u32>;       // the rows table
@group(0) @binding(2) var<storage, read_write> cache: array<C>; // (kv_dim, n_ctx, n_seq)

//! include common/clampn.wgsl
//! include common/rows.wgsl

@compute @workgroup_size(256)
fn kv_store(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let idx = g.x + g.y * nw.x * 256u;
    if (idx >= p.kv_dim * p.t_cap) { return; }
    let t = idx / p.kv_dim;
    if (t >= rows_n()) { return; }
    let row = row_slot(t) * p.n_ctx + row_pos(t) % p.n_ctx;
    cache[row * p.kv_dim + idx % p.kv_dim] = C(clampn(f32(k[idx]), OUT_MAX));
}
