//! What waiting on the GPU costs the CPU: a ~100 ms kernel awaited with `cuda_async::block_on`
//! (the thread sleeps until a stream callback wakes it), against the same kernel waited for by
//! polling the stream. Prints `await_cpu_ms <cpu> <wall>` and `poll_cpu_ms <cpu> <wall>` (process
//! CPU time from getrusage, all threads, and wall time, in ms), checks that a future dropped while
//! its kernel runs waits for it, and checks the kernel's results against the CPU.
use cuda_async::block_on;
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};
use std::future::{Future, IntoFuture};
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Instant;

const MUL: u64 = 6364136223846793005;
const ADD: u64 = 1442695040888963407;

#[cuda_module]
mod kernels {
    use super::*;

    /// `iters` steps of a 64-bit LCG from `seed`: a dependent chain the compiler cannot shorten,
    /// so the kernel runs for a time proportional to `iters`.
    #[kernel]
    pub fn lcg_spin(iters: u64, seed: u64, mut out: DisjointSlice<u64>) {
        let idx = thread::index_1d();
        let mut x = seed;
        for _ in 0..iters {
            x = x.wrapping_mul(MUL).wrapping_add(ADD);
        }
        if let Some(o) = out.get_mut(idx) {
            *o = x;
        }
    }
}

#[repr(C)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

/// User + system CPU time of the whole process (every thread, the driver's too), in ms.
fn cpu_ms() -> f64 {
    let mut u = Rusage { utime: [0; 2], stime: [0; 2], rest: [0; 14] };
    unsafe { getrusage(0, &mut u) };
    (u.utime[0] + u.stime[0]) as f64 * 1e3 + (u.utime[1] + u.stime[1]) as f64 / 1e3
}

fn lcg(iters: u64, seed: u64) -> u64 {
    (0..iters).fold(seed, |x, _| x.wrapping_mul(MUL).wrapping_add(ADD))
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let one = LaunchConfig::new((1, 1, 1), (1, 1, 1), 0);
    let mut out = DeviceBuffer::<u64>::zeroed(&s, 1).unwrap();
    let seed = 0x2545_f491_4f6c_dd1d_u64 ^ std::process::id() as u64;

    // calibrate: how many steps make 100 ms on this GPU
    let (e0, e1) = (ctx.new_event().unwrap(), ctx.new_event().unwrap());
    let probe = 2_000_000u64;
    m.lcg_spin(&s, one, probe, seed, &mut out).unwrap(); // warm-up (module load, first launch)
    s.record(&e0).unwrap();
    m.lcg_spin(&s, one, probe, seed, &mut out).unwrap();
    s.record(&e1).unwrap();
    e1.synchronize().unwrap();
    let ms = e1.elapsed_ms_since(&e0).unwrap().max(0.01) as f64;
    let iters = ((probe as f64) * 100.0 / ms) as u64;

    // awaited: the thread sleeps until the stream callback wakes it
    let (c0, t0) = (cpu_ms(), Instant::now());
    block_on(async { m.lcg_spin_async(one, iters, seed, &mut out).await }).unwrap();
    let (await_cpu, await_wall) = (cpu_ms() - c0, t0.elapsed().as_secs_f64() * 1e3);
    let got = out.to_host_vec(&s).unwrap()[0];

    // polled: what `.await` cost before (a loop on the stream's state)
    let poll_stream = ctx.new_stream().unwrap();
    let (c0, t0) = (cpu_ms(), Instant::now());
    m.lcg_spin(&poll_stream, one, iters, seed ^ 1, &mut out).unwrap();
    while !poll_stream.is_done().unwrap() {
        std::thread::yield_now();
    }
    let (poll_cpu, poll_wall) = (cpu_ms() - c0, t0.elapsed().as_secs_f64() * 1e3);
    let polled = out.to_host_vec(&s).unwrap()[0];

    // a future dropped while its kernel runs (a cancelled task) waits for the GPU as it goes, so
    // the buffer it borrows is not freed or reused under the kernel
    let t0 = Instant::now();
    let pending = {
        let mut fut = pin!(m.lcg_spin_async(one, iters, seed ^ 2, &mut out).into_future());
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending()
    };
    let drop_ms = t0.elapsed().as_secs_f64() * 1e3;
    let dropped = out.to_host_vec(&s).unwrap()[0];

    println!("await_cpu_ms {await_cpu:.2} {await_wall:.1}");
    println!("poll_cpu_ms {poll_cpu:.2} {poll_wall:.1}");
    let want = lcg(iters, seed);
    let ok_value = got == want && polled == lcg(iters, seed ^ 1) && dropped == lcg(iters, seed ^ 2);
    let ok_drop = pending && drop_ms >= 50.0;
    // asleep: a few ms of CPU at most for the launch, the stream and the wake-up
    let ok_cpu = await_wall >= 50.0 && await_cpu < 0.1 * await_wall;
    if ok_value && ok_cpu && ok_drop {
        println!(
            "PASSED: a {await_wall:.0} ms kernel awaited with {await_cpu:.2} ms of CPU (polling: {poll_cpu:.1} ms); \
             a dropped future waited {drop_ms:.0} ms for its kernel; results match the CPU"
        );
    } else {
        println!(
            "FAILED: results {} (awaited: GPU {got:#x}, CPU {want:#x}); awaited {await_wall:.1} ms with \
             {await_cpu:.2} ms CPU (wanted under a tenth of the wall time, for a kernel of at least 50 ms); a dropped \
             future pending at its first poll: {pending}, returned after {drop_ms:.1} ms (wanted the kernel's time, \
             at least 50 ms)",
            if ok_value { "match" } else { "differ" }
        );
        std::process::exit(1);
    }
}
