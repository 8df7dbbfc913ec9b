//! Launch contracts (docs/rust.md, "Launch contracts"): kernels that declare the launches they
//! accept, launched through `prepare_NAME`. Checked on random inputs against the CPU, and the
//! refusals: a shape that breaks a contract is refused by `prepare_NAME` and, launched unchecked,
//! by the runtime, each naming the kernel, the contract field and the value given.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig, LaunchConfig1D, LaunchConfig2D};
use cuda_device::{kernel, thread, DisjointSlice, DynamicSharedArray};
use cuda_host::cuda_module;

pub const BLOCK: u32 = 256;
pub const TILE: u32 = 16;

#[cuda_module]
pub mod kernels {
    use super::*;

    /// Each block reverses its 256 elements, scaled, through dynamic shared memory.
    #[kernel]
    #[launch_bounds(256)]
    #[launch_contract(domain = 1, block = (256, 1, 1), dynamic_shared = 1024, dynamic_shared_alignment = 128)]
    pub fn block_reverse(a: f32, x: &[f32], mut out: DisjointSlice<f32>) {
        let tile = DynamicSharedArray::<f32>::get();
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * BLOCK as usize;
        let i = base + t;
        unsafe { *tile.add(t) = if i < x.len() { x[i] } else { 0.0 } };
        thread::sync_threads();
        let idx = thread::index_1d();
        if let Some(o) = out.get_mut(idx) {
            *o = a * unsafe { *tile.add(BLOCK as usize - 1 - t) };
        }
    }

    /// out[y][x] = a[y][x] + 2 b[y][x] over a width x height grid, 16 x 16 threads a block.
    #[kernel]
    #[launch_contract(domain = 2, block = (16, 16, 1), dynamic_shared = 0, min_compute_capability = (8, 0))]
    pub fn add2d(width: u32, height: u32, a: &[f32], b: &[f32], mut out: DisjointSlice<f32>) {
        let t = thread::index_2d();
        // `linear` is unique per thread while x < width, so the writes stay disjoint
        if let (Some(idx), true) = (t.linear(width as usize), t.y() < height as usize) {
            let i = idx.get();
            if let Some(o) = out.get_mut(idx) {
                *o = a[i] + 2.0 * b[i];
            }
        }
    }
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            0.5 + (s >> 40) as f32 / (1u64 << 24) as f32 * 1.5
        })
        .collect()
}

fn refused(what: &str, r: cuda_core::Result<impl std::fmt::Debug>, field: &str, bad: &mut Vec<String>) {
    match r {
        Err(e) if e.message.contains(field) => println!("refused as it should be ({what}): {}", e.message),
        other => bad.push(format!("{what}: expected a refusal naming `{field}`, got {other:?}")),
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let mut bad = Vec::new();

    let n = 1 << 20;
    let x = random(n, 0x9e37_79b9_7f4a_7c15);
    let dx = DeviceBuffer::from_host(&s, &x).unwrap();
    let mut dout = DeviceBuffer::<f32>::zeroed(&s, n).unwrap();
    let launch = m.prepare_block_reverse(LaunchConfig1D::for_num_elems(n as u32, BLOCK, 1024)).unwrap();
    m.block_reverse(&s, &launch, 3.0, &dx, &mut dout).unwrap();
    let got = dout.to_host_vec(&s).unwrap();
    let b = BLOCK as usize;
    let wrong = (0..n).filter(|&i| got[i] != 3.0 * x[i / b * b + (b - 1 - i % b)]).count();
    if wrong > 0 {
        bad.push(format!("block_reverse: {wrong} of {n} values wrong"));
    }

    let (w, h) = (1000usize, 700usize);
    let (a2, b2) = (random(w * h, 7), random(w * h, 11));
    let (da, db) = (DeviceBuffer::from_host(&s, &a2).unwrap(), DeviceBuffer::from_host(&s, &b2).unwrap());
    let mut dc = DeviceBuffer::<f32>::zeroed(&s, w * h).unwrap();
    let grid = ((w as u32).div_ceil(TILE), (h as u32).div_ceil(TILE));
    let launch2 = m.prepare_add2d(LaunchConfig2D::new(grid, (TILE, TILE), 0)).unwrap();
    m.add2d(&s, &launch2, w as u32, h as u32, &da, &db, &mut dc).unwrap();
    let c = dc.to_host_vec(&s).unwrap();
    let wrong2 = (0..w * h).filter(|&i| c[i] != a2[i] + 2.0 * b2[i]).count();
    if wrong2 > 0 {
        bad.push(format!("add2d: {wrong2} of {} values wrong", w * h));
    }

    refused(
        "prepare, block 128",
        m.prepare_block_reverse(LaunchConfig1D::new(8192, 128, 1024)),
        "block = (256, 1, 1)",
        &mut bad,
    );
    refused(
        "prepare, 2048 bytes",
        m.prepare_block_reverse(LaunchConfig1D::new(4096, 256, 2048)),
        "dynamic_shared = 1024",
        &mut bad,
    );
    refused(
        "prepare, grid y 70000",
        m.prepare_add2d(LaunchConfig2D::new((1, 70000), (16, 16), 0)),
        "y must be 1 to 65535",
        &mut bad,
    );
    let raw = LaunchConfig::new((4096, 1, 1), (128, 1, 1), 1024);
    refused(
        "unchecked, block 128",
        unsafe { m.block_reverse_unchecked(&s, raw, 3.0, &dx, &mut dout) },
        "breaks the launch contract's block = (256, 1, 1)",
        &mut bad,
    );
    let raw2 = LaunchConfig::new((grid.0, grid.1, 2), (16, 16, 1), 0);
    refused(
        "unchecked, grid z 2",
        unsafe { m.add2d_unchecked(&s, raw2, w as u32, h as u32, &da, &db, &mut dc) },
        "domain = 2",
        &mut bad,
    );
    // the contract is in the manifest: a raw launch by entry name is checked too (what C, C++ and
    // Python launches get)
    let p = cuda_core::ParamBuffer::new();
    refused(
        "raw launch, block 64",
        unsafe { m.raw().launch_raw("add2d", &s, &LaunchConfig::new((1, 1, 1), (64, 1, 1), 0), &p) },
        "block = (16, 16, 1)",
        &mut bad,
    );
    s.synchronize().unwrap();

    if bad.is_empty() {
        println!("PASSED: block_reverse ({n} values) and add2d ({w}x{h}) through prepared launches; 6 refusals named the contract field");
    } else {
        for b in &bad {
            println!("FAILED: {b}");
        }
        std::process::exit(1);
    }
}
