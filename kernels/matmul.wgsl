// matmul.wgsl — the weight-type kernels: every weight type of config/dtypes.def (F32 F16 BF16
// Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS) dequantized in the kernel from
// the raw GGUF block bytes (Q6_K's and the group types' regrouped by the upload: q6a, gu), bound as
// 16-byte vectors of u32 (f32 weights: of f32) and read as words or vectors. Entries: get_rows
// (embedding gather), matvec (decode); the prefill tiles without matrix units are matmul_tile.wgsl,
// which shares this file's header (common/mm_head.wgsl) and group decode (common/bgrp.wgsl).
// Each variant fixes the weight type
// (override WT, its block BLK / BB, its regrouped header HDR), the activation type A (f32 or f16
// storage) and the output type O; arithmetic and
// accumulation are f32. A weight type is its case in dq4 (common/dq4.wgsl, shared with matmul_cm.wgsl:
// 4 consecutive elements of a block, the twin of its CPU loop in models/quant.c) and its row in
// config/dtypes.def: the generic families'
// `//! variant-each` lines below are made once per row of the table by build.sh (and their
// kernels.def rows by an X-macro over it), so adding a type adds no variant or kernels.def line.
// The decode lanes' entries (matvec_k*, _norm, _rope, _q) run every type whose lanes column is K
// (Q4_K Q5_K Q6_K: super-block lanes) or B (Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K IQ4_NL IQ4_XS: group lanes);
// their `//! variant-lanes` (and for the int8 gate/up, `//! variant-i8glu`) lines are made per such
// row. F32 F16 BF16 (lanes ANY) run the plain entries (matvec, matvec_glu) only. (matmul_cm.wgsl's
// prefill products exist for every type whose cm column is not NO.) Q6_K and the group types but Q2_K /
// Q3_K are regrouped by the upload (common/q6a.wgsl: q6a, gu), so their quants start on 16 bytes; Q3_K's
// 110-byte blocks start at any even byte: their bytes are read from words with shifts (rd8, rd16, rd32
// of common/dq4.wgsl; the group lanes' span8).
// All indices are in u32 within one binding (a chunk of rows).
// Entries by phase and lane family (ops_matmul.c picks the entry and the lanes per row, mv_lanes):
//   get_rows                     embedding rows, dequantized and scaled
//   matvec, matvec_glu           decode, lanes ANY: a lane takes 4 elements per pass (dq4)
//   matvec_k*                    decode, lanes K / B, A = f32: 8 lanes per 256 elements (q4k_lane, q6k_lane;
//                                b_lane: a whole 32-element group per lane)
//   matvec_k*_h                  the same with A = f16: f16-pair lanes (q4k_lane_x, q6k_lane_x, b_lane_x;
//                                the 0x4c00 / 0x4000 magic below), two products per f16 fma
//   matvec_k*_q                  int8 activations where the device accelerates dot4I8Packed (caps.idot):
//                                4 lanes per 256 elements; gate/up with its norm prologue (i8 GLU in
//                                config/dtypes.def: all but Q6_K) and the output norm + LM head
//   matvec_k_glu_norm_s          int8 activations in 32-bit multiplies (EDGE_IDOT=1, no f16): the Q4_K
//                                layout's gate/up, 4 lanes per 256 elements (the *_s section)
//   (matmul, matmul_q            prefill tiles: matmul_tile.wgsl)
// Fused forms of the decode entries: _glu (gate and up rows back to back, act(gate) * up), _norm (the
// RMSNorm of the f32 residual row in the prologue, k <= 3072; the _norm_w variants 4096), _rope (RoPE, biases and both KV-cache
// stores in the epilogue, as rope_kv.wgsl), _res_norm (Gemma: the post-attention residual add first),
// matvec_k_norm(_h) (a plain product of the normed row: the q/k-norm models' q/k/v), matvec_k_norm_q
// (output norm + LM head, a capped grid). Tolerance: the f16-pair lanes round each
// product to f16, so test/matmul_test.c holds them to 5e-4 of sum |w x| (the f32 lanes: 1e-5).
// How the decode code is layered (read top down from "the decode entries"):
//   entries        one short function per product and lane family: rows, prologue, dot, reduction, epilogue
//   shared bodies  what every family shares: mv_row / mv_out / rope_head (rows), mv_reduce(2), the
//                  prologues (mv_norm_load, mv_norm_inv, mv_res_add) and epilogues (store*, glu_*_store,
//                  rope_epilogue)
//   lane families  dot_* loops over units of 256 elements and lane_k / lane_x / lane_q, which pick the
//                  weight type's lane (f32: q4k_lane, q6k_lane, b_lane; f16 pairs: *_lane_x; int8: *_lane_q)
//   block decode   q4k_head, q6k_head, q6a (common/q6a.wgsl), bgrp (the group lanes: one case per
//                  type), dq4 / dq4_block (prefill, get_rows and the plain decode lanes)
// A group-lane type (B) is its case in bgrp (a 32-element group's scale, minimum and quants as bytes),
// which all three families read (IQ4: the f16-pair lanes take iq4_raw and the f16 table, IQ4_XS's int8
// lane is iq4xs_lane_q, shaped as Q4_K's); a k-quant layout adds a q?k_lane* function per family and a case in
// lane_k / lane_x / lane_q (and sb_x / xv8 for its activation order). Every entry then runs it. A type
// without (lanes ANY) is only its case in dq4 / dq4_block.
// `enable f16;` covers every entry; Tint declares shaderFloat16 only for the entries whose own code
// uses f16 (an f16 helper shared with an f32 entry would make that entry need it too).
// Bounds: every entry guards its row (< rows), token (< t) and element (< k) indices and the
// host checks the binding sizes against k, rows and t (ops_matmul.c); every decode reads inside its
// block, and the one read that can pass a block's end (rd32's second word) is clamped to the binding
// (span8's last word holds bytes of the span itself). So the robustness
// transform is off (measured on the H200: decode 4-10% faster):
//! norobust
// The A = f16 variants of the decode lanes' entries run the *_h entries (f16-pair lanes, below).
enable f16;
//! variant-each get_rows_{t}           get_rows          {type} alias:W={w}
//! variant-each matvec_{t}_a32_y32     {mv}              {type} alias:W={w}
//! variant-each matvec_{t}_a16_y32     {mv}{h}           {type} alias:W={w} alias:A=f16
//! variant-each matvec_{t}_a16_y16     {mv}{h}           {type} YMAX=65504 alias:W={w} alias:A=f16 alias:O=f16
//! variant-each matvec_glu_{t}_a32_y32 {mv}_glu          {type} alias:W={w}
//! variant-each matvec_glu_{t}_a16_y16 {mv}_glu{h}       {type} YMAX=65504 alias:W={w} alias:A=f16 alias:O=f16
//! variant-lanes matvec_rope_{t}_a32_c32 matvec_k_rope {type}
//! variant-lanes matvec_rope_{t}_a32_c16 matvec_k_rope {type} CMAX=65504 alias:C=f16
//! variant-lanes matvec_rope_{t}_a16_c32 matvec_k_rope_h {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-lanes matvec_rope_{t}_a16_c16 matvec_k_rope_h {type} YMAX=65504 CMAX=65504 alias:A=f16 alias:O=f16 alias:C=f16
//! variant-lanes matvec_rope_norm_{t}_a32_c32 matvec_k_rope_norm {type}
//! variant-lanes matvec_rope_norm_{t}_a32_c16 matvec_k_rope_norm {type} CMAX=65504 alias:C=f16
//! variant-lanes matvec_rope_norm_{t}_a16_c32 matvec_k_rope_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16
//! variant-lanes matvec_rope_norm_{t}_a16_c16 matvec_k_rope_norm_h {type} YMAX=65504 AMAX=65504 CMAX=65504 alias:A=f16 alias:O=f16 alias:C=f16
//! variant-lanes matvec_glu_norm_{t}_a32_y32 matvec_k_glu_norm {type}
//! variant-lanes matvec_glu_norm_{t}_a16_y16 matvec_k_glu_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16
//! variant-i8glu matvec_glu_norm_q8_{t}_a16_y16 matvec_k_glu_norm_q {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-lanes matvec_glu_res_norm_{t}_a16_y16 matvec_k_glu_res_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16
//! variant-i8glu matvec_glu_res_norm_q8_{t}_a16_y16 matvec_k_glu_res_norm_q {type} YMAX=65504 alias:A=f16 alias:O=f16
//! variant-lanes matvec_norm_q8_{t}_a16_y32 matvec_k_norm_q {type} alias:A=f16
//! variant-lanes matvec_norm_{t}_a32_y32 matvec_k_norm {type}
//! variant-lanes matvec_norm_{t}_a16_y32 matvec_k_norm_h {type} AMAX=65504 alias:A=f16
//! variant-lanes matvec_rope_norm_w_{t}_a16_c32 matvec_k_rope_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16 XV=8 alias:XVA=XV8
//! variant-lanes matvec_rope_norm_w_{t}_a16_c16 matvec_k_rope_norm_h {type} YMAX=65504 AMAX=65504 CMAX=65504 alias:A=f16 alias:O=f16 alias:C=f16 XV=8 alias:XVA=XV8
//! variant-lanes matvec_glu_norm_w_{t}_a16_y16 matvec_k_glu_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16 XV=8 alias:XVA=XV8
//! variant-i8glu matvec_glu_norm_q8_w_{t}_a16_y16 matvec_k_glu_norm_q {type} YMAX=65504 alias:A=f16 alias:O=f16 XV=8 alias:XVA=XV8
//! variant-lanes matvec_glu_res_norm_w_{t}_a16_y16 matvec_k_glu_res_norm_h {type} YMAX=65504 AMAX=65504 alias:A=f16 alias:O=f16 XV=8 alias:XVA=XV8
//! variant-i8glu matvec_glu_res_norm_q8_w_{t}_a16_y16 matvec_k_glu_res_norm_q {type} YMAX=65504 alias:A=f16 alias:O=f16 XV=8 alias:XVA=XV8
//! variant-lanes matvec_norm_q8_w_{t}_a16_y32 matvec_k_norm_q {type} alias:A=f16 XV=8 alias:XVA=XV8
//! variant-lanes matvec_norm_w_{t}_a16_y32 matvec_k_norm_h {type} AMAX=65504 alias:A=f16 XV=8 alias:XVA=XV8
// The gate/up on int8 activations without integer dot products (matvec_k_glu_norm_s): the Q4_K layout's
// types only (their WT, BLK, BB as config/dtypes.def's rows; edge fat checks both on every device).
//! variant matvec_glu_norm_s8_q4_k_a32_y32 matvec_k_glu_norm_s WT=7 BLK=256 BB=144 HDR=0
//! variant matvec_glu_norm_s8_q5_k_a32_y32 matvec_k_glu_norm_s WT=14 BLK=256 BB=176 HDR=0

//! include common/mm_head.wgsl
//! include common/clampn.wgsl
//! include common/dq4.wgsl
//! include common/q6a.wgsl
//! include common/ldraw.wgsl
//! include common/bgrp.wgsl

// ---- get_rows: yr[:, t] = dequant(row ids[t]) * scale ------------------------------------
// grid (ceil(k / 256), t); a chunk dispatch writes only the tokens whose id is in its rows;
// the first chunk writes zeros for ids past the whole tensor (never uninitialised memory).
@compute @workgroup_size(64)
fn get_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = wid.y;
    let i = (wid.x * 64u + lid.x) * 4u;
    if (i >= p.k || t >= p.t) { return; }
    let id = ids[t];
    var v = vec4<f32>(0.0);
    if (id >= p.r0 && id - p.r0 < p.rows) { v = dq4((id - p.r0) * row_bytes(p.k), i, p.k) * p.scale; }
    else if (!(p.r0 == 0u && id >= p.m)) { return; }
    for (var c = 0u; c < 4u; c = c + 1u) { if (i + c < p.k) { yr[t * p.k + i + c] = v[c]; } }
}

