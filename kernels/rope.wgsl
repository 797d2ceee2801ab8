// rope.wgsl — rotary position embedding of x (head_dim, n_heads, T) into y (same shape;
// y may be x). Token t sits at its position in the rows table (common/rows.wgsl); rows t >= T are left alone.
// One invocation per pair: NORM rotates (x[2i], x[2i+1]), NEOX (x[i], x[i + n_rot/2]),
// theta_i = p * freq_scale * base^(-2i/n_rot) / ff[i] (ff: Llama 3 frequency factors, ones for
// other models); dims >= n_rot pass through. f32 math.
//! variant rope_f32 rope
//! variant rope_f16 rope alias:A=f16 OUT_MAX=65504
alias A = f32;
// OUT_MAX: outputs are clamped to +-OUT_MAX (65504 in f16 variants: a too-large value saturates
// instead of becoming inf, which would turn into NaN downstream).
override OUT_MAX: f32 = 3.4028234e38;
struct Params { head_dim: u32, n_heads: u32, t_cap: u32, n_rot: u32, log2_base: f32, freq_scale: f32, neox: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> x: array<A>;          // (head_dim, n_heads, T)
@group(0) @binding(1) var<storage, read> pos: array<u32>;      // the rows table
@group(0) @binding(2) var<storage, read_write> y: array<A>;    // (head_dim, n_heads, T)
@group(0) @binding(3) var<storage, read> ff: array<f32>;       // (n_rot / 2) frequency factors

//! include common/clampn.wgsl
//! include common/rows.wgsl

@compute @workgroup_size(256)
fn rope(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let half_d = p.head_dim / 2u;
    let idx = g.x + g.y * nw.x * 256u;
    if (idx >= half_d * p.n_heads * p.t_cap) { return; }
    let i = idx % half_d;
    let row = idx / half_d;                    // t * n_heads + head
    let t = row / p.n_heads;
    if (t >= rows_n()) { return; }
    let rb = row * p.head_dim;
    if (2u * i >= p.n_rot) {                   // beyond the rotated dims: copy
        y[rb + 2u * i] = x[rb + 2u * i];
        y[rb + 2u * i + 1u] = x[rb + 2u * i + 1u];
        return;
    }
    var a = rb + 2u * i;
    var b = a + 1u;
    if (p.neox != 0u) { a = rb + i; b = a + p.n_rot / 2u; }
    let inv_freq = exp2(-f32(2u * i) / f32(p.n_rot) * p.log2_base);
    let theta = f32(row_pos(t)) * p.freq_scale * inv_freq / ff[i];
    let c = cos(theta);
    let s = sin(theta);
    let xa = f32(x[a]);
    let xb = f32(x[b]);
    y[a] = A(clampn(xa * c - xb * s, OUT_MAX));
    y[b] = A(clampn(xa * s + xb * c, OUT_MAX));
}
