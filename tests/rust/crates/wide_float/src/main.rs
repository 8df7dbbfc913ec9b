//! A kernel converting a u128 to f32, which NVPTX cannot compile: the build must refuse it.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1u64; 4],
    kernel: |x: &[u64], i| {
        let wide = (x[i] as u128) << 70;
        wide as f32
    }
}