// ---- matvec (decode): workgroups of MVT invocations; 2^p.ll lanes per row -----------------
// The host picks the lanes per row for each product (ops_matmul.c mv_lanes): many lanes for few
// long rows (ffn_down: 2,048 rows, 128 lanes), few for many rows (LM head: 8), so that every
// product runs enough invocations to keep the GPU's loads in flight. Workgroup g (g = x + y *
// grid x, so groups past 65535 spill into y) takes rows g * MVT / lanes ..; token = z. The
// lanes of a row read neighbouring weight words and neighbouring activations on every pass
// (coalesced loads); their partial sums are added by a tree in shared memory.
//   matvec (every type): lane l takes elements 4l.., 4l + 4 lanes.., ... through dq4.
//   matvec_k (Q4_K, Q6_K): 8 lanes per super-block (lanes / 8 super-blocks per pass); lane l
//   takes the (l % 8)-th words of its super-block's quants (Q4_K: qs, Q6_K: ql) with the
//   scales it needs, i.e. 32 elements, unpacked 4 bytes at a time. The f16-pair lanes (*_h
//   entries: q4k_lane_x, q6k_lane_x) take 2-word chunks instead, so that their activations are
//   16-byte loads of 8 halves (x8, xv8) that neighbouring lanes take from neighbouring bytes.
// The glu entries compute lanes-per-row output rows' gate rows in the first half of the
// workgroup and the same up rows in the second.
const MVT = 128u;
// red (one partial sum per invocation) is common/bgrp.wgsl's: IQ4's table lives there while the lanes run
@group(0) @binding(1) var<storage, read> x4: array<vec4<A>>;    // matvec_k: activations by 4

fn hsum(v: vec4<f32>) -> f32 { return (v.x + v.y) + (v.z + v.w); }

// The sum over the lanes of each row; every invocation gets its row's sum. Called by all
// invocations.
fn mv_reduce(l: u32, s: f32) -> f32 {
    red[l] = s;
    workgroupBarrier();
    let nl = 1u << p.ll;
    for (var h = nl / 2u; h > 0u; h = h >> 1u) {
        if ((l & (nl - 1u)) < h) { red[l] = red[l] + red[l + h]; }
        workgroupBarrier();
    }
    return red[l & ~(nl - 1u)];
}

// this invocation's row (of rows_per_group rows per workgroup: all, or half for glu)
fn mv_row(wid: vec3<u32>, nw: vec3<u32>, l: u32, half: bool) -> u32 {
    let g = wid.x + wid.y * nw.x;
    if (half) { let per = (MVT / 2u) >> p.ll; return g * per + (l >> p.ll) % per; }
    return g * (MVT >> p.ll) + (l >> p.ll);
}

// The ids of a decode invocation (every matvec entry takes them as one argument) and its lane in its row.
struct Inv { @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32> }
fn lane_of(l: u32) -> u32 { return l & ((1u << p.ll) - 1u); }

// A one-row product's output (matvec_k, matvec_k_h): its row, lead = lane 0 of a row of the chunk,
// and the value to add that lead reads first (store_pre); mv_out_store's z: the token.
struct MvOut { row: u32, lead: bool, prev: O }
fn mv_out(v: Inv) -> MvOut {
    let row = mv_row(v.wid, v.nw, v.lid.x, false);
    let lead = lane_of(v.lid.x) == 0u && row < p.rows;
    var prev = O(0.0);
    if (lead) { prev = store_pre(v.wid.z * p.m + p.r0 + row); }
    return MvOut(row, lead, prev);
}
fn mv_out_store(o: MvOut, z: u32, t: f32) { if (o.lead) { store_with(z * p.m + p.r0 + o.row, t, o.prev); } }

// lane i's share of row `row` (every weight type): elements 4i.., 4i + 4 lanes.., ...
// Every dot_* takes the entry's row guard ok (a lane of a row past the chunk sums nothing) and the invocation l.
fn dot_any(ok: bool, row: u32, l: u32, z: u32) -> f32 {
    var s = 0.0;
    if (ok) {
        let i = lane_of(l);
        let rb = row * row_bytes(p.k);
        let xb = z * p.k;
        let n4 = (p.k + 3u) / 4u;
        for (var e = i; e < n4; e = e + (1u << p.ll)) { s = s + dot(dq4(rb, 4u * e, p.k), xload4(xb, 4u * e, p.k)); }
    }
    return s;
}


// ---- the decode entries -----------------------------------------------------------------------
// Each entry is its product's rows (mv_row, mv_out, rope_head), its prologue (the *_norm entries:
// mv_norm_xn, mv_norm_h, mv_norm_q, mv_norm_s, mv_res_norm_*), one lane family's dot (f32 lanes: dot_any, dot_k,
// dot_kn; f16-pair lanes: dot_k_h, dot_kn_h; int8 lanes: dot_kn_q, in 32-bit multiplies: dot_kn_s), the reduction and its epilogue
// (store, mv_out_store, glu_*_store, rope_epilogue). The families stay separate entries: a function
// that uses f16 (or dot4I8Packed, or a workgroup array) makes every entry that reaches it need it.
@compute @workgroup_size(MVT)
fn matvec(v: Inv) {
    let row = mv_row(v.wid, v.nw, v.lid.x, false);
    let t = mv_reduce(v.lid.x, dot_any(row < p.rows, row, v.lid.x, v.wid.z));
    if (lane_of(v.lid.x) == 0u && row < p.rows) { store(v.wid.z * p.m + p.r0 + row, t); }
}
@compute @workgroup_size(MVT)
fn matvec_glu(v: Inv) {
    let r = mv_row(v.wid, v.nw, v.lid.x, true);
    glu_half_store(v.lid.x, r, v.wid.z, mv_reduce(v.lid.x, dot_any(r < p.rows, glu_wrow(v.lid.x, r), v.lid.x, v.wid.z)));
}
// The glu rows of the *_norm_h / *_norm_q entries after their prologues, by pairs over the normalized row
fn glu_rows_h(v: Inv) {
    let r = mv_row(v.wid, v.nw, v.lid.x, false);
    glu_pair_store(v.lid.x, r, v.wid.z, mv_reduce2(v.lid.x, dot_kn_h(r < p.rows, r, r + p.rows, true, v.lid.x)));
}
fn glu_rows_q(v: Inv) {
    let r = mv_row(v.wid, v.nw, v.lid.x, false);
    glu_pair_store(v.lid.x, r, v.wid.z, mv_reduce2(v.lid.x, dot_kn_q(r < p.rows, r, r + p.rows, true, v.lid.x)));
}
@compute @workgroup_size(MVT)
fn matvec_k(v: Inv) {
    let o = mv_out(v);
    mv_out_store(o, v.wid.z, mv_reduce(v.lid.x, dot_k(o.row < p.rows, o.row, v.lid.x, v.wid.z)));
}
@compute @workgroup_size(MVT)
fn matvec_k_h(v: Inv) {
    let o = mv_out(v);
    mv_out_store(o, v.wid.z, mv_reduce(v.lid.x, dot_k_h(o.row < p.rows, o.row, o.row, false, v.lid.x, v.wid.z).x));
}
@compute @workgroup_size(MVT)
fn matvec_k_glu(v: Inv) {
    let r = mv_row(v.wid, v.nw, v.lid.x, true);
    glu_half_store(v.lid.x, r, v.wid.z, mv_reduce(v.lid.x, dot_k(r < p.rows, glu_wrow(v.lid.x, r), v.lid.x, v.wid.z)));
}
@compute @workgroup_size(MVT)
fn matvec_k_rope(v: Inv) {
    let r = rope_head(v);
    rope_epilogue(v.lid.x, v.wid.z, r, mv_reduce(v.lid.x, dot_k(r.row < p.rows, r.row, v.lid.x, v.wid.z)));
}
@compute @workgroup_size(MVT)
fn matvec_k_glu_h(v: Inv) {
    let r = mv_row(v.wid, v.nw, v.lid.x, false);
    glu_pair_store(v.lid.x, r, v.wid.z, mv_reduce2(v.lid.x, dot_k_h(r < p.rows, r, r + p.rows, true, v.lid.x, v.wid.z)));
}
@compute @workgroup_size(MVT)
fn matvec_k_rope_h(v: Inv) {
    let r = rope_head(v);
    rope_epilogue(v.lid.x, v.wid.z, r, mv_reduce(v.lid.x, dot_k_h(r.row < p.rows, r.row, r.row, false, v.lid.x, v.wid.z).x));
}
// (the *_norm entries' input is the residual row of token wid.z)
@compute @workgroup_size(MVT)
fn matvec_k_glu_norm(v: Inv) {
    mv_norm_xn(v.lid.x, v.wid.z, &gnw);
    let r = mv_row(v.wid, v.nw, v.lid.x, true);
    glu_half_store(v.lid.x, r, v.wid.z, mv_reduce(v.lid.x, dot_kn(r < p.rows, glu_wrow(v.lid.x, r), v.lid.x)));
}
@compute @workgroup_size(MVT)
fn matvec_k_rope_norm(v: Inv) {
    let r = rope_head(v);
    mv_norm_xn(v.lid.x, v.wid.z, &rnw);
    rope_epilogue(v.lid.x, v.wid.z, r, mv_reduce(v.lid.x, dot_kn(r.row < p.rows, r.row, v.lid.x)));
}
@compute @workgroup_size(MVT)
fn matvec_k_glu_norm_h(v: Inv) { mv_norm_h(v.lid.x, v.wid.z, &gnw); glu_rows_h(v); }
@compute @workgroup_size(MVT)
fn matvec_k_rope_norm_h(v: Inv) {
    let r = rope_head(v);
    mv_norm_h(v.lid.x, v.wid.z, &rnw);
    rope_epilogue(v.lid.x, v.wid.z, r, mv_reduce(v.lid.x, dot_kn_h(r.row < p.rows, r.row, r.row, false, v.lid.x).x));
}
// q/k/v of the models whose per-head q/k norms keep RoPE out of the product (Qwen3, Gemma 3): the
// plain product of the attention-normed residual row (rows as matvec_k's, token wid.z)
@compute @workgroup_size(MVT)
fn matvec_k_norm(v: Inv) {
    mv_norm_xn(v.lid.x, v.wid.z, &gnw);
    let o = mv_out(v);
    mv_out_store(o, v.wid.z, mv_reduce(v.lid.x, dot_kn(o.row < p.rows, o.row, v.lid.x)));
}
@compute @workgroup_size(MVT)
fn matvec_k_norm_h(v: Inv) {
    mv_norm_h(v.lid.x, v.wid.z, &gnw);
    let o = mv_out(v);
    mv_out_store(o, v.wid.z, mv_reduce(v.lid.x, dot_kn_h(o.row < p.rows, o.row, o.row, false, v.lid.x).x));
}
@compute @workgroup_size(MVT)
fn matvec_k_glu_norm_q(v: Inv) { mv_norm_q(v.lid.x, v.wid.z, &gnw); glu_rows_q(v); }
// the same on int8 activations in 32-bit multiplies (devices without integer dot products or f16: the
// *_s section below); gate rows on the workgroup's first half, up rows on its second, as matvec_k_glu_norm
@compute @workgroup_size(MVT)
fn matvec_k_glu_norm_s(v: Inv) {
    mv_norm_s(v.lid.x, v.wid.z, &gnw);
    let r = mv_row(v.wid, v.nw, v.lid.x, true);
    glu_half_store(v.lid.x, r, v.wid.z, mv_reduce(v.lid.x, dot_kn_s(r < p.rows, glu_wrow(v.lid.x, r), v.lid.x)));
}
// Gemma's gate/up with the attention residual in the prologue (mv_res_add) before the FFN norm
@compute @workgroup_size(MVT)
fn matvec_k_glu_res_norm_h(v: Inv) { mv_res_norm_h(v); glu_rows_h(v); }
@compute @workgroup_size(MVT)
fn matvec_k_glu_res_norm_q(v: Inv) { mv_res_norm_q(v); glu_rows_q(v); }
// The LM head in decode: rmsnorm of the f32 residual row (the output norm) and the product with
// every row of the weight chunk, one dispatch. The prologue is the same work for every workgroup,
// so the grid is capped (the host's choice, num_workgroups) and each workgroup takes groups of
// MVT >> ll rows wid.x, wid.x + nw.x, ... after one prologue.
@compute @workgroup_size(MVT)
fn matvec_k_norm_q(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                   @builtin(local_invocation_id) lid: vec3<u32>) {     // (its loop's barrier: wid, nw uniform)
    let l = lid.x;
    mv_norm_q(l, wid.z, &onw);
    let per = MVT >> p.ll;
    for (var g = wid.x; g < (p.rows + per - 1u) / per; g = g + nw.x) {
        let row = g * per + (l >> p.ll);
        let t = mv_reduce(l, dot_kn_q(row < p.rows, row, row, false, l).x);
        if (lane_of(l) == 0u && row < p.rows) { store(wid.z * p.m + p.r0 + row, t); }
        workgroupBarrier();                      // red is read before the next group writes it
    }
}

