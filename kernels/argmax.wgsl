// argmax.wgsl — greedy sampling and top-k on the GPU, one workgroup per row of logits,
// so decode reads back only token ids (and the top-k values when sampling needs them).
// Order: larger value first, the lower id first among equal values; NaN never wins
// (it compares false to everything). argmax of a row with no candidate (all NaN) is 0;
// top-k slots with no candidate left get id 0xffffffff and value -inf.
struct Params { n: u32, rows: u32, k: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> logits: array<f32>;    // (n, rows)
@group(0) @binding(1) var<storage, read_write> ids: array<u32>; // (k, rows); argmax: (rows)
@group(0) @binding(2) var<storage, read_write> vals: array<f32>; // (k, rows), top-k only
@group(0) @binding(0) var<storage, read> parts: array<u32>;     // argmax_merge: (3, G, rows) from argmax_part
var<workgroup> bv: array<f32, 256>;
var<workgroup> bi: array<u32, 256>;
var<workgroup> bad: atomic<u32>;     // argmax_check: the row holds a NaN or an Inf

const NONE = 0xffffffffu;

// -inf, built at run time (a constant expression may not hold an infinity)
fn neg_inf() -> f32 { var bits = 0xff800000u; return bitcast<f32>(bits); }

// (v, i) comes before (w, j)
fn before(v: f32, i: u32, w: f32, j: u32) -> bool { return v > w || (v == w && i < j); }

// Workgroup reduction of every invocation's (v, i) candidate; the winner lands in bv[0], bi[0].
fn reduce_best(l: u32, v: f32, i: u32) {
    bv[l] = v; bi[l] = i;
    workgroupBarrier();
    for (var k = 128u; k > 0u; k = k >> 1u) {
        if (l < k && before(bv[l + k], bi[l + k], bv[l], bi[l])) { bv[l] = bv[l + k]; bi[l] = bi[l + k]; }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn argmax_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let base = row * p.n;
    var v = neg_inf();
    var id = NONE;
    for (var i = l; i < p.n; i = i + 256u) {
        let x = logits[base + i];
        if (before(x, i, v, id)) { v = x; id = i; }
    }
    reduce_best(l, v, id);
    if (l == 0u) { ids[row] = select(bi[0], 0u, bi[0] == NONE); }
}

// The best (value, id) of the row at base over elements first, first + step, ... and whether any
// is NaN or Inf: reduced over the workgroup into bv[0], bi[0] and `bad`.
fn scan_check(l: u32, base: u32, first: u32, step: u32) {
    var v = neg_inf();
    var id = NONE;
    var nf = 0u;
    for (var i = first; i < p.n; i = i + step) {
        let x = logits[base + i];
        nf = nf | select(0u, 1u, (bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u);
        if (before(x, i, v, id)) { v = x; id = i; }
    }
    if (nf != 0u) { atomicOr(&bad, 1u); }
    reduce_best(l, v, id);
}

// argmax plus a fault flag: ids is (2, rows) = [id, 1 if the row holds a NaN or an Inf else 0],
// so greedy decode, which reads back only ids, still notices non-finite logits.
@compute @workgroup_size(256)
fn argmax_check_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    scan_check(l, row * p.n, l, 256u);
    if (l == 0u) {
        ids[2u * row] = select(bi[0], 0u, bi[0] == NONE);
        ids[2u * row + 1u] = atomicLoad(&bad);
    }
}

// k rounds; round r picks the best candidate after round r-1's pick in the order above.
@compute @workgroup_size(256)
fn topk_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    if (row >= p.rows) { return; }
    let l = lid.x;
    let base = row * p.n;
    let ninf = neg_inf();
    var pv = 0.0;
    var pi = NONE;
    for (var r = 0u; r < p.k; r = r + 1u) {
        var v = ninf;
        var id = NONE;
        for (var i = l; i < p.n; i = i + 256u) {
            let x = logits[base + i];
            let after_prev = r == 0u || before(pv, pi, x, i);
            if (x == x && after_prev && before(x, i, v, id)) { v = x; id = i; }
        }
        reduce_best(l, v, id);
        pv = bv[0];
        pi = bi[0];
        workgroupBarrier();
        if (l == 0u) { ids[row * p.k + r] = pi; vals[row * p.k + r] = select(pv, ninf, pi == NONE); }
    }
}

// argmax_check of long rows (a vocabulary of 10^5) in two dispatches, so the scan is spread
// over the whole GPU instead of one workgroup: argmax_part (grid G x rows) leaves in ids, as
// (3, G, rows) words, each workgroup's best (value bits, id) and NaN/Inf flag over the
// elements g*256 + l (step G*256); argmax_merge (grid rows) picks the best of the G and ORs
// the flags into argmax_check's [id, flag] per row. Same order and ties as argmax_check.
@compute @workgroup_size(256)
fn argmax_part_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
                   @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.y;
    let l = lid.x;
    scan_check(l, row * p.n, wid.x * 256u + l, nw.x * 256u);
    if (l == 0u) {
        let o = 3u * (row * nw.x + wid.x);
        ids[o] = bitcast<u32>(bv[0]); ids[o + 1u] = bi[0]; ids[o + 2u] = atomicLoad(&bad);
    }
}

// p.k = G here.
@compute @workgroup_size(256)
fn argmax_merge_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    let l = lid.x;
    var v = neg_inf();
    var id = NONE;
    if (l < p.k) {
        let o = 3u * (row * p.k + l);
        v = bitcast<f32>(parts[o]); id = parts[o + 1u];
        if (parts[o + 2u] != 0u) { atomicOr(&bad, 1u); }
    }
    reduce_best(l, v, id);
    if (l == 0u) {
        ids[2u * row] = select(bi[0], 0u, bi[0] == NONE);
        ids[2u * row + 1u] = atomicLoad(&bad);
    }
}
