// A kernel taking `&f32`: the reference is a host address, so the GPU could only fault reading
// it. #[kernel] must refuse it and name what to use instead.
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(scale: &f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o = *scale * x[i];
        }
    }
}

fn main() {}
