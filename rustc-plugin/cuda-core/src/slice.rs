//! Views of part of a device buffer: `buf.slice(range)` and `buf.slice_mut(range)`.
//!
//! A view is a `DeviceBuffer` of its own (its address is the parent's plus the offset, its length
//! the range's), reached through `Deref`, so every launch, copy and view method that takes a
//! `&DeviceBuffer` or `&mut DeviceBuffer` takes a view too, and a kernel's slice parameter
//! receives just the range. The view borrows the parent, so the parent can be neither freed nor
//! used another way while it lives.
//!
//! A mutable view hands out `&mut DeviceBuffer`, and `std::mem::swap` can move such a value out
//! of it, past the borrow. So the first mutable view moves the parent's allocation into a
//! reference count that every mutable view holds: the memory lives as long as the last of them,
//! wherever it went.
use crate::{sys, CudaError, DeviceBuffer, Result};
use std::marker::PhantomData;
use std::ops::{Bound, Deref, DerefMut, RangeBounds};
use std::sync::Arc;

pub(crate) struct Allocation(*mut sys::oxide_buffer);
unsafe impl Send for Allocation {}
unsafe impl Sync for Allocation {}
impl Drop for Allocation {
    fn drop(&mut self) {
        unsafe { sys::oxide_buffer_free(self.0) }
    }
}

/// A device allocation shared by a buffer and its mutable views.
pub(crate) type SharedAllocation = Arc<Allocation>;

/// A read-only view of `len` values of a device buffer, from `buf.slice(range)`; use it where a
/// `&DeviceBuffer<T>` is taken (`&view` coerces). It cannot outlive the buffer:
///
/// ```compile_fail,E0505
/// # fn f(s: &cuda_core::CudaStream, b: cuda_core::DeviceBuffer<f32>) {
/// let v = b.slice(0..4);
/// drop(b);
/// v.to_host_vec(s).unwrap();
/// # }
/// ```
pub struct DeviceSlice<'a, T: Copy> {
    view: DeviceBuffer<T>,
    _parent: PhantomData<&'a DeviceBuffer<T>>,
}

/// A writable view of part of a device buffer, from `buf.slice_mut(range)` or
/// `buf.split_at_mut(mid)`; use it where a `&mut DeviceBuffer<T>` is taken (`&mut view`
/// coerces). While it lives, the buffer cannot be used another way:
///
/// ```compile_fail,E0502
/// # fn f(s: &cuda_core::CudaStream, mut b: cuda_core::DeviceBuffer<f32>) {
/// let mut w = b.slice_mut(0..4);
/// let r = b.slice(2..6); // overlaps what `w` may write
/// w.copy_from_host(s, &[1.0; 4]).unwrap();
/// # }
/// ```
pub struct DeviceSliceMut<'a, T: Copy> {
    view: DeviceBuffer<T>,
    _parent: PhantomData<&'a mut DeviceBuffer<T>>,
}

impl<T: Copy> Deref for DeviceSlice<'_, T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.view
    }
}

impl<T: Copy> Deref for DeviceSliceMut<'_, T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.view
    }
}

impl<T: Copy> DerefMut for DeviceSliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.view
    }
}

/// `start..end` of a range over `len` values, or why it does not fit.
fn bounds(range: &impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        (Some(s), Some(e)) if s > e => {
            Err(CudaError::other(format!("DeviceBuffer::slice: the range starts at {s} but ends at {e}")))
        }
        (s, e) => Err(CudaError::other(format!(
            "DeviceBuffer::slice: the range {}..{} is out of bounds of a buffer of {len} values",
            s.map_or("usize::MAX+1".into(), |v| v.to_string()),
            e.map_or("usize::MAX+1".into(), |v| v.to_string()),
        ))),
    }
}

impl<T: Copy> DeviceBuffer<T> {
    fn view(&self, start: usize, end: usize, shared: Option<SharedAllocation>) -> DeviceBuffer<T> {
        DeviceBuffer {
            raw: std::ptr::null_mut(),
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len: end - start,
            shared,
            _t: PhantomData,
        }
    }

    fn share(&mut self) -> SharedAllocation {
        if let Some(s) = &self.shared {
            return s.clone();
        }
        let s = Arc::new(Allocation(std::mem::replace(&mut self.raw, std::ptr::null_mut())));
        self.shared = Some(s.clone());
        s
    }

    /// A read-only view of `range` (e.g. `buf.slice(16..48)`, `buf.slice(..n)`).
    ///
    /// # Panics
    /// When the range does not lie within the buffer, as slicing a Rust slice does; see
    /// [`DeviceBuffer::try_slice`].
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceSlice<'_, T> {
        self.try_slice(range).unwrap_or_else(|e| panic!("{}", e.message))
    }

    /// A read-only view of `range`, or an error naming the range and the buffer's length.
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        let (s, e) = bounds(&range, self.len)?;
        Ok(DeviceSlice { view: self.view(s, e, self.shared.clone()), _parent: PhantomData })
    }

    /// A writable view of `range`.
    ///
    /// # Panics
    /// When the range does not lie within the buffer; see [`DeviceBuffer::try_slice_mut`].
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> DeviceSliceMut<'_, T> {
        self.try_slice_mut(range).unwrap_or_else(|e| panic!("{}", e.message))
    }

    /// A writable view of `range`, or an error naming the range and the buffer's length.
    pub fn try_slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (s, e) = bounds(&range, self.len)?;
        let shared = Some(self.share());
        Ok(DeviceSliceMut { view: self.view(s, e, shared), _parent: PhantomData })
    }

    /// Two writable views, of `..mid` and `mid..`, usable at once (e.g. by launches on two
    /// streams).
    ///
    /// # Panics
    /// When `mid > len`.
    pub fn split_at_mut(&mut self, mid: usize) -> (DeviceSliceMut<'_, T>, DeviceSliceMut<'_, T>) {
        if mid > self.len {
            panic!("DeviceBuffer::split_at_mut: mid {mid} is past the end of a buffer of {} values", self.len);
        }
        let shared = self.share();
        let (a, b) = (self.view(0, mid, Some(shared.clone())), self.view(mid, self.len, Some(shared)));
        (DeviceSliceMut { view: a, _parent: PhantomData }, DeviceSliceMut { view: b, _parent: PhantomData })
    }
}
