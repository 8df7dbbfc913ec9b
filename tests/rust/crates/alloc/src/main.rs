//! A kernel that allocates (a Vec): the GPU has no heap, so the build must refuse it.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel: |x: &[f32], i| {
        let v: Vec<f32> = x.iter().map(|a| a * 2.0).collect();
        v[i]
    }
}
