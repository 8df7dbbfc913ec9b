//! The seed example with every one of its 1,024 elements checked, plus a second instance.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T + Copy>(f: F, input: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(out_elem) = out.get_mut(idx) {
            *out_elem = f(input[i]);
        }
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let stream = ctx.default_stream();

    let data: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let input = DeviceBuffer::from_host(&stream, &data).unwrap();
    let mut output = DeviceBuffer::<f32>::zeroed(&stream, 1024).unwrap();

    let module = kernels::load(&ctx).unwrap();

    let factor = 2.5f32;
    module
        .map::<f32, _>(&stream, LaunchConfig::for_num_elems(1024), move |x: f32| x * factor, &input, &mut output)
        .unwrap();

    let result = output.to_host_vec(&stream).unwrap();
    for (i, r) in result.iter().enumerate() {
        assert!((r - i as f32 * 2.5).abs() < 1e-5, "element {i}: {r}");
    }
    // a second closure and a second element type through the same generic kernel
    let offset = 0.25f64;
    let data64: Vec<f64> = (0..1024).map(|i| i as f64).collect();
    let input64 = DeviceBuffer::from_host(&stream, &data64).unwrap();
    let mut output64 = DeviceBuffer::<f64>::zeroed(&stream, 1024).unwrap();
    module
        .map::<f64, _>(
            &stream,
            LaunchConfig::for_num_elems(1024),
            move |x: f64| x * 2.0 + offset,
            &input64,
            &mut output64,
        )
        .unwrap();
    let r64 = output64.to_host_vec(&stream).unwrap();
    for (i, r) in r64.iter().enumerate() {
        assert!((r - (i as f64 * 2.0 + 0.25)).abs() < 1e-12, "f64 element {i}: {r}");
    }
    println!("PASSED: all 1024 elements correct (f32 closure and f64 closure)");
}