// ---- matvec_glu (decode): the FFN's gate and up products and the activation in one pass ----
// The weight binding holds the gate rows and then the up rows (rows = n_ff each); a workgroup
// computes MVT / 2 / lanes output rows: their gate rows on the first half of the invocations,
// their up rows on the second, and stores act(gate) * up, both rounded to O first, as the
// separate kernels (matvec, glu.wgsl) would.
fn sigmoid(z: f32) -> f32 {
    let e = exp(-abs(z));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), z >= 0.0);
}
fn glu_store(idx: u32, g: f32, u: f32) {
    let x = f32(O(clampn(g, YMAX)));
    var z = x;
    if (p.act != 0u) { z = 2.0 * clamp(0.7978845608028654 * (x + 0.044715 * x * x * x), -15.0, 15.0); }
    y[idx] = O(clampn(x * sigmoid(z) * f32(O(clampn(u, YMAX))), YMAX));
}
// The glu rows by halves (f32 lanes): output row r's gate row on the workgroup's first half, its up row
// (glu_wrow) on the second; the first half's lane 0 stores with the up sum from red. z: the token.
fn glu_wrow(l: u32, r: u32) -> u32 { return r + (l / (MVT / 2u)) * p.rows; }
fn glu_half_store(l: u32, r: u32, z: u32, t: f32) {
    if (lane_of(l) == 0u && l < MVT / 2u && r < p.rows) { glu_store(z * p.m + r, t, red[l + MVT / 2u]); }
}
// The glu rows by pairs (f16-pair and int8 lanes): an invocation takes gate row r and up row r + rows on
// one set of activations; the sums are reduced as pairs (mv_reduce2).
fn glu_pair_store(l: u32, r: u32, z: u32, t: vec2<f32>) { if (lane_of(l) == 0u && r < p.rows) { glu_store(z * p.m + r, t.x, t.y); } }


// The k-quant lanes: 8 lanes per super-block, lanes / 8 super-blocks per pass of a row.
// Lane c of a super-block takes the quant words c, c+8, c+16, c+24 (neighbouring lanes read
// neighbouring words and neighbouring activations), i.e. 32 elements, and decodes the scales
// and d of its super-block once for them.

// Q4_K super-block at word ow (d | dmin << 16, 12 scale bytes, qs[128]); qs word c + 8k holds
// elements 64k + 4c .. +3 in its low nibbles (sub-block 2k) and 64k + 32 + 4c .. +3 in its high
// nibbles (sub-block 2k + 1). xa: the lane's activations (sb_x).
// A Q4_K super-block's d, dmin and its 8 scales and minimums as the bytes of four words: sub-blocks
// j < 4 have 6 bits in bytes j, j + 4; j >= 4 the low 4 bits in byte j + 4 and the high 2 in the top
// of bytes j - 4 / j.
struct Q4Head { d: f32, dm: f32, sc03: u32, mn03: u32, sc47: u32, mn47: u32, dd: u32 }
fn q4k_head(ow: u32) -> Q4Head {
    let hv = wvec(ow / 4u);                     // (ow = 36 bi: a multiple of 4 words)
    let dd = hv.x;
    let s0 = hv.y; let s4 = hv.z; let s8 = hv.w;  // scale bytes 0..11
    return Q4Head(f16v(dd & 0xffffu), f16v(dd >> 16u), s0 & 0x3f3f3f3fu, s4 & 0x3f3f3f3fu,
                  (s8 & 0x0f0f0f0fu) | ((s0 >> 2u) & 0x30303030u), ((s8 >> 4u) & 0x0f0f0f0fu) | ((s4 >> 2u) & 0x30303030u), dd);
}

fn q4k_lane(ow: u32, c: u32, xa: array<vec4<f32>, 8>) -> f32 {
    let hd = q4k_head(ow);
    let d = hd.d; let dm = hd.dm;
    let sc03 = hd.sc03; let mn03 = hd.mn03; let sc47 = hd.sc47; let mn47 = hd.mn47;
    var acc = 0.0;
    for (var k = 0u; k < 4u; k = k + 1u) {     // sub-blocks 2k, 2k + 1
        let sl = 16u * (k & 1u);
        let scw = select(sc03, sc47, k >= 2u);
        let mnw = select(mn03, mn47, k >= 2u);
        let q = wword(ow + q4k_qs() + c + 8u * k);
        let a = xa[2u * k];
        let b = xa[2u * k + 1u];
        var ql = q & 0x0f0f0f0fu; var qu = (q >> 4u) & 0x0f0f0f0fu;
        if (WT == WT_Q5_K) { let qh = wword(ow + 4u + c); ql = ql | q5k_hb(qh, 2u * k); qu = qu | q5k_hb(qh, 2u * k + 1u); }
        acc = acc + (d * f32((scw >> sl) & 0xffu)) * dot(bytes_f32(ql, 0.0), a) - (dm * f32((mnw >> sl) & 0xffu)) * hsum(a)
                  + (d * f32((scw >> (sl + 8u)) & 0xffu)) * dot(bytes_f32(qu, 0.0), b) - (dm * f32((mnw >> (sl + 8u)) & 0xffu)) * hsum(b);
    }
    return acc;
}

// Q6_K super-block bi (ql[128], qh[64], i8 scales[16], f16 d; parts at q6a(bi)); ql word c + 8k:
// half h = k / 2, quarters qa = k % 2 (low nibbles) and qa + 2 (high), l0 = 4c: elements 128h +
// 32qq + l0 .. +3, high bits from qh[32h + l0 ..] (2 bits at 2qq), scale byte 8h + l0 / 16 + 2qq.
// Lane c's share of a Q6_K super-block's head: the 16 scale bytes (one 16-byte load), the scale
// words shifted to byte c / 4 (sw0: h = 0, quarters 0, -, 1, -; sw1: quarters 2, -, 3, -; sw2, sw3:
// h = 1), d, the high-bit words of both halves and the word index of ql.
struct Q6Head { sw0: u32, sw1: u32, sw2: u32, sw3: u32, d: f32, qh0: u32, qh1: u32, qlw: u32 }
fn q6k_head(bi: u32, c: u32) -> Q6Head {
    let a = q6a(bi);
    let s = wvec(a.sc / 16u);
    let bc = 8u * (c / 4u);
    return Q6Head(s.x >> bc, s.y >> bc, s.z >> bc, s.w >> bc, f16v(q6d(a) & 0xffffu),
                  wword(a.qh / 4u + c), wword(a.qh / 4u + 8u + c), a.ql / 4u);
}

fn q6k_lane(bi: u32, c: u32, xa: array<vec4<f32>, 8>) -> f32 {
    let hd = q6k_head(bi, c);
    let sw0 = hd.sw0; let sw1 = hd.sw1; let sw2 = hd.sw2; let sw3 = hd.sw3; let d = hd.d; let qh0 = hd.qh0; let qh1 = hd.qh1;
    var acc = 0.0;
    for (var k = 0u; k < 4u; k = k + 1u) {
        let h = k / 2u;
        let qa = k % 2u;
        let ql = wword(hd.qlw + c + 8u * k);
        let qh = select(qh0, qh1, h == 1u);
        let swa = select(sw0, sw2, h == 1u);     // already shifted to scale byte c / 4
        let swb = select(sw1, sw3, h == 1u);
        let sa = f32(i8v((swa >> (16u * qa)) & 0xffu));
        let sb = f32(i8v((swb >> (16u * qa)) & 0xffu));
        let m0 = bytes_f32((ql & 0x0f0f0f0fu) | (((qh >> (2u * qa)) & 0x03030303u) << 4u), 32.0);
        let m1 = bytes_f32(((ql >> 4u) & 0x0f0f0f0fu) | (((qh >> (2u * qa + 4u)) & 0x03030303u) << 4u), 32.0);
        acc = acc + sa * dot(m0, xa[2u * k]) + sb * dot(m1, xa[2u * k + 1u]);
    }
    return d * acc;
}

// The lane shape of the weight type (its lanes column in config/dtypes.def): the k-quant lanes
// (Q4_K, Q5_K, Q6_K; is_q4k: Q4_K's layout, Q5_K with its fifth bits) or the group lanes (is_b).
fn is_b() -> bool { return WT != WT_Q4_K && WT != WT_Q5_K && WT != WT_Q6_K; }
fn is_q4k() -> bool { return WT == WT_Q4_K || WT == WT_Q5_K; }
fn q4k_words() -> u32 { return select(36u, 44u, WT == WT_Q5_K); }   // words per super-block (144, 176 bytes)
fn q4k_qs() -> u32 { return select(4u, 12u, WT == WT_Q5_K); }       // word of qs[128] (Q5_K: after qh[32])
// Q5_K: the fifth bits of a qs word's 4 elements of sub-block j (qh word = the same positions l) at bit 4 of each byte
fn q5k_hb(qh: u32, j: u32) -> u32 { return ((qh >> j) & 0x01010101u) << 4u; }
// The units of 256 elements a lane loop takes (a group-lane row may end inside one: bgrp_in guards
// a lane's group g, 8 per unit)
fn n_units() -> u32 { if (is_b()) { return (p.k + 255u) / 256u; } return p.k / 256u; }
fn bgrp_in(g: u32) -> bool { return !is_b() || g < p.k / 32u; }

// The group lanes' block decode (bgrp, span8, the IQ4 codebook kv4 / kv8) is common/bgrp.wgsl, shared
// with matmul_tile.wgsl (matmul_q's Q2_K / Q3_K).
// IQ4_NL / IQ4_XS in the decode lanes: the codebook through a table in shared memory (kv4's selects cost
// ~13 integer ops a value), in the form its lane family takes: the f32 lanes (dot_k, dot_kn: lut_init)
// red[16 j + n] = nibble n's value + 128 as the byte at byte j, so a word of 4 values is 4 reads ORed
// (kv8); the int8 lanes (dot_kn_q: lut_init_x(l, 0x80)) the same bytes as int8 values; the f16-pair lanes
// (dot_k_h, dot_kn_h: lut_init_h) f16 values in half-words (kvh). red is free while the lanes run; 16
// words per byte position, so no bank conflicts. Each dot_* makes its table first (after the prologue's
// use of red) and ends on a barrier (lut_done: the reduction writes red next). Other types: no code. (A 1 KiB table of its own, 2 nibbles a
// read, made the other types' entries 0.4-1.4% slower on the H200: shared memory every entry declares.)
fn lut_init(l: u32) { lut_init_x(l, 0u); }
// the table with every value byte ^ x: 0x80 gives the values as int8 (the int8 lanes, dot_kn_q)
fn lut_init_x(l: u32, x: u32) {
    if (!is_iq4()) { return; }
    workgroupBarrier();
    if (l < 64u) { red[l] = bitcast<f32>(((kv4(l % 16u) ^ x) & 0xffu) << (8u * (l / 16u))); }
    workgroupBarrier();
}
// the f16-pair lanes' table (dot_k_h, dot_kn_h): red[16 h + n] = nibble n's value times HB as an f16 in
// half h of a word, so a pair is 2 reads ORed, with nothing to convert (iq4_lane_x)
fn lut_init_h(l: u32) {
    if (!is_iq4()) { return; }
    workgroupBarrier();
    if (l < 32u) {
        let v = f16(f32(i32(kv4(l % 16u) & 0xffu) - 128) * HB);
        red[l] = bitcast<f32>(bitcast<u32>(vec2<f16>(v, 0.0h)) << (16u * (l / 16u)));
    }
    workgroupBarrier();
}
fn lut_done() { if (is_iq4()) { workgroupBarrier(); } }
// the f32 group lane: group g, its activations in xa (sb_x)
fn b_lane(row: u32, g: u32, xa: array<vec4<f32>, 8>) -> f32 {
    let r = bgrp(row, g);
    var s = vec2<f32>(0.0);
    var sx = vec2<f32>(0.0);
    for (var j = 0u; j < 8u; j = j + 1u) {
        s[j / 4u] = s[j / 4u] + dot(bytes_f32(r.u[j], bgrp_off()), xa[j]);
        if (bgrp_min()) { sx[j / 4u] = sx[j / 4u] + hsum(xa[j]); }
    }
    if (bgrp_min()) { return dot(r.d, s) + dot(r.m, sx); }
    return dot(r.d, s);
}

