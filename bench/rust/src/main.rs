//! bench/rust: the examples' Rust kernels against nvcc-built CUDA C++, same data, same launch
//! shapes, timed with CUDA events (median of 7 runs of 20 launches each, after warm-up).
#![allow(dead_code)]
#[path = "../../../examples/rust/matmul/src/main.rs"]
mod matmul;
#[path = "../../../examples/rust/reduce/src/main.rs"]
mod reduce;
#[path = "../../../examples/rust/vecadd/src/main.rs"]
mod vecadd;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig, Module, ParamBuffer};

const NVCC_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/nvcc_kernels.ptx"));

fn time_ms(ctx: &CudaContext, s: &CudaStream, mut f: impl FnMut()) -> f64 {
    for _ in 0..5 {
        f();
    }
    s.synchronize().unwrap();
    let mut v = Vec::new();
    for _ in 0..7 {
        let (a, b) = (ctx.new_event().unwrap(), ctx.new_event().unwrap());
        s.record(&a).unwrap();
        for _ in 0..20 {
            f();
        }
        s.record(&b).unwrap();
        b.synchronize().unwrap();
        v.push(b.elapsed_ms_since(&a).unwrap() as f64 / 20.0);
    }
    v.sort_by(|x, y| x.partial_cmp(y).unwrap());
    v[v.len() / 2]
}

fn row(name: &str, rust: f64, nvcc: f64) {
    println!("{} {:.4} {:.4} {:.3}", name, rust, nvcc, rust / nvcc);
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let nv = Module::load_ptx(&ctx, NVCC_PTX.as_bytes()).unwrap();
    println!("# {} | KERNEL rust_ms nvcc_ms ratio", ctx.name());

    // vecadd: 2^26 floats
    {
        let n = 1usize << 26;
        let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
        let da = DeviceBuffer::from_host(&s, &a).unwrap();
        let db = DeviceBuffer::from_host(&s, &a).unwrap();
        let mut dc = DeviceBuffer::<f32>::zeroed(&s, n).unwrap();
        let m = vecadd::kernels::load(&ctx).unwrap();
        let cfg = LaunchConfig::for_num_elems(n as u32);
        let r = time_ms(&ctx, &s, || m.vecadd(&s, cfg, &da, &db, &mut dc).unwrap());
        let mut p = ParamBuffer::new();
        p.push_value(&da.device_ptr());
        p.push_value(&db.device_ptr());
        p.push_value(&dc.device_ptr());
        p.push_value(&(n as u64));
        let c = time_ms(&ctx, &s, || unsafe { nv.launch_raw("vecadd", &s, &cfg, &p).unwrap() });
        row("vecadd", r, c);
        let gbps = 3.0 * 4.0 * n as f64 / (r * 1e-3) / 1e9;
        println!("# vecadd rust: {:.0} GB/s", gbps);
    }
    // reduce: block sums of 2^26 floats
    {
        let n = 1usize << 26;
        let x: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let dx = DeviceBuffer::from_host(&s, &x).unwrap();
        let blocks = n / 256;
        let mut ds = DeviceBuffer::<f32>::zeroed(&s, blocks).unwrap();
        let m = reduce::kernels::load(&ctx).unwrap();
        let cfg = LaunchConfig::new((blocks as u32, 1, 1), (256, 1, 1), 0);
        let r = time_ms(&ctx, &s, || m.block_sum(&s, cfg, &dx, &mut ds).unwrap());
        let mut p = ParamBuffer::new();
        p.push_value(&dx.device_ptr());
        p.push_value(&(n as u64));
        p.push_value(&ds.device_ptr());
        let c = time_ms(&ctx, &s, || unsafe { nv.launch_raw("block_sum", &s, &cfg, &p).unwrap() });
        row("reduce", r, c);
    }
    // tiled matmul: 2048^3
    {
        let n = 2048usize;
        let a: Vec<f32> = (0..n * n).map(|i| (i % 13) as f32 * 0.1).collect();
        let da = DeviceBuffer::from_host(&s, &a).unwrap();
        let db = DeviceBuffer::from_host(&s, &a).unwrap();
        let mut dc = DeviceBuffer::<f32>::zeroed(&s, n * n).unwrap();
        let m = matmul::kernels::load(&ctx).unwrap();
        let g = (n / 16) as u32;
        let cfg = LaunchConfig::new((g, g, 1), (16, 16, 1), 0);
        let r = time_ms(&ctx, &s, || m.matmul(&s, cfg, &da, &db, &mut dc, n as u32).unwrap());
        let mut p = ParamBuffer::new();
        p.push_value(&da.device_ptr());
        p.push_value(&db.device_ptr());
        p.push_value(&dc.device_ptr());
        p.push_value(&(n as u32));
        let c = time_ms(&ctx, &s, || unsafe { nv.launch_raw("matmul", &s, &cfg, &p).unwrap() });
        row("matmul", r, c);
    }
}
