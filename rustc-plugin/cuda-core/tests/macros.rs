//! #[cuda_module] / #[kernel] expansion: the generated entry points have the fixed C ABI and the
//! launch methods have the typed host signatures. Compile-time checks, run without a GPU.
use cuda_core::{CudaStream, DeviceBuffer, LaunchConfig, LaunchOp};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o += a * x[i];
        }
    }

    #[launch_bounds(128, 2)]
    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T + Copy>(f: F, input: &[T], out: *mut T, n: u64) {
        let i = thread::index_1d().get();
        if (i as u64) < n {
            unsafe { *out.add(i) = f(input[i]) };
        }
    }

    pub fn helper(x: f32) -> f32 {
        x * 2.0
    }
}

#[kernel]
pub fn standalone(x: &mut [u32]) {
    let i = thread::index_1d().get();
    if i < x.len() {
        x[i] += 1;
    }
}

#[test]
fn entry_points_have_the_c_abi() {
    let _: extern "C" fn(f32, *const f32, u64, *mut f32, u64) = kernels::__oxide_kernel_entry_saxpy;
    let c = 2.0f32;
    let f = move |x: f32| x * c;
    fn entry_of<F: Fn(f32) -> f32 + Copy + 'static>(_: F) -> extern "C" fn(*const F, *const f32, u64, *mut f32, u64) {
        kernels::__oxide_kernel_entry_map::<f32, F>
    }
    let _ = entry_of(f);
    let _: extern "C" fn(*mut u32, u64) = __oxide_kernel_entry_standalone;
    assert_eq!(kernels::helper(1.5), 3.0);
}

#[test]
fn launch_methods_are_typed() {
    type Saxpy = for<'a, 'b, 'c, 'd> fn(
        &'a kernels::Module,
        &'b CudaStream,
        LaunchConfig,
        f32,
        &'a DeviceBuffer<f32>,
        &'a mut DeviceBuffer<f32>,
    ) -> cuda_core::Result<()>;
    let _: Saxpy = kernels::Module::saxpy;
    type SaxpyAsync = for<'a> fn(
        &'a kernels::Module,
        LaunchConfig,
        f32,
        &'a DeviceBuffer<f32>,
        &'a mut DeviceBuffer<f32>,
    ) -> LaunchOp<'a>;
    let _: SaxpyAsync = kernels::Module::saxpy_async;
}

#[test]
fn instance_tags_differ_per_closure() {
    let a = 1.0f32;
    let f1 = move |x: f32| x + a;
    let f2 = move |x: f32| x * a;
    fn tag<F: 'static>(_: &F) -> u64 {
        cuda_device::__private::instance_tag::<(f32, F)>()
    }
    assert_ne!(tag(&f1), tag(&f2));
    assert_eq!(tag(&f1), tag(&f1));
}
