//! Pinned host memory and asynchronous copies: a two-stream pipeline (copy a chunk in, scale it,
//! copy it out, while the other stream does the same to the next chunk) queued without waiting,
//! and two copies awaited at once with `zip!`; checked against the CPU. Also times a 64 MiB
//! host-to-device copy from pinned and from pageable memory.
use cuda_async::{block_on, zip};
use cuda_core::{CudaContext, DeviceBuffer, DeviceOperation, LaunchConfig, PinnedBuffer};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    /// x[i] = x[i] * k - 3
    #[kernel]
    pub fn scale_shift(k: f32, mut x: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if let Some(o) = x.get_mut(idx) {
            *o = *o * k - 3.0;
        }
    }
}

const CHUNK: usize = 1 << 18;
const CHUNKS: usize = 8;

fn value(i: usize, seed: u64) -> f32 {
    let h = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    1.0 + h as f32 / (1u64 << 24) as f32 // in [1, 2): never zero
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let m = kernels::load(&ctx).unwrap();
    let cfg = LaunchConfig::for_num_elems(CHUNK as u32);
    let seed = std::process::id() as u64;
    let input: Vec<PinnedBuffer<f32>> = (0..CHUNKS)
        .map(|c| {
            let v: Vec<f32> = (0..CHUNK).map(|i| value(c * CHUNK + i, seed)).collect();
            PinnedBuffer::from_slice(&ctx, &v).unwrap()
        })
        .collect();
    let mut output: Vec<PinnedBuffer<f32>> =
        (0..CHUNKS).map(|_| PinnedBuffer::new(&ctx, CHUNK, 0.0).unwrap()).collect();
    let s = ctx.default_stream();
    let mut dev: Vec<DeviceBuffer<f32>> = (0..2).map(|_| DeviceBuffer::zeroed(&s, CHUNK).unwrap()).collect();

    // chunk c: in -> device -> scaled -> out, queued on stream c % 2 without waiting, so one
    // stream's copies overlap the other's kernel; a device buffer is reused only on its stream
    let streams = [ctx.new_stream().unwrap(), ctx.new_stream().unwrap()];
    for (c, (inp, out)) in input.iter().zip(output.iter_mut()).enumerate() {
        let (st, d) = (&streams[c % 2], &mut dev[c % 2]);
        inp.copy_to_device(d).launch_on(st).unwrap();
        m.scale_shift(st, cfg, 0.5, d).unwrap();
        out.copy_from_device(d).launch_on(st).unwrap();
    }
    for st in &streams {
        st.synchronize().unwrap();
    }
    // and awaited: two copies at once on two streams
    block_on(async {
        let (d0, d1) = dev.split_at_mut(1);
        zip!(input[2].copy_to_device(&mut d0[0]), input[3].copy_to_device(&mut d1[0])).await.unwrap();
    });
    let back = [dev[0].to_host_vec(&s).unwrap(), dev[1].to_host_vec(&s).unwrap()];
    let awaited_ok = back[0][..] == input[2][..] && back[1][..] == input[3][..];
    let bad = (0..CHUNKS * CHUNK).filter(|&i| output[i / CHUNK][i % CHUNK] != value(i, seed) * 0.5 - 3.0).count();

    // bandwidth: one 64 MiB copy from pinned and from pageable memory, timed with events
    let n = 16 << 20;
    let pinned = PinnedBuffer::new(&ctx, n, 1.5f32).unwrap();
    let pageable = vec![1.5f32; n];
    let mut d = DeviceBuffer::<f32>::zeroed(&s, n).unwrap();
    let (e0, e1) = (ctx.new_event().unwrap(), ctx.new_event().unwrap());
    let stream = ctx.new_stream().unwrap();
    stream.record(&e0).unwrap();
    pinned.copy_to_device(&mut d).launch_on(&stream).unwrap();
    stream.record(&e1).unwrap();
    e1.synchronize().unwrap();
    let pinned_gbs = (n * 4) as f64 / (e1.elapsed_ms_since(&e0).unwrap() as f64 * 1e6);
    let t0 = std::time::Instant::now();
    d.copy_from_host(&s, &pageable).unwrap();
    let pageable_gbs = (n * 4) as f64 / (t0.elapsed().as_secs_f64() * 1e9);
    let last = d.slice(n - 4..).to_host_vec(&s).unwrap();

    if bad == 0 && awaited_ok && last == [1.5; 4] {
        println!(
            "PASSED: {CHUNKS} chunks of {CHUNK} through pinned memory on two streams match the CPU; \
             64 MiB host to device: pinned {pinned_gbs:.1} GB/s, pageable {pageable_gbs:.1} GB/s"
        );
    } else {
        println!(
            "FAILED: {bad} of {} values differ from the CPU; awaited copies {}; tail of the copy {last:?}",
            CHUNKS * CHUNK,
            if awaited_ok { "right" } else { "wrong" }
        );
        std::process::exit(1);
    }
}
