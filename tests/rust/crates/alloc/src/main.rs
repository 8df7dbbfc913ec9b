//! A kernel that allocates (a Vec): the GPU has no heap, so the build must refuse it.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel:
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let v: Vec<f32> = x.iter().map(|a| a * 2.0).collect();
        if let Some(o) = y.get_mut(idx) {
            *o = v[i];
        }
    }
}
