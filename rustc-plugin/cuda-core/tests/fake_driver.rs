//! Views, pinned memory, async copies, graphs and the GPU-woken `.await`, run on the tests' fake
//! CUDA driver (tests/gpu/mock: it runs the `saxpy` kernel, y[i] += a * x[i], on the CPU, and
//! queued work at once), checked against the same arithmetic on the CPU with random inputs.
//! Without the fake driver (no CMake build of oxide), each test says it skipped.
mod common;
use common::{ctx, module};
use cuda_core::{CopyOp, CudaGraph, DeviceBuffer, DeviceOperation, LaunchConfig, LaunchOp, Module};
use cuda_core::{ParamBuffer, PinnedBuffer};
use std::borrow::Cow;
use std::future::{Future, IntoFuture};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// What `#[cuda_module]` makes of `saxpy(a: f32, x: &[f32], y: DisjointSlice<f32>, n: usize)`.
fn saxpy<'a>(m: &'a Module, a: f32, x: &'a DeviceBuffer<f32>, y: &'a mut DeviceBuffer<f32>) -> LaunchOp<'a> {
    let p = common::saxpy_params(a, x, y);
    LaunchOp::new(m, Cow::Borrowed("saxpy"), LaunchConfig::for_num_elems(y.len() as u32), p)
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    common::randoms(n, seed, true)
}

fn close(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1e-6 * w.abs().max(1.0))
}

#[test]
fn views_launch_on_their_range_only() {
    let Some(ctx) = ctx() else { return };
    let (s, m) = (ctx.default_stream(), module(&ctx));
    let (x, y0) = (random(1000, 1), random(1000, 2));
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&s, &y0).unwrap();
    {
        let xs = dx.slice(100..400);
        let mut ys = dy.slice_mut(500..800);
        assert_eq!((xs.len(), ys.len()), (300, 300));
        assert_eq!(xs.device_ptr(), dx.device_ptr() + 400);
        saxpy(&m, 1.5, &xs, &mut ys).sync().unwrap();
        // a view of a view: [600..650) of the buffer
        let mut inner = ys.slice_mut(100..150);
        saxpy(&m, -2.0, &xs.slice(0..50), &mut inner).sync().unwrap();
    }
    let mut want = y0.clone();
    for i in 0..300 {
        want[500 + i] += 1.5 * x[100 + i];
    }
    for i in 0..50 {
        want[600 + i] += -2.0 * x[100 + i];
    }
    let got = dy.to_host_vec(&s).unwrap();
    assert!(close(&got, &want));
    assert_eq!(got[..500], y0[..500], "values before the view changed");
    assert_eq!(got[800..], y0[800..], "values after the view changed");
    // copies through views
    let part = dy.slice(500..503).to_host_vec(&s).unwrap();
    assert_eq!(part, got[500..503]);
    dy.slice_mut(0..3).copy_from_host(&s, &[7.0, 8.0, 9.0]).unwrap();
    assert_eq!(dy.to_host_vec(&s).unwrap()[..4], [7.0, 8.0, 9.0, got[3]]);
}

#[test]
fn split_halves_are_written_independently() {
    let Some(ctx) = ctx() else { return };
    let (s, m) = (ctx.default_stream(), module(&ctx));
    let (x, y0) = (random(512, 3), random(512, 4));
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&s, &y0).unwrap();
    {
        let (mut lo, mut hi) = dy.split_at_mut(200);
        assert_eq!((lo.len(), hi.len()), (200, 312));
        cuda_core::DeviceOperation::zip(
            saxpy(&m, 3.0, &dx.slice(..200), &mut lo),
            saxpy(&m, 0.25, &dx.slice(200..), &mut hi),
        )
        .sync()
        .unwrap();
    }
    let want: Vec<f32> = (0..512).map(|i| y0[i] + if i < 200 { 3.0 } else { 0.25 } * x[i]).collect();
    assert!(close(&dy.to_host_vec(&s).unwrap(), &want));
}

