use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};
use std::cell::Cell;

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

#[cuda_module]
mod kernels {
    use super::*;

    /// Counts its calls per thread, as a CPU program would.
    #[kernel]
    pub fn bad_kernel(mut calls: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let n = CALLS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        if let Some(o) = calls.get_mut(idx) {
            *o = n;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let mut calls = DeviceBuffer::<u32>::zeroed(&stream, 32).unwrap();
    let module = kernels::load(&ctx).unwrap();
    module.bad_kernel(&stream, LaunchConfig::for_num_elems(32), &mut calls).unwrap();
}
