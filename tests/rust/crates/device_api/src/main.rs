//! The device API against CPU references: math methods (libdevice), f32 atomics, 2-D indices,
//! dynamic shared memory, shuffle_down/up/idx, any/all, scoped atomics min/max/cas/swap.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::atomic::{AtomicOrdering, DeviceAtomicF32, DeviceAtomicU32};
use cuda_device::{cuda_module, kernel, thread, warp, DisjointSlice, DynamicSharedArray};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn math(x: &[f32], xd: &[f64], mut out: DisjointSlice<f32>, mut outd: DisjointSlice<f64>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            let v = x[i];
            *o = v.sqrt()
                + v.exp() * 0.001
                + (v + 1.0).ln()
                + v.sin()
                + v.cos()
                + v.tanh()
                + v.powf(1.5) * 0.01
                + v.mul_add(2.0, 1.0)
                + v.abs().floor();
        }
        if let Some(o) = outd.get_mut(idx) {
            let v = xd[i];
            *o = v.sqrt() + v.exp() * 0.001 + (v + 1.0).ln() + v.sin() + v.cos() + v.atan2(2.0);
        }
    }

    #[kernel]
    pub fn atomics(x: &[f32], sum: *mut f32, maxv: *mut u32, count: *mut u32) {
        let i = thread::index_1d().get();
        if i < x.len() {
            unsafe { DeviceAtomicF32::from_ptr(sum) }.fetch_add(x[i], AtomicOrdering::Relaxed);
            unsafe { DeviceAtomicU32::from_ptr(maxv) }.fetch_max(i as u32, AtomicOrdering::Relaxed);
            // core's atomics work too (system scope)
            let core_atomic = unsafe { &*(maxv.add(1) as *const core::sync::atomic::AtomicU32) };
            core_atomic.fetch_add(2, core::sync::atomic::Ordering::Relaxed);
            let c = unsafe { DeviceAtomicU32::from_ptr(count) };
            let mut cur = c.load(AtomicOrdering::Relaxed);
            loop {
                match c.compare_exchange(cur, cur + 1, AtomicOrdering::AcqRel, AtomicOrdering::Relaxed) {
                    Ok(_) => break,
                    Err(a) => cur = a,
                }
            }
        }
    }

    /// core functions whose instances dev builds share with the precompiled core library
    #[kernel]
    pub fn core_fns(x: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let mut buf = [0.0f32; 4];
        if i + 4 <= x.len() {
            buf.copy_from_slice(&x[i..i + 4]);
        }
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&(i as u64).to_le_bytes());
        let s: f32 = buf.iter().sum::<f32>() + bytes.iter().map(|&b| b as f32).sum::<f32>() * 0.0;
        if let Some(o) = out.get_mut(idx) {
            *o = s;
        }
    }

    #[kernel]
    pub fn grid2d(width: u32, mut out: DisjointSlice<u32>) {
        let p = thread::index_2d();
        if let Some(li) = p.linear(width as usize) {
            if let Some(o) = out.get_mut(li) {
                *o = (p.y() * 1000 + p.x()) as u32;
            }
        }
    }

    #[kernel]
    pub fn dynsmem_shuffles(x: &[u32], mut out: DisjointSlice<u32>) {
        let buf = DynamicSharedArray::<u32>::get();
        let t = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        let i = idx.get();
        let v = if i < x.len() { x[i] } else { 0 };
        unsafe { *buf.add(t) = v };
        thread::sync_threads();
        let rev = unsafe { *buf.add(thread::blockDim_x() as usize - 1 - t) };
        let down = warp::shuffle_down(v, 1);
        let up = warp::shuffle_up(v, 1);
        let first = warp::shuffle(v, 0);
        let all = warp::all(v < 1_000_000) as u32;
        let any = warp::any(v == 5) as u32;
        if let Some(o) = out.get_mut(idx) {
            *o = rev.wrapping_mul(3)
                ^ down.wrapping_mul(5)
                ^ up.wrapping_mul(7)
                ^ first.wrapping_mul(11)
                ^ (all << 30)
                ^ (any << 31);
        }
    }
}

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let mut ok = true;
    const N: usize = 4096;
    // math
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.001).collect();
    let xd: Vec<f64> = (0..N).map(|i| i as f64 * 0.001).collect();
    let (dx, dxd) = (DeviceBuffer::from_host(&s, &x).unwrap(), DeviceBuffer::from_host(&s, &xd).unwrap());
    let mut o = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    let mut od = DeviceBuffer::<f64>::zeroed(&s, N).unwrap();
    m.math(&s, LaunchConfig::for_num_elems(N as u32), &dx, &dxd, &mut o, &mut od).unwrap();
    let (r, rd) = (o.to_host_vec(&s).unwrap(), od.to_host_vec(&s).unwrap());
    for i in 0..N {
        let v = x[i];
        let w = v.sqrt()
            + v.exp() * 0.001
            + (v + 1.0).ln()
            + v.sin()
            + v.cos()
            + v.tanh()
            + v.powf(1.5) * 0.01
            + v.mul_add(2.0, 1.0)
            + v.abs().floor();
        let vd = xd[i];
        let wd = vd.sqrt() + vd.exp() * 0.001 + (vd + 1.0).ln() + vd.sin() + vd.cos() + vd.atan2(2.0);
        if (r[i] - w).abs() > 1e-4 * (1.0 + w.abs()) || (rd[i] - wd).abs() > 1e-12 * (1.0 + wd.abs()) {
            println!("FAILED: math at {i}: {} vs {w}, {} vs {wd}", r[i], rd[i]);
            ok = false;
            break;
        }
    }
    // atomics
    let ones = vec![1.0f32; N];
    let d1 = DeviceBuffer::from_host(&s, &ones).unwrap();
    let mut sum = DeviceBuffer::<f32>::zeroed(&s, 1).unwrap();
    let mut mx = DeviceBuffer::<u32>::zeroed(&s, 2).unwrap();
    let mut cnt = DeviceBuffer::<u32>::zeroed(&s, 1).unwrap();
    m.atomics(&s, LaunchConfig::for_num_elems(N as u32), &d1, &mut sum, &mut mx, &mut cnt).unwrap();
    let mxv = mx.to_host_vec(&s).unwrap();
    let (sv, mv, cv, core_v) = (sum.to_host_vec(&s).unwrap()[0], mxv[0], cnt.to_host_vec(&s).unwrap()[0], mxv[1]);
    if sv != N as f32 || mv != N as u32 - 1 || cv != N as u32 || core_v != 2 * N as u32 {
        println!("FAILED: atomics sum {sv} max {mv} count {cv} core {core_v}");
        ok = false;
    }
    // core functions
    let mut oc = DeviceBuffer::<f32>::zeroed(&s, N).unwrap();
    m.core_fns(&s, LaunchConfig::for_num_elems(N as u32), &dx, &mut oc).unwrap();
    let rc = oc.to_host_vec(&s).unwrap();
    for i in 0..N {
        let want: f32 = if i + 4 <= N { x[i..i + 4].iter().sum() } else { 0.0 };
        if (rc[i] - want).abs() > 1e-5 {
            println!("FAILED: core_fns at {i}: {} vs {want}", rc[i]);
            ok = false;
            break;
        }
    }
    // 2-D
    let (w, h) = (100usize, 37usize);
    let mut g = DeviceBuffer::<u32>::zeroed(&s, w * h).unwrap();
    m.grid2d(
        &s,
        LaunchConfig::new(((w as u32).div_ceil(16), (h as u32).div_ceil(16), 1), (16, 16, 1), 0),
        w as u32,
        &mut g,
    )
    .unwrap();
    let gv = g.to_host_vec(&s).unwrap();
    if (0..w * h).any(|k| gv[k] != ((k / w) * 1000 + k % w) as u32) {
        println!("FAILED: index_2d");
        ok = false;
    }
    // dynamic shared memory and shuffles
    let xs: Vec<u32> = (0..N as u32).map(|i| i * 7 + 3).collect();
    let dxs = DeviceBuffer::from_host(&s, &xs).unwrap();
    let mut os = DeviceBuffer::<u32>::zeroed(&s, N).unwrap();
    m.dynsmem_shuffles(&s, LaunchConfig::new((N as u32 / 128, 1, 1), (128, 1, 1), 128 * 4), &dxs, &mut os).unwrap();
    let sv = os.to_host_vec(&s).unwrap();
    for i in 0..N {
        let (b, t, lane) = (i / 128, i % 128, i % 32);
        let v = xs[i];
        let rev = xs[b * 128 + 127 - t];
        let down = if lane < 31 { xs[i + 1] } else { v };
        let up = if lane > 0 { xs[i - 1] } else { v };
        let first = xs[i - lane];
        let wbase = i - lane;
        let any = (wbase..wbase + 32).any(|k| xs[k] == 5) as u32;
        let want = rev.wrapping_mul(3)
            ^ down.wrapping_mul(5)
            ^ up.wrapping_mul(7)
            ^ first.wrapping_mul(11)
            ^ (1 << 30)
            ^ (any << 31);
        if sv[i] != want {
            println!("FAILED: dynamic smem/shuffles at {i}: {} vs {want}", sv[i]);
            ok = false;
            break;
        }
    }
    if ok {
        println!("PASSED: math, atomics, index_2d, dynamic shared memory, shuffles, votes");
    } else {
        std::process::exit(1);
    }
}