#[test]
fn out_of_range_views_are_refused() {
    let Some(ctx) = ctx() else { return };
    let s = ctx.default_stream();
    let mut b = DeviceBuffer::from_host(&s, &random(10, 5)).unwrap();
    let e = b.try_slice(4..11).err().unwrap();
    assert!(e.message.contains("4..11 is out of bounds of a buffer of 10 values"), "{e}");
    let (lo, hi) = (6, 2);
    let e = b.try_slice_mut(lo..hi).err().unwrap();
    assert!(e.message.contains("starts at 6 but ends at 2"), "{e}");
    let e = b.try_slice(..=usize::MAX).err().unwrap();
    assert!(e.message.contains("usize::MAX+1"), "{e}");
    assert_eq!(b.try_slice(10..).unwrap().len(), 0);
    assert_eq!(b.try_slice(3..=5).unwrap().len(), 3);
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.slice(0..11);
    }));
    let msg = p.err().and_then(|e| e.downcast::<String>().ok()).unwrap();
    assert!(msg.contains("0..11 is out of bounds"), "{msg}");
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.split_at_mut(11);
    }));
    assert!(p.is_err());
}

#[test]
fn a_view_moved_out_keeps_the_memory() {
    let Some(ctx) = ctx() else { return };
    let s = ctx.default_stream();
    let v = random(64, 6);
    let mut parent = DeviceBuffer::from_host(&s, &v).unwrap();
    let mut other = DeviceBuffer::<f32>::zeroed(&s, 16).unwrap();
    {
        let mut view = parent.slice_mut(16..32);
        std::mem::swap(&mut *view, &mut other); // `other` is now the view, past the borrow
    }
    drop(parent);
    // the allocation lives as long as the escaped view: its contents are still there
    assert_eq!(other.to_host_vec(&s).unwrap(), v[16..32]);
}

#[test]
fn pinned_copies_run_as_operations() {
    let Some(ctx) = ctx() else { return };
    let s = ctx.default_stream();
    let x = random(300, 7);
    let host = PinnedBuffer::from_slice(&ctx, &x).unwrap();
    assert_eq!(&host[..], &x[..]);
    let mut d = DeviceBuffer::<f32>::zeroed(&s, 300).unwrap();
    host.copy_to_device(&mut d).sync().unwrap();
    let mut back = PinnedBuffer::new(&ctx, 100, 0.5f32).unwrap();
    assert!(back.iter().all(|&v| v == 0.5));
    back.copy_from_device(&d.slice(200..)).sync_on(&ctx.new_stream().unwrap()).unwrap();
    assert_eq!(&back[..], &x[200..]);
    let mut d2 = DeviceBuffer::<f32>::zeroed(&s, 100).unwrap();
    cuda_async::block_on(CopyOp::device_to_device(&ctx, &mut d2, &d.slice(..100)).into_future()).unwrap();
    assert_eq!(d2.to_host_vec(&s).unwrap(), x[..100]);
    let e = host.copy_to_device(&mut d2).sync().err().unwrap();
    assert!(e.message.contains("copy_to_device: 300 values into 100"), "{e}");
    let e = PinnedBuffer::<u64>::new(&ctx, usize::MAX, 1).err().unwrap();
    assert!(e.message.contains("overflow"), "{e}");
}

#[test]
fn a_graph_replays_copies_and_launches() {
    let Some(ctx) = ctx() else { return };
    let (s, m) = (ctx.new_stream().unwrap(), module(&ctx));
    let (x, y0) = (random(700, 8), random(700, 9));
    let host_x = PinnedBuffer::from_slice(&ctx, &x).unwrap();
    let mut host_y = PinnedBuffer::new(&ctx, 700, 0.0f32).unwrap();
    let mut dx = DeviceBuffer::<f32>::zeroed(&ctx.default_stream(), 700).unwrap();
    let mut dy = DeviceBuffer::from_host(&ctx.default_stream(), &y0).unwrap();
    let mut scratch = DeviceBuffer::<f32>::zeroed(&ctx.default_stream(), 700).unwrap();
    {
        let mut g = CudaGraph::capture(&ctx).unwrap();
        g.record(host_x.copy_to_device(&mut dx)).unwrap();
        // and_then chains record in order
        g.record(saxpy(&m, 0.75, &dx, &mut dy).and_then(|_| CopyOp::device_to_device(&ctx, &mut scratch, &dx)))
            .unwrap();
        g.record(host_y.copy_from_device(&dy)).unwrap();
        assert_eq!(g.len(), 3);
        let graph = g.end().unwrap();
        assert_eq!(graph.len(), 3);
        for _ in 0..5 {
            // SAFETY: the buffers outlive the graph, and the host touches them only after the
            // stream has been synchronized.
            unsafe { graph.launch(&s) }.unwrap();
        }
        s.synchronize().unwrap();
    }
    let mut want = y0.clone();
    for _ in 0..5 {
        for i in 0..700 {
            want[i] += 0.75 * x[i];
        }
    }
    assert!(close(&host_y, &want), "5 replays should add 5 * a * x");
    assert_eq!(scratch.to_host_vec(&ctx.default_stream()).unwrap(), x);
}

