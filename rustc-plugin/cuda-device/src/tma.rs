//! TMA: bulk tensor copies between global and shared memory (sm_90), described by a
//! `TensorMap` that the host encodes (`cuda_core::TmaDescriptor`). A kernel takes it as
//! `&TensorMap`, the descriptor by value (manifest kind `tma_desc`: a grid_constant 128-byte PTX
//! parameter, whose param-space address the copies use, never a local copy), or as
//! `*const TensorMap`, a pointer to a copy in device memory. A `&TensorMap` coerces to the
//! `*const TensorMap` that the functions here take. A by-value `TensorMap` or `&mut TensorMap`
//! parameter is refused at compile time: TMA could not read the kernel's own copy.
use crate::hopper::Mbarrier;
use crate::intrinsics as i;

/// The 128-byte descriptor, opaque to the device code.
#[repr(C, align(64))]
pub struct TensorMap(pub [u64; 16]);

/// Prefetch the descriptor (a parameter, or in device memory written before the launch) into the
/// TMA unit's cache. Once per thread that issues copies, before the first. (No
/// `fence.proxy.tensormap::generic.acquire`: it needs PTX ISA 8.3 and oxide emits 8.0 for
/// sm_90a; a descriptor written by a copy before the launch is ordered by the launch itself.)
#[inline(always)]
pub fn acquire(map: *const TensorMap) {
    i::__oxide_tma_prefetch_desc(map as *const u8);
}

/// Copy the 2-D box at (x, y) (x innermost, in elements) into shared `dst`; its bytes complete
/// on `bar` (which must expect them: `arrive_expect_tx`).
/// # Safety
/// `dst` is shared memory with room for the box (1024-byte aligned for the 128-byte swizzle),
/// `map` a valid descriptor.
#[inline(always)]
pub unsafe fn load_2d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: &Mbarrier) {
    i::__oxide_tma_load_2d(dst, map as *const u8, x, y, bar.as_ptr())
}

/// 3-D form of `load_2d`.
/// # Safety
/// As `load_2d`.
#[inline(always)]
pub unsafe fn load_3d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, z: i32, bar: &Mbarrier) {
    i::__oxide_tma_load_3d(dst, map as *const u8, x, y, z, bar.as_ptr())
}

/// Copy shared `src` to the 2-D box at (x, y) of the tensor; a bulk group (`commit_group`, then
/// `wait_group_read` before `src` is overwritten). Fence (`fence_proxy_async`) ordinary writes
/// to `src` first.
/// # Safety
/// `src` is shared memory holding the box, `map` a valid descriptor of writable memory.
#[inline(always)]
pub unsafe fn store_2d(map: *const TensorMap, src: *const u8, x: i32, y: i32) {
    i::__oxide_tma_store_2d(map as *const u8, src as *mut u8, x, y)
}

/// Close the bulk group of the stores issued so far.
#[inline(always)]
pub fn commit_group() {
    i::__oxide_bulk_commit_group()
}
/// Wait until every committed store has read its shared source.
#[inline(always)]
pub fn wait_group_read() {
    i::__oxide_bulk_wait_group_read_0()
}
/// Wait until every committed store is complete.
#[inline(always)]
pub fn wait_group() {
    i::__oxide_bulk_wait_group_0()
}
