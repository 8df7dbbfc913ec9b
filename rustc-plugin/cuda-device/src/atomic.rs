//! Scoped atomics on device memory. `Device*` types are atomic across the GPU, `Block*` within
//! one block (shared memory, cheaper), `Cluster*` within a cluster (sm_90), `System*` across the
//! GPU and the host. `core::sync::atomic` types also work in kernels (system scope).
//!
//! View existing memory as atomics with `from_ptr`: `DeviceAtomicU32::from_ptr(p).fetch_add(1, Relaxed)`.
use crate::intrinsics as i;
use core::cell::UnsafeCell;

/// Memory ordering of an atomic operation (as `core::sync::atomic::Ordering`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOrdering {
    /// No ordering: atomicity only.
    Relaxed,
    /// Later accesses stay after this load.
    Acquire,
    /// Earlier accesses stay before this store.
    Release,
    /// Acquire and release (read-modify-write).
    AcqRel,
    /// Acquire and release, and one total order of all SeqCst operations.
    SeqCst,
}
pub use AtomicOrdering::*;

macro_rules! fences {
    ($scope:ident, $acq:ident, $sc:ident) => {
        #[inline(always)]
        fn $scope(o: AtomicOrdering, before: bool) {
            match (o, before) {
                (AtomicOrdering::SeqCst, true) => i::$sc(),
                (AtomicOrdering::Release | AtomicOrdering::AcqRel, true) => i::$acq(),
                (AtomicOrdering::Acquire | AtomicOrdering::AcqRel | AtomicOrdering::SeqCst, false) => i::$acq(),
                _ => {}
            }
        }
    };
}
fences!(fence_cta, __oxide_fence_acq_rel_cta, __oxide_fence_sc_cta);
fences!(fence_cluster, __oxide_fence_acq_rel_cluster, __oxide_fence_sc_cluster);
fences!(fence_gpu, __oxide_fence_acq_rel_gpu, __oxide_fence_sc_gpu);
fences!(fence_sys, __oxide_fence_acq_rel_sys, __oxide_fence_sc_sys);

macro_rules! atomic_common {
    ($name:ident, $t:ty, $fence:ident, $load:ident, $store:ident, $xchg:ident, $add:ident) => {
        #[doc = concat!("An atomic `", stringify!($t), "` at the scope its name says (see the module docs).")]
        #[repr(transparent)]
        pub struct $name {
            v: UnsafeCell<$t>,
        }
        unsafe impl Sync for $name {}
        impl $name {
            /// An atomic holding `v`.
            pub const fn new(v: $t) -> Self {
                $name { v: UnsafeCell::new(v) }
            }
            /// View `p` (aligned, valid for the kernel's duration) as an atomic.
            /// # Safety
            /// `p` must be valid and aligned, and accessed only atomically while viewed so.
            #[inline(always)]
            pub unsafe fn from_ptr<'a>(p: *mut $t) -> &'a Self {
                &*(p as *const Self)
            }
            #[inline(always)]
            fn p(&self) -> *mut u8 {
                self.v.get() as *mut u8
            }
            /// The value.
            #[inline(always)]
            pub fn load(&self, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let v = i::$load(self.p());
                $fence(o, false);
                v
            }
            /// Write `v`.
            #[inline(always)]
            pub fn store(&self, v: $t, o: AtomicOrdering) {
                $fence(o, true);
                i::$store(self.p(), v);
                $fence(o, false)
            }
            /// Write `v`; returns the previous value.
            #[inline(always)]
            pub fn swap(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$xchg(self.p(), v);
                $fence(o, false);
                r
            }
            /// Add `v` (wrapping); returns the previous value.
            #[inline(always)]
            pub fn fetch_add(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$add(self.p(), v);
                $fence(o, false);
                r
            }
        }
    };
}

