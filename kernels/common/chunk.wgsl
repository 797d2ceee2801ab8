// common/chunk.wgsl — one chunk of 32 keys of a decode query, as attention.wgsl's attn_split_h and
// attn_short.wgsl's key groups take it: an f16 cache read as 16-byte vectors of 8 halves (h8lo, h8hi),
// each key's score summed from the quarters of 4 invocations, and the chunk's softmax weights. The
// including file declares F32_MAX, `sp` (a group's 128 partial scores at o) and `es` (its 32 weights
// at eo), and includes clampn.wgsl and tanh_acc.wgsl.
fn h8lo(u: vec4<u32>) -> vec4<f32> { return vec4<f32>(vec2<f32>(bitcast<vec2<f16>>(u.x)), vec2<f32>(bitcast<vec2<f16>>(u.y))); }
fn h8hi(u: vec4<u32>) -> vec4<f32> { return vec4<f32>(vec2<f32>(bitcast<vec2<f16>>(u.z)), vec2<f32>(bitcast<vec2<f16>>(u.w))); }

// The chunk's scores from each invocation's quarter a of a key's dot product (invocation l of the
// chunk's 128: key l / 4), the softcap, their max m (returned to every invocation) and the weights
// e = exp(s - m) of its nk keys in es[eo ..] (0 past nk). Called by every invocation of the workgroup.
fn chunk_softmax(l: u32, o: u32, eo: u32, a: f32, nk: u32) -> f32 {
    sp[o + l] = a;
    workgroupBarrier();
    var s = -F32_MAX;
    if (l < nk) {
        s = clampn((sp[o + 4u * l] + sp[o + 4u * l + 1u]) + (sp[o + 4u * l + 2u] + sp[o + 4u * l + 3u]), F32_MAX);
        if (p.softcap > 0.0) { s = p.softcap * tanh_acc(clampn(s / p.softcap, 15.0)); }
    }
    workgroupBarrier();
    if (l < 32u) { sp[o + l] = s; }
    workgroupBarrier();
    var m = -F32_MAX;                            // every invocation reads the 32 scores (broadcasts)
    for (var i = 0u; i < 32u; i = i + 1u) { m = max(m, sp[o + i]); }
    var ev = 0.0;
    if (l < nk) { ev = exp(s - m); }
    if (l < 32u) { es[eo + l] = ev; }
    workgroupBarrier();
    return m;
}
// the sum of the chunk's 32 weights (es is complete since chunk_softmax's last barrier)
fn chunk_wsum(eo: u32) -> f32 {
    var sum = 0.0;
    for (var i = 0u; i < 32u; i = i + 1u) { sum = sum + es[eo + i]; }
    return sum;
}
