//! Atomics histogram: 256 bins counted in shared memory with block-scope atomics, then merged into
//! global memory with device-scope atomics. Checked against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::atomic::{BlockAtomicU32, DeviceAtomicU32, Relaxed};
use cuda_device::{cuda_module, kernel, thread, SharedArray};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn histogram(data: &[u8], bins: *mut u32) {
        static LOCAL: SharedArray<u32, 256> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let nt = thread::blockDim_x() as usize;
        let mut b = t;
        while b < 256 {
            LOCAL.set(b, 0);
            b += nt;
        }
        thread::sync_threads();
        let stride = nt * thread::gridDim_x() as usize;
        let mut i = thread::index_1d().get();
        while i < data.len() {
            let v = data[i] as usize;
            unsafe { BlockAtomicU32::from_ptr(LOCAL.as_ptr().add(v)) }.fetch_add(1, Relaxed);
            i += stride;
        }
        thread::sync_threads();
        let mut b = t;
        while b < 256 {
            let c = LOCAL.get(b);
            if c != 0 {
                unsafe { DeviceAtomicU32::from_ptr(bins.add(b)) }.fetch_add(c, Relaxed);
            }
            b += nt;
        }
    }
}

fn main() {
    const N: usize = 1 << 22;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let data: Vec<u8> = (0..N).map(|i| ((i * 2654435761usize) >> 13) as u8).collect();
    let dd = DeviceBuffer::from_host(&s, &data).unwrap();
    let mut bins = DeviceBuffer::<u32>::zeroed(&s, 256).unwrap();
    m.histogram(&s, LaunchConfig::new((264, 1, 1), (256, 1, 1), 0), &dd, &mut bins).unwrap();
    let got = bins.to_host_vec(&s).unwrap();
    let mut want = vec![0u32; 256];
    for &d in &data {
        want[d as usize] += 1;
    }
    if got == want {
        println!("PASSED: 256 bins correct over {N} bytes");
    } else {
        let bad = (0..256).filter(|&b| got[b] != want[b]).count();
        println!("FAILED: {bad} bins wrong (bin 0: {} vs {})", got[0], want[0]);
        std::process::exit(1);
    }
}
