//! Several GPUs (docs/rust.md, "Several GPUs"): `CudaContext::new(n)` for each device `n`, a
//! module loaded on each, peer access between them and copies from one device's memory to
//! another's. Streams and events of different devices mix: `stream.wait_event(&event)` takes an
//! event recorded on another device's stream.
use crate::{check, CudaContext, CudaError, CudaStream, DeviceBuffer, Result};
use oxide_sys as sys;

impl CudaContext {
    /// The device's index, as given to [`CudaContext::new`].
    pub fn ordinal(&self) -> usize {
        let mut i = 0;
        // Cannot fail for a context made by `new`.
        let _ = unsafe { sys::oxide_device_index(self.raw(), &mut i) };
        i as usize
    }
    /// Whether kernels on this device can use `peer`'s memory once
    /// [`enable_peer_access`](Self::enable_peer_access) is called (false for the device itself).
    pub fn can_access_peer(&self, peer: &CudaContext) -> Result<bool> {
        let mut c = 0;
        check(unsafe { sys::oxide_device_can_access_peer(self.raw(), peer.raw(), &mut c) })?;
        Ok(c != 0)
    }
    /// Let kernels on this device read and write `peer`'s memory (one direction; enabling again
    /// is fine). Errors name both devices where they cannot reach each other, and refuse the
    /// device itself.
    pub fn enable_peer_access(&self, peer: &CudaContext) -> Result<()> {
        check(unsafe { sys::oxide_device_enable_peer_access(self.raw(), peer.raw()) })
    }
    /// Whether [`enable_peer_access`](Self::enable_peer_access) was called for `peer`.
    pub fn peer_access_enabled(&self, peer: &CudaContext) -> Result<bool> {
        let mut e = 0;
        check(unsafe { sys::oxide_device_peer_access_enabled(self.raw(), peer.raw(), &mut e) })?;
        Ok(e != 0)
    }
}

/// Queue a copy of all of `src`, memory of `src_on`, into `dst`, memory of `dst_on`, on `stream`
/// (a stream of either device). It works without peer access (the driver stages it). Order it
/// after the work that wrote `src` on the other device with an event. A buffer that is not on
/// the device named for it is an error, not a wrong copy: the runtime asks the driver where each
/// pointer lives.
pub fn copy_peer_async<T: Copy>(
    stream: &CudaStream,
    dst: &mut DeviceBuffer<T>,
    dst_on: &CudaContext,
    src: &DeviceBuffer<T>,
    src_on: &CudaContext,
) -> Result<()> {
    if dst.len != src.len {
        return Err(CudaError::other(format!("copy_peer_async: {} values into a buffer of {}", src.len, dst.len)));
    }
    let bytes = dst.len * std::mem::size_of::<T>();
    check(unsafe { sys::oxide_memcpy_peer_async(stream.raw()?, dst_on.raw(), dst.ptr, src_on.raw(), src.ptr, bytes) })
}
