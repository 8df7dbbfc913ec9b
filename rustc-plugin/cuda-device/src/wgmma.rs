//! Warpgroup matrix multiply-accumulate (sm_90a): `wgmma.mma_async` m64nNk16, bf16 inputs from
//! shared memory, f32 accumulators in registers (an array per thread: N/2 values).
//!
//! Accumulator layout (PTX ISA, wgmma D fragments): in the warpgroup's thread t (warp w = t/32,
//! lane l), element 4j + r of the array is row 16w + l/4 + 8(r/2) and column 8j + 2(l%4) + r%2
//! of the 64 x N tile.
use crate::intrinsics as i;

/// Swizzle of a shared-memory operand; must match the TMA copy that wrote it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle (interleaved core matrices).
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle.
    B128,
}

/// The shared-memory matrix descriptor: start address (shared window), leading and stride byte
/// offsets, swizzle. K-major with a swizzle: `lbo` unused (1), `sbo` the 8-row group stride
/// (1024 for 128-byte rows). MN-major with a swizzle: `lbo` the stride between swizzle-wide
/// column blocks, `sbo` between 8-row (k) groups.
#[inline(always)]
pub fn desc(smem_addr: u32, lbo_bytes: u32, sbo_bytes: u32, swizzle: Swizzle) -> u64 {
    let mode: u64 = match swizzle {
        Swizzle::None => 0,
        Swizzle::B128 => 1,
        Swizzle::B64 => 2,
        Swizzle::B32 => 3,
    };
    ((smem_addr as u64 >> 4) & 0x3fff)
        | (((lbo_bytes as u64 >> 4) & 0x3fff) << 16)
        | (((sbo_bytes as u64 >> 4) & 0x3fff) << 32)
        | (mode << 62)
}

/// Order earlier register and shared-memory accesses before the next `mma` (each warpgroup,
/// before its first wgmma and whenever it touched the accumulators).
#[inline(always)]
pub fn fence() {
    i::__oxide_wgmma_fence()
}
/// Close the group of wgmmas issued since the last commit.
#[inline(always)]
pub fn commit_group() {
    i::__oxide_wgmma_commit_group()
}

/// Accumulator arrays: [f32; 32] (N = 64), [f32; 64] (N = 128), [f32; 128] (N = 256).
pub trait Accumulator {
    /// The tile's N (columns of B and D).
    const N: u32;
    #[doc(hidden)]
    fn ptr(&mut self) -> *mut u8;
    #[doc(hidden)]
    unsafe fn mma(&mut self, da: u64, db: u64, scale_d: u32, trans_b: bool);
    #[doc(hidden)]
    fn wait<const W: u32>(&mut self);
}

macro_rules! acc {
    ($k:expr, $n:expr, $f:ident, $ft:ident, $w0:ident, $w1:ident, $w2:ident) => {
        impl Accumulator for [f32; $k] {
            const N: u32 = $n;
            #[inline(always)]
            fn ptr(&mut self) -> *mut u8 {
                self.as_mut_ptr() as *mut u8
            }
            #[inline(always)]
            unsafe fn mma(&mut self, da: u64, db: u64, scale_d: u32, trans_b: bool) {
                if trans_b {
                    i::$ft(self.ptr(), da, db, scale_d)
                } else {
                    i::$f(self.ptr(), da, db, scale_d)
                }
            }
            #[inline(always)]
            fn wait<const W: u32>(&mut self) {
                const { assert!(W <= 2, "wgmma::wait_group: at most 2 groups in flight") };
                match W {
                    0 => i::$w0(self.ptr()),
                    1 => i::$w1(self.ptr()),
                    2 => i::$w2(self.ptr()),
                    _ => {}
                }
            }
        }
    };
}
acc!(
    32,
    64,
    __oxide_wgmma_m64n64k16_f32_bf16,
    __oxide_wgmma_m64n64k16_f32_bf16_tb,
    __oxide_wgmma_wait_0_acc32,
    __oxide_wgmma_wait_1_acc32,
    __oxide_wgmma_wait_2_acc32
);
acc!(
    64,
    128,
    __oxide_wgmma_m64n128k16_f32_bf16,
    __oxide_wgmma_m64n128k16_f32_bf16_tb,
    __oxide_wgmma_wait_0_acc64,
    __oxide_wgmma_wait_1_acc64,
    __oxide_wgmma_wait_2_acc64
);
acc!(
    128,
    256,
    __oxide_wgmma_m64n256k16_f32_bf16,
    __oxide_wgmma_m64n256k16_f32_bf16_tb,
    __oxide_wgmma_wait_0_acc128,
    __oxide_wgmma_wait_1_acc128,
    __oxide_wgmma_wait_2_acc128
);

/// D (64 x N, f32) = A (64 x 16, bf16) * B (16 x N, bf16) + (scale_d ? D : 0), asynchronously.
/// `da`/`db` describe A (K-major) and B (K-major, or MN-major when `trans_b`) in shared memory.
/// Every thread of the warpgroup calls it with its own accumulators.
/// # Safety
/// The descriptors describe shared memory holding the operands, written before (TMA completion
/// on an mbarrier, or ordinary stores followed by `fence_proxy_async`).
#[inline(always)]
pub unsafe fn mma_bf16<A: Accumulator>(acc: &mut A, da: u64, db: u64, scale_d: bool, trans_b: bool) {
    acc.mma(da, db, scale_d as u32, trans_b)
}

/// Wait until at most W (0, 1, 2) committed groups are pending; the accumulators are tied to the
/// wait, so no read of them moves above it.
#[inline(always)]
pub fn wait_group<const W: u32, A: Accumulator>(acc: &mut A) {
    acc.wait::<W>()
}