// Activation j (0..7) of lane c of a super-block, as a vec4 offset from the super-block's first
// activation: Q4_K word k takes elements 64k + 4c.. (j = 2k) and 64k + 32 + 4c.. (j = 2k + 1);
// Q6_K quarter k takes 128 (k / 2) + 32 (k % 2) + 4c.. (j = 2k) and that + 64 (j = 2k + 1).
// The group lanes (is_b): lane c takes group c of the unit, 8 vec4 from 8c.
fn sb_x(c: u32, j: u32) -> u32 {
    let k = j / 2u;
    if (is_b()) { return 8u * c + j; }
    if (is_q4k()) { return 16u * k + 8u * (j % 2u) + c; }
    return 32u * (k / 2u) + 8u * (k % 2u) + 16u * (j % 2u) + c;
}
fn lane_k(row: u32, b: u32, c: u32, xa: array<vec4<f32>, 8>) -> f32 {
    if (is_b()) { return b_lane(row, 8u * b + c, xa); }
    let nsb = p.k / 256u;
    if (is_q4k()) { return q4k_lane((row * nsb + b) * q4k_words(), c, xa); }
    return q6k_lane(row * nsb + b, c, xa);
}

// lane i's share of k-quant row `row`, activations of token z from x4
fn dot_k(ok: bool, row: u32, l: u32, z: u32) -> f32 {
    var s = 0.0;
    lut_init(l);
    if (ok) {
        let i = lane_of(l);
        let c = i % 8u;
        let xv = z * p.k / 4u;
        for (var b = i / 8u; b < n_units(); b = b + (1u << p.ll) / 8u) {
            if (!bgrp_in(8u * b + c)) { continue; }
            var xa: array<vec4<f32>, 8>;
            for (var j = 0u; j < 8u; j = j + 1u) { xa[j] = vec4<f32>(x4[xv + 64u * b + sb_x(c, j)]); }
            s = s + lane_k(row, b, c, xa);
        }
    }
    lut_done();
    return s;
}

// ---- the *_norm entries (decode: a workgroup's token z = wid.z): the input is the f32 residual row and the product
// takes its RMSNorm (times the norm weight, rounded to A as rmsnorm.wgsl's output would be), made by
// each workgroup into shared memory first: one dispatch fewer than rmsnorm + matvec. k <= 3072 (XV = 6);
// the *_norm_w variants (f16 activations) take k <= 4096 (XV = 8): entries of their own, since the larger
// arrays cost the common rows' entries (docs/perf-log.md, session 21).
var<workgroup> xn: array<vec4<f32>, MVT * XV>;
var<workgroup> red2: array<vec2<f32>, 128>;
@group(0) @binding(1) var<storage, read> xr: array<vec4<f32>>;      // *_norm: the residual rows (k, t)

// 1 / rms of the row as rmsnorm.wgsl computes it (max and sum of squares in one pass, a second
// pass pre-scaled by 1/max only when the squares could overflow), from this invocation's share of
// the row already in registers: elements 4 (l + MVT j) .. +3 in xv[j], so the prologue waits for
// memory once. mv_norm_store then writes rmsnorm(x) * g (the weight in gv[j], rounded to A as
// rmsnorm.wgsl's output would be) into xn, mv_norm_store_h into xh / xsm; both end on a barrier.
override XV: u32 = 6u;                             // k <= 4 x MVT x XV = 3072 (the *_norm_w variants: 8, 4096;
alias XV6 = array<vec4<f32>, 6>;                   // an invocation's share of the row, XVA, holds XV vec4: the
alias XV8 = array<vec4<f32>, 8>;                   // variants set both)
alias XVA = XV6;
fn mv_norm_inv(l: u32, xv: ptr<function, XVA>) -> f32 {
    var m = 0.0;
    var s = 0.0;
    for (var j = 0u; j < XV; j = j + 1u) {
        let v = (*xv)[j];
        m = max(m, max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w))));
        s = s + dot(v, v);
    }
    red2[l] = vec2<f32>(m, s);
    workgroupBarrier();
    for (var h = MVT / 2u; h > 0u; h = h >> 1u) {
        if (l < h) { let a = red2[l]; let b = red2[l + h]; red2[l] = vec2<f32>(max(a.x, b.x), a.y + b.y); }
        workgroupBarrier();
    }
    let r = workgroupUniformLoad(&red2[0]);
    var inv = 1.0 / sqrt(r.y / f32(p.k) + p.eps);
    if (!(r.x < 1e15)) {
        let sc = 1.0 / r.x;
        var s2 = 0.0;
        for (var j = 0u; j < XV; j = j + 1u) { let v = (*xv)[j] * sc; s2 = s2 + dot(v, v); }
        red[l] = s2;
        workgroupBarrier();
        for (var h = MVT / 2u; h > 0u; h = h >> 1u) {
            if (l < h) { red[l] = red[l] + red[l + h]; }
            workgroupBarrier();
        }
        let t = workgroupUniformLoad(&red[0]);
        inv = sc / sqrt(t / f32(p.k) + p.eps * sc * sc);
    }
    return inv;
}
// this invocation's share of two rows a (token z's row) and b of k (zeros past k): the residual row and
// the norm weight g (mv_norm_load), the attention output and the post-attention norm weight (mv_res_add)
fn mv_load2(l: u32, z: u32, a: ptr<storage, array<vec4<f32>>, read>, b: ptr<storage, array<vec4<f32>>, read>,
            av: ptr<function, XVA>, bv: ptr<function, XVA>) {
    let ao = z * (p.k / 4u);
    for (var j = 0u; j < XV; j = j + 1u) {
        let i = l + MVT * j;
        if (i < p.k / 4u) { (*av)[j] = (*a)[ao + i]; (*bv)[j] = (*b)[i]; } else { (*av)[j] = vec4<f32>(0.0); (*bv)[j] = vec4<f32>(0.0); }
    }
}
fn mv_norm_load(l: u32, z: u32, xv: ptr<function, XVA>, gv: ptr<function, XVA>,
                g: ptr<storage, array<vec4<f32>>, read>) { mv_load2(l, z, &xr, g, xv, gv); }
// *_res_norm entries (Gemma: the post-attention norm and residual add before the FFN norm): the
// residual row in xv becomes x' = x + rmsnorm(o) * pw as rmsnorm_add computes it, the grid's first
// workgroup stores x' into xw (another buffer: the other workgroups still read x), and the entry
// goes on to normalize x'. o and pw are loaded beside x, so the prologue waits for memory once.
@group(0) @binding(4) var<storage, read> ro: array<vec4<f32>>;             // *_res_norm: o, the attention output rows (k, t)
@group(0) @binding(5) var<storage, read> rpw: array<vec4<f32>>;            // *_res_norm: the post-attention norm weight (k)
@group(0) @binding(6) var<storage, read_write> xw: array<vec4<f32>>;       // *_res_norm: x' (k, t)
fn mv_res_add(l: u32, z: u32, first: bool, xv: ptr<function, XVA>) {
    var ov: XVA; var pv: XVA;
    mv_load2(l, z, &ro, &rpw, &ov, &pv);
    let inv = mv_norm_inv(l, &ov);
    for (var j = 0u; j < XV; j = j + 1u) {
        (*xv)[j] = (*xv)[j] + ov[j] * inv * pv[j];
        let i = l + MVT * j;
        if (first && i < p.k / 4u) { xw[z * (p.k / 4u) + i] = (*xv)[j]; }
    }
}
fn mv_res_norm_load(v: Inv, xv: ptr<function, XVA>, gv: ptr<function, XVA>) {
    mv_norm_load(v.lid.x, v.wid.z, xv, gv, &gnw);
    mv_res_add(v.lid.x, v.wid.z, v.wid.x == 0u && v.wid.y == 0u, xv);
}
// the normalized values j of this invocation, rounded to A (the activations rmsnorm.wgsl would write)
fn mv_norm_val(xv: ptr<function, XVA>, gv: ptr<function, XVA>, j: u32, inv: f32) -> vec4<f32> {
    let v = (*xv)[j] * inv * (*gv)[j];
    return vec4<f32>(f32(A(clampn(v.x, AMAX))), f32(A(clampn(v.y, AMAX))), f32(A(clampn(v.z, AMAX))), f32(A(clampn(v.w, AMAX))));
}
fn mv_norm_store(l: u32, xv: ptr<function, XVA>, gv: ptr<function, XVA>, inv: f32) {
    for (var j = 0u; j < XV; j = j + 1u) { let i = l + MVT * j; if (i < p.k / 4u) { xn[i] = mv_norm_val(xv, gv, j, inv); } }
    workgroupBarrier();
}
// the f32 lanes' prologue: the normalized row (norm weight g) into xn
fn mv_norm_xn(l: u32, z: u32, g: ptr<storage, array<vec4<f32>>, read>) {
    var xv: XVA; var gv: XVA;
    mv_norm_load(l, z, &xv, &gv, g);
    mv_norm_store(l, &xv, &gv, mv_norm_inv(l, &xv));
}

// dot_k over the normalized row in xn
fn dot_kn(ok: bool, row: u32, l: u32) -> f32 {
    var s = 0.0;
    lut_init(l);
    if (ok) {
        let i = lane_of(l);
        let c = i % 8u;
        for (var b = i / 8u; b < n_units(); b = b + (1u << p.ll) / 8u) {
            if (!bgrp_in(8u * b + c)) { continue; }
            var xa: array<vec4<f32>, 8>;
            for (var j = 0u; j < 8u; j = j + 1u) { xa[j] = xn[64u * b + sb_x(c, j)]; }
            s = s + lane_k(row, b, c, xa);
        }
    }
    lut_done();
    return s;
}



@group(0) @binding(3) var<storage, read> gnw: array<vec4<f32>>;     // matvec_k_glu_norm: the norm weight (k)


// ---- matvec_k_rope (decode, one token): the q/k/v projection with what rope_kv.wgsl does in its
// epilogue. The weight binding holds rows of q, k and v back to back (all three, or a run of
// whole heads of them starting at row rbase of q|k|v). Rows are taken in RoPE pairs, both rows
// of a pair in one workgroup (lanes per row <= 64): pairs run head by head, pair i of a head is
// (2i, 2i + 1), or (i, i + n_rot / 2) with NEOX for i < n_rot / 2. The pair's first row's lane 0
// rounds both sums to A as the matvec's store would, adds the biases (rounded to A, as add_bias),
// rotates q and k (theta = p0 * freq_scale * base^(-2i / n_rot) / ff[i]) and stores q into y,
// k and v into the caches' row for the token's slot and position p0 (row z = wid.z of the rows table,
// common/rows.wgsl; row p0 % n_ctx of its slot; left alone when the row is past the table's).
@group(0) @binding(3) var<storage, read> rpos: array<u32>;          // the rows table
@group(0) @binding(4) var<storage, read> rff: array<f32>;           // (n_rot / 2) frequency factors
@group(0) @binding(5) var<storage, read_write> kc: array<C>;        // (head_dim * n_head_kv, n_ctx, n_seq)
@group(0) @binding(6) var<storage, read_write> vc: array<C>;
@group(0) @binding(7) var<storage, read> bq: array<f32>;            // biases, when p.bias != 0
@group(0) @binding(8) var<storage, read> bk: array<f32>;
@group(0) @binding(9) var<storage, read> bv: array<f32>;

