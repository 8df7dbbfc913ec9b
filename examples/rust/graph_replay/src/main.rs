//! A CUDA graph: one step of work (copy the input in from pinned memory, two kernels, copy the
//! result out) recorded once and replayed; checked against the same steps on the CPU, and timed
//! against submitting the four operations one by one.
use cuda_async::block_on;
use cuda_core::{CudaContext, CudaGraph, DeviceBuffer, DeviceOperation, LaunchConfig, PinnedBuffer};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};
use std::time::Instant;

#[cuda_module]
mod kernels {
    use super::*;

    /// y[i] += a * x[i]
    #[kernel]
    pub fn axpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o += a * x[i];
        }
    }

    /// x[i] = x[i] * k + 1
    #[kernel]
    pub fn bump(k: f32, mut x: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if let Some(o) = x.get_mut(idx) {
            *o = *o * k + 1.0;
        }
    }
}

const N: usize = 1 << 16;
const REPLAYS: usize = 20;

/// n values in +-[0.5, 2), never zero, from a hash of the index.
fn random(n: usize, seed: u64) -> Vec<f32> {
    let h = |i: usize| (i as u64 ^ seed).wrapping_mul(0x2545_f491_4f6c_dd1d) >> 39;
    (0..n)
        .map(|i| (0.5 + 1.5 * (h(i) >> 1) as f32 / (1u64 << 24) as f32) * if h(i) & 1 == 0 { 1.0 } else { -1.0 })
        .collect()
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.new_stream().unwrap();
    let m = kernels::load(&ctx).unwrap();
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let seed = 0x9e37_79b9_7f4a_7c15 ^ std::process::id() as u64;
    let (x0, y0) = (random(N, seed), random(N, seed ^ 0xabcdef));
    let host_x = PinnedBuffer::from_slice(&ctx, &x0).unwrap();
    let mut host_y = PinnedBuffer::new(&ctx, N, 0.0f32).unwrap();
    let mut dx = DeviceBuffer::<f32>::zeroed(&ctx.default_stream(), N).unwrap();
    let mut dy = DeviceBuffer::from_host(&ctx.default_stream(), &y0).unwrap();

    // one step: x = host_x; x = x * 0.5 + 1; y += 0.25 * x; host_y = y
    let mut g = CudaGraph::capture(&ctx).unwrap();
    g.record(host_x.copy_to_device(&mut dx)).unwrap();
    g.record(m.bump_async(cfg, 0.5, &mut dx)).unwrap();
    g.record(m.axpy_async(cfg, 0.25, &dx, &mut dy)).unwrap();
    g.record(host_y.copy_from_device(&dy)).unwrap();
    let graph = g.end().unwrap();

    let t0 = Instant::now();
    for _ in 0..REPLAYS {
        // SAFETY: every buffer the graph uses lives until the end of main, and the host reads
        // host_y only after the stream is synchronized.
        unsafe { graph.launch(&s) }.unwrap();
    }
    block_on(s.done()).unwrap(); // the thread sleeps until the last replay has run
    let graph_us = t0.elapsed().as_secs_f64() * 1e6 / REPLAYS as f64;
    let got = host_y.to_vec();

    let mut y = y0.clone();
    let steps = |y: &mut Vec<f32>| {
        for _ in 0..REPLAYS {
            for i in 0..N {
                y[i] += 0.25 * (x0[i] * 0.5 + 1.0);
            }
        }
    };
    steps(&mut y);
    // the GPU may fuse a * b + c into one rounding: allow a few ulps
    let wrong = |got: &[f32], y: &[f32]| (0..N).filter(|&i| (got[i] - y[i]).abs() > 1e-5 * y[i].abs().max(1.0)).count();
    let bad = wrong(&got, &y);

    // the same four operations submitted one by one
    drop(graph);
    let t0 = Instant::now();
    for _ in 0..REPLAYS {
        host_x.copy_to_device(&mut dx).launch_on(&s).unwrap();
        m.bump(&s, cfg, 0.5, &mut dx).unwrap();
        m.axpy(&s, cfg, 0.25, &dx, &mut dy).unwrap();
        host_y.copy_from_device(&dy).launch_on(&s).unwrap();
    }
    s.synchronize().unwrap();
    let direct_us = t0.elapsed().as_secs_f64() * 1e6 / REPLAYS as f64;
    steps(&mut y);
    let bad_direct = wrong(&host_y, &y);

    if bad == 0 && bad_direct == 0 {
        println!(
            "PASSED: a graph of 4 operations replayed {REPLAYS} times over {N} elements matches the CPU; \
             {graph_us:.1} us per replay, {direct_us:.1} us submitted one by one"
        );
    } else {
        println!(
            "FAILED: {bad} of {N} elements differ from the CPU after {REPLAYS} replays, {bad_direct} after as many \
             direct steps"
        );
        std::process::exit(1);
    }
}
