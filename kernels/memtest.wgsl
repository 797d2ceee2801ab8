// memtest.wgsl — device memory test for `edge fat`: write a pattern over a window of the
// arena, later verify it and count mismatches. The host also reads back sampled words and
// compares them with its own copy of mt_value (test/fat.c: fat_mt_value, keep them equal).
// The value of a word depends on its global word address (base + i), so a verify pass
// over the whole arena after writing all of it also catches aliased addresses.
// Patterns: 0 address-in-address, 1 walking ones, 2 random (hash of address and seed),
// 3..5 their bitwise inverses. Each invocation strides over the window (grid may be small).
struct Params { n: u32, base: u32, pattern: u32, seed: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read_write> mem: array<u32>;
@group(0) @binding(1) var<storage, read_write> errs: array<atomic<u32>>;   // [count, lowest bad address]

fn mt_hash(x: u32) -> u32 {
    var h = (x * 0x9e3779b1u) ^ p.seed;
    h = h ^ (h >> 16u); h = h * 0x7feb352du; h = h ^ (h >> 15u); h = h * 0x846ca68bu; h = h ^ (h >> 16u);
    return h;
}

fn mt_value(i: u32) -> u32 {
    let a = p.base + i;
    var v = a;
    let kind = p.pattern % 3u;
    if (kind == 1u) { v = 1u << (a & 31u); }
    if (kind == 2u) { v = mt_hash(a); }
    if (p.pattern >= 3u) { v = ~v; }
    return v;
}

@compute @workgroup_size(256)
fn memtest_write(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let stride = nw.x * 256u;
    for (var i = g.x; i < p.n; i = i + stride) { mem[i] = mt_value(i); }
}

@compute @workgroup_size(256)
fn memtest_verify(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let stride = nw.x * 256u;
    var bad = 0u;
    var first = 0xffffffffu;
    for (var i = g.x; i < p.n; i = i + stride) {
        if (mem[i] != mt_value(i)) { bad = bad + 1u; first = min(first, p.base + i); }
    }
    if (bad > 0u) { atomicAdd(&errs[0], bad); atomicMin(&errs[1], first); }
}
