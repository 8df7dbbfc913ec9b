// A 1-dimensional kernel prepared with a 2-dimensional shape, and one kernel's prepared launch
// given to another: both are type errors (the configuration type is the contract's domain, and a
// PreparedLaunch is branded with its kernel), so rustc refuses them at the line that wrote them.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig1D, LaunchConfig2D};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_contract(domain = 1, block = (256, 1, 1))]
    pub fn first(mut y: DisjointSlice<f32>) {
        if let Some(o) = y.get_mut(thread::index_1d()) {
            *o = 1.0;
        }
    }

    #[kernel]
    #[launch_contract(domain = 1, block = (128, 1, 1))]
    pub fn second(mut y: DisjointSlice<f32>) {
        if let Some(o) = y.get_mut(thread::index_1d()) {
            *o = 2.0;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&s, 256).unwrap();
    let wrong_domain = m.prepare_first(LaunchConfig2D::new((1, 1), (256, 1), 0)).unwrap();
    let for_first = m.prepare_first(LaunchConfig1D::new(1, 256, 0)).unwrap();
    m.second(&s, &for_first, &mut y).unwrap();
    let _ = wrong_domain;
}
