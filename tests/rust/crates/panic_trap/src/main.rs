//! A kernel that indexes out of bounds: it must print the panic's message and file:line (device
//! printf) and trap; the host sees the launch fail with a CUDA error naming the kernel.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, gpu_printf, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn oob(x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if i == 0 {
            gpu_printf!(
                "gpu_printf: block %d thread %d x[0] = %f len %lu\n",
                thread::blockIdx_x(),
                thread::threadIdx_x(),
                x[0],
                x.len()
            );
        }
        thread::sync_threads();
        if let Some(o) = y.get_mut(idx) {
            *o = x[i + 100];
        }
    }

    /// A formatted panic: its message keeps the text and the value (`negative input -3`).
    #[kernel]
    pub fn negative(x: &[i32], mut y: DisjointSlice<i32>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        if v < 0 {
            panic!("negative input {} at {}", v, idx.get());
        }
        if let Some(o) = y.get_mut(idx) {
            *o = v * 2;
        }
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let x = DeviceBuffer::from_host(&s, &[1.5f32, 2.0, 3.0, 4.0]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&s, 4).unwrap();
    let m = kernels::load(&ctx).unwrap();
    // `panic_trap fmt`: the formatted panic instead (a fault ends what the context can do, so
    // one per process)
    if std::env::args().nth(1).as_deref() == Some("fmt") {
        let xi = DeviceBuffer::from_host(&s, &[5i32, -3, 7, 1]).unwrap();
        let mut yi = DeviceBuffer::<i32>::zeroed(&s, 4).unwrap();
        let launched = m.negative(&s, LaunchConfig::new((1, 1, 1), (4, 1, 1), 0), &xi, &mut yi);
        let synced = s.synchronize();
        println!("launch: {:?}\nsync: {:?}", launched.err(), synced.as_ref().err());
        if synced.is_err() {
            println!("PASSED: the formatted panic trapped and the host got an error");
            return;
        }
        println!("FAILED: the kernel did not trap");
        std::process::exit(1);
    }
    let launched = m.oob(&s, LaunchConfig::new((1, 1, 1), (32, 1, 1), 0), &x, &mut y);
    let synced = s.synchronize();
    println!("launch: {:?}\nsync: {:?}", launched.err(), synced.as_ref().err());
    if synced.is_err() {
        println!("PASSED: the out-of-bounds kernel trapped and the host got an error");
    } else {
        println!("FAILED: the kernel did not trap");
        std::process::exit(1);
    }
}
