//! A kernel converting a u128 to f32, which NVPTX cannot compile: the build must refuse it.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1u64; 4],
    kernel:
    pub fn bad_kernel(x: &[u64], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let wide = (x[i] as u128) << 70;
        if let Some(o) = y.get_mut(idx) {
            *o = wide as f32;
        }
    }
}