fn rope_row(pr: u32, m: u32) -> u32 {
    let half = p.hd / 2u;
    let i = pr % half;
    let rb = (pr / half) * p.hd;
    if (p.neox != 0u && 2u * i < p.n_rot) { return rb + i + m * (p.n_rot / 2u); }
    return rb + 2u * i + m;
}
fn with_bias(v: f32, b: f32) -> f32 { if (p.bias == 0u) { return v; } return f32(O(clampn(v + b, YMAX))); }

// What the epilogue reads besides the sums (the position, the rotation, the biases), read by the
// pair's first row's lane 0 at the start of the entry, so those loads wait for memory beside the
// prologue's and the weights' instead of after the reduction.
// Nothing is computed from them here: a use would make the invocation wait for the loads before
// it issues the weights' (the epilogue computes the rotation). The rows table's other two words (the
// row count, the token's slot) are read in the epilogue: held from here they took the *_rope_norm
// entries from 79 to 81 registers, past the 80 that leave the H200 six workgroups of 128 per SM
// (five at 81-88): q/k/v went 10.5 -> 12.0 us per layer, llama-3.2-1b's decode 3.5% slower. Check
// EDGE_PIPE_STATS=1 after changing these entries (docs/perf-log.md, session 36).
struct RopePre { p0: u32, ff: f32, ba: f32, bb: f32 }
// the pair's rows g0 (this row), g1 (its partner) in q|k|v, the q rows nq and the k (and v) rows kvd
struct RopeG { g0: u32, g1: u32, nq: u32, kvd: u32 }
fn rope_g(pr: u32, row: u32) -> RopeG {
    let r1 = rope_row(pr, 1u);
    return RopeG(p.rbase + row, p.rbase + r1, p.hd * p.n_head, p.hd * p.n_head_kv);
}
fn rope_pre(l: u32, z: u32, pr: u32, row: u32) -> RopePre {
    var e = RopePre(0u, 1.0, 0.0, 0.0);
    let lanes = 1u << p.ll;
    if ((l & (2u * lanes - 1u)) != 0u || row >= p.rows) { return e; }
    e.p0 = rpos[2u + 2u * z];
    let rg = rope_g(pr, row);
    let g0 = rg.g0; let g1 = rg.g1; let nq = rg.nq; let kvd = rg.kvd;
    if (g0 >= nq + kvd) {                                       // v: no rotation
        if (p.bias != 0u) { e.ba = bv[(g0 - nq - kvd) % kvd]; e.bb = bv[(g1 - nq - kvd) % kvd]; }
        return e;
    }
    let i = pr % (p.hd / 2u);
    if (2u * i < p.n_rot) { e.ff = rff[i]; }
    if (p.bias != 0u) {
        if (g0 < nq) { e.ba = bq[g0 % nq]; e.bb = bq[g1 % nq]; }
        else { e.ba = bk[(g0 - nq) % kvd]; e.bb = bk[(g1 - nq) % kvd]; }
    }
    return e;
}

// The pair's first row's lane 0 (the rest return, and every lane of a token z past the rows table's
// count): t = its row's sum, the partner's in red.
fn rope_epilogue(l: u32, z: u32, r: RopeRow, t: f32) {
    let lanes = 1u << p.ll;
    let pr = r.pr; let row = r.row; let e = r.e;
    if ((l & (2u * lanes - 1u)) != 0u || row >= p.rows || z >= rpos[0]) { return; }
    let p0 = e.p0;
    let rg = rope_g(pr, row);
    let g0 = rg.g0; let g1 = rg.g1; let nq = rg.nq; let kvd = rg.kvd;
    var a = f32(O(clampn(t, YMAX)));
    var b = f32(O(clampn(red[l + lanes], YMAX)));
    a = with_bias(a, e.ba); b = with_bias(b, e.bb);
    if (g0 >= nq + kvd) {                                       // v: no rotation
        let v0 = g0 - nq - kvd; let v1 = g1 - nq - kvd;
        let cr = rpos[3u + 2u * z] * p.n_ctx + p0 % p.n_ctx;   // the slot's row (a ring where the cache has fewer rows than the context)
        vc[cr * kvd + v0] = C(clampn(a, CMAX));
        vc[cr * kvd + v1] = C(clampn(b, CMAX));
        return;
    }
    let i = pr % (p.hd / 2u);
    var c = 1.0; var sn = 0.0;
    if (2u * i < p.n_rot) {
        let theta = f32(p0) * p.freq_scale * exp2(-f32(2u * i) / f32(p.n_rot) * p.log2_base) / e.ff;
        c = cos(theta); sn = sin(theta);
    }
    if (g0 < nq) {                                              // q (of token z)
        y[z * nq + g0] = O(clampn(a * c - b * sn, YMAX));
        y[z * nq + g1] = O(clampn(a * sn + b * c, YMAX));
        return;
    }
    let cr = rpos[3u + 2u * z] * p.n_ctx + p0 % p.n_ctx;       // k -> the key cache row
    let k0 = g0 - nq; let k1 = g1 - nq;
    kc[cr * kvd + k0] = C(clampn(a * c - b * sn, CMAX));
    kc[cr * kvd + k1] = C(clampn(a * sn + b * c, CMAX));
}

// this invocation's rotation pair (pair slot / 2 of the workgroup) and row (member slot % 2)
fn rope_pair(wid: vec3<u32>, nw: vec3<u32>, l: u32) -> vec2<u32> {
    let slot = l >> p.ll;
    let pr = (wid.x + wid.y * nw.x) * ((MVT >> p.ll) / 2u) + slot / 2u;
    return vec2<u32>(pr, rope_row(pr, slot % 2u));
}
// this invocation's pair and row, and what its epilogue reads (rope_pre), read first; the token is wid.z
struct RopeRow { pr: u32, row: u32, e: RopePre }
fn rope_head(v: Inv) -> RopeRow {
    let pr = rope_pair(v.wid, v.nw, v.lid.x);
    return RopeRow(pr.x, pr.y, rope_pre(v.lid.x, v.wid.z, pr.x, pr.y));
}


@group(0) @binding(10) var<storage, read> rnw: array<vec4<f32>>;    // matvec_k_rope_norm: the norm weight (k)


// ---- the *_h entries: the decode lanes on f16 pairs (the A = f16 variants; b_lane_x above) ------
// Each entry is its f32 namesake's body with the lanes below (separate entries: a function that
// uses f16 makes every entry that reaches it need shaderFloat16). The f32 lanes are bound by the
// integer pipe on the H200 (shifts and masks: a bit-trick conversion that moved work from the
// conversion unit to it made decode 2-4% slower). Here a quant becomes an f16 with half an integer
// op: 0x4c00 | q is the f16 16 + q / 64 exactly (q < 64; the ulp of [16, 32) is 2^-6), so
// (w & 0x000f000f) | 0x4c004c00 minus 16 is two quants scaled by 2^-6 (HS), and one f16 fma takes
// two products; the 2^-6 keeps two products of a quant and any f16 value finite and is undone in d.
// The 16 scales and minimums of a super-block are decoded as the bytes of four words (9 integer ops
// instead of ~50), d and dmin converted by the f16 hardware (f16v's bit work is for the f32 lanes, on
// devices without f16). Activations are the f16 pairs (x0, x2), (x1, x3) of each 4 consecutive
// values, as stored (a permutation of halves: no arithmetic), and for the minimum term the sum of
// each 4 halved (HP: f16 (x0 + x2) / 2 and (x1 + x3) / 2 added in f32: finite for any f16 values;
// dmin is doubled for it). The lane rounds each product to f16 and adds two before converting to
// f32 (an error of ~2^-11 of each product, within the a16 kernels' tolerance; fat checks it).
// Measured on the H200 against the activations scaled by 2^-6 with f32 sums of 4 (session 15):
// tg128 qwen 765 -> 781, llama 1,143 -> 1,163, gemma 536 -> 549.
const HS = 0.015625;                   // 2^-6: the quants' scale
const HP = 0.5;                        // the minimum term's activation sums are halved
var<workgroup> xh: array<vec2<u32>, MVT * XV>;    // *_norm_h: the normalized row as f16 pairs
var<workgroup> xsm: array<f32, MVT * XV>;         // *_norm_h: the sum of each 4, times HP

// The *_h entries read their f16 activations as 16-byte vectors of 8 halves (x8, common/mm_head.wgsl).
// hv_pair: 4 halves held as 2 words as the lanes take them, the pairs (x0, x2), (x1, x3),
// and their sum times HP.
struct HPair { h: vec2<u32>, sum: f32 }
fn hv_pair(r: vec2<u32>) -> HPair {
    let p0 = bitcast<vec2<f16>>(r.x);
    let p1 = bitcast<vec2<f16>>(r.y);
    let h = vec2<u32>(bitcast<u32>(vec2<f16>(p0.x, p1.x)), bitcast<u32>(vec2<f16>(p0.y, p1.y)));
    let hs = fma(p0, vec2<f16>(f16(HP)), p1 * f16(HP));
    return HPair(h, f32(hs.x) + f32(hs.y));
}

