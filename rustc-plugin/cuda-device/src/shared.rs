use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

/// Block-shared memory: declare `static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;`
/// (or a plain `static`) inside a `#[kernel]`; the macro marks it and liboxide places it in the
/// GPU's shared address space. Contents start undefined.
#[repr(C, align(16))]
pub struct SharedArray<T, const N: usize> {
    data: UnsafeCell<[MaybeUninit<T>; N]>,
}

unsafe impl<T, const N: usize> Sync for SharedArray<T, N> {}

impl<T: Copy, const N: usize> SharedArray<T, N> {
    /// The initialiser of a shared-memory static (the contents start undefined).
    #[allow(clippy::declare_interior_mutable_const)] // only ever a static's initialiser
    pub const UNINIT: Self = SharedArray { data: UnsafeCell::new([MaybeUninit::uninit(); N]) };
    /// The number of elements, N.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }
    /// True when N is 0.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
    /// The first element's address (shared memory).
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        self.data.get() as *mut T
    }
    /// Read element i (bounds-checked).
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        assert!(i < N);
        unsafe { *self.as_ptr().add(i) }
    }
    /// Write element i (bounds-checked). Synchronise with `thread::sync_threads()`.
    #[inline(always)]
    pub fn set(&self, i: usize, v: T) {
        assert!(i < N);
        unsafe { *self.as_ptr().add(i) = v }
    }
    /// Read element i without a bounds check.
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> T {
        *self.as_ptr().add(i)
    }
    /// Write element i without a bounds check.
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    pub unsafe fn set_unchecked(&self, i: usize, v: T) {
        *self.as_ptr().add(i) = v
    }
}

impl<T: Copy, const N: usize> core::ops::Index<usize> for SharedArray<T, N> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        assert!(i < N);
        unsafe { &*self.as_ptr().add(i) }
    }
}
impl<T: Copy, const N: usize> core::ops::IndexMut<usize> for SharedArray<T, N> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < N);
        unsafe { &mut *self.as_ptr().add(i) }
    }
}

/// The block's dynamic shared memory (size given at launch: `LaunchConfig::shared_mem_bytes`).
pub struct DynamicSharedArray<T>(core::marker::PhantomData<T>);

impl<T> DynamicSharedArray<T> {
    /// Base pointer of the dynamic shared memory, viewed as `T`s (16-byte aligned).
    #[inline(always)]
    pub fn get() -> *mut T {
        crate::intrinsics::__oxide_dyn_smem() as *mut T
    }
}
