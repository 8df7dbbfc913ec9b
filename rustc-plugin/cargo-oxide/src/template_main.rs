//! A new oxide program: host and device code in one file. `cargo oxide run` builds and runs it.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn scale(factor: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(out) = y.get_mut(idx) {
            *out = factor * x[i];
        }
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let stream = ctx.default_stream();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
    let mut dy = DeviceBuffer::<f32>::zeroed(&stream, x.len()).unwrap();
    let module = kernels::load(&ctx).unwrap();
    module.scale(&stream, LaunchConfig::for_num_elems(x.len() as u32), 3.0, &dx, &mut dy).unwrap();
    let y = dy.to_host_vec(&stream).unwrap();
    assert!(y.iter().zip(&x).all(|(a, b)| *a == 3.0 * b));
    println!("PASSED: all {} elements correct", y.len());
}