// The f16-pair Q4_K lane (dot_k_h, dot_kn_h): lane c = 4 kk + c' of a super-block's 8 takes
// the sub-block pairs k = 2 kk + pi (pi = 0, 1), of each the quant words 2c' and 2c' + 1: elements
// 64k + 8c' .. +7 (low nibbles) and 64k + 32 + 8c' .. +7 (high), so its activations are four
// 16-byte loads that the 4 lanes of a pair take from 64 neighbouring bytes. xa[4 pi + 2 hl + wi],
// xsum alike: pair pi, low / high, word wi.
fn q4k_lane_x(ow: u32, c: u32, xa: array<vec2<u32>, 8>, xsum: array<f32, 8>) -> f32 {
    let hd = q4k_head(ow);
    let dh = vec2<f32>(bitcast<vec2<f16>>(hd.dd));
    let d = dh.x / HS; let dm = dh.y / HP;
    let kk = c / 4u;
    let cw = 2u * (c % 4u);
    let scw = select(hd.sc03, hd.sc47, kk == 1u);
    let mnw = select(hd.mn03, hd.mn47, kk == 1u);
    let one = vec2<f16>(16.0h);                 // (0x4c00)
    var acc = 0.0;
    for (var pi = 0u; pi < 2u; pi = pi + 1u) {
        let k = 2u * kk + pi;
        let sl = 16u * pi;
        var sl_ = 0.0; var sh_ = 0.0;
        for (var wi = 0u; wi < 2u; wi = wi + 1u) {
            let q = wword(ow + q4k_qs() + 8u * k + cw + wi);
            let a = xa[4u * pi + wi];
            let b = xa[4u * pi + 2u + wi];
            var l02 = q & 0x000f000fu; var l13 = (q >> 8u) & 0x000f000fu;
            var h02 = (q >> 4u) & 0x000f000fu; var h13 = (q >> 12u) & 0x000f000fu;
            if (WT == WT_Q5_K) {                // the fifth bits (16 + q / 64 stays exact for q < 64)
                let qh = wword(ow + 4u + cw + wi);
                let hl = q5k_hb(qh, 2u * k); let hh = q5k_hb(qh, 2u * k + 1u);
                l02 = l02 | (hl & 0x00ff00ffu); l13 = l13 | ((hl >> 8u) & 0x00ff00ffu);
                h02 = h02 | (hh & 0x00ff00ffu); h13 = h13 | ((hh >> 8u) & 0x00ff00ffu);
            }
            let lo02 = bitcast<vec2<f16>>(l02 | 0x4c004c00u) - one;
            let lo13 = bitcast<vec2<f16>>(l13 | 0x4c004c00u) - one;
            let hi02 = bitcast<vec2<f16>>(h02 | 0x4c004c00u) - one;
            let hi13 = bitcast<vec2<f16>>(h13 | 0x4c004c00u) - one;
            let pl = vec2<f32>(fma(lo13, bitcast<vec2<f16>>(a.y), lo02 * bitcast<vec2<f16>>(a.x)));
            let ph = vec2<f32>(fma(hi13, bitcast<vec2<f16>>(b.y), hi02 * bitcast<vec2<f16>>(b.x)));
            sl_ = sl_ + (pl.x + pl.y);
            sh_ = sh_ + (ph.x + ph.y);
        }
        acc = acc + (d * f32((scw >> sl) & 0xffu)) * sl_ - (dm * f32((mnw >> sl) & 0xffu)) * (xsum[4u * pi] + xsum[4u * pi + 1u])
                  + (d * f32((scw >> (sl + 8u)) & 0xffu)) * sh_ - (dm * f32((mnw >> (sl + 8u)) & 0xffu)) * (xsum[4u * pi + 2u] + xsum[4u * pi + 3u]);
    }
    return acc;
}
// The f16-pair Q6_K lane: lane c = 4 h + c' takes half h's ql words at bytes
// 64h + 32qa + 8c' .. +7 (qa = 0, 1): elements 128h + 32qa + 8c' .. +7 (low nibbles, quarter qa) and
// those + 64 (high, quarter qa + 2), their high bits from the 8 qh bytes 32h + 8c' ..; xa[4 qa + 2 hl + wi].
fn q6k_lane_x(bi: u32, c: u32, xa: array<vec2<u32>, 8>) -> f32 {
    let a = q6a(bi);
    let h = c / 4u;
    let cq = c % 4u;
    let qh0 = wword(a.qh / 4u + 8u * h + 2u * cq);
    let qh1 = wword(a.qh / 4u + 8u * h + 2u * cq + 1u);
    let s = wvec(a.sc / 16u);
    let sw0 = select(s.x, s.z, h == 1u) >> (8u * (cq / 2u));   // scale bytes 8h + c'/2 + 2qa at bits 16qa
    let sw1 = select(s.y, s.w, h == 1u) >> (8u * (cq / 2u));   // and those + 4 (quarters qa + 2)
    let d = f32(bitcast<vec2<f16>>(q6d(a)).x) / HS;
    let off = vec2<f16>(16.5h);                 // 16 + 32 / 64: q - 32 of the 6-bit quants, scaled by HS
    var acc = 0.0;
    for (var qa = 0u; qa < 2u; qa = qa + 1u) {
        var sl_ = 0.0; var sh_ = 0.0;
        for (var wi = 0u; wi < 2u; wi = wi + 1u) {
            let ql = wword(a.ql / 4u + 16u * h + 8u * qa + 2u * cq + wi);
            let qh = select(qh0, qh1, wi == 1u);
            let m0 = (ql & 0x0f0f0f0fu) | (((qh >> (2u * qa)) & 0x03030303u) << 4u);
            let m1 = ((ql >> 4u) & 0x0f0f0f0fu) | (((qh >> (2u * qa + 4u)) & 0x03030303u) << 4u);
            let x0 = xa[4u * qa + wi];
            let x1 = xa[4u * qa + 2u + wi];
            let pa = vec2<f32>(fma(bitcast<vec2<f16>>(((m0 >> 8u) & 0x00ff00ffu) | 0x4c004c00u) - off, bitcast<vec2<f16>>(x0.y),
                                   (bitcast<vec2<f16>>((m0 & 0x00ff00ffu) | 0x4c004c00u) - off) * bitcast<vec2<f16>>(x0.x)));
            let pb = vec2<f32>(fma(bitcast<vec2<f16>>(((m1 >> 8u) & 0x00ff00ffu) | 0x4c004c00u) - off, bitcast<vec2<f16>>(x1.y),
                                   (bitcast<vec2<f16>>((m1 & 0x00ff00ffu) | 0x4c004c00u) - off) * bitcast<vec2<f16>>(x1.x)));
            sl_ = sl_ + (pa.x + pa.y);
            sh_ = sh_ + (pb.x + pb.y);
        }
        acc = acc + f32(i8v((sw0 >> (16u * qa)) & 0xffu)) * sl_ + f32(i8v((sw1 >> (16u * qa)) & 0xffu)) * sh_;
    }
    return d * acc;
}
// The f16-pair group lane: 0x4000 | u is the f16 2 + u / 512 exactly (u < 256), so minus 2 + off / 512
// it is (u - off) 2^-9 (HB), |.| <= 1/4: two products with any f16 value stay finite. xa[j]: word j's
// pairs (x0, x2), (x1, x3); xsum[j] their sum times HP.
const HB = 0.001953125;                // 2^-9
fn b_lane_x(row: u32, g: u32, xa: array<vec2<u32>, 8>, xsum: array<f32, 8>) -> f32 {
    if (is_iq4()) { return iq4_lane_x(row, g, xa); }
    let r = bgrp(row, g);
    let off = vec2<f16>(f16(2.0 + bgrp_off() * HB));
    var s = vec2<f32>(0.0);
    var sx = vec2<f32>(0.0);
    for (var j = 0u; j < 8u; j = j + 1u) {
        let u = r.u[j];
        let e02 = bitcast<vec2<f16>>((u & 0x00ff00ffu) | 0x40004000u) - off;
        let e13 = bitcast<vec2<f16>>(((u >> 8u) & 0x00ff00ffu) | 0x40004000u) - off;
        let pr = vec2<f32>(fma(e13, bitcast<vec2<f16>>(xa[j].y), e02 * bitcast<vec2<f16>>(xa[j].x)));
        s[j / 4u] = s[j / 4u] + (pr.x + pr.y);
        if (bgrp_min()) { sx[j / 4u] = sx[j / 4u] + xsum[j]; }
    }
    if (bgrp_min()) { return dot(r.d, s) / HB + dot(r.m, sx) / HP; }
    return dot(r.d, s) / HB;
}
// IQ4_NL / IQ4_XS on f16 pairs: the values come as f16 pairs from lut_init_h's table, the pair of the
// nibbles at bits s0 and s1 of q (b_lane_x's e02, e13 exactly: v 2^-9 with v the codebook's value)
fn kvh(q: u32, s0: u32, s1: u32) -> vec2<f16> {
    return bitcast<vec2<f16>>(bitcast<u32>(red[(q >> s0) & 0xfu]) | bitcast<u32>(red[16u + ((q >> s1) & 0xfu)]));
}
fn iq4_lane_x(row: u32, g: u32, xa: array<vec2<u32>, 8>) -> f32 {
    let r = iq4_raw(row, g);
    var s = vec2<f32>(0.0);
    for (var j = 0u; j < 4u; j = j + 1u) {
        let q = r.q[j];
        let pl = vec2<f32>(fma(kvh(q, 8u, 24u), bitcast<vec2<f16>>(xa[j].y), kvh(q, 0u, 16u) * bitcast<vec2<f16>>(xa[j].x)));
        let ph = vec2<f32>(fma(kvh(q, 12u, 28u), bitcast<vec2<f16>>(xa[j + 4u].y), kvh(q, 4u, 20u) * bitcast<vec2<f16>>(xa[j + 4u].x)));
        s.x = s.x + (pl.x + pl.y);
        s.y = s.y + (ph.x + ph.y);
    }
    return dot(vec2<f32>(r.d), s) / HB;
}
// The f16-pair lanes' activations: vector j (0..3) of 8 halves of lane c, from the super-block's
// first (q4k_lane_x: pair 2 (c / 4) + j / 2, low / high j % 2; q6k_lane_x: half c / 4, quarter j / 2
// of the two, low / high j % 2), so the 4 lanes c' of a pair or quarter read 64 neighbouring bytes.
// The group lanes: lane c's group, 4 vectors from 4c.
fn xv8(c: u32, j: u32) -> u32 {
    if (is_b()) { return 4u * c + j; }
    let v = 16u * (c / 4u) + c % 4u;
    if (is_q4k()) { return v + 8u * (j / 2u) + 4u * (j % 2u); }
    return v + 4u * (j / 2u) + 8u * (j % 2u);
}
fn lane_x(row: u32, b: u32, c: u32, xa: array<vec2<u32>, 8>, xsum: array<f32, 8>) -> f32 {
    if (is_b()) { return b_lane_x(row, 8u * b + c, xa, xsum); }
    let nsb = p.k / 256u;
    if (is_q4k()) { return q4k_lane_x((row * nsb + b) * q4k_words(), c, xa, xsum); }
    return q6k_lane_x(row * nsb + b, c, xa);
}

// dot_k / dot_kn on f16 pairs; with two, also row2 (a glu entry's up row) on the same activations
fn dot_k_h(ok: bool, row: u32, row2: u32, two: bool, l: u32, z: u32) -> vec2<f32> {
    var s = vec2<f32>(0.0);
    lut_init_h(l);
    if (ok) {
        let i = lane_of(l);
        let c = i % 8u;
        let xw = z * p.k / 8u;                       // x8 index of token z's row
        for (var b = i / 8u; b < n_units(); b = b + (1u << p.ll) / 8u) {
            if (!bgrp_in(8u * b + c)) { continue; }
            var xa: array<vec2<u32>, 8>; var xsum: array<f32, 8>;
            for (var j = 0u; j < 4u; j = j + 1u) {       // 4 loads of 8 halves (xv8)
                let u = x8[xw + 32u * b + xv8(c, j)];
                let e0 = hv_pair(u.xy); let e1 = hv_pair(u.zw);
                xa[2u * j] = e0.h; xsum[2u * j] = e0.sum; xa[2u * j + 1u] = e1.h; xsum[2u * j + 1u] = e1.sum;
            }
            s.x = s.x + lane_x(row, b, c, xa, xsum);
            if (two) { s.y = s.y + lane_x(row2, b, c, xa, xsum); }
        }
    }
    lut_done();
    return s;
}
fn dot_kn_h(ok: bool, row: u32, row2: u32, two: bool, l: u32) -> vec2<f32> {
    var s = vec2<f32>(0.0);
    lut_init_h(l);
    if (ok) {
        let i = lane_of(l);
        let c = i % 8u;
        for (var b = i / 8u; b < n_units(); b = b + (1u << p.ll) / 8u) {
            if (!bgrp_in(8u * b + c)) { continue; }
            var xa: array<vec2<u32>, 8>; var xsum: array<f32, 8>;
            for (var j = 0u; j < 4u; j = j + 1u) {
                let e = 64u * b + 2u * xv8(c, j);
                xa[2u * j] = xh[e]; xa[2u * j + 1u] = xh[e + 1u]; xsum[2u * j] = xsm[e]; xsum[2u * j + 1u] = xsm[e + 1u];
            }
            s.x = s.x + lane_x(row, b, c, xa, xsum);
            if (two) { s.y = s.y + lane_x(row2, b, c, xa, xsum); }
        }
    }
    lut_done();
    return s;
}
// mv_reduce of two sums per invocation (red2 is free after the norm prologue)
fn mv_reduce2(l: u32, s: vec2<f32>) -> vec2<f32> {
    red2[l] = s;
    workgroupBarrier();
    let nl = 1u << p.ll;
    for (var h = nl / 2u; h > 0u; h = h >> 1u) {
        if ((l & (nl - 1u)) < h) { red2[l] = red2[l] + red2[l + h]; }
        workgroupBarrier();
    }
    return red2[l & ~(nl - 1u)];
}
fn mv_norm_store_h(l: u32, xv: ptr<function, XVA>, gv: ptr<function, XVA>, inv: f32) {
    for (var j = 0u; j < XV; j = j + 1u) {
        let i = l + MVT * j;
        if (i < p.k / 4u) {
            let r = mv_norm_val(xv, gv, j, inv);
            xsm[i] = hsum(r) * HP;
            xh[i] = vec2<u32>(pack2x16float(r.xz), pack2x16float(r.yw));
        }
    }
    workgroupBarrier();
}
// the f16-pair lanes' prologues: the normalized row into xh / xsm (mv_res_norm_h: after the residual add)
fn mv_norm_h(l: u32, z: u32, g: ptr<storage, array<vec4<f32>>, read>) {
    var xv: XVA; var gv: XVA;
    mv_norm_load(l, z, &xv, &gv, g);
    mv_norm_store_h(l, &xv, &gv, mv_norm_inv(l, &xv));
}
fn mv_res_norm_h(v: Inv) {
    var xv: XVA; var gv: XVA;
    mv_res_norm_load(v, &xv, &gv);
    mv_norm_store_h(v.lid.x, &xv, &gv, mv_norm_inv(v.lid.x, &xv));
}







