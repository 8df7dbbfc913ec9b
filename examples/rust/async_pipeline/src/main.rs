//! Async pipeline over two streams: lazy launches (`*_async`) composed with `and_then` and
//! `zip!`, run with `.sync()` and with `.await`. Checked against the CPU.
use cuda_async::{block_on, zip, DeviceOperation};
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn scale(k: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o = k * x[i];
        }
    }

    #[kernel]
    pub fn add(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = c.get_mut(idx) {
            *o = a[i] + b[i];
        }
    }
}

fn main() {
    const N: usize = 1 << 20;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let x: Vec<f32> = (0..N).map(|i| (i % 100) as f32).collect();
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut y1 = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    let mut y2 = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    let mut z = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();

    // two independent launches on two streams, then a dependent one: (2x, 3x) -> 2x + 3x
    zip!(m.scale_async(cfg, 2.0, &dx, &mut y1), m.scale_async(cfg, 3.0, &dx, &mut y2)).sync().unwrap();
    m.add_async(cfg, &y1, &y2, &mut z).sync().unwrap();
    let r = z.to_host_vec(&s).unwrap();
    let ok1 = (0..N).all(|i| r[i] == 5.0 * x[i]);

    // the same through and_then and .await
    let mut w = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    block_on(async {
        m.scale_async(cfg, 4.0, &dx, &mut y1).await.unwrap();
        m.scale_async(cfg, 0.5, &y1, &mut y2).and_then(|_| m.add_async(cfg, &dx, &dx, &mut w)).await.unwrap();
    });
    let r2 = y2.to_host_vec(&s).unwrap();
    let r3 = w.to_host_vec(&s).unwrap();
    let ok2 = (0..N).all(|i| r2[i] == 2.0 * x[i] && r3[i] == 2.0 * x[i]);
    if ok1 && ok2 {
        println!("PASSED: zip!, and_then, .sync() and .await over {N} elements");
    } else {
        println!("FAILED: zip/sync {ok1}, and_then/await {ok2}");
        std::process::exit(1);
    }
}
