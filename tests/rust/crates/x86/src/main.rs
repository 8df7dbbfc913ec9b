//! A kernel using an x86 intrinsic (rdtsc): the build must refuse it, naming the intrinsic.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel:
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let t = unsafe { core::arch::x86_64::_rdtsc() };
        if let Some(o) = y.get_mut(idx) {
            *o = x[i] + t as f32;
        }
    }
}
