//! A kernel with x86 inline assembly: the build must refuse it, naming the kernel.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel: |x: &[f32], i| {
        let mut v: u32 = 0;
        unsafe { core::arch::asm!("mov {0:e}, 1", out(reg) v) };
        x[i] + v as f32
    }
}
