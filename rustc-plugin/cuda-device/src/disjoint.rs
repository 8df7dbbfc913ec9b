use crate::thread::ThreadIndex;

/// A mutable slice of device memory in which each thread may take `&mut` to the element at its
/// own `ThreadIndex`. Two threads never hold the same index, so the references are disjoint.
#[repr(C)]
pub struct DisjointSlice<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> DisjointSlice<T> {
    /// # Safety
    /// `ptr` must point at `len` valid elements that nothing else accesses during the kernel.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        DisjointSlice { ptr, len }
    }
    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when it has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The element at this thread's index, or None past the end.
    #[inline(always)]
    pub fn get_mut(&mut self, idx: ThreadIndex) -> Option<&mut T> {
        let i = idx.get();
        if i < self.len {
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }
    /// # Safety
    /// `i < len`, and no other thread touches element `i`.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, i: usize) -> &mut T {
        &mut *self.ptr.add(i)
    }
    /// The first element's address.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
}
