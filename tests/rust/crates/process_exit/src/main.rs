// A kernel calling std::process::exit: a GPU thread cannot end the host process, and turning the
// call into a trap would hide that. #[kernel] must refuse it and say what to do instead.
use cuda_device::{cuda_module, kernel};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(status: i32) {
        if status != 0 {
            std::process::exit(status);
        }
    }
}

fn main() {}
