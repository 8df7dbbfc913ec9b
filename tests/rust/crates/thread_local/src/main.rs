use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};
use std::cell::Cell;

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let n = CALLS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        if let Some(o) = y.get_mut(idx) {
            *o = x[i] + n as f32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let s = ctx.default_stream();
    let x = DeviceBuffer::from_host(&s, &[1.0f32; 4]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&s, 4).unwrap();
    kernels::load(&ctx).unwrap().bad_kernel(&s, LaunchConfig::for_num_elems(4), &x, &mut y).unwrap();
}
