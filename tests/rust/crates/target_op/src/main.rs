//! A kernel that uses a cluster operation (sm_90 and later), built for the default targets
//! (sm_80 and sm_90a): refused for sm_80 at the user's line that calls the helper.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cluster, cuda_module, kernel, thread, DisjointSlice};

fn rank_of_block() -> u32 {
    cluster::block_rank() + 1
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn bad_kernel(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let r = rank_of_block();
        if let Some(o) = out.get_mut(idx) {
            *o = r;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 32).unwrap();
    let module = kernels::load(&ctx).unwrap();
    module.bad_kernel(&stream, LaunchConfig::for_num_elems(32), &mut out).unwrap();
}
