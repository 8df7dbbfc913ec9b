//! Thread-block cluster with distributed shared memory (sm_90): clusters of 2 blocks; each block
//! writes its rank-dependent values to its shared memory, then reads its partner's through DSMEM.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cluster, cuda_module, kernel, thread, DisjointSlice, SharedArray};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[cluster_launch(2, 1, 1)]
    pub fn exchange(mut out: DisjointSlice<u32>) {
        static BUF: SharedArray<u32, 128> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let rank = cluster::block_rank();
        BUF.set(t, rank * 1000 + t as u32);
        cluster::cluster_sync();
        let other = (rank + 1) % cluster::cluster_size();
        let remote = cluster::map_shared_rank(BUF.as_ptr(), other);
        let v = unsafe { *remote.add(t) };
        cluster::cluster_sync();
        let idx = thread::index_1d();
        if let Some(o) = out.get_mut(idx) {
            *o = v;
        }
    }
}

fn main() {
    const BLOCKS: usize = 8;
    const N: usize = BLOCKS * 128;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let mut d = DeviceBuffer::<u32>::zeroed(&s, N).unwrap();
    m.exchange(&s, LaunchConfig::new((BLOCKS as u32, 1, 1), (128, 1, 1), 0), &mut d).unwrap();
    let got = d.to_host_vec(&s).unwrap();
    let bad = (0..N)
        .filter(|&i| {
            let (b, t) = (i / 128, i % 128);
            let partner = (b % 2 + 1) % 2;
            got[i] != partner as u32 * 1000 + t as u32
        })
        .count();
    if bad == 0 {
        println!("PASSED: {N} values exchanged through distributed shared memory");
    } else {
        println!("FAILED: {bad} of {N} wrong (got[0] = {})", got[0]);
        std::process::exit(1);
    }
}
