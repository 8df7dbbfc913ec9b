//! The C API of liboxide's runtime (include/oxide.h, runtime region), as much as cuda-core uses.
#![allow(non_camel_case_types, dead_code)]
use std::os::raw::{c_char, c_int, c_uint, c_void};

pub type oxide_status = c_int;
pub use cuda_device::abi::{OXIDE_ERROR_NO_DEVICE, OXIDE_ERROR_NO_DRIVER, OXIDE_OK};

#[repr(C)]
pub struct oxide_device {
    _p: [u8; 0],
}
#[repr(C)]
pub struct oxide_stream {
    _p: [u8; 0],
}
#[repr(C)]
pub struct oxide_event {
    _p: [u8; 0],
}
#[repr(C)]
pub struct oxide_buffer {
    _p: [u8; 0],
}
#[repr(C)]
pub struct oxide_loaded_module {
    _p: [u8; 0],
}
#[repr(C)]
pub struct oxide_kernel {
    _p: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct oxide_launch_config {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub smem: u32,
    pub cluster: [u32; 3],
    pub flags: u32,
}

extern "C" {
    pub fn oxide_status_name(s: oxide_status) -> *const c_char;
    pub fn oxide_last_error() -> *const c_char;
    pub fn oxide_device_count(count: *mut c_int) -> oxide_status;
    pub fn oxide_device_get(index: c_int, out: *mut *mut oxide_device) -> oxide_status;
    pub fn oxide_device_name(dev: *const oxide_device, name: *mut *const c_char) -> oxide_status;
    pub fn oxide_device_compute_capability(
        dev: *const oxide_device,
        major: *mut c_int,
        minor: *mut c_int,
    ) -> oxide_status;
    pub fn oxide_device_synchronize(dev: *mut oxide_device) -> oxide_status;
    pub fn oxide_stream_create(dev: *mut oxide_device, flags: c_uint, out: *mut *mut oxide_stream) -> oxide_status;
    pub fn oxide_stream_default(dev: *mut oxide_device, out: *mut *mut oxide_stream) -> oxide_status;
    pub fn oxide_stream_destroy(s: *mut oxide_stream);
    pub fn oxide_stream_synchronize(s: *mut oxide_stream) -> oxide_status;
    pub fn oxide_stream_query(s: *mut oxide_stream, done: *mut c_int) -> oxide_status;
    pub fn oxide_stream_wait_event(s: *mut oxide_stream, e: *mut oxide_event) -> oxide_status;
    pub fn oxide_event_create(dev: *mut oxide_device, flags: c_uint, out: *mut *mut oxide_event) -> oxide_status;
    pub fn oxide_event_destroy(e: *mut oxide_event);
    pub fn oxide_event_record(e: *mut oxide_event, s: *mut oxide_stream) -> oxide_status;
    pub fn oxide_event_synchronize(e: *mut oxide_event) -> oxide_status;
    pub fn oxide_event_query(e: *mut oxide_event, done: *mut c_int) -> oxide_status;
    pub fn oxide_event_elapsed_ms(a: *mut oxide_event, b: *mut oxide_event, ms: *mut f32) -> oxide_status;
    pub fn oxide_buffer_alloc(dev: *mut oxide_device, bytes: usize, out: *mut *mut oxide_buffer) -> oxide_status;
    pub fn oxide_buffer_free(b: *mut oxide_buffer);
    pub fn oxide_buffer_ptr(b: *const oxide_buffer) -> u64;
    pub fn oxide_memcpy_htod_async(s: *mut oxide_stream, dst: u64, src: *const c_void, bytes: usize) -> oxide_status;
    pub fn oxide_memcpy_dtoh_async(s: *mut oxide_stream, dst: *mut c_void, src: u64, bytes: usize) -> oxide_status;
    pub fn oxide_memcpy_dtod_async(s: *mut oxide_stream, dst: u64, src: u64, bytes: usize) -> oxide_status;
    pub fn oxide_memset_async(s: *mut oxide_stream, dst: u64, value: u32, count: usize, elem: c_uint) -> oxide_status;
    pub fn oxide_loaded_module_load_ptx(
        dev: *mut oxide_device,
        ptx: *const c_char,
        len: usize,
        out: *mut *mut oxide_loaded_module,
    ) -> oxide_status;
    pub fn oxide_loaded_module_destroy(m: *mut oxide_loaded_module);
    pub fn oxide_loaded_module_get_kernel(
        m: *mut oxide_loaded_module,
        name: *const c_char,
        out: *mut *mut oxide_kernel,
    ) -> oxide_status;
    pub fn oxide_kernel_launch_raw(
        k: *mut oxide_kernel,
        s: *mut oxide_stream,
        cfg: *const oxide_launch_config,
        params: *mut *mut c_void,
    ) -> oxide_status;
}
