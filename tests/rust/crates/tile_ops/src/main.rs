//! Every cuda-tile op in kernels that must lift, verify and compile (tests/rust/run.sh builds this
//! crate in dev and release and passes its PTX through ptxas; on a GPU it runs `batched`, the
//! 3-D forms, against a CPU reference). The kernels' results are stored, so nothing is optimised
//! away before the lift.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;
use cuda_tile::{bf16, host::sample};

#[cuda_module]
mod kernels {
    use cuda_tile::{bf16, dot3, f16, f8e5m2, num_programs, program_id, select, tile_kernel, Cmp};
    use cuda_tile::{Elementwise, FloatMath, Tensor, TensorMut, Tile, Tile1, Tile3};

    /// Elementwise math, comparisons, shape ops, reductions and casts on one 32x32 f32 tile.
    #[tile_kernel(warps = 2)]
    pub fn elementwise(x: Tensor<f32, 2>, mut y: TensorMut<f32, 2>, mut sums: TensorMut<f32, 1>, s: f32) {
        let p = program_id(0) * 32;
        let t = Tile::<f32, 32, 32>::load_pad(&x, [p, 0], 1.0);
        let a = (t.exp2() + t.abs().sqrt() - t.tanh() * t.erf()).max(t.floor()).min(t.ceil() + Tile::full(8.0));
        let b = t.mul_add(Tile::splat(s), -a).powf(Tile::full(2.0)) / (t.abs() + Tile::full(1.0)).log2();
        let c = select(t.cmp(Cmp::Gt, Tile::zeros()), a, b.rsqrt().ln());
        let r: Tile<f32, 32, 32> = c.max_rows().column().broadcast();
        let q: Tile<f32, 32, 32> = c.sum_cols().repeat_rows();
        let back: Tile<f32, 32, 32> = (c - r + q).t().reshape::<Tile1<f32, 1024>>().reshape();
        let round = back.cast::<f16>().cast::<bf16>().cast::<f8e5m2>().cast::<f32>();
        y.store([p, 0], round + c.min_rows().repeat_cols() + c.max_cols().row().broadcast());
        sums.atomic_add([0], Tile1::<f32, 32>::splat(c.sum_cols().sum() + c.max_cols().max_value()));
    }

    /// Integer tiles: arange, splat, arithmetic, bit operations, comparisons, sums.
    #[tile_kernel(warps = 1)]
    pub fn integers(mut y: TensorMut<i32, 1>, n: i32, big: i64) {
        let i = Tile1::<i32, 128>::arange() + Tile1::splat(program_id(0) * 128);
        let v = (i * Tile1::splat(7) % Tile1::splat(13)) ^ (i & Tile1::splat(3)) | (i / Tile1::splat(2));
        let m = select(v.cmp(Cmp::Lt, Tile1::splat(n)), -v, v.abs()).max(Tile1::splat(num_programs(0)));
        let w = Tile1::<i64, 128>::splat(big).cast::<i32>() + m.min(Tile1::splat(1000));
        y.store([program_id(0) * 128], w + Tile1::splat(w.sum()));
    }

    /// Loops: a `while` (which rustc rotates, and the lift gives a head again) and two it must
    /// lift as they are: a `loop` that runs once before its first test, and one behind a guard
    /// that is not its test (`n > -5`). tests/rust/tile_lift runs it for n = 3, 0, -2 and -7.
    #[tile_kernel(warps = 1)]
    pub fn loops(mut y: TensorMut<f32, 1>, n: i32) {
        let (mut a, mut c) = (Tile1::<f32, 32>::zeros(), Tile1::zeros());
        let mut i = 0;
        while i < n {
            a = a + Tile1::full(1.0);
            i += 2;
        }
        let b = at_least_once(Tile1::zeros(), n);
        if n > -5 {
            c = at_least_once(c, n);
        }
        y.store([0], a);
        y.store([32], b);
        y.store([64], c);
    }

    /// acc + 1 once, then again while 2, 4, .. < n: a loop whose test is at its bottom.
    fn at_least_once(mut acc: Tile1<f32, 32>, n: i32) -> Tile1<f32, 32> {
        let mut k = 0;
        loop {
            acc = acc + Tile1::full(1.0);
            k += 2;
            if k >= n {
                return acc;
            }
        }
    }

