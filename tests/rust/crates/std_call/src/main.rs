//! A kernel calling into std (println!): the build must refuse it, naming the kernel and the call.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel: |x: &[f32], i| {
        println!("element {}", x[i]);
        x[i]
    }
}
