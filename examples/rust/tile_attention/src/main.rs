//! Flash attention forward as a tile kernel: O = softmax(Q·Kᵀ·scale)·V and LSE, the natural log of
//! each row's sum of exp(Q·Kᵀ·scale), in bf16 with f32 statistics and accumulator, BM query rows a
//! program. The same algorithm as examples/python/tile_attention.py, op for op: an online softmax
//! in exp2 with log2(e) folded into the scale, causal masking by key <= query position, the ragged
//! last key block masked, grouped-query attention by packing the GROUP query heads that share a
//! K/V head into a tile's rows, and decode (S_q = 1) as the same kernel with 16-row tiles.
//!
//!   q, o: [B·H_kv, GROUP·S_q, D] bf16    k, v: [B·H_kv, S_kv, D] bf16
//!   lse:  [B·H_kv, GROUP·S_q] f32        grid: (cdiv(GROUP·S_q, BM), B·H_kv)
//!
//! (Q [B, H_q, S_q, D], contiguous, is that view: row g·S_q + s of plane b·H_kv + h is query s of
//! head h·GROUP + g.) Checked against attention computed on the CPU in f64 for several shapes.
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;
use cuda_tile::{bf16, host::sample};

#[cuda_module]
pub mod kernels {
    use core::f32::consts::LOG2_E;
    use core::f64::consts::LN_2;
    use cuda_tile::{bf16, dot, program_id, select, tile_kernel, Cmp, Elementwise, FloatMath};
    use cuda_tile::{Tensor, TensorMut, Tile, Tile1, Tile3};

    /// D: the head dim; BM query rows and BN keys a step; CAUSAL: query s sees keys j <= s (top
    /// left aligned, as torch's is_causal), and the key walk stops at the block's last query.
    #[tile_kernel(warps = 4)]
    pub fn attention<const D: usize, const BM: usize, const BN: usize, const CAUSAL: bool>(
        q: Tensor<bf16, 3>,
        k: Tensor<bf16, 3>,
        v: Tensor<bf16, 3>,
        mut o: TensorMut<bf16, 3>,
        mut lse: TensorMut<f32, 2>,
        sm_scale: f32,
        group: i32,
    ) {
        let (r0, bh) = (program_id(0) * BM as i32, program_id(1));
        let (s_q, s_kv) = (q.shape(1) / group, k.shape(1));
        let qt: Tile<bf16, BM, D> = Tile3::<bf16, 1, BM, D>::load(&q, [bh, r0, 0]).reshape();
        let pos = (Tile1::<i32, BM>::arange() + Tile1::splat(r0)) % Tile1::splat(s_q); // each row's query
        let qk_scale = sm_scale * LOG2_E; // exp(x) = exp2(x·log2(e))
        let mut m = Tile1::<f32, BM>::full(f64::NEG_INFINITY); // running row max (log2 units)
        let mut l = Tile1::<f32, BM>::zeros(); // running row sum of exp2(s - m)
        let mut acc = Tile::<f32, BM, D>::zeros();
        // causal: no key past the block's last query (a block that wraps into the next head: s_q)
        let end = if CAUSAL { (r0 % s_q + BM as i32).min(s_q).min(s_kv) } else { s_kv };
        let mut kb = 0;
        while kb < end {
            let kt: Tile<bf16, BN, D> = Tile3::<bf16, 1, BN, D>::load(&k, [bh, kb, 0]).reshape();
            let s = dot(qt, kt.t(), Tile::zeros()) * Tile::splat(qk_scale);
            let key = Tile1::<i32, BN>::arange() + Tile1::splat(kb);
            let mut keep: Tile<bool, BM, BN> = key.row().cmp(Cmp::Lt, Tile::splat(s_kv)).broadcast(); // ragged end
            if CAUSAL {
                keep = keep & key.repeat_rows().cmp(Cmp::Le, pos.repeat_cols());
            }
            // key 0 is always kept, so m is finite after the first block
            let s = select(keep, s, Tile::full(f64::NEG_INFINITY));
            let m_new = m.max(s.max_rows());
            let p = (s - m_new.repeat_cols()).exp2();
            let alpha = (m - m_new).exp2(); // rescales what was summed under the old max
            l = l * alpha + p.sum_rows();
            let vt: Tile<bf16, BN, D> = Tile3::<bf16, 1, BN, D>::load(&v, [bh, kb, 0]).reshape();
            acc = dot(p.cast::<bf16>(), vt, acc * alpha.repeat_cols());
            m = m_new;
            kb += BN as i32;
        }
        let out: Tile3<f32, 1, BM, D> = (acc / l.repeat_cols()).reshape();
        o.store([bh, r0, 0], out.cast::<bf16>());
        lse.store([bh, r0], ((m + l.log2()) * Tile1::full(LN_2)).row());
    }
}

