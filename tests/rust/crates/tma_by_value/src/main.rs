// A kernel taking a TMA descriptor as a by-value `TensorMap`: #[kernel] must refuse it (TMA cannot
// read the kernel's own copy) and name the two forms that work.
use cuda_device::tma::TensorMap;
use cuda_device::{cuda_module, kernel};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(map: TensorMap, out: *mut u32) {
        unsafe { *out = map.0[0] as u32 };
    }
}

fn main() {}
