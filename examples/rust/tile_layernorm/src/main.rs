//! Layer norm forward in bf16 as a tile kernel, statistics in f32:
//! Y = W·(X - mean)/sqrt(var + eps) + B over each row of an M x N matrix (N <= 1024), 16 rows a
//! program; columns past N load as 0 and are masked out of the variance. The same kernel as examples/tile/layernorm_bf16.oxir.
//! Checked against a CPU layer norm of the same bf16 inputs.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;
use cuda_tile::{bf16, host::sample};

#[cuda_module]
pub mod kernels {
    use cuda_tile::{bf16, program_id, select, tile_kernel, Cmp, Elementwise, FloatMath};
    use cuda_tile::{Tensor, TensorMut, Tile, Tile1};

    #[tile_kernel(warps = 8)]
    pub fn layernorm_bf16(
        x: Tensor<bf16, 2>,
        w: Tensor<bf16, 1>,
        b: Tensor<bf16, 1>,
        mut y: TensorMut<bf16, 2>,
        eps: f32,
    ) {
        let (r0, n) = (program_id(0) * 16, x.shape(1));
        let count = Tile1::<f32, 16>::splat(n as f32);
        let xf = Tile::<bf16, 16, 1024>::load(&x, [r0, 0]).cast::<f32>();
        let mean = xf.sum_rows() / count;
        let d = xf - mean.column().broadcast();
        let inside = Tile1::<i32, 1024>::arange().cmp(Cmp::Lt, Tile1::splat(n));
        let dm = select(inside.row().broadcast(), d, Tile::zeros());
        let rstd = ((dm * dm).sum_rows() / count + Tile1::splat(eps)).rsqrt();
        let wt: Tile<f32, 16, 1024> = Tile1::<bf16, 1024>::load(&w, [0]).cast::<f32>().row().broadcast();
        let bt: Tile<f32, 16, 1024> = Tile1::<bf16, 1024>::load(&b, [0]).cast::<f32>().row().broadcast();
        y.store([r0, 0], (dm * rstd.column().broadcast() * wt + bt).cast::<bf16>());
    }
}

fn main() {
    let (m, n, eps) = (50usize, 700usize, 1e-5f32);
    let x: Vec<bf16> = sample(m * n, 4, -3.0, 3.0).map(bf16::from_f32).collect();
    let w: Vec<bf16> = sample(n, 5, 0.5, 1.5).map(bf16::from_f32).collect();
    let b: Vec<bf16> = sample(n, 6, -1.0, 1.0).map(bf16::from_f32).collect();
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let (dx, dw, db) = (
        DeviceBuffer::from_host(&s, &x).unwrap(),
        DeviceBuffer::from_host(&s, &w).unwrap(),
        DeviceBuffer::from_host(&s, &b).unwrap(),
    );
    let mut dy = DeviceBuffer::<bf16>::zeroed(&s, m * n).unwrap();
    let (tx, tw, tb) = (
        DeviceTensor::new(&dx, [m, n]).unwrap(),
        DeviceTensor::new(&dw, [n]).unwrap(),
        DeviceTensor::new(&db, [n]).unwrap(),
    );
    let mut ty = DeviceTensorMut::new(&mut dy, [m, n]).unwrap();
    module.layernorm_bf16(&s, (m.div_ceil(16) as u32, 1, 1), &tx, &tw, &tb, &mut ty, eps).unwrap();
    let y = dy.to_host_vec(&s).unwrap();
    let mut worst = 0.0f64;
    for r in 0..m {
        let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|v| v.to_f32() as f64).collect();
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        for c in 0..n {
            let want = (row[c] - mean) / (var + eps as f64).sqrt() * w[c].to_f32() as f64 + b[c].to_f32() as f64;
            // the bf16 rounding of the result, and f32 statistics over n terms
            let tol = want.abs() / 128.0 + 1e-4 * (1.0 + (row[c] - mean).abs());
            worst = worst.max((y[r * n + c].to_f32() as f64 - want).abs() / tol);
        }
    }
    if worst <= 1.0 {
        println!("PASSED: tile layernorm_bf16 {m}x{n} matches the CPU (worst error {worst:.3} of the tolerance)");
    } else {
        println!("FAILED: tile layernorm_bf16 {m}x{n}: error {worst:.3} times the tolerance");
        std::process::exit(1);
    }
}