macro_rules! atomic_int {
    ($name:ident, $t:ty, $fence:ident, $load:ident, $store:ident, $xchg:ident, $add:ident, $sub:ident,
     $and:ident, $or:ident, $xor:ident, $min:ident, $max:ident, $cas:ident) => {
        atomic_common!($name, $t, $fence, $load, $store, $xchg, $add);
        impl $name {
            /// Subtract `v` (wrapping); returns the previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$sub(self.p(), v);
                $fence(o, false);
                r
            }
            /// Bitwise and with `v`; returns the previous value.
            #[inline(always)]
            pub fn fetch_and(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$and(self.p(), v);
                $fence(o, false);
                r
            }
            /// Bitwise or with `v`; returns the previous value.
            #[inline(always)]
            pub fn fetch_or(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$or(self.p(), v);
                $fence(o, false);
                r
            }
            /// Bitwise xor with `v`; returns the previous value.
            #[inline(always)]
            pub fn fetch_xor(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$xor(self.p(), v);
                $fence(o, false);
                r
            }
            /// Store the minimum of the value and `v`; returns the previous value.
            #[inline(always)]
            pub fn fetch_min(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$min(self.p(), v);
                $fence(o, false);
                r
            }
            /// Store the maximum of the value and `v`; returns the previous value.
            #[inline(always)]
            pub fn fetch_max(&self, v: $t, o: AtomicOrdering) -> $t {
                $fence(o, true);
                let r = i::$max(self.p(), v);
                $fence(o, false);
                r
            }
            /// Ok(previous) if it held `current` and now holds `new`; Err(actual) otherwise.
            #[inline(always)]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: AtomicOrdering,
                _failure: AtomicOrdering,
            ) -> Result<$t, $t> {
                $fence(success, true);
                let r = i::$cas(self.p(), current, new);
                $fence(success, false);
                if r == current {
                    Ok(r)
                } else {
                    Err(r)
                }
            }
        }
    };
}

atomic_int!(
    DeviceAtomicU32,
    u32,
    fence_gpu,
    __oxide_atomic_load_u32_gpu,
    __oxide_atomic_store_u32_gpu,
    __oxide_atomic_exch_u32_gpu,
    __oxide_atomic_add_u32_gpu,
    __oxide_atomic_sub_u32_gpu,
    __oxide_atomic_and_u32_gpu,
    __oxide_atomic_or_u32_gpu,
    __oxide_atomic_xor_u32_gpu,
    __oxide_atomic_min_u32_gpu,
    __oxide_atomic_max_u32_gpu,
    __oxide_atomic_cas_u32_gpu
);
atomic_int!(
    DeviceAtomicI32,
    i32,
    fence_gpu,
    __oxide_atomic_load_i32_gpu,
    __oxide_atomic_store_i32_gpu,
    __oxide_atomic_exch_i32_gpu,
    __oxide_atomic_add_i32_gpu,
    __oxide_atomic_sub_i32_gpu,
    __oxide_atomic_and_i32_gpu,
    __oxide_atomic_or_i32_gpu,
    __oxide_atomic_xor_i32_gpu,
    __oxide_atomic_min_i32_gpu,
    __oxide_atomic_max_i32_gpu,
    __oxide_atomic_cas_i32_gpu
);
atomic_int!(
    DeviceAtomicU64,
    u64,
    fence_gpu,
    __oxide_atomic_load_u64_gpu,
    __oxide_atomic_store_u64_gpu,
    __oxide_atomic_exch_u64_gpu,
    __oxide_atomic_add_u64_gpu,
    __oxide_atomic_sub_u64_gpu,
    __oxide_atomic_and_u64_gpu,
    __oxide_atomic_or_u64_gpu,
    __oxide_atomic_xor_u64_gpu,
    __oxide_atomic_min_u64_gpu,
    __oxide_atomic_max_u64_gpu,
    __oxide_atomic_cas_u64_gpu
);
atomic_int!(
    DeviceAtomicI64,
    i64,
    fence_gpu,
    __oxide_atomic_load_i64_gpu,
    __oxide_atomic_store_i64_gpu,
    __oxide_atomic_exch_i64_gpu,
    __oxide_atomic_add_i64_gpu,
    __oxide_atomic_sub_i64_gpu,
    __oxide_atomic_and_i64_gpu,
    __oxide_atomic_or_i64_gpu,
    __oxide_atomic_xor_i64_gpu,
    __oxide_atomic_min_i64_gpu,
    __oxide_atomic_max_i64_gpu,
    __oxide_atomic_cas_i64_gpu
);
atomic_common!(
    DeviceAtomicF32,
    f32,
    fence_gpu,
    __oxide_atomic_load_f32_gpu,
    __oxide_atomic_store_f32_gpu,
    __oxide_atomic_exch_f32_gpu,
    __oxide_atomic_add_f32_gpu
);
atomic_common!(
    DeviceAtomicF64,
    f64,
    fence_gpu,
    __oxide_atomic_load_f64_gpu,
    __oxide_atomic_store_f64_gpu,
    __oxide_atomic_exch_f64_gpu,
    __oxide_atomic_add_f64_gpu
);

