//! Sub-slices of device buffers: a kernel launched on views (`buf.slice(range)`,
//! `buf.slice_mut(range)`) sees just the range (its `len()` too); `split_at_mut` gives two views
//! that two streams write at once. Checked against the CPU, including that nothing outside the
//! views changed.
use cuda_async::zip;
use cuda_core::{CudaContext, DeviceBuffer, DeviceOperation, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    /// out[i] = a * x[i] + x.len(): the length shows which slice the kernel was given
    #[kernel]
    pub fn affine(a: f32, x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a * x[i] + x.len() as f32;
        }
    }
}

const N: usize = 10_000;

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let seed = std::process::id() as u64;
    let x: Vec<f32> =
        (0..N).map(|i| 1.0 + ((i as u64 ^ seed).wrapping_mul(0x9e37_79b9) % 1000) as f32 / 1000.0).collect();
    let y0: Vec<f32> = (0..N).map(|i| -1.0 - (i % 7) as f32).collect();
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&s, &y0).unwrap();
    let mut want = y0.clone();

    // y[4000..7000] = 2 * x[1000..4000] + 3000
    let cfg = LaunchConfig::for_num_elems(3000);
    m.affine(&s, cfg, 2.0, &dx.slice(1000..4000), &mut dy.slice_mut(4000..7000)).unwrap();
    for i in 0..3000 {
        want[4000 + i] = 2.0 * x[1000 + i] + 3000.0;
    }
    // a view of a view: y[100..150] = -1 * x[..50] + 50
    {
        let mut head = dy.slice_mut(..1000);
        m.affine(&s, LaunchConfig::for_num_elems(50), -1.0, &dx.slice(..50), &mut head.slice_mut(100..150)).unwrap();
    }
    for i in 0..50 {
        want[100 + i] = -x[i] + 50.0;
    }
    let r1 = dy.to_host_vec(&s).unwrap();
    let bad1 = (0..N).filter(|&i| r1[i] != want[i]).count();

    // two halves written on two streams at once
    let (mut lo, mut hi) = dy.split_at_mut(N / 2);
    let half = LaunchConfig::for_num_elems((N / 2) as u32);
    zip!(
        m.affine_async(half, 0.5, &dx.slice(..N / 2), &mut lo),
        m.affine_async(half, 4.0, &dx.slice(N / 2..), &mut hi)
    )
    .sync()
    .unwrap();
    drop((lo, hi));
    for i in 0..N {
        want[i] = if i < N / 2 { 0.5 * x[i] } else { 4.0 * x[i] } + (N / 2) as f32;
    }
    let r2 = dy.to_host_vec(&s).unwrap();
    let bad2 = (0..N).filter(|&i| r2[i] != want[i]).count();
    // a range past the end is an error, not a launch
    let refused = dx.try_slice(N - 10..N + 1).is_err();

    if bad1 == 0 && bad2 == 0 && refused {
        println!("PASSED: launches on views and nested views, split halves on two streams, over {N} elements");
    } else {
        println!("FAILED: {bad1} wrong after the view launches, {bad2} after the split launches, refused {refused}");
        std::process::exit(1);
    }
}
