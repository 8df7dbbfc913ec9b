//! The tests' fake CUDA driver (tests/gpu/mock), for the test programs here that use it: it runs
//! the `saxpy` kernel (y[i] += a * x[i]) and `oob_write` (a fault) on the CPU, and queued work at
//! once.
#![allow(dead_code)]
use cuda_core::{CudaContext, Module};
use std::path::PathBuf;
use std::sync::{Once, OnceLock};

// The fake driver finds a kernel by its .entry name; the body is never compiled.
const PTX: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\
    .visible .entry saxpy(.param .f32 a, .param .u64 x, .param .u64 xl, .param .u64 y, .param .u64 yl, .param .u64 n)\n\
    { ret; }\n\
    .visible .entry oob_write(.param .u64 p)\n{ ret; }\n";

/// In the build that cuda-core links (OXIDE_RUNTIME_LIB_DIR, as tests/rust/run.sh sets it), else
/// in the checkout's build folders.
fn fake_driver() -> Option<PathBuf> {
    let mock = "tests/gpu/mock/libcuda.so.1";
    if let Some(p) = std::env::var_os("OXIDE_RUNTIME_LIB_DIR").map(|d| PathBuf::from(d).join(mock)) {
        if p.exists() {
            return Some(p);
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("build")))
        .collect();
    dirs.sort();
    dirs.into_iter().map(|d| d.join(mock)).find(|p| p.exists())
}

/// The fake GPU's context, or None (and a note) where the fake driver is not built.
pub fn ctx() -> Option<CudaContext> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    static SET: Once = Once::new();
    let found = FOUND.get_or_init(fake_driver);
    let Some(path) = found else {
        println!("skipped: no tests/gpu/mock/libcuda.so.1 in a build folder (build oxide with CMake)");
        return None;
    };
    // Before the runtime's first call, which opens the driver once for the process.
    SET.call_once(|| std::env::set_var("OXIDE_CUDA_DRIVER", path));
    Some(CudaContext::new(0).expect("the fake driver's device"))
}

pub fn module(ctx: &CudaContext) -> Module {
    Module::load_ptx(ctx, PTX.as_bytes()).unwrap()
}

/// The parameters of `saxpy(a: f32, x: &[f32], y: DisjointSlice<f32>, n: usize)`, as
/// `#[cuda_module]` packs them.
pub fn saxpy_params(
    a: f32,
    x: &cuda_core::DeviceBuffer<f32>,
    y: &cuda_core::DeviceBuffer<f32>,
) -> cuda_core::ParamBuffer {
    let mut p = cuda_core::ParamBuffer::new();
    p.push_value(&a);
    p.push_value(&x.device_ptr());
    p.push_value(&(x.len() as u64));
    p.push_value(&y.device_ptr());
    p.push_value(&(y.len() as u64));
    p.push_value(&(y.len() as u64));
    p
}

/// n values of magnitude in [0.5, 2) (never zero) from seed (xorshift); of random sign where signed.
pub fn randoms(n: usize, seed: u64, signed: bool) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let f = 0.5 + 1.5 * ((s >> 40) as f32 / (1u64 << 24) as f32);
            if signed && s & 1 == 1 {
                -f
            } else {
                f
            }
        })
        .collect()
}
