//! Vector addition: c[i] = a[i] + b[i] for 1,024 floats, checked against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }
}

fn main() {
    const N: usize = 1024;
    let Some(ctx) = CudaContext::new_or_skip(0) else {
        // without a GPU, still check what the program carries
        let text = String::from_utf8_lossy(cuda_core::embedded_ptx());
        let ok = text.contains(".entry vecadd") && text.contains("// oxide.manifest.v1");
        println!("the embedded PTX (entry vecadd, manifest) is {}", if ok { "valid" } else { "MISSING" });
        std::process::exit(if ok { 0 } else { 1 });
    };
    let stream = ctx.default_stream();
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| (2 * i) as f32 + 0.5).collect();
    let da = DeviceBuffer::from_host(&stream, &a).unwrap();
    let db = DeviceBuffer::from_host(&stream, &b).unwrap();
    let mut dc = DeviceBuffer::<f32>::zeroed(&stream, N).unwrap();
    let module = kernels::load(&ctx).unwrap();
    module.vecadd(&stream, LaunchConfig::for_num_elems(N as u32), &da, &db, &mut dc).unwrap();
    let c = dc.to_host_vec(&stream).unwrap();
    let bad = (0..N).filter(|&i| c[i] != a[i] + b[i]).count();
    if bad == 0 {
        println!("PASSED: all {N} elements correct");
    } else {
        println!("FAILED: {bad} of {N} elements wrong (c[1] = {}, expected {})", c[1], a[1] + b[1]);
        std::process::exit(1);
    }
}
