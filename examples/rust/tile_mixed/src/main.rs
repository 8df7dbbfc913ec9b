//! A SIMT kernel and a tile kernel in one module, on one stream: `scale` (a #[kernel], one thread
//! an element) writes Y = s·X, then `row_sums` (a generic #[tile_kernel], R rows a program) sums
//! each row of Y, 256 columns at a time, launched as two instances (R = 32 and R = 16). Checked
//! against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut, LaunchConfig};
use cuda_device::cuda_module;
use cuda_tile::host::sample;

#[cuda_module]
pub mod kernels {
    use cuda_device::{kernel, thread, DisjointSlice};
    use cuda_tile::{program_id, tile_kernel, Tensor, TensorMut, Tile, Tile1};

    #[kernel]
    pub fn scale(s: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        // the grid is rounded up to whole blocks: only threads inside y (as long as x) read x
        let i = thread::index_1d();
        let k = i.get();
        if let Some(o) = y.get_mut(i) {
            *o = s * x[k];
        }
    }

    #[tile_kernel(warps = 4)]
    pub fn row_sums<const R: usize>(y: Tensor<f32, 2>, mut sums: TensorMut<f32, 1>) {
        let r0 = program_id(0) * R as i32;
        let mut acc = Tile1::<f32, R>::zeros();
        let mut c = 0;
        while c < y.shape(1) {
            acc = acc + Tile::<f32, R, 256>::load(&y, [r0, c]).sum_rows();
            c += 256;
        }
        sums.store([r0], acc);
    }
}

fn main() {
    let (m, n, s) = (70usize, 600usize, 1.5f32);
    let x: Vec<f32> = sample(m * n, 9, -1.0, 1.0).collect();
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let st = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let dx = DeviceBuffer::from_host(&st, &x).unwrap();
    let mut dy = DeviceBuffer::<f32>::zeroed(&st, m * n).unwrap();
    module.scale(&st, LaunchConfig::for_num_elems((m * n) as u32), s, &dx, &mut dy).unwrap();
    let mut worst = 0.0f64;
    for rows in [32usize, 16] {
        let mut dsum = DeviceBuffer::<f32>::zeroed(&st, m).unwrap();
        let ty = DeviceTensor::new(&dy, [m, n]).unwrap();
        let mut tsum = DeviceTensorMut::new(&mut dsum, [m]).unwrap();
        let grid = (m.div_ceil(rows) as u32, 1, 1);
        match rows {
            32 => module.row_sums::<32>(&st, grid, &ty, &mut tsum).unwrap(),
            _ => module.row_sums::<16>(&st, grid, &ty, &mut tsum).unwrap(),
        }
        let sums = dsum.to_host_vec(&st).unwrap();
        for r in 0..m {
            let row = &x[r * n..(r + 1) * n];
            let want: f64 = row.iter().map(|&v| (s * v) as f64).sum();
            let mag: f64 = row.iter().map(|&v| (s * v).abs() as f64).sum();
            let tol = 2.0 * n as f64 * f32::EPSILON as f64 * mag + 1e-6;
            worst = worst.max((sums[r] as f64 - want).abs() / tol);
        }
    }
    if worst <= 1.0 {
        println!("PASSED: scale (SIMT) then row_sums::<32> and ::<16> (tile) on one stream, {m}x{n} (worst error {worst:.3} of the tolerance)");
    } else {
        println!("FAILED: scale then row_sums: error {worst:.3} times the tolerance");
        std::process::exit(1);
    }
}
