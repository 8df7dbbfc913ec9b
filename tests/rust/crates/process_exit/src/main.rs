// A kernel calling std::process::exit: a GPU thread cannot end the host process, and turning the
// call into a trap would hide that. #[kernel] must refuse it and say what to do instead.
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if x[i] < 0.0 {
            std::process::exit(3);
        }
        if let Some(o) = y.get_mut(idx) {
            *o = x[i];
        }
    }
}

fn main() {}
