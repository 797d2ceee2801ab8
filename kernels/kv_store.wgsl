// kv_store.wgsl — copies row t of k (kv_dim, T) into the cache (kv_dim, n_ctx, n_seq) at its slot's
// row for its position (the rows table: common/rows.wgsl): row position % n_ctx, so a sliding-window
// layer's cache of fewer rows than the context is a ring. A is the activation dtype, C the cache dtype.
// kv_store_q8 (a q8_0 cache: C = u32 words): a row is llama.cpp's Q8_0 blocks of 32 values, laid out
// per row as its KP = kv_dim rounded up to 64 int8 quants (4 per word, element c in byte c % 4 of word
// c / 4), then its KP / 32 f16 scales two per word (block b in half b % 2 of word KP / 4 + b / 2):
// KP * 17 / 16 bytes, a whole number of words, so rows are copied and ringed by bytes like the f16 ones
// (the padding block of a kv_dim of 32 (mod 64) is written as zeros, never read). Each block as
// ggml's quantize_row_q8_0_ref: d = amax / 127, q = roundf(x * (1 / d)) (halves away from zero; 0
// where d = 0), d stored as f16, saturated at 65504 as the f16 cache's values. One invocation per
// two blocks (16 quant words and one scale word: whole words, no invocation shares one).
//! variant kv_store_f32_f32c kv_store
//! variant kv_store_f32_f16c kv_store alias:C=f16 OUT_MAX=65504
//! variant kv_store_f16_f32c kv_store alias:A=f16
//! variant kv_store_f16_f16c kv_store alias:A=f16 alias:C=f16
//! variant kv_store_f32_q8c kv_store_q8 alias:C=u32
//! variant kv_store_f16_q8c kv_store_q8 alias:A=f16 alias:C=u32
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

//! include common/kvq8.wgsl

// block b of row t of k quantized into the cache words at qw (8 quant words); returns d (f32, unrounded)
// and writes nothing for a padding block (b * 32 >= kv_dim: zeros)
fn q8_block(t: u32, b: u32, qw: u32) -> f32 {
    var amax = 0.0;
    let kb = t * p.kv_dim + 32u * b;
    let real = 32u * b < p.kv_dim;
    if (real) { for (var j = 0u; j < 32u; j = j + 1u) { amax = max(amax, abs(f32(k[kb + j]))); } }
    let d = amax / 127.0;
    let id = select(0.0, 1.0 / d, d != 0.0);
    for (var w = 0u; w < 8u; w = w + 1u) {
        var qv = vec4<i32>(0);
        if (real) { for (var e = 0u; e < 4u; e = e + 1u) { qv[e] = q8_round(f32(k[kb + 4u * w + e]) * id); } }
        cache[qw + w] = C(pack4xI8(qv));
    }
    return d;
}

@compute @workgroup_size(256)
fn kv_store_q8(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let idx = g.x + g.y * nw.x * 256u;
    let kp = q8_kp(p.kv_dim);
    let pairs = kp / 64u;
    if (idx >= pairs * p.t_cap) { return; }
    let t = idx / pairs;
    if (t >= rows_n()) { return; }
    let i = idx % pairs;
    let rb = (row_slot(t) * p.n_ctx + row_pos(t) % p.n_ctx) * q8_row_words(kp);
    let d0 = q8_block(t, 2u * i, rb + 16u * i);
    let d1 = q8_block(t, 2u * i + 1u, rb + 16u * i + 8u);
    cache[rb + kp / 4u + i] = C(f2h(min(d0, 65504.0)) | (f2h(min(d1, 65504.0)) << 16u));
}