    /// The 3-D forms: a batched dot of bf16 tiles, stored as bf16.
    #[tile_kernel(warps = 4)]
    pub fn batched(a: Tensor<bf16, 3>, b: Tensor<bf16, 3>, mut c: TensorMut<bf16, 3>) {
        let z = program_id(2);
        let ta = Tile3::<bf16, 1, 16, 32>::load(&a, [z, 0, 0]);
        let tb = Tile3::<bf16, 1, 32, 16>::load(&b, [z, 0, 0]);
        c.store([z, 0, 0], dot3(ta, tb, Tile3::zeros()).cast());
    }
}

fn main() {
    let (batch, m, k, n) = (3usize, 16usize, 32usize, 16usize);
    let a: Vec<bf16> = sample(batch * m * k, 11, -2.0, 2.0).map(bf16::from_f32).collect();
    let b: Vec<bf16> = sample(batch * k * n, 12, -2.0, 2.0).map(bf16::from_f32).collect();
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    // the other two kernels are launched so that they are compiled; only `batched` is checked
    let dx = DeviceBuffer::from_host(&s, &[0.5f32; 64 * 32]).unwrap();
    let (mut dy, mut dsum) =
        (DeviceBuffer::<f32>::zeroed(&s, 64 * 32).unwrap(), DeviceBuffer::<f32>::zeroed(&s, 1).unwrap());
    let mut di = DeviceBuffer::<i32>::zeroed(&s, 256).unwrap();
    let tx = DeviceTensor::new(&dx, [64, 32]).unwrap();
    module
        .elementwise(
            &s,
            (2, 1, 1),
            &tx,
            &mut DeviceTensorMut::new(&mut dy, [64, 32]).unwrap(),
            &mut DeviceTensorMut::new(&mut dsum, [1]).unwrap(),
            0.5,
        )
        .unwrap();
    module.integers(&s, (2, 1, 1), &mut DeviceTensorMut::new(&mut di, [256]).unwrap(), 50, 1 << 33).unwrap();
    let (da, db) = (DeviceBuffer::from_host(&s, &a).unwrap(), DeviceBuffer::from_host(&s, &b).unwrap());
    let mut dc = DeviceBuffer::<bf16>::zeroed(&s, batch * m * n).unwrap();
    let (ta, tb) = (DeviceTensor::new(&da, [batch, m, k]).unwrap(), DeviceTensor::new(&db, [batch, k, n]).unwrap());
    module
        .batched(&s, (1, 1, batch as u32), &ta, &tb, &mut DeviceTensorMut::new(&mut dc, [batch, m, n]).unwrap())
        .unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    let mut bad = 0;
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut want, mut mag) = (0.0f32, 0.0f32);
                for x in 0..k {
                    let p = a[(z * m + i) * k + x].to_f32() * b[(z * k + x) * n + j].to_f32();
                    want += p;
                    mag += p.abs();
                }
                let tol = 8.0 * (k * k) as f32 * mag / (1u64 << 24) as f32 + want.abs() / 128.0 + 1e-6;
                bad += ((c[(z * m + i) * n + j].to_f32() - want).abs() > tol) as usize;
            }
        }
    }
    // n = -2: the while loop runs 0 times, the two that test at the bottom once each
    let mut dl = DeviceBuffer::from_host(&s, &[f32::NAN; 96]).unwrap();
    module.loops(&s, (1, 1, 1), &mut DeviceTensorMut::new(&mut dl, [96]).unwrap(), -2).unwrap();
    let l = dl.to_host_vec(&s).unwrap();
    let loops_ok = (0..96).all(|i| l[i] == if i < 32 { 0.0 } else { 1.0 });
    if bad == 0 && loops_ok {
        println!(
            "PASSED: tile_ops: every op lifted and compiled; batched dot {batch}x{m}x{n}x{k} matches the CPU; \
             loops ran 0, 1 and 1 times"
        );
    } else {
        println!("FAILED: tile_ops: batched dot: {bad} elements wrong; loops {:?}", (l[0], l[32], l[64]));
        std::process::exit(1);
    }
}
