//! Block reduction in shared memory: each block sums 256 floats with a tree in a SharedArray,
//! thread 0 writes the block's sum. Checked against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice, SharedArray};

pub const BLOCK: usize = 256;

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum(x: &[f32], mut sums: DisjointSlice<f32>) {
        static TILE: SharedArray<f32, BLOCK> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        TILE.set(t, if i < x.len() { x[i] } else { 0.0 });
        thread::sync_threads();
        let mut stride = BLOCK / 2;
        while stride > 0 {
            if t < stride {
                TILE.set(t, TILE.get(t) + TILE.get(t + stride));
            }
            thread::sync_threads();
            stride /= 2;
        }
        if t == 0 {
            let b = thread::blockIdx_x() as usize;
            if b < sums.len() {
                unsafe { *sums.get_unchecked_mut(b) = TILE.get(0) };
            }
        }
    }
}

fn main() {
    const N: usize = 1 << 20;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let x: Vec<f32> = (0..N).map(|i| ((i % 17) as f32) * 0.25).collect();
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let blocks = N / BLOCK;
    let mut ds = DeviceBuffer::<f32>::zeroed(&s, blocks).unwrap();
    m.block_sum(&s, LaunchConfig::new((blocks as u32, 1, 1), (BLOCK as u32, 1, 1), 0), &dx, &mut ds).unwrap();
    let sums = ds.to_host_vec(&s).unwrap();
    let bad =
        (0..blocks).filter(|&b| (sums[b] - x[b * BLOCK..(b + 1) * BLOCK].iter().sum::<f32>()).abs() > 1e-3).count();
    let total: f64 = sums.iter().map(|&v| v as f64).sum();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    if bad == 0 && (total - want).abs() < 1e-3 * want {
        println!("PASSED: {blocks} block sums correct (total {total})");
    } else {
        println!("FAILED: {bad} block sums wrong (total {total}, expected {want})");
        std::process::exit(1);
    }
}
