//! Warp reduction: each warp sums 32 values with shuffle_xor (butterfly) and votes with ballot;
//! lane 0 writes the warp's sum. Also checks redux.sync (reduce_add_u32). Checked on the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, warp, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn warp_sums(
        x: &[f32],
        n: &[u32],
        mut sums: DisjointSlice<f32>,
        mut counts: DisjointSlice<u32>,
        mut ballots: DisjointSlice<u32>,
    ) {
        let i = thread::index_1d().get();
        let v = if i < x.len() { x[i] } else { 0.0 };
        let total = warp::reduce_sum_f32(v);
        let c = warp::reduce_add_u32(if i < n.len() { n[i] } else { 0 });
        let b = warp::ballot(v > 10.0);
        if warp::lane_id() == 0 {
            let w = i / 32;
            if w < sums.len() {
                unsafe {
                    *sums.get_unchecked_mut(w) = total;
                    *counts.get_unchecked_mut(w) = c;
                    *ballots.get_unchecked_mut(w) = b;
                }
            }
        }
    }
}

fn main() {
    const N: usize = 1 << 16;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let x: Vec<f32> = (0..N).map(|i| (i % 23) as f32).collect();
    let n: Vec<u32> = (0..N as u32).map(|i| i % 7).collect();
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let dn = DeviceBuffer::from_host(&s, &n).unwrap();
    let w = N / 32;
    let mut ds = DeviceBuffer::<f32>::zeroed(&s, w).unwrap();
    let mut dc = DeviceBuffer::<u32>::zeroed(&s, w).unwrap();
    let mut db = DeviceBuffer::<u32>::zeroed(&s, w).unwrap();
    m.warp_sums(&s, LaunchConfig::for_num_elems(N as u32), &dx, &dn, &mut ds, &mut dc, &mut db).unwrap();
    let (sums, counts, ballots) =
        (ds.to_host_vec(&s).unwrap(), dc.to_host_vec(&s).unwrap(), db.to_host_vec(&s).unwrap());
    let mut bad = 0;
    for k in 0..w {
        let r = k * 32..(k + 1) * 32;
        let want: f32 = x[r.clone()].iter().sum();
        let wc: u32 = n[r.clone()].iter().sum();
        let wb: u32 = r.clone().enumerate().map(|(l, i)| ((x[i] > 10.0) as u32) << l).sum();
        if (sums[k] - want).abs() > 1e-3 || counts[k] != wc || ballots[k] != wb {
            bad += 1;
        }
    }
    if bad == 0 {
        println!("PASSED: {w} warp sums, redux counts and ballots correct");
    } else {
        println!("FAILED: {bad} of {w} warps wrong");
        std::process::exit(1);
    }
}
