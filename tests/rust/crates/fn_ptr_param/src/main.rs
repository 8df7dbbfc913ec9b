// A kernel taking a function pointer: its value is a host address, so the GPU could only fault
// calling it. #[kernel] must refuse it and name what to use instead.
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(f: fn(f32) -> f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o = f(x[i]);
        }
    }
}

fn main() {}
