//! A kernel with x86 inline assembly: the build must refuse it, naming the kernel.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel:
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let mut v: u32 = 0;
        unsafe { core::arch::asm!("mov {0:e}, 1", out(reg) v) };
        if let Some(o) = y.get_mut(idx) {
            *o = x[i] + v as f32;
        }
    }
}
