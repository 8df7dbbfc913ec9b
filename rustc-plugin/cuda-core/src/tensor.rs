//! Tensor views of device buffers: what a `#[tile_kernel]`'s `Tensor<T, R>` / `TensorMut<T, R>`
//! parameters are launched with. A view is a pointer, a shape and strides in elements, which a
//! launch passes as the kernel's 1 + 2 * R PTX parameters (docs/tile.md, "Memory").
use std::marker::PhantomData;

use crate::{CudaError, DeviceBuffer, ParamBuffer, Result, TileArgs};

/// A read-only view of `buf` with a shape and strides; borrows the buffer.
pub struct DeviceTensor<'a, T: Copy, const R: usize> {
    ptr: u64,
    shape: [i64; R],
    strides: [i64; R],
    _b: PhantomData<&'a DeviceBuffer<T>>,
}

/// A view a kernel writes; borrows the buffer mutably.
pub struct DeviceTensorMut<'a, T: Copy, const R: usize> {
    view: DeviceTensor<'a, T, R>,
    _b: PhantomData<&'a mut DeviceBuffer<T>>,
}

fn row_major<const R: usize>(shape: [usize; R]) -> [usize; R] {
    let mut s = [1usize; R];
    for d in (0..R.saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// Checks that every element the view can reach lies in a buffer of `len` elements.
fn checked<const R: usize>(len: usize, shape: [usize; R], strides: [usize; R]) -> Result<([i64; R], [i64; R])> {
    let mut last = 0usize;
    let mut empty = false;
    for d in 0..R {
        empty |= shape[d] == 0;
        let reach = (shape[d].max(1) - 1).checked_mul(strides[d]);
        last = match reach.and_then(|r| last.checked_add(r)) {
            Some(v) => v,
            None => return Err(CudaError::other(format!("tensor view {shape:?} strides {strides:?} overflows"))),
        };
    }
    if !empty && last >= len {
        return Err(CudaError::other(format!(
            "tensor view of shape {shape:?} and strides {strides:?} reaches element {last}, past the buffer's {len} \
             elements: make the buffer larger or the shape smaller"
        )));
    }
    if shape.iter().chain(strides.iter()).any(|&v| v > i64::MAX as usize) {
        return Err(CudaError::other(format!("tensor view {shape:?}: a dim or stride past i64")));
    }
    Ok((shape.map(|v| v as i64), strides.map(|v| v as i64)))
}

impl<'a, T: Copy, const R: usize> DeviceTensor<'a, T, R> {
    /// `buf` as a row-major tensor of `shape`; an error if the buffer is too small.
    pub fn new(buf: &'a DeviceBuffer<T>, shape: [usize; R]) -> Result<Self> {
        Self::strided(buf, shape, row_major(shape))
    }
    /// `buf` with explicit strides (in elements, from element 0).
    pub fn strided(buf: &'a DeviceBuffer<T>, shape: [usize; R], strides: [usize; R]) -> Result<Self> {
        let (shape, strides) = checked(buf.len(), shape, strides)?;
        Ok(DeviceTensor { ptr: buf.device_ptr(), shape, strides, _b: PhantomData })
    }
    /// The shape.
    pub fn shape(&self) -> [i64; R] {
        self.shape
    }
    #[doc(hidden)]
    pub fn push_to(&self, p: &mut ParamBuffer) {
        p.push_value(&self.ptr);
        for d in self.shape {
            p.push_value(&d);
        }
        for s in self.strides {
            p.push_value(&s);
        }
    }
    /// This view as a tile launch's argument, of oxide_scalar element `elem`, read only.
    #[doc(hidden)]
    pub fn push_arg(&self, a: &mut TileArgs, elem: u32) {
        a.push_tensor(self.ptr, elem, false, &self.shape, &self.strides)
    }
}

impl<'a, T: Copy, const R: usize> DeviceTensorMut<'a, T, R> {
    /// `buf` as a row-major tensor of `shape` the kernel writes.
    pub fn new(buf: &'a mut DeviceBuffer<T>, shape: [usize; R]) -> Result<Self> {
        Self::strided(buf, shape, row_major(shape))
    }
    /// `buf` with explicit strides.
    pub fn strided(buf: &'a mut DeviceBuffer<T>, shape: [usize; R], strides: [usize; R]) -> Result<Self> {
        Ok(DeviceTensorMut { view: DeviceTensor::strided(buf, shape, strides)?, _b: PhantomData })
    }
    /// The shape.
    pub fn shape(&self) -> [i64; R] {
        self.view.shape
    }
    #[doc(hidden)]
    pub fn push_to(&self, p: &mut ParamBuffer) {
        self.view.push_to(p)
    }
    /// This view as a tile launch's argument, of oxide_scalar element `elem`, writable.
    #[doc(hidden)]
    pub fn push_arg(&self, a: &mut TileArgs, elem: u32) {
        a.push_tensor(self.view.ptr, elem, true, &self.view.shape, &self.view.strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_that_leave_the_buffer_are_refused() {
        assert_eq!(row_major([3, 4, 5]), [20, 5, 1]);
        assert!(checked(12, [3, 4], [4, 1]).is_ok());
        let e = checked(11, [3, 4], [4, 1]).unwrap_err();
        assert!(e.message.contains("reaches element 11, past the buffer's 11"), "{}", e.message);
        assert!(checked(0, [0, 4], [4, 1]).is_ok());
        assert!(checked(10, [usize::MAX, 2], [usize::MAX, 1]).is_err());
    }
}