// ---- the *_q entries: decode lanes on int8 activations (devices that accelerate 4x8-bit integer
// dot products): gate/up with the FFN norm (matvec_k_glu_norm_q, i8 GLU types) and the output norm +
// LM head (matvec_k_norm_q, every type with decode lanes; b_lane_q below for the group lanes). The prologue normalizes the residual row as the *_norm entries do
// and quantizes it to int8 per block of 32: q = round(127 x / max|x|), the block's scale
// max|x| / 127, and the sums of the q by 16 (the Q4_K minimum and Q6_K's -32 terms). Four lanes per
// super-block: Q4_K lane c4 takes the 32 bytes of chunk c4 (sub-blocks 2 c4 and 2 c4 + 1, 64
// weights), so a sub-block's scale and minimum are decoded once per 32 weights instead of once per
// 4, and each word is two masks and two 4-way dot products (dot4I8Packed: the nibbles 0..15 are the
// same bits as int8). The product is exactly W . Q8(x) up to f32 rounding, Q8(x) = q max|x| / 127
// per block, which is what fat checks; quantizing costs an error of at most max|x| / 254 per value
// (llama.cpp's CPU path quantizes its k-quant activations the same way).
var<workgroup> xq: array<vec4<u32>, MVT * XV / 4u>;    // *_q: the normalized row as int8 x4, by 16 (read as vectors)
var<workgroup> xqd: array<f32, MVT * XV / 8u>;          // *_q: the scale of each block of 32 (max|x| / 127)
var<workgroup> xq16: array<f32, MVT * XV / 4u>;        // *_q: the sum of the q of each 16 (the Q4_K minimum and Q6_K's -32 terms)

// The prologue of the *_q entries: the residual row and 1 / rms as the *_norm entries take them
// (mv_norm_load, mv_norm_inv); the normalized values (in f32: rounding them to f16 first would only
// add an error, and one that depends on the driver's f16 rounding mode) are quantized per block of
// 32 (the block's 8 vec4 are 8 neighbouring invocations: their maxima meet in xsm) and each block's
// sums of q by 16 are taken from xq.
fn mv_norm_q(l: u32, z: u32, g: ptr<storage, array<vec4<f32>>, read>) {
    var xv: XVA; var gv: XVA;
    mv_norm_load(l, z, &xv, &gv, g);
    mv_norm_q_regs(l, &xv, &gv);
}
fn mv_res_norm_q(v: Inv) {
    var xv: XVA; var gv: XVA;
    mv_res_norm_load(v, &xv, &gv);
    mv_norm_q_regs(v.lid.x, &xv, &gv);
}
// The int8 prologues' first half (mv_norm_q_regs, mv_norm_s): the normalized values into xv (not rounded
// to A: quantized next) and each 4's largest |x| into xsm; ends on a barrier.
fn mv_q_max(l: u32, xv: ptr<function, XVA>, gv: ptr<function, XVA>) {
    let inv = mv_norm_inv(l, xv);
    for (var j = 0u; j < XV; j = j + 1u) {
        let i = l + MVT * j;
        (*xv)[j] = (*xv)[j] * inv * (*gv)[j];
        let a = abs((*xv)[j]);
        if (i < p.k / 4u) { xsm[i] = max(max(a.x, a.y), max(a.z, a.w)) + 0.0 * hsum((*xv)[j]); }   // (0 x the values: NaN stays NaN)
    }
    workgroupBarrier();
}
// values 4i .. 4i + 3 (v) as int8 of their block of 32 (its 8 maxima in xsm); the block's first vec4 stores its scale
fn mv_q_round(i: u32, v: vec4<f32>) -> vec4<i32> {
    let b0 = i & ~7u;
    var bm = 0.0;
    var nan = 0.0;
    for (var t = 0u; t < 8u; t = t + 1u) { let m = xsm[b0 + t]; bm = max(bm, m); nan = nan + 0.0 * m; }
    if (i == b0) { xqd[i / 8u] = bm / 127.0 + nan; }
    return vec4<i32>(round(clamp(v * select(1.0 / bm, 0.0, bm == 0.0), vec4<f32>(-1.0), vec4<f32>(1.0)) * 127.0));
}
fn mv_norm_q_regs(l: u32, xv: ptr<function, XVA>, gv: ptr<function, XVA>) {
    mv_q_max(l, xv, gv);
    for (var j = 0u; j < XV; j = j + 1u) {
        let i = l + MVT * j;
        if (i < p.k / 4u) { xq[i / 4u][i % 4u] = pack4xI8(mv_q_round(i, (*xv)[j])); }
    }
    workgroupBarrier();
    for (var u = l; u < p.k / 16u; u = u + MVT) {
        var qs = 0;
        let v = xq[u];
        for (var t = 0u; t < 4u; t = t + 1u) { qs = qs + dot4I8Packed(v[t], 0x01010101u); }
        xq16[u] = f32(qs);
    }
    workgroupBarrier();
}

// lane c4 (0..3) of the Q4_K super-block at word ow; xb: the vec4 index of its first activation
fn q4k_lane_q(ow: u32, c4: u32, xb: u32) -> f32 {
    let hd = q4k_head(ow);
    let dm = vec2<f32>(bitcast<vec2<f16>>(hd.dd));   // (not unpack2x16float: NVIDIA's flushes f16 subnormals)
    let sl = 16u * (c4 & 1u);
    let scw = select(hd.sc03, hd.sc47, c4 >= 2u);
    let mnw = select(hd.mn03, hd.mn47, c4 >= 2u);
    let ja = xb + 16u * c4;                       // sub-block 2 c4; 2 c4 + 1 at ja + 8
    var da = 0i; var db = 0i;
    let qs = (ow + q4k_qs()) / 4u;                // (a multiple of 4 words)
    let qv = array<vec4<u32>, 2>(wvec(qs + 2u * c4), wvec(qs + 1u + 2u * c4));
    let xv = array<vec4<u32>, 4>(xq[ja / 4u], xq[ja / 4u + 1u], xq[ja / 4u + 2u], xq[ja / 4u + 3u]);
    var hv = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    if (WT == WT_Q5_K) { hv = array<vec4<u32>, 2>(wvec(ow / 4u + 1u), wvec(ow / 4u + 2u)); }   // qh[32]
    for (var t = 0u; t < 8u; t = t + 1u) {
        let q = qv[t / 4u][t % 4u];
        var ql = q & 0x0f0f0f0fu; var qu = (q >> 4u) & 0x0f0f0f0fu;
        if (WT == WT_Q5_K) { let qh = hv[t / 4u][t % 4u]; ql = ql | q5k_hb(qh, 2u * c4); qu = qu | q5k_hb(qh, 2u * c4 + 1u); }
        da = da + dot4I8Packed(ql, xv[t / 4u][t % 4u]);
        db = db + dot4I8Packed(qu, xv[2u + t / 4u][t % 4u]);
    }
    let ba = ja / 8u;
    return dm.x * (f32((scw >> sl) & 0xffu) * xqd[ba] * f32(da) + f32((scw >> (sl + 8u)) & 0xffu) * xqd[ba + 1u] * f32(db))
         - dm.y * (f32((mnw >> sl) & 0xffu) * xqd[ba] * (xq16[2u * ba] + xq16[2u * ba + 1u])
                   + f32((mnw >> (sl + 8u)) & 0xffu) * xqd[ba + 1u] * (xq16[2u * ba + 2u] + xq16[2u * ba + 3u]));
}

// Q6_K on int8: lane c4 takes half h = c4 / 2 of super-block bi, positions l0 = 16 (c4 % 2) .. +15
// of its four quarters qq (elements 128 h + 32 qq + l0 ..): ql bytes 64 h + l0 (qq 0 low nibbles, 2
// high) and 64 h + 32 + l0 (qq 1, 3), qh bytes 32 h + l0 (2 bits at 2 qq), each a 16-byte load,
// scale byte 8 h + c4 % 2 + 2 qq. The 6-bit values 0..63 enter the dot products as they are; the
// -32 comes off with the sums of the q (xq16).
fn q6k_lane_q(bi: u32, c4: u32, xb: u32) -> f32 {
    let h = c4 / 2u;
    let e = c4 % 2u;
    let a = q6a(bi);
    let qa4 = wvec((a.ql + 64u * h + 16u * e) / 16u);
    let qb4 = wvec((a.ql + 64u * h + 32u + 16u * e) / 16u);
    let qh4 = wvec((a.qh + 32u * h + 16u * e) / 16u);
    let s = wvec(a.sc / 16u);
    var d0 = 0i; var d1 = 0i; var d2 = 0i; var d3 = 0i;
    let xa = xb + 32u * h + 4u * e;              // word index of quarter 0's first activations
    let x0 = xq[xa / 4u]; let x1 = xq[xa / 4u + 2u]; let x2 = xq[xa / 4u + 4u]; let x3 = xq[xa / 4u + 6u];
    for (var t = 0u; t < 4u; t = t + 1u) {
        let qa = qa4[t];
        let qb = qb4[t];
        let qh = qh4[t];
        d0 = d0 + dot4I8Packed((qa & 0x0f0f0f0fu) | ((qh << 4u) & 0x30303030u), x0[t]);
        d1 = d1 + dot4I8Packed((qb & 0x0f0f0f0fu) | ((qh << 2u) & 0x30303030u), x1[t]);
        d2 = d2 + dot4I8Packed(((qa >> 4u) & 0x0f0f0f0fu) | (qh & 0x30303030u), x2[t]);
        d3 = d3 + dot4I8Packed(((qb >> 4u) & 0x0f0f0f0fu) | ((qh >> 2u) & 0x30303030u), x3[t]);
    }
    let sw0 = select(s.x, s.z, h == 1u) >> (8u * e);   // scale bytes of quarters 0 and 1 at bits 0, 16
    let sw1 = select(s.y, s.w, h == 1u) >> (8u * e);   // quarters 2, 3
    let d = f32(bitcast<vec2<f16>>(q6d(a)).x);
    let g = xa / 4u;                             // quarter 0's 16 in xq16; its block of 32 is g / 2
    return d * (f32(i8v(sw0 & 0xffu)) * xqd[g / 2u] * f32(d0 - 32i * i32(xq16[g]))
              + f32(i8v((sw0 >> 16u) & 0xffu)) * xqd[g / 2u + 1u] * f32(d1 - 32i * i32(xq16[g + 2u]))
              + f32(i8v(sw1 & 0xffu)) * xqd[g / 2u + 2u] * f32(d2 - 32i * i32(xq16[g + 4u]))
              + f32(i8v((sw1 >> 16u) & 0xffu)) * xqd[g / 2u + 3u] * f32(d3 - 32i * i32(xq16[g + 6u])));
}