#[test]
fn graph_misuse_is_refused() {
    let Some(ctx) = ctx() else { return };
    let m = module(&ctx);
    let e = CudaGraph::capture(&ctx).unwrap().end().err().unwrap();
    assert!(e.message.contains("nothing was recorded"), "{e}");
    // a launch that fails while recording is reported, and the capture ends cleanly
    let s = ctx.default_stream();
    let x = DeviceBuffer::from_host(&s, &random(8, 10)).unwrap();
    let mut y = DeviceBuffer::from_host(&s, &random(8, 11)).unwrap();
    let mut g = CudaGraph::capture(&ctx).unwrap();
    let mut p = ParamBuffer::new();
    p.push_value(&1u64);
    let e =
        g.record(LaunchOp::new(&m, Cow::Borrowed("no_such_kernel"), LaunchConfig::for_num_elems(8), p)).err().unwrap();
    assert_eq!(e.status_name(), "OXIDE_ERROR_NOT_FOUND", "{e}");
    assert!(g.is_empty());
    drop(g); // dropped without end(): the capture is ended
             // capturing works again afterwards, and a recorded launch changes nothing until replayed
    let before = y.to_host_vec(&s).unwrap();
    let mut g = CudaGraph::capture(&ctx).unwrap();
    g.record(saxpy(&m, 2.0, &x, &mut y)).unwrap();
    let graph = g.end().unwrap();
    drop(graph);
    assert_eq!(y.to_host_vec(&s).unwrap(), before, "recording ran the work");
}

struct CountingWaker(AtomicUsize);
impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn await_is_woken_by_the_stream_callback() {
    let Some(ctx) = ctx() else { return };
    let (s, m) = (ctx.default_stream(), module(&ctx));
    let (x, y0) = (random(256, 12), random(256, 13));
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&s, &y0).unwrap();
    let count = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    {
        let mut fut = pin!(saxpy(&m, 4.0, &dx, &mut dy).into_future());
        // The fake driver runs work (and the callback after it) when it is queued: the first poll
        // is ready, and the callback has called the waker once. A future that polled the stream
        // instead would be ready without any wake.
        let r = fut.as_mut().poll(&mut Context::from_waker(&waker));
        assert!(matches!(r, Poll::Ready(Ok(()))));
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the stream callback did not wake the task");
    }
    let want: Vec<f32> = (0..256).map(|i| y0[i] + 4.0 * x[i]).collect();
    assert!(close(&dy.to_host_vec(&s).unwrap(), &want));
}

#[test]
fn a_stream_is_awaited_after_launch_on() {
    let Some(ctx) = ctx() else { return };
    let (s, m) = (ctx.new_stream().unwrap(), module(&ctx));
    let (x, y0) = (random(300, 14), random(300, 15));
    let dx = DeviceBuffer::from_host(&ctx.default_stream(), &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&ctx.default_stream(), &y0).unwrap();
    saxpy(&m, -0.5, &dx, &mut dy).launch_on(&s).unwrap();
    saxpy(&m, 2.0, &dx, &mut dy).launch_on(&s).unwrap();
    let count = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let mut done = pin!(s.done());
    assert!(matches!(done.as_mut().poll(&mut Context::from_waker(&waker)), Poll::Ready(Ok(()))));
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the stream callback did not wake the task");
    cuda_async::block_on(ctx.default_stream().done()).unwrap();
    let want: Vec<f32> = (0..300).map(|i| y0[i] + -0.5 * x[i] + 2.0 * x[i]).collect();
    assert!(close(&dy.to_host_vec(&ctx.default_stream()).unwrap(), &want));
}
