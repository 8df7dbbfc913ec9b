//! Hopper (sm_90/sm_90a) synchronisation: mbarriers, proxy fences, `elect.sync`, `setmaxnreg`.
//! TMA copies are in `tma`, tensor-core matrix multiplies in `wgmma`.
use crate::intrinsics as i;
use crate::SharedArray;
use core::cell::UnsafeCell;

/// A transaction barrier: a u64 in shared memory that counts arrivals (and, for TMA, bytes) per
/// phase. Phases alternate parity 0, 1, 0, ...; a waiter names the parity it waits for.
#[repr(transparent)]
pub struct Mbarrier(UnsafeCell<u64>);

unsafe impl Sync for Mbarrier {}

impl Mbarrier {
    /// Barrier `i` of a shared array of u64s (bounds-checked; shared memory by construction).
    #[inline(always)]
    pub fn from_shared<const N: usize>(arr: &SharedArray<u64, N>, i: usize) -> &Mbarrier {
        assert!(i < N);
        unsafe { Self::from_ptr(arr.as_ptr().add(i)) }
    }
    /// # Safety
    /// `p` points to an 8-byte-aligned u64 in this block's shared memory that lives as long as 'a.
    #[inline(always)]
    pub unsafe fn from_ptr<'a>(p: *mut u64) -> &'a Mbarrier {
        &*(p as *const Mbarrier)
    }
    /// The barrier's address in shared memory.
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut u8 {
        self.0.get() as *mut u8
    }
    /// Initialise for `count` arrivals a phase. One thread does it, then `fence_mbarrier_init()`
    /// and a block barrier before anyone else uses it.
    #[inline(always)]
    pub fn init(&self, count: u32) {
        i::__oxide_mbarrier_init(self.as_ptr(), count)
    }
    /// One arrival (release at CTA scope). Returns the phase token.
    #[inline(always)]
    pub fn arrive(&self) -> u64 {
        i::__oxide_mbarrier_arrive(self.as_ptr())
    }
    /// One arrival that also makes the phase wait for `bytes` of asynchronous (TMA) copies.
    #[inline(always)]
    pub fn arrive_expect_tx(&self, bytes: u32) -> u64 {
        i::__oxide_mbarrier_arrive_expect_tx(self.as_ptr(), bytes)
    }
    /// Make the current phase wait for `bytes` more, without arriving.
    #[inline(always)]
    pub fn expect_tx(&self, bytes: u32) {
        i::__oxide_mbarrier_expect_tx(self.as_ptr(), bytes)
    }
    /// True once the phase with this parity (0 or 1) has completed; acquire at CTA scope.
    /// A fresh barrier is in phase 0, so waiting on parity 1 passes at once.
    #[inline(always)]
    pub fn try_wait_parity(&self, parity: u32) -> bool {
        i::__oxide_mbarrier_try_wait_parity(self.as_ptr(), parity)
    }
    /// Spin until the phase with this parity has completed.
    #[inline(always)]
    pub fn wait_parity(&self, parity: u32) {
        while !self.try_wait_parity(parity) {}
    }
    /// Invalidate before the memory is used for something else.
    #[inline(always)]
    pub fn inval(&self) {
        i::__oxide_mbarrier_inval(self.as_ptr())
    }
}

/// Order this thread's ordinary shared-memory writes before later reads by the async proxy
/// (TMA stores, wgmma operands). Each writing thread fences, then the block synchronises.
#[inline(always)]
pub fn fence_proxy_async() {
    i::__oxide_fence_proxy_async()
}
/// Make mbarrier initialisation visible to the async proxy (TMA completes on barriers).
#[inline(always)]
pub fn fence_mbarrier_init() {
    i::__oxide_fence_mbarrier_init()
}
/// True in exactly one lane of the (fully active) warp.
#[inline(always)]
pub fn elect_sync() -> bool {
    i::__oxide_elect_sync()
}
/// The shared-window address of a pointer into shared memory (what descriptors and PTX take).
#[inline(always)]
pub fn smem_addr<T>(p: *const T) -> u32 {
    i::__oxide_smem_addr(p as *mut u8)
}

/// Raise this warpgroup's registers to N (sm_90a; N in 160, 168, 184, 200, 216, 232, 240).
/// Takes effect only in a kernel with a register cap (`#[launch_bounds(threads, 1)]`), with each
/// warpgroup's role one branch of an if/else.
#[inline(always)]
pub fn setmaxnreg_inc<const N: u32>() {
    const {
        assert!(
            matches!(N, 160 | 168 | 184 | 200 | 216 | 232 | 240),
            "setmaxnreg_inc: N must be one of 160, 168, 184, 200, 216, 232, 240"
        )
    };
    match N {
        160 => i::__oxide_setmaxnreg_inc_160(),
        168 => i::__oxide_setmaxnreg_inc_168(),
        184 => i::__oxide_setmaxnreg_inc_184(),
        200 => i::__oxide_setmaxnreg_inc_200(),
        216 => i::__oxide_setmaxnreg_inc_216(),
        232 => i::__oxide_setmaxnreg_inc_232(),
        240 => i::__oxide_setmaxnreg_inc_240(),
        _ => {}
    }
}

/// Lower this warpgroup's registers to N (sm_90a; N in 24, 32, 40, 56, 64, 80, 96).
#[inline(always)]
pub fn setmaxnreg_dec<const N: u32>() {
    const {
        assert!(
            matches!(N, 24 | 32 | 40 | 56 | 64 | 80 | 96),
            "setmaxnreg_dec: N must be one of 24, 32, 40, 56, 64, 80, 96"
        )
    };
    match N {
        24 => i::__oxide_setmaxnreg_dec_24(),
        32 => i::__oxide_setmaxnreg_dec_32(),
        40 => i::__oxide_setmaxnreg_dec_40(),
        56 => i::__oxide_setmaxnreg_dec_56(),
        64 => i::__oxide_setmaxnreg_dec_64(),
        80 => i::__oxide_setmaxnreg_dec_80(),
        96 => i::__oxide_setmaxnreg_dec_96(),
        _ => {}
    }
}

/// Two f32 to a packed pair of bf16 (round to nearest even), `lo` in the low 16 bits.
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    i::__oxide_cvt_bf16x2_f32(lo, hi)
}