atomic_int!(
    BlockAtomicU32,
    u32,
    fence_cta,
    __oxide_atomic_load_u32_cta,
    __oxide_atomic_store_u32_cta,
    __oxide_atomic_exch_u32_cta,
    __oxide_atomic_add_u32_cta,
    __oxide_atomic_sub_u32_cta,
    __oxide_atomic_and_u32_cta,
    __oxide_atomic_or_u32_cta,
    __oxide_atomic_xor_u32_cta,
    __oxide_atomic_min_u32_cta,
    __oxide_atomic_max_u32_cta,
    __oxide_atomic_cas_u32_cta
);
atomic_int!(
    BlockAtomicI32,
    i32,
    fence_cta,
    __oxide_atomic_load_i32_cta,
    __oxide_atomic_store_i32_cta,
    __oxide_atomic_exch_i32_cta,
    __oxide_atomic_add_i32_cta,
    __oxide_atomic_sub_i32_cta,
    __oxide_atomic_and_i32_cta,
    __oxide_atomic_or_i32_cta,
    __oxide_atomic_xor_i32_cta,
    __oxide_atomic_min_i32_cta,
    __oxide_atomic_max_i32_cta,
    __oxide_atomic_cas_i32_cta
);
atomic_int!(
    BlockAtomicU64,
    u64,
    fence_cta,
    __oxide_atomic_load_u64_cta,
    __oxide_atomic_store_u64_cta,
    __oxide_atomic_exch_u64_cta,
    __oxide_atomic_add_u64_cta,
    __oxide_atomic_sub_u64_cta,
    __oxide_atomic_and_u64_cta,
    __oxide_atomic_or_u64_cta,
    __oxide_atomic_xor_u64_cta,
    __oxide_atomic_min_u64_cta,
    __oxide_atomic_max_u64_cta,
    __oxide_atomic_cas_u64_cta
);
atomic_common!(
    BlockAtomicF32,
    f32,
    fence_cta,
    __oxide_atomic_load_f32_cta,
    __oxide_atomic_store_f32_cta,
    __oxide_atomic_exch_f32_cta,
    __oxide_atomic_add_f32_cta
);

atomic_int!(
    ClusterAtomicU32,
    u32,
    fence_cluster,
    __oxide_atomic_load_u32_cluster,
    __oxide_atomic_store_u32_cluster,
    __oxide_atomic_exch_u32_cluster,
    __oxide_atomic_add_u32_cluster,
    __oxide_atomic_sub_u32_cluster,
    __oxide_atomic_and_u32_cluster,
    __oxide_atomic_or_u32_cluster,
    __oxide_atomic_xor_u32_cluster,
    __oxide_atomic_min_u32_cluster,
    __oxide_atomic_max_u32_cluster,
    __oxide_atomic_cas_u32_cluster
);

atomic_int!(
    SystemAtomicU32,
    u32,
    fence_sys,
    __oxide_atomic_load_u32_sys,
    __oxide_atomic_store_u32_sys,
    __oxide_atomic_exch_u32_sys,
    __oxide_atomic_add_u32_sys,
    __oxide_atomic_sub_u32_sys,
    __oxide_atomic_and_u32_sys,
    __oxide_atomic_or_u32_sys,
    __oxide_atomic_xor_u32_sys,
    __oxide_atomic_min_u32_sys,
    __oxide_atomic_max_u32_sys,
    __oxide_atomic_cas_u32_sys
);

/// Fence at the given scope.
#[inline(always)]
pub fn fence_block() {
    i::__oxide_fence_acq_rel_cta()
}
/// Fence at device scope: orders this thread's accesses as seen by every thread of the GPU.
#[inline(always)]
pub fn fence_device() {
    i::__oxide_fence_acq_rel_gpu()
}
/// Fence at system scope: also as seen by the host and other GPUs.
#[inline(always)]
pub fn fence_system() {
    i::__oxide_fence_acq_rel_sys()
}