/// One configuration: Q [b, h_q, s_q, d], K and V [b, h_kv, s_kv, d].
struct Shape {
    b: usize,
    h_q: usize,
    h_kv: usize,
    s_q: usize,
    s_kv: usize,
    d: usize,
    causal: bool,
}

const BN: usize = 64;

/// BM: decode puts the group's heads in one 16-row tile (the least M a dot takes); prefill 64.
fn block_rows(s_q: usize) -> usize {
    if s_q == 1 {
        16
    } else {
        64
    }
}

/// Attention of the bf16 inputs in f64, with what the tolerance needs: per query row (in the
/// kernel's packed order) O, LSE, P·|V| and max over keys of |q|·|k|.
struct Reference {
    o: Vec<f64>,
    lse: Vec<f64>,
    p_absv: Vec<f64>,
    qk_abs: Vec<f64>,
}

fn reference(sh: &Shape, q: &[f32], k: &[f32], v: &[f32], scale: f64) -> Reference {
    let (d, group) = (sh.d, sh.h_q / sh.h_kv);
    let rows = sh.b * sh.h_q * sh.s_q;
    let mut r = Reference {
        o: vec![0.0; rows * d],
        lse: vec![0.0; rows],
        p_absv: vec![0.0; rows * d],
        qk_abs: vec![0.0; rows],
    };
    let mut score = vec![0.0f64; sh.s_kv];
    for row in 0..rows {
        // packed order is Q's own: row = ((b·H_kv + h_kv)·GROUP + g)·S_q + s
        let (s, head) = (row % sh.s_q, row / sh.s_q);
        let kv = head / group; // b·H_kv + h_kv
        let qr = &q[row * d..(row + 1) * d];
        let n = if sh.causal { (s + 1).min(sh.s_kv) } else { sh.s_kv };
        let mut mx = f64::NEG_INFINITY;
        for (j, sc) in score.iter_mut().enumerate().take(n) {
            let kr = &k[(kv * sh.s_kv + j) * d..][..d];
            let (mut dotp, mut mag) = (0.0f64, 0.0f64);
            for (&a, &b) in qr.iter().zip(kr) {
                dotp += a as f64 * b as f64;
                mag += (a as f64 * b as f64).abs();
            }
            *sc = dotp * scale;
            mx = mx.max(*sc);
            r.qk_abs[row] = r.qk_abs[row].max(mag);
        }
        let sum: f64 = score[..n].iter().map(|&x| (x - mx).exp()).sum();
        r.lse[row] = mx + sum.ln();
        for (j, &sc) in score.iter().enumerate().take(n) {
            let p = (sc - mx).exp() / sum;
            let vr = &v[(kv * sh.s_kv + j) * d..][..d];
            let (o, pa) = (&mut r.o[row * d..][..d], &mut r.p_absv[row * d..][..d]);
            for ((o, pa), &x) in o.iter_mut().zip(pa).zip(vr) {
                *o += p * x as f64;
                *pa += p * (x as f64).abs();
            }
        }
    }
    r
}

