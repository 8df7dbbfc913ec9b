//! Page-locked ("pinned") host memory and the asynchronous copies it allows.
//!
//! A copy between pageable memory and the GPU goes through a staging buffer and returns only when
//! done; one from pinned memory is a DMA that the stream runs while the host goes on, and it is
//! the only kind a CUDA graph can record. The copies are lazy [`DeviceOperation`]s like launches:
//! they borrow both ends until they have run (`.sync()`, `.await`, or for as long as a graph that
//! recorded them lives), so safe code cannot free or overwrite either end meanwhile.
use crate::sys;
use crate::{check, CudaContext, CudaError, CudaStream, DeviceBuffer, DeviceOperation, OpFuture, Result};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::os::raw::c_void;

/// `len` values of `T` in page-locked host memory of one device's driver; reads and writes like
/// a `[T]` (`Deref`).
pub struct PinnedBuffer<T: Copy> {
    ptr: *mut T,
    len: usize,
    ctx: CudaContext,
}

unsafe impl<T: Copy + Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Copy + Sync> Sync for PinnedBuffer<T> {}

impl<T: Copy> PinnedBuffer<T> {
    fn alloc(ctx: &CudaContext, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            CudaError::other(format!("PinnedBuffer: {len} values of {} bytes overflow usize", std::mem::size_of::<T>()))
        })?;
        let mut p = std::ptr::null_mut();
        check(unsafe { sys::oxide_host_alloc(ctx.raw(), bytes.max(1), &mut p) })?;
        // oxide_host_alloc's memory is page-aligned: aligned for any T.
        Ok(PinnedBuffer { ptr: p as *mut T, len, ctx: ctx.clone() })
    }

    /// `len` copies of `value`.
    pub fn new(ctx: &CudaContext, len: usize, value: T) -> Result<Self> {
        let b = Self::alloc(ctx, len)?;
        for i in 0..len {
            unsafe { b.ptr.add(i).write(value) };
        }
        Ok(b)
    }

    /// A copy of `data`.
    pub fn from_slice(ctx: &CudaContext, data: &[T]) -> Result<Self> {
        let b = Self::alloc(ctx, data.len())?;
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.ptr, data.len()) };
        Ok(b)
    }

    /// The context whose driver pinned the memory.
    pub fn context(&self) -> &CudaContext {
        &self.ctx
    }

    /// A lazy copy of all of this into `dst` (same length; a view from `slice_mut` will do).
    pub fn copy_to_device<'a>(&'a self, dst: &'a mut DeviceBuffer<T>) -> CopyOp<'a> {
        let dir = Dir::HtoD { dst: dst.device_ptr(), src: self.ptr as *const c_void };
        CopyOp::new(&self.ctx, dir, self.len, dst.len(), std::mem::size_of::<T>())
    }

    /// A lazy copy of `src` (same length) into all of this.
    pub fn copy_from_device<'a>(&'a mut self, src: &'a DeviceBuffer<T>) -> CopyOp<'a> {
        let dir = Dir::DtoH { dst: self.ptr as *mut c_void, src: src.device_ptr() };
        CopyOp::new(&self.ctx, dir, src.len(), self.len, std::mem::size_of::<T>())
    }
}

impl<T: Copy> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        unsafe { sys::oxide_host_free(self.ptr as *mut c_void) };
    }
}

enum Dir {
    HtoD { dst: u64, src: *const c_void },
    DtoH { dst: *mut c_void, src: u64 },
    DtoD { dst: u64, src: u64 },
}

/// One asynchronous copy (from [`PinnedBuffer::copy_to_device`],
/// [`PinnedBuffer::copy_from_device`] or [`CopyOp::device_to_device`]), run like a launch.
pub struct CopyOp<'a> {
    ctx: CudaContext,
    dir: Dir,
    bytes: usize,
    mismatch: Option<(usize, usize)>,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a> CopyOp<'a> {
    fn new(ctx: &CudaContext, dir: Dir, src_len: usize, dst_len: usize, size: usize) -> Self {
        let mismatch = (src_len != dst_len).then_some((src_len, dst_len));
        CopyOp { ctx: ctx.clone(), dir, bytes: src_len * size, mismatch, _borrow: PhantomData }
    }

    /// A lazy copy of `src` into `dst` (same length) on `ctx`'s device.
    pub fn device_to_device<T: Copy>(
        ctx: &CudaContext,
        dst: &'a mut DeviceBuffer<T>,
        src: &'a DeviceBuffer<T>,
    ) -> CopyOp<'a> {
        let dir = Dir::DtoD { dst: dst.device_ptr(), src: src.device_ptr() };
        CopyOp::new(ctx, dir, src.len(), dst.len(), std::mem::size_of::<T>())
    }

    fn name(&self) -> &'static str {
        match self.dir {
            Dir::HtoD { .. } => "PinnedBuffer::copy_to_device",
            Dir::DtoH { .. } => "PinnedBuffer::copy_from_device",
            Dir::DtoD { .. } => "CopyOp::device_to_device",
        }
    }
}

impl DeviceOperation for CopyOp<'_> {
    type Output = ();
    fn enqueue(&mut self, stream: &CudaStream) -> Result<()> {
        if let Some((src, dst)) = self.mismatch {
            return Err(CudaError::other(format!(
                "{}: {src} values into {dst} (the lengths must match; copy to or from a view of the range)",
                self.name()
            )));
        }
        if self.bytes == 0 {
            return Ok(());
        }
        let s = stream.raw()?;
        check(unsafe {
            match self.dir {
                Dir::HtoD { dst, src } => sys::oxide_memcpy_htod_async(s, dst, src, self.bytes),
                Dir::DtoH { dst, src } => sys::oxide_memcpy_dtoh_async(s, dst, src, self.bytes),
                Dir::DtoD { dst, src } => sys::oxide_memcpy_dtod_async(s, dst, src, self.bytes),
            }
        })
    }
    fn finish(self) {}
    fn context(&self) -> &CudaContext {
        &self.ctx
    }
}

impl<'a> std::future::IntoFuture for CopyOp<'a> {
    type Output = Result<()>;
    type IntoFuture = OpFuture<CopyOp<'a>>;
    fn into_future(self) -> Self::IntoFuture {
        crate::into_future(self)
    }
}