// The int8 group lane: lane c4 takes groups 2 c4, 2 c4 + 1 of unit b (each one block of xq, xqd).
// The bytes u enter dot4I8Packed as int8: as they are where every byte is below 128 (the 4- and 5-bit
// quants, Q2_K, Q3_K) or the table gave the values as int8 (IQ4_NL: lut_init_x), Q8_0's ^ 0x80 (its
// own bytes again); each half's product is then dot(u, q) - off sum(q) (xq16: the sums of the q).
fn b_q_xr() -> u32 { return select(0u, 0x80808080u, WT == WT_Q8_0); }
fn b_q_off() -> f32 { if (WT == WT_Q8_0 || is_iq4()) { return 0.0; } return bgrp_off(); }
fn b_lane_q(row: u32, b: u32, c4: u32) -> f32 {
    var s = 0.0;
    for (var h = 0u; h < 2u; h = h + 1u) {
        let g = 8u * b + 2u * c4 + h;
        if (!bgrp_in(g)) { continue; }
        let r = bgrp(row, g);
        let xa = xq[2u * g];
        let xb = xq[2u * g + 1u];
        var da = 0i;
        var db = 0i;
        for (var j = 0u; j < 4u; j = j + 1u) {
            da = da + dot4I8Packed(r.u[j] ^ b_q_xr(), xa[j]);
            db = db + dot4I8Packed(r.u[j + 4u] ^ b_q_xr(), xb[j]);
        }
        let sq = vec2<f32>(xq16[2u * g], xq16[2u * g + 1u]);
        var v = dot(r.d, vec2<f32>(f32(da), f32(db)) - b_q_off() * sq);
        if (bgrp_min()) { v = v + dot(r.m, sq); }
        s = s + xqd[g] * v;
    }
    return s;
}
// IQ4_XS on int8, as the super-block lanes take Q4_K: lane c4 takes sub-blocks 2 c4, 2 c4 + 1 of
// super-block bi (regrouped, gu: the 8-byte header d | scales_h << 16, scales_l[4]; the 16 quant bytes
// of sub-block j at 16 j), its header read once for both; the table (lut_init_x) gives int8 values.
fn iq4xs_lane_q(bi: u32, c4: u32, xb: u32) -> f32 {
    let a = gu(bi);
    let h0 = wword(a.y / 4u);
    let h1 = wword(a.y / 4u + 1u);
    let ls = vec2<i32>(iq4xs_ls(h0, h1, 2u * c4), iq4xs_ls(h0, h1, 2u * c4 + 1u));
    let qv = array<vec4<u32>, 2>(wvec(a.x / 16u + 2u * c4), wvec(a.x / 16u + 2u * c4 + 1u));
    let g = xb / 8u + 2u * c4;                   // sub-block 2 c4's block of xq, xqd
    var dd = vec2<i32>(0i);
    for (var t = 0u; t < 2u; t = t + 1u) {
        let x0 = xq[2u * (g + t)];
        let x1 = xq[2u * (g + t) + 1u];
        var s = 0i;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let kk = kv8(qv[t][j]);
            s = s + dot4I8Packed(kk.x, x0[j]) + dot4I8Packed(kk.y, x1[j]);
        }
        dd[t] = s;
    }
    let d = f16v(h0 & 0xffffu);
    return d * (f32(ls.x) * xqd[g] * f32(dd.x) + f32(ls.y) * xqd[g + 1u] * f32(dd.y));
}
// lane c4 of unit b of row `row` over the quantized row: the super-block lanes (Q4_K, Q6_K, IQ4_XS) or
// the group lane (b_lane_q)
fn lane_q(row: u32, b: u32, c4: u32) -> f32 {
    let nsb = p.k / 256u;
    if (WT == WT_IQ4_XS) { return iq4xs_lane_q(row * nsb + b, c4, 64u * b); }
    if (is_b()) { return b_lane_q(row, b, c4); }
    if (is_q4k()) { return q4k_lane_q((row * nsb + b) * q4k_words(), c4, 64u * b); }
    return q6k_lane_q(row * nsb + b, c4, 64u * b);
}

// lane i's share of row `row` (and of row2 with two) over the quantized row
fn dot_kn_q(ok: bool, row: u32, row2: u32, two: bool, l: u32) -> vec2<f32> {
    var s = vec2<f32>(0.0);
    lut_init_x(l, 0x80u);
    if (ok) {
        let i = lane_of(l);
        for (var b = i / 4u; b < n_units(); b = b + (1u << p.ll) / 4u) {
            s.x = s.x + lane_q(row, b, i % 4u);
            if (two) { s.y = s.y + lane_q(row2, b, i % 4u); }
        }
    }
    lut_done();
    return s;
}

@group(0) @binding(3) var<storage, read> onw: array<vec4<f32>>;     // matvec_k_norm_q: the norm weight (k)

// ---- the *_s entries: int8 activations on devices without integer dot products (and without f16, whose
// activations are f32: the portable profile, boards without either). A 32-bit multiply takes two int8
// products: with two quants in the halves of a word, w = w0 + w2 2^16 ((q >> s) & 0x000f000f), and two
// activations the other way round, a = a2 + a0 2^16, w a = w0 a2 + (w0 a0 + w2 a2) 2^16 (mod 2^32), so the
// high half holds the pair's dot product. Words started at 2^15 take 8 such products (Q5_K's 5-bit quants:
// 4) with both halves in range (|a| <= 127: the low half's sum stays within 2^15 of the start, the high
// half's below 2^15 in magnitude), and an arithmetic shift by 16 gives the integer sum: about 1.4
// operations and 1 byte of activations per weight where the f32 lanes spend about 3 and 4. The row is
// normalized and quantized per 32 as the *_q entries do (q = round(127 x / max|x|), the same int8
// values and scales, fat's fat_q8 reference) and held as those pairs: xps[e], entry e = the pairs of the
// values 8e .. 8e + 7, (a2, a0), (a3, a1), (a6, a4), (a7, a5). The lanes are q4k_lane_q's (lane c4 of a
// super-block: sub-blocks 2 c4, 2 c4 + 1, 4 entries each); stored as they read them, lane c4's entries
// were 128 bytes apart, every load an 8-way bank conflict (slower than the f32 lanes: docs/perf-log.md
// #138), so sw_pos places entry w of lane c4 of unit u at 4 (w ^ u % 8) + c4 of the unit's 32.
var<workgroup> xps: array<vec4<u32>, MVT * XV / 2u>;
var<workgroup> xs4: array<i32, MVT * XV>;                          // the sum of each 4 q (for xq16)
fn sw_pos(e: u32) -> u32 { let u = e / 32u; return 32u * u + 4u * ((e % 8u) ^ (u % 8u)) + (e % 32u) / 8u; }
// The prologue: mv_norm_q_regs' values and scales (mv_q_max, mv_q_round), the q packed in pairs into xps
fn mv_norm_s(l: u32, z: u32, g: ptr<storage, array<vec4<f32>>, read>) {
    var xv: XVA; var gv: XVA;
    mv_norm_load(l, z, &xv, &gv, g);
    mv_q_max(l, &xv, &gv);
    for (var j = 0u; j < XV; j = j + 1u) {
        let i = l + MVT * j;
        if (i < p.k / 4u) {
            let q = mv_q_round(i, xv[j]);
            let pr = bitcast<vec2<u32>>(q.zw + q.xy * 65536i);          // a2 + a0 2^16 (an OR of a2's 16 bits would add a borrow)
            let ps = sw_pos(i / 2u);
            if (i % 2u == 0u) { xps[ps].x = pr.x; xps[ps].y = pr.y; } else { xps[ps].z = pr.x; xps[ps].w = pr.y; }
            xs4[i] = q.x + q.y + q.z + q.w;
        }
    }
    workgroupBarrier();
    for (var u = l; u < p.k / 16u; u = u + MVT) { xq16[u] = f32(xs4[4u * u] + xs4[4u * u + 1u] + xs4[4u * u + 2u] + xs4[4u * u + 3u]); }
    workgroupBarrier();
}
// a word started at 2^15: the sum of its pairs' products, from the high half
fn swar_hi(a: u32) -> i32 { return bitcast<i32>(a) >> 16u; }
// lane c4 (0..3) of the Q4_K / Q5_K super-block at word ow, as q4k_lane_q; xb: the index of its first value / 4
fn q4k_lane_s(ow: u32, c4: u32, xb: u32) -> f32 {
    let hd = q4k_head(ow);
    let dm = vec2<f32>(f16v(hd.dd & 0xffffu), f16v(hd.dd >> 16u));
    let sl = 16u * (c4 & 1u);
    let scw = select(hd.sc03, hd.sc47, c4 >= 2u);
    let mnw = select(hd.mn03, hd.mn47, c4 >= 2u);
    let ja = xb + 16u * c4;                       // sub-block 2 c4's first vec4; 2 c4 + 1 at ja + 8
    let qs = (ow + q4k_qs()) / 4u;
    let qv = array<vec4<u32>, 2>(wvec(qs + 2u * c4), wvec(qs + 1u + 2u * c4));
    var hv = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    if (WT == WT_Q5_K) { hv = array<vec4<u32>, 2>(wvec(ow / 4u + 1u), wvec(ow / 4u + 2u)); }   // qh[32]
    let wpa = select(4u, 2u, WT == WT_Q5_K);      // words of 2 + 2 products per accumulator
    var acc = array<u32, 8>(0x8000u, 0x8000u, 0x8000u, 0x8000u, 0x8000u, 0x8000u, 0x8000u, 0x8000u);
    for (var t2 = 0u; t2 < 4u; t2 = t2 + 1u) {
        let xa = xps[sw_pos(ja / 2u + t2)];
        let xc = xps[sw_pos(ja / 2u + 4u + t2)];
        for (var h = 0u; h < 2u; h = h + 1u) {
            let t = 2u * t2 + h;
            let q = qv[t / 4u][t % 4u];
            var ql = q & 0x0f0f0f0fu; var qu = (q >> 4u) & 0x0f0f0f0fu;
            if (WT == WT_Q5_K) { let qh = hv[t / 4u][t % 4u]; ql = ql | q5k_hb(qh, 2u * c4); qu = qu | q5k_hb(qh, 2u * c4 + 1u); }
            let pa = select(xa.xy, xa.zw, h == 1u);
            let pc = select(xc.xy, xc.zw, h == 1u);
            let n = t / wpa;
            acc[n] = acc[n] + (ql & 0x00ff00ffu) * pa.x + ((ql >> 8u) & 0x00ff00ffu) * pa.y;
            acc[4u + n] = acc[4u + n] + (qu & 0x00ff00ffu) * pc.x + ((qu >> 8u) & 0x00ff00ffu) * pc.y;
        }
    }
    let da = (swar_hi(acc[0]) + swar_hi(acc[1])) + (swar_hi(acc[2]) + swar_hi(acc[3]));
    let db = (swar_hi(acc[4]) + swar_hi(acc[5])) + (swar_hi(acc[6]) + swar_hi(acc[7]));
    let ba = ja / 8u;
    return dm.x * (f32((scw >> sl) & 0xffu) * xqd[ba] * f32(da) + f32((scw >> (sl + 8u)) & 0xffu) * xqd[ba + 1u] * f32(db))
         - dm.y * (f32((mnw >> sl) & 0xffu) * xqd[ba] * (xq16[2u * ba] + xq16[2u * ba + 1u])
                   + f32((mnw >> (sl + 8u)) & 0xffu) * xqd[ba + 1u] * (xq16[2u * ba + 2u] + xq16[2u * ba + 3u]));
}
// lane i's share of row `row` over the packed row (4 lanes per super-block)
fn dot_kn_s(ok: bool, row: u32, l: u32) -> f32 {
    var s = 0.0;
    if (ok) {
        let i = lane_of(l);
        let nsb = p.k / 256u;
        for (var b = i / 4u; b < n_units(); b = b + (1u << p.ll) / 4u) { s = s + q4k_lane_s((row * nsb + b) * q4k_words(), i % 4u, 64u * b); }
    }
    return s;
}
