//! A kernel with a planted bug: thread 0 writes one element past the end of its buffer through a
//! raw pointer. Built with `cargo oxide build --lineinfo`, compute-sanitizer (memcheck) must
//! report the invalid write at this file's line of the write (scripts/gpu-check.d/lineinfo runs
//! it and finds that line by the comment on it). Without the sanitizer the stray write lands
//! inside the allocation's granule and the program ends normally.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn oob_write(out: *mut f32, n: u64) {
        let i = thread::index_1d().get();
        // thread 0 writes out[n], one past the end (the others write their own element)
        let j = if i == 0 { n as usize } else { i };
        if i < n as usize {
            unsafe { *out.add(j) = i as f32 + 0.5 }; // the planted write
        }
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let n = 256usize;
    let mut out = DeviceBuffer::<f32>::zeroed(&s, n).unwrap();
    let m = kernels::load(&ctx).unwrap();
    m.oob_write(&s, LaunchConfig::for_num_elems(n as u32), &mut out, n as u64).unwrap();
    s.synchronize().unwrap();
    let host = out.to_host_vec(&s).unwrap();
    // every thread but 0 wrote its element; thread 0's write went past the end
    let bad = (1..n).filter(|&i| host[i] != i as f32 + 0.5).count();
    println!(
        "{}",
        if bad == 0 && host[0] == 0.0 { "ran: threads 1.. wrote their elements" } else { "FAILED: wrong elements" }
    );
}
