//! A kernel using an x86 intrinsic (rdtsc): the build must refuse it, naming the intrinsic.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel: |x: &[f32], i| {
        let t = unsafe { core::arch::x86_64::_rdtsc() };
        x[i] + t as f32
    }
}
