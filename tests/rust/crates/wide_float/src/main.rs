use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(x: &[u64], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let wide = (x[i] as u128) << 70;
        if let Some(o) = y.get_mut(idx) {
            *o = wide as f32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let s = ctx.default_stream();
    let x = DeviceBuffer::from_host(&s, &[1u64; 4]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&s, 4).unwrap();
    kernels::load(&ctx).unwrap().bad_kernel(&s, LaunchConfig::for_num_elems(4), &x, &mut y).unwrap();
}
