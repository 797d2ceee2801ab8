// elementwise.wgsl — y = a + b and y = a * b over n f32 elements.
struct Params { n: u32 }
var<immediate> p: Params;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn add_f32(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = a[g.x] + b[g.x]; }
}

@compute @workgroup_size(256)
fn mul_f32(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = a[g.x] * b[g.x]; }
}
