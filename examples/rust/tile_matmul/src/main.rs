//! C = A·B in bf16 (f32 accumulation) as a tile kernel: each program computes one 64x64 tile of
//! C, walking K 32 at a time with the accumulator carried by the loop. Any M, N, K: loads past
//! the edges read 0, stores past them are skipped. The same kernel as examples/tile/matmul_bf16.oxir.
//! Checked against a CPU matmul of the same bf16 inputs.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;
use cuda_tile::{bf16, host::sample};

#[cuda_module]
pub mod kernels {
    use cuda_tile::{bf16, dot, program_id, tile_kernel, Tensor, TensorMut, Tile};

    #[tile_kernel(warps = 4)]
    pub fn matmul_bf16(a: Tensor<bf16, 2>, b: Tensor<bf16, 2>, mut c: TensorMut<bf16, 2>) {
        let (om, on) = (program_id(0) * 64, program_id(1) * 64);
        let mut acc = Tile::<f32, 64, 64>::zeros();
        let mut k = 0;
        while k < a.shape(1) {
            let ta = Tile::<bf16, 64, 32>::load(&a, [om, k]);
            let tb = Tile::<bf16, 32, 64>::load(&b, [k, on]);
            acc = dot(ta, tb, acc);
            k += 32;
        }
        c.store([om, on], acc.cast::<bf16>());
    }
}

fn main() {
    let (m, n, k) = (200usize, 136usize, 72usize); // not multiples of the tiles
    let a: Vec<bf16> = sample(m * k, 1, -2.0, 2.0).map(bf16::from_f32).collect();
    let b: Vec<bf16> = sample(k * n, 2, -2.0, 2.0).map(bf16::from_f32).collect();
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let (da, db) = (DeviceBuffer::from_host(&s, &a).unwrap(), DeviceBuffer::from_host(&s, &b).unwrap());
    let mut dc = DeviceBuffer::<bf16>::zeroed(&s, m * n).unwrap();
    let (ta, tb) = (DeviceTensor::new(&da, [m, k]).unwrap(), DeviceTensor::new(&db, [k, n]).unwrap());
    let mut tc = DeviceTensorMut::new(&mut dc, [m, n]).unwrap();
    let grid = (m.div_ceil(64) as u32, n.div_ceil(64) as u32, 1);
    module.matmul_bf16(&s, grid, &ta, &tb, &mut tc).unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    let mut worst = 0.0f32;
    for i in 0..m {
        for j in 0..n {
            let (mut want, mut mag) = (0.0f32, 0.0f32);
            for x in 0..k {
                let p = a[i * k + x].to_f32() * b[x * n + j].to_f32();
                want += p;
                mag += p.abs();
            }
            // summation order (the tensor cores') and the bf16 rounding of the result
            let tol = 8.0 * (k * k) as f32 * mag / (1u64 << 24) as f32 + want.abs() / 128.0 + 1e-6;
            worst = worst.max((c[i * n + j].to_f32() - want).abs() / tol);
        }
    }
    if worst <= 1.0 {
        println!("PASSED: tile matmul_bf16 {m}x{n}x{k} matches the CPU (worst error {worst:.3} of the tolerance)");
    } else {
        println!("FAILED: tile matmul_bf16 {m}x{n}x{k}: error {worst:.3} times the tolerance");
        std::process::exit(1);
    }
}
