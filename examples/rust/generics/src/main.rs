//! One generic kernel, many instances: closures capturing f32, f64, u8 and a small struct, over
//! f32, f64 and u32 elements, all checked against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f32,
    pub shift: f32,
    pub clamp: u8,
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T + Copy>(f: F, input: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]);
        }
    }

    #[kernel]
    pub fn zip_with<A: Copy, B: Copy, F: Fn(A, B) -> A + Copy>(f: F, a: &[A], b: &[B], mut out: DisjointSlice<A>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(a[i], b[i]);
        }
    }
}

fn check<T: Copy + PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: impl Fn(usize) -> T) -> bool {
    for (i, g) in got.iter().enumerate() {
        if *g != want(i) {
            println!("FAILED: {what}: element {i} is {g:?}, expected {:?}", want(i));
            return false;
        }
    }
    true
}

fn main() {
    const N: usize = 1000;
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let xf: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let xd: Vec<f64> = (0..N).map(|i| i as f64 * 0.25).collect();
    let xu: Vec<u32> = (0..N as u32).collect();
    let dxf = DeviceBuffer::from_host(&s, &xf).unwrap();
    let dxd = DeviceBuffer::from_host(&s, &xd).unwrap();
    let dxu = DeviceBuffer::from_host(&s, &xu).unwrap();
    let mut of = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    let mut od = DeviceBuffer::<f64>::zeroed(&s, N).unwrap();
    let mut ou = DeviceBuffer::<u32>::zeroed(&s, N).unwrap();
    let mut ok = true;

    let k = 3.0f32; // captures an f32
    m.map::<f32, _>(&s, cfg, move |x: f32| x * k + 1.0, &dxf, &mut of).unwrap();
    ok &= check("f32 capture", &of.to_host_vec(&s).unwrap(), |i| xf[i] * k + 1.0);

    let kd = 1.5f64; // captures an f64
    m.map::<f64, _>(&s, cfg, move |x: f64| x * kd - 2.0, &dxd, &mut od).unwrap();
    ok &= check("f64 capture", &od.to_host_vec(&s).unwrap(), |i| xd[i] * kd - 2.0);

    let mask = 0x0fu8; // captures a u8
    m.map::<u32, _>(&s, cfg, move |x: u32| x & mask as u32, &dxu, &mut ou).unwrap();
    ok &= check("u8 capture", &ou.to_host_vec(&s).unwrap(), |i| xu[i] & 0x0f);

    let a = Affine { scale: 2.0, shift: -1.0, clamp: 200 }; // captures a struct and an f64
    let bias = 0.5f64;
    m.map::<f32, _>(
        &s,
        cfg,
        move |x: f32| ((x * a.scale + a.shift) as f64 + bias).min(a.clamp as f64) as f32,
        &dxf,
        &mut of,
    )
    .unwrap();
    ok &=
        check("struct capture", &of.to_host_vec(&s).unwrap(), |i| ((xf[i] * 2.0 - 1.0) as f64 + 0.5).min(200.0) as f32);

    m.map::<f32, _>(&s, cfg, |x: f32| -x, &dxf, &mut of).unwrap(); // captures nothing
    ok &= check("no capture", &of.to_host_vec(&s).unwrap(), |i| -xf[i]);

    m.zip_with::<f64, u32, _>(&s, cfg, move |a: f64, b: u32| a + b as f64 * kd, &dxd, &dxu, &mut od).unwrap();
    ok &= check("zip_with f64,u32", &od.to_host_vec(&s).unwrap(), |i| xd[i] + xu[i] as f64 * kd);

    if ok {
        println!("PASSED: 6 generic instances, {N} elements each");
    } else {
        std::process::exit(1);
    }
}