/// The worst |got - want| / tolerance of O and of LSE. The bounds are those of the Python example's
/// tolerance(), doubled for the GPU's approximate exp2 and log2: P is rounded to bf16 before the
/// P·V dot (2^-8 relative on each p, so 2^-8·(P·|V|)), O to bf16 (2^-8·|O|); a score's f32 dot of D
/// products is off by at most (2D + 4)·2^-24·scale·(|q|·|k|), which moves each p by 4 times that
/// relatively, and the row sums and the rescaled accumulator add S_kv·2^-24 each.
fn worst(sh: &Shape, r: &Reference, o: &[bf16], lse: &[f32], scale: f64) -> (f64, f64) {
    let (u, eps) = (2f64.powi(-8), 2f64.powi(-24));
    let (mut wo, mut wl) = (0.0f64, 0.0f64);
    // NaN (an element never written: the buffers start as NaN) counts as infinitely wrong
    let at_most = |w: f64, e: f64| if e.is_nan() { f64::INFINITY } else { w.max(e) };
    for (row, (&got, &want)) in lse.iter().zip(&r.lse).enumerate() {
        let score_err = (2 * sh.d + 4) as f64 * eps * scale * r.qk_abs[row] + 8.0 * eps;
        let f32_rel = 4.0 * score_err + 8.0 * sh.s_kv as f64 * eps;
        let span = row * sh.d..(row + 1) * sh.d;
        for ((got, &want), &pa) in o[span.clone()].iter().zip(&r.o[span.clone()]).zip(&r.p_absv[span]) {
            let tol = 2.0 * (u * pa + u * want.abs() + f32_rel * pa);
            wo = at_most(wo, (got.to_f32() as f64 - want).abs() / tol);
        }
        let tol = 2.0 * (score_err + 4.0 * sh.s_kv as f64 * eps + 4.0 * eps * want.abs());
        wl = at_most(wl, (got as f64 - want).abs() / tol);
    }
    (wo, wl)
}

/// Runs one shape on the GPU and returns its worst errors as fractions of the tolerance.
fn run(module: &kernels::Module, st: &CudaStream, sh: &Shape, seed: u64) -> (f64, f64) {
    let (d, group) = (sh.d, sh.h_q / sh.h_kv);
    let planes = sh.b * sh.h_kv;
    let gen = |n: usize, s: u64| -> Vec<bf16> { sample(n, s, -2.0, 2.0).map(bf16::from_f32).collect() };
    let (q, k, v) = (
        gen(planes * group * sh.s_q * d, seed),
        gen(planes * sh.s_kv * d, seed + 1),
        gen(planes * sh.s_kv * d, seed + 2),
    );
    let scale = 1.0 / (d as f32).sqrt();
    let up = |x: &[bf16]| -> Vec<f32> { x.iter().map(|e| e.to_f32()).collect() };
    let want = reference(sh, &up(&q), &up(&k), &up(&v), scale as f64);
    let dev = |x: &[bf16]| DeviceBuffer::from_host(st, x).unwrap();
    let (dq, dk, dv) = (dev(&q), dev(&k), dev(&v));
    // NaN sentinels: every element must be written
    let mut d_o = DeviceBuffer::from_host(st, &vec![bf16(0x7fc1); q.len()]).unwrap();
    let mut dl = DeviceBuffer::from_host(st, &vec![f32::NAN; planes * group * sh.s_q]).unwrap();
    let rows = group * sh.s_q;
    let tq = DeviceTensor::new(&dq, [planes, rows, d]).unwrap();
    let (tk, tv) =
        (DeviceTensor::new(&dk, [planes, sh.s_kv, d]).unwrap(), DeviceTensor::new(&dv, [planes, sh.s_kv, d]).unwrap());
    let mut to = DeviceTensorMut::new(&mut d_o, [planes, rows, d]).unwrap();
    let mut tl = DeviceTensorMut::new(&mut dl, [planes, rows]).unwrap();
    let bm = block_rows(sh.s_q);
    let grid = (rows.div_ceil(bm) as u32, planes as u32, 1);
    let g = group as i32;
    macro_rules! launch {
        ($d:literal, $bm:literal, $c:literal) => {
            module.attention::<$d, $bm, BN, $c>(st, grid, &tq, &tk, &tv, &mut to, &mut tl, scale, g)
        };
    }
    match (d, bm, sh.causal) {
        (64, 64, true) => launch!(64, 64, true),
        (64, 64, false) => launch!(64, 64, false),
        (128, 64, true) => launch!(128, 64, true),
        (128, 64, false) => launch!(128, 64, false),
        (64, 16, false) => launch!(64, 16, false),
        (128, 16, false) => launch!(128, 16, false),
        _ => panic!("no instance for D={d}, BM={bm}, causal={}", sh.causal),
    }
    .unwrap();
    let (o, lse) = (d_o.to_host_vec(st).unwrap(), dl.to_host_vec(st).unwrap());
    worst(sh, &want, &o, &lse, scale as f64)
}

