//! A kernel calling into std (println!): the build must refuse it, naming the kernel and the call.
include!("../../refused_kernel.rs");

refused_kernel! {
    input: [1.0f32; 4],
    kernel:
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        println!("element {}", x[i]);
        if let Some(o) = y.get_mut(idx) {
            *o = x[i];
        }
    }
}
