// common/mm_head.wgsl — included by matmul.wgsl (decode, get_rows) and matmul_tile.wgsl (the prefill tiles
// without matrix units): the type aliases and overrides their variant lines set, the push constants, the
// bindings, the weight words (wword, wvec), Q6_K's and the group types' regrouped parts (q6a, gu) and the
// output stores. The including file also includes common/clampn, dq4, q6a, ldraw and bgrp (an include
// cannot include), and declares `enable f16;`.
alias W = u32;
alias A = f32;
alias O = f32;
alias C = f32;                         // matvec_k_rope: the KV cache dtype
override WT: u32 = 7u;                 // weight type: the C enum DType, i.e. a row of config/dtypes.def (WT_* of common/dq4.wgsl)
override BLK: u32 = 256u;              // its elements and bytes per block (config/dtypes.def; the generic entries)
override BB: u32 = 144u;
override HDR: u32 = 0u;                // a type regrouped at upload: its header bytes (dtypes.def up G2..G8; common/q6a.wgsl)
override KSPLIT: u32 = 0u;              // matmul_split_*: split-k (grid z = k slice of p.kc, f32 partials)
override YMAX: f32 = 0x1.fffffep+127f;    // outputs are clamped to +-YMAX (65504 for f16 outputs: no inf)
override AMAX: f32 = 0x1.fffffep+127f;    // the *_norm prologues' normalized row, clamped to +-AMAX as A (65504 for f16 activations)
override CMAX: f32 = 0x1.fffffep+127f;    // matvec_k_rope: cache values are clamped to +-CMAX

// One push-constant block for every entry: k = row length, rows = rows of the bound weight
// chunk, r0 = its first row in the whole tensor, m = output row stride (all rows), t = tokens,
// acc = 1: add the product to what y holds (a fused residual add, y += W.x); act (matvec_glu
// entries): 0 SiLU, 1 GELU-tanh; ll (matvec entries): log2 of the lanes per row, 0..7 (glu: 0..6).
// matvec_k_rope only: the attention shape and RoPE (as rope_kv.wgsl), bias = 1 adds bq/bk/bv,
// rbase = the first row's index in the rows of q, k and v. eps: the *_norm entries' RMSNorm epsilon.
struct Params { k: u32, rows: u32, r0: u32, m: u32, t: u32, scale: f32, acc: u32, act: u32, ll: u32,
                hd: u32, n_head: u32, n_head_kv: u32, n_rot: u32, log2_base: f32, freq_scale: f32, neox: u32,
                n_ctx: u32, bias: u32, rbase: u32, eps: f32, kc: u32 }
var<immediate> p: Params;

@group(0) @binding(0) var<storage, read> w: array<vec4<W>>;    // weight rows by 16 bytes (GGUF bytes; Q6_K in units, below)
@group(0) @binding(1) var<storage, read> x: array<A>;          // (k, t) activations
@group(0) @binding(2) var<storage, read_write> y: array<O>;    // (m, t)
@group(0) @binding(1) var<storage, read> x8: array<vec4<u32>>;  // f16 activations by 8 (the *_h decode entries, matmul_q)
@group(0) @binding(1) var<storage, read> ids: array<u32>;      // get_rows: (t) row ids
@group(0) @binding(2) var<storage, read_write> yr: array<f32>; // get_rows: (k, t)

// ---- bytes of the weight binding ----------------------------------------------------

fn wword(i: u32) -> u32 { return bitcast<u32>(w[i >> 2u][i & 3u]); }   // word i (one 4-byte load)
fn wvec(i: u32) -> vec4<u32> { return bitcast<vec4<u32>>(w[i]); }      // bytes 16 i .. +15 (one 16-byte load)
fn wwords() -> u32 { return 4u * arrayLength(&w); }
// (The block decode of every weight type, dq4 / dq4_block and the WT_* ids, is common/dq4.wgsl, over wword;
// the prefill tiles' weight loads, ld_raw, and decode, dq16, are common/ldraw.wgsl.)

// Q6_K on the device, regrouped in units of 8 (common/q6a.wgsl): super-block bi's parts. The binding's
// block count floor(range / 210) from its 16-byte vectors: 8 blocks per 105 (no overflow near 4 GiB).
fn q6a(bi: u32) -> Q6A {
    let nv = arrayLength(&w);
    return q6a_at(bi, nv / 105u * 8u + (nv % 105u) * 16u / 210u);
}
fn gu(bi: u32) -> vec2<u32> {              // a group type's block bi: its quants, its header (gu_at)
    let nv = arrayLength(&w);
    return gu_at(bi, nv / BB * 16u + (nv % BB) * 16u / BB);
}
// Activations i..i+3 of the row starting at element xb (0 past k).
fn xload4(xb: u32, i: u32, k: u32) -> vec4<f32> {
    if (i + 3u < k) { return vec4<f32>(f32(x[xb + i]), f32(x[xb + i + 1u]), f32(x[xb + i + 2u]), f32(x[xb + i + 3u])); }
    var v = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c = c + 1u) { if (i + c < k) { v[c] = f32(x[xb + i + c]); } }
    return v;
}

fn store(idx: u32, s: f32) {
    var v = s;
    if (p.acc != 0u) { v = v + f32(y[idx]); }
    y[idx] = O(clampn(v, YMAX));
}
// store with the value to add (acc) read beforehand: the decode k-quant entries read it at their
// start, so that load does not wait after the reduction (each row is read and written by one lane)
fn store_pre(idx: u32) -> O { if (p.acc != 0u) { return y[idx]; } return O(0.0); }
fn store_with(idx: u32, s: f32, prev: O) { y[idx] = O(clampn(s + f32(prev), YMAX)); }
// the IQ4 codebook (KV_IQ4NL) as signed bytes in registers (ldraw.wgsl's dq16 asks for it; a workgroup table would not fit beside the tiles;
// the matmul tests and edge fat hold the IQ4 tiles to the CPU decode, so a wrong byte here fails them)
fn kv_iq4(i: u32) -> f32 {
    let q = vec4<u32>(0xbfad9881u, 0xf6eaddcfu, 0x26190d01u, 0x71594535u)[i / 4u];
    return f32(bitcast<i32>((q >> (8u * (i % 4u))) << 24u) >> 24);
}
