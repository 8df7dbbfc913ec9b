//! Tiled matrix multiplication C = A * B (row-major f32) with 16x16 tiles in shared memory.
//! Checked against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice, SharedArray};

pub const TILE: usize = 16;

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn matmul(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>, n: u32) {
        static AS: SharedArray<f32, { TILE * TILE }> = SharedArray::UNINIT;
        static BS: SharedArray<f32, { TILE * TILE }> = SharedArray::UNINIT;
        let n = n as usize;
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let col = thread::blockIdx_x() as usize * TILE + tx;
        let row = thread::blockIdx_y() as usize * TILE + ty;
        if tx >= TILE || ty >= TILE {
            return; // launched with TILE x TILE blocks: never taken; lets the tile indices go unchecked
        }
        let mut acc = 0.0f32;
        let mut t = 0;
        while t < n {
            // SAFETY (all tile indices below): tx, ty < TILE, checked above
            unsafe {
                AS.set_unchecked(ty * TILE + tx, if row < n && t + tx < n { a[row * n + t + tx] } else { 0.0 });
                BS.set_unchecked(ty * TILE + tx, if col < n && t + ty < n { b[(t + ty) * n + col] } else { 0.0 });
            }
            thread::sync_threads();
            for k in 0..TILE {
                acc = unsafe { AS.get_unchecked(ty * TILE + k).mul_add(BS.get_unchecked(k * TILE + tx), acc) };
            }
            thread::sync_threads();
            t += TILE;
        }
        if row < n && col < n {
            unsafe { *c.get_unchecked_mut(row * n + col) = acc };
        }
    }
}

fn main() {
    const N: usize = 512;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let a: Vec<f32> = (0..N * N).map(|i| ((i % 13) as f32 - 6.0) * 0.125).collect();
    let b: Vec<f32> = (0..N * N).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
    let da = DeviceBuffer::from_host(&s, &a).unwrap();
    let db = DeviceBuffer::from_host(&s, &b).unwrap();
    let mut dc = DeviceBuffer::<f32>::zeroed(&s, N * N).unwrap();
    let g = (N / TILE) as u32;
    m.matmul(&s, LaunchConfig::new((g, g, 1), (TILE as u32, TILE as u32, 1), 0), &da, &db, &mut dc, N as u32).unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    let mut bad = 0;
    for r in 0..N {
        for col in 0..N {
            let want: f32 = (0..N).map(|k| a[r * N + k] * b[k * N + col]).sum();
            if (c[r * N + col] - want).abs() > 1e-2 * (1.0 + want.abs()) {
                bad += 1;
            }
        }
    }
    if bad == 0 {
        println!("PASSED: {N}x{N} matmul correct");
    } else {
        println!("FAILED: {bad} elements wrong");
        std::process::exit(1);
    }
}
