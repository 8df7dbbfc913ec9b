//! Thread, block and grid indices; block-wide barriers.
use crate::intrinsics as i;

/// threadIdx.x
#[inline(always)]
pub fn threadIdx_x() -> u32 {
    i::__oxide_tid_x()
}
/// threadIdx.y
#[inline(always)]
pub fn threadIdx_y() -> u32 {
    i::__oxide_tid_y()
}
/// threadIdx.z
#[inline(always)]
pub fn threadIdx_z() -> u32 {
    i::__oxide_tid_z()
}
/// blockIdx.x
#[inline(always)]
pub fn blockIdx_x() -> u32 {
    i::__oxide_ctaid_x()
}
/// blockIdx.y
#[inline(always)]
pub fn blockIdx_y() -> u32 {
    i::__oxide_ctaid_y()
}
/// blockIdx.z
#[inline(always)]
pub fn blockIdx_z() -> u32 {
    i::__oxide_ctaid_z()
}
/// blockDim.x
#[inline(always)]
pub fn blockDim_x() -> u32 {
    i::__oxide_ntid_x()
}
/// blockDim.y
#[inline(always)]
pub fn blockDim_y() -> u32 {
    i::__oxide_ntid_y()
}
/// blockDim.z
#[inline(always)]
pub fn blockDim_z() -> u32 {
    i::__oxide_ntid_z()
}
/// gridDim.x
#[inline(always)]
pub fn gridDim_x() -> u32 {
    i::__oxide_nctaid_x()
}
/// gridDim.y
#[inline(always)]
pub fn gridDim_y() -> u32 {
    i::__oxide_nctaid_y()
}
/// gridDim.z
#[inline(always)]
pub fn gridDim_z() -> u32 {
    i::__oxide_nctaid_z()
}

/// A thread's global index in a 1-D launch. Only `index_1d()` makes one, so two threads never
/// hold the same value: that is what lets `DisjointSlice::get_mut` hand out `&mut` safely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// The index as a number.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }
}

/// A thread's global (x, y) index in a 2-D launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex2D {
    x: usize,
    y: usize,
}

impl ThreadIndex2D {
    /// The x index.
    #[inline(always)]
    pub fn x(self) -> usize {
        self.x
    }
    /// The y index.
    #[inline(always)]
    pub fn y(self) -> usize {
        self.y
    }
    /// (x, y)
    #[inline(always)]
    pub fn get(self) -> (usize, usize) {
        (self.x, self.y)
    }
    /// Row-major linear index `y * width + x`, as a `ThreadIndex` (unique when x < width).
    #[inline(always)]
    pub fn linear(self, width: usize) -> Option<ThreadIndex> {
        if self.x < width {
            Some(ThreadIndex(self.y * width + self.x))
        } else {
            None
        }
    }
}

/// blockIdx.x * blockDim.x + threadIdx.x
#[inline(always)]
pub fn index_1d() -> ThreadIndex {
    ThreadIndex((blockIdx_x() * blockDim_x() + threadIdx_x()) as usize)
}

/// (blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y)
#[inline(always)]
pub fn index_2d() -> ThreadIndex2D {
    ThreadIndex2D {
        x: (blockIdx_x() * blockDim_x() + threadIdx_x()) as usize,
        y: (blockIdx_y() * blockDim_y() + threadIdx_y()) as usize,
    }
}

/// Barrier for every thread of the block (`bar.sync 0`), with block-scope memory ordering.
#[inline(always)]
pub fn sync_threads() {
    i::__oxide_barrier()
}

/// Named barrier `id` (1..15) for `count` threads (a multiple of 32).
#[inline(always)]
pub fn sync_threads_named(id: u32, count: u32) {
    i::__oxide_barrier_named(id, count)
}