fn main() {
    #[rustfmt::skip]
    let shapes = [
        // GQA (4 query heads over 2 K/V heads), causal, a ragged S
        Shape { b: 2, h_q: 4, h_kv: 2, s_q: 200, s_kv: 200, d: 64, causal: true },
        // S_q != S_kv, both ragged
        Shape { b: 1, h_q: 2, h_kv: 2, s_q: 100, s_kv: 333, d: 64, causal: false },
        Shape { b: 1, h_q: 3, h_kv: 3, s_q: 190, s_kv: 190, d: 128, causal: true },
        Shape { b: 2, h_q: 8, h_kv: 2, s_q: 128, s_kv: 256, d: 128, causal: false },
        // decode: one query per sequence, the group's heads (4, then 8) in one 16-row tile, a long ragged cache
        Shape { b: 3, h_q: 32, h_kv: 8, s_q: 1, s_kv: 1000, d: 128, causal: false },
        Shape { b: 2, h_q: 8, h_kv: 1, s_q: 1, s_kv: 515, d: 64, causal: false },
    ];
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let st = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut failed = false;
    let mut lines = Vec::new();
    for (i, sh) in shapes.iter().enumerate() {
        let (wo, wl) = run(&module, &st, sh, 20 + 3 * i as u64);
        let what = format!(
            "B={} H_q={} H_kv={} S_q={} S_kv={} D={}{}",
            sh.b,
            sh.h_q,
            sh.h_kv,
            sh.s_q,
            sh.s_kv,
            sh.d,
            if sh.causal { " causal" } else { "" }
        );
        if wo <= 1.0 && wl <= 1.0 {
            lines.push(format!("{what} (O {wo:.3}, LSE {wl:.3} of the tolerance)"));
        } else {
            println!("FAILED: tile attention {what}: O error {wo:.3}, LSE error {wl:.3} times the tolerance");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
    println!("PASSED: tile attention matches the CPU for {} shapes: {}", shapes.len(), lines.join("; "));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check itself: the reference's own O and LSE (rounded as the kernel rounds them) pass,
    /// and the non-causal answer to a causal problem does not.
    #[test]
    fn the_check_tells_right_from_wrong() {
        let mut sh = Shape { b: 1, h_q: 4, h_kv: 2, s_q: 33, s_kv: 33, d: 64, causal: true };
        let gen =
            |n: usize, s: u64| -> Vec<f32> { sample(n, s, -2.0, 2.0).map(|x| bf16::from_f32(x).to_f32()).collect() };
        let (q, k, v) = (gen(4 * 33 * 64, 1), gen(2 * 33 * 64, 2), gen(2 * 33 * 64, 3));
        let scale = 0.125;
        let want = reference(&sh, &q, &k, &v, scale);
        let o: Vec<bf16> = want.o.iter().map(|&x| bf16::from_f32(x as f32)).collect();
        let lse: Vec<f32> = want.lse.iter().map(|&x| x as f32).collect();
        let (wo, wl) = worst(&sh, &want, &o, &lse, scale);
        assert!(wo <= 0.5 && wl <= 0.5, "{wo} {wl}");
        sh.causal = false;
        let full = reference(&sh, &q, &k, &v, scale);
        let o: Vec<bf16> = full.o.iter().map(|&x| bf16::from_f32(x as f32)).collect();
        let lse: Vec<f32> = full.lse.iter().map(|&x| x as f32).collect();
        sh.causal = true;
        let (wo, wl) = worst(&sh, &want, &o, &lse, scale);
        assert!(wo > 10.0 && wl > 10.0, "{wo} {wl}");
    }
}
