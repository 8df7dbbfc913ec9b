//! Tile kernel launches as `#[tile_kernel]`'s launch methods make them (`LaunchOp::new_tile` with
//! `TileArgs`), on the tests' fake driver, which runs the Rust tile matmul_bf16
//! (tests/bindings/data/rust_tile_matmul.ptx) on the CPU: liboxide checks the arguments against
//! the manifest and lays out the PTX parameters, so a wrong element type or count is an error
//! naming the kernel and the parameter. Without the fake driver, each test says it skipped.
mod common;
use common::ctx;
use cuda_core::{CudaContext, TileArgs};
use cuda_core::{DeviceBuffer, DeviceOperation, DeviceTensor, DeviceTensorMut, LaunchConfig, LaunchOp, Module};
use cuda_device::abi::{OXIDE_SCALAR_BF16, OXIDE_SCALAR_F32};
use std::borrow::Cow;

fn matmul_module(ctx: &CudaContext) -> Module {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/bindings/data/rust_tile_matmul.ptx");
    Module::load_ptx(ctx, &std::fs::read(path).unwrap()).unwrap()
}

fn to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn from_bf16(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// bf16 values of magnitude in [0.5, 2), never zero.
fn random(n: usize, seed: u64) -> Vec<u16> {
    common::randoms(n, seed, true).into_iter().map(to_bf16).collect()
}

#[test]
fn a_tile_launch_passes_its_tensors() {
    let Some(ctx) = ctx() else { return };
    let (m, n, k) = (5usize, 7usize, 3usize);
    let (a, b) = (random(m * k, 1), random(k * n, 2));
    let s = ctx.default_stream();
    let module = matmul_module(&ctx);
    let (da, db) = (DeviceBuffer::from_host(&s, &a).unwrap(), DeviceBuffer::from_host(&s, &b).unwrap());
    let mut dc = DeviceBuffer::<u16>::zeroed(&s, m * n).unwrap();
    let mut args = TileArgs::new();
    DeviceTensor::new(&da, [m, k]).unwrap().push_arg(&mut args, OXIDE_SCALAR_BF16);
    DeviceTensor::new(&db, [k, n]).unwrap().push_arg(&mut args, OXIDE_SCALAR_BF16);
    DeviceTensorMut::new(&mut dc, [m, n]).unwrap().push_arg(&mut args, OXIDE_SCALAR_BF16);
    let cfg = LaunchConfig::new((1, 1, 1), (0, 0, 0), 0);
    LaunchOp::new_tile(&module, Cow::Borrowed("matmul_bf16"), cfg, args).sync_on(&s).unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|x| from_bf16(a[i * k + x]) * from_bf16(b[x * n + j])).sum();
            // the fake driver's f32 sums in this order, rounded to bf16 (2^-8 relative), give or take one
            let got = from_bf16(c[i * n + j]);
            assert!((got - want).abs() <= want.abs() / 128.0 + 1e-6, "c[{i}][{j}] = {got}, not {want}");
        }
    }
}

#[test]
fn a_wrong_tile_argument_names_the_parameter() {
    let Some(ctx) = ctx() else { return };
    let s = ctx.default_stream();
    let module = matmul_module(&ctx);
    let da = DeviceBuffer::from_host(&s, &random(16, 3)).unwrap();
    let mut dc = DeviceBuffer::<u16>::zeroed(&s, 16).unwrap();
    let cfg = LaunchConfig::new((1, 1, 1), (0, 0, 0), 0);
    let launch = |elem_a: u32, with_c: bool, dc: &mut DeviceBuffer<u16>| {
        let mut args = TileArgs::new();
        DeviceTensor::new(&da, [4, 4]).unwrap().push_arg(&mut args, elem_a);
        DeviceTensor::new(&da, [4, 4]).unwrap().push_arg(&mut args, OXIDE_SCALAR_BF16);
        if with_c {
            DeviceTensorMut::new(dc, [4, 4]).unwrap().push_arg(&mut args, OXIDE_SCALAR_BF16);
        }
        LaunchOp::new_tile(&module, Cow::Borrowed("matmul_bf16"), cfg, args).sync_on(&s).unwrap_err().to_string()
    };
    let e = launch(OXIDE_SCALAR_F32, true, &mut dc);
    assert!(e.contains("matmul_bf16") && e.contains("'a'"), "{e}");
    let e = launch(OXIDE_SCALAR_BF16, false, &mut dc);
    assert!(e.contains("matmul_bf16") && e.contains("expects 3 arguments"), "{e}");
}
