// A kernel declared 1-dimensional that indexes in two dimensions: #[launch_contract] must refuse
// the declaration, naming the index call.
use cuda_device::{cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_contract(domain = 1, block = (256, 1, 1))]
    pub fn bad_kernel(width: u32, out: *mut u32) {
        let t = thread::index_2d();
        unsafe { *out.add(t.y() * width as usize + t.x()) = 1 };
    }
}

fn main() {}
