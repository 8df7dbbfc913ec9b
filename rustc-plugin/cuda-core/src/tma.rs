//! TMA descriptors (Hopper's bulk tensor copy engine), encoded on the host by the runtime
//! (`oxide_tma_desc_encode_tiled` over cuTensorMapEncodeTiled), also copied to device memory.
//!
//! A kernel takes one in either of two ways; the launch argument is `&TmaDescriptor` for both:
//! - `&cuda_device::tma::TensorMap`: by value, a `tma_desc` parameter (128 bytes, align 64,
//!   grid_constant), the launch passing the 128 encoded bytes. TMA reads it in parameter space.
//! - `*const cuda_device::tma::TensorMap`: a pointer to the device-memory copy.
use crate::{check, CudaStream, DeviceBuffer, Result};
use cuda_device::abi::*;
use oxide_sys::oxide_tma_desc_encode_tiled;
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};

/// Shared-memory swizzle of the tile a copy writes (wgmma descriptors must name the same one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle.
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle (rows of 128 bytes, as wgmma's K-major operands use).
    B128,
}

impl Swizzle {
    fn bytes(self) -> c_int {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }
}

/// Element types a TMA copy moves (oxide_scalar codes). bf16 and f16 data travel as `u16`.
pub trait TmaElement: Copy {
    /// The oxide_scalar code of the type.
    const SCALAR: c_int;
}
macro_rules! tma_el { ($($t:ty => $c:expr),*) => { $(impl TmaElement for $t { const SCALAR: c_int = $c as c_int; })* } }
tma_el!(u8 => OXIDE_SCALAR_U8, i8 => OXIDE_SCALAR_I8, u16 => OXIDE_SCALAR_U16, i16 => OXIDE_SCALAR_I16,
        u32 => OXIDE_SCALAR_U32, i32 => OXIDE_SCALAR_I32, u64 => OXIDE_SCALAR_U64, i64 => OXIDE_SCALAR_I64,
        f32 => OXIDE_SCALAR_F32, f64 => OXIDE_SCALAR_F64);

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Raw([u64; 16]);

/// A tiled TMA descriptor of a buffer, in device memory. It borrows the buffer: the descriptor
/// holds its address.
pub struct TmaDescriptor<'a> {
    host: Raw,
    dev: DeviceBuffer<u64>,
    _buf: PhantomData<&'a ()>,
}

impl<'a> TmaDescriptor<'a> {
    /// A descriptor of `buffer` viewed as a tensor: `dims` innermost first, `strides_bytes` of
    /// dims 1.. (multiples of 16), copies of `box_dims` elements. Errors name the broken rule.
    pub fn tiled<T: TmaElement>(
        stream: &CudaStream,
        buffer: &'a DeviceBuffer<T>,
        dims: &[u64],
        strides_bytes: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<Self> {
        let rank = dims.len();
        if box_dims.len() != rank || strides_bytes.len() + 1 != rank {
            return Err(crate::CudaError::other(format!(
                "TmaDescriptor::tiled: {} dims need {} strides and {} box sizes",
                rank,
                rank.saturating_sub(1),
                rank
            )));
        }
        let elems: u64 = dims.iter().product();
        if elems > buffer.len() as u64 {
            return Err(crate::CudaError::other(format!(
                "TmaDescriptor::tiled: the tensor has {} elements, the buffer {}",
                elems,
                buffer.len()
            )));
        }
        let mut host = Raw([0; 16]);
        check(unsafe {
            oxide_tma_desc_encode_tiled(
                stream.context().raw(),
                host.0.as_mut_ptr() as *mut c_void,
                T::SCALAR,
                rank as u32,
                buffer.device_ptr(),
                dims.as_ptr(),
                strides_bytes.as_ptr(),
                box_dims.as_ptr(),
                std::ptr::null(),
                swizzle.bytes(),
            )
        })?;
        let dev = DeviceBuffer::from_host(stream, &host.0)?;
        Ok(TmaDescriptor { host, dev, _buf: PhantomData })
    }

    /// A row-major `rows` x `cols` matrix copied in `box_rows` x `box_cols` tiles
    /// (device coordinates: x = column, y = row).
    pub fn tiled_2d<T: TmaElement>(
        stream: &CudaStream,
        buffer: &'a DeviceBuffer<T>,
        rows: u64,
        cols: u64,
        box_rows: u32,
        box_cols: u32,
        swizzle: Swizzle,
    ) -> Result<Self> {
        let es = std::mem::size_of::<T>() as u64;
        Self::tiled(stream, buffer, &[cols, rows], &[cols * es], &[box_cols, box_rows], swizzle)
    }

    /// Address of the descriptor in device memory (a `*const TensorMap` parameter's value).
    pub fn device_ptr(&self) -> u64 {
        self.dev.device_ptr()
    }
    /// The 128 encoded bytes (a `&TensorMap` parameter's value).
    pub fn bytes(&self) -> [u8; 128] {
        unsafe { std::mem::transmute(self.host) }
    }
}
