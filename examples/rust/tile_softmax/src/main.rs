//! Y = softmax(X) along each row of an M x N f32 matrix (N <= 1024) as a tile kernel: 16 rows a
//! program, columns past N loaded as -inf (adding exp(-inf) = 0 to the sums). The same kernel as
//! examples/tile/softmax_f32.oxir. Checked against a CPU softmax.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;

#[cuda_module]
pub mod kernels {
    use cuda_tile::{program_id, tile_kernel, FloatMath, Tensor, TensorMut, Tile};

    #[tile_kernel(warps = 8)]
    pub fn softmax_f32(x: Tensor<f32, 2>, mut y: TensorMut<f32, 2>) {
        let r0 = program_id(0) * 16;
        let t = Tile::<f32, 16, 1024>::load_pad(&x, [r0, 0], f64::NEG_INFINITY);
        let m: Tile<f32, 16, 1024> = t.max_rows().column().broadcast();
        let e = (t - m).exp();
        let s: Tile<f32, 16, 1024> = e.sum_rows().column().broadcast();
        y.store([r0, 0], e / s);
    }
}

/// Values in [-4, 4), never zero: a multiplicative hash of the index.
pub fn inputs(n: usize) -> Vec<f32> {
    (0..n as u64).map(|i| ((i.wrapping_mul(2654435761) >> 7) % 8000) as f32 / 1000.0 - 3.9995).collect()
}

fn main() {
    let (m, n) = (100usize, 1000usize); // ragged: not multiples of 16 rows or 1024 columns
    let x = inputs(m * n);
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dy = DeviceBuffer::<f32>::zeroed(&s, m * n).unwrap();
    let tx = DeviceTensor::new(&dx, [m, n]).unwrap();
    let mut ty = DeviceTensorMut::new(&mut dy, [m, n]).unwrap();
    module.softmax_f32(&s, (m.div_ceil(16) as u32, 1, 1), &tx, &mut ty).unwrap();
    let y = dy.to_host_vec(&s).unwrap();
    let mut worst = 0.0f64;
    for r in 0..m {
        let row = &x[r * n..(r + 1) * n];
        let mx = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = row.iter().map(|&v| (v as f64 - mx).exp()).sum();
        for c in 0..n {
            let want = (row[c] as f64 - mx).exp() / sum;
            // exp's and the division's roundings, and a tree sum of n terms
            let tol = want * (8.0 + 2.0 * n as f64) * f32::EPSILON as f64 + 1e-12;
            worst = worst.max((y[r * n + c] as f64 - want).abs() / tol);
        }
    }
    if worst <= 1.0 {
        println!("PASSED: tile softmax_f32 {m}x{n} matches the CPU (worst error {worst:.3} of the tolerance)");
    } else {
        println!("FAILED: tile softmax_f32 {m}x{n}: error {worst:.3} times the tolerance");
        std::process::exit(1);
    }
}
