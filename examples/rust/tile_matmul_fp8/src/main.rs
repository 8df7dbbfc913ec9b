//! C = (A·Bᵀ)·scale_a·scale_b, the fp8 GEMM of a quantised linear layer, as a tile kernel: A is
//! M x K and B (the weight as stored) N x K, both f8e4m3, C is bf16. Each program computes a 64x64
//! tile of C, K 64 at a time; the B tile is loaded N x K and transposed for the dot. Needs sm_89 or
//! newer. The same kernel as examples/tile/matmul_fp8.oxir. Checked against a CPU matmul of the
//! same fp8 values.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;
use cuda_tile::{bf16, f8e4m3, host::sample};

#[cuda_module]
pub mod kernels {
    use cuda_tile::{bf16, dot, f8e4m3, program_id, tile_kernel, Tensor, TensorMut, Tile};

    #[tile_kernel(warps = 4)]
    pub fn matmul_fp8(
        a: Tensor<f8e4m3, 2>,
        b: Tensor<f8e4m3, 2>,
        mut c: TensorMut<bf16, 2>,
        scale_a: f32,
        scale_b: f32,
    ) {
        let (om, on) = (program_id(0) * 64, program_id(1) * 64);
        let mut acc = Tile::<f32, 64, 64>::zeros();
        let mut k = 0;
        while k < a.shape(1) {
            let ta = Tile::<f8e4m3, 64, 64>::load(&a, [om, k]);
            let tb = Tile::<f8e4m3, 64, 64>::load(&b, [on, k]).t();
            acc = dot(ta, tb, acc);
            k += 64;
        }
        c.store([om, on], (acc * Tile::splat(scale_a * scale_b)).cast::<bf16>());
    }
}

fn main() {
    let (m, n, k, sa, sb) = (130usize, 100usize, 96usize, 0.5f32, 0.25f32);
    let a: Vec<f8e4m3> = sample(m * k, 7, -4.0, 4.0).map(f8e4m3::from_f32).collect();
    let b: Vec<f8e4m3> = sample(n * k, 8, -4.0, 4.0).map(f8e4m3::from_f32).collect();
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    if ctx.compute_capability().map(|(major, minor)| major * 10 + minor < 89).unwrap_or(true) {
        println!("PASSED: skipped: fp8 tile.dot needs sm_89 or newer");
        return;
    }
    let s = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let (da, db) = (DeviceBuffer::from_host(&s, &a).unwrap(), DeviceBuffer::from_host(&s, &b).unwrap());
    let mut dc = DeviceBuffer::<bf16>::zeroed(&s, m * n).unwrap();
    let (ta, tb) = (DeviceTensor::new(&da, [m, k]).unwrap(), DeviceTensor::new(&db, [n, k]).unwrap());
    let mut tc = DeviceTensorMut::new(&mut dc, [m, n]).unwrap();
    module.matmul_fp8(&s, (m.div_ceil(64) as u32, n.div_ceil(64) as u32, 1), &ta, &tb, &mut tc, sa, sb).unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let (mut want, mut mag) = (0.0f64, 0.0f64);
            for x in 0..k {
                let p = a[i * k + x].to_f32() as f64 * b[j * k + x].to_f32() as f64;
                want += p;
                mag += p.abs();
            }
            let (want, mag) = (want * (sa * sb) as f64, mag * (sa * sb) as f64);
            // the summation order (2 K^2 2^-24), the fp8 mma's narrower accumulation (about 2^-13
            // of each partial sum), then the bf16 rounding of the result
            let tol = mag * (2.0 * (k * k) as f64 * 2f64.powi(-24) + 2f64.powi(-13)) + want.abs() / 128.0 + 1e-6;
            worst = worst.max((c[i * n + j].to_f32() as f64 - want).abs() / tol);
        }
    }
    if worst <= 1.0 {
        println!("PASSED: tile matmul_fp8 {m}x{n}x{k} matches the CPU (worst error {worst:.3} of the tolerance)");
    } else {
        println!("FAILED: tile matmul_fp8 {m}x{n}x{k}: error {worst:.3} times the tolerance");
        std::process::exit(1);
    }
}
