//! liboxide's C API (`include/oxide.h`), declared once for the Rust crates.
//!
//! Each function is written once, in the `api!` list below, and becomes two things:
//! - an `extern "C"` declaration at the crate root, for code that links liboxide (cuda-core links
//!   the LLVM-free runtime library statically; its build script says where from);
//! - a function-pointer type of the same name in [`fn_types`], for code that opens liboxide at
//!   run time (cargo-oxide `dlopen`s the compiler so that it builds and runs without it).
//!
//! This crate links nothing itself: a declaration costs nothing until it is called.
#![warn(missing_docs)]
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

/// A status code: `OXIDE_OK` (0) or an `OXIDE_ERROR_*`; `oxide_last_error` says more.
pub type oxide_status = c_int;

/// The numbers of the C interface (scalar and parameter-kind codes, statuses, the version),
/// generated from liboxide's tables; the same file serves the device crate.
#[path = "../../cuda-device/src/abi.rs"]
pub mod abi;
pub use abi::{OXIDE_ERROR_NO_DEVICE, OXIDE_ERROR_NO_DRIVER, OXIDE_OK};

macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident;)*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            pub struct $name {
                _p: [u8; 0],
            }
        )*
    };
}

opaque! {
    /// A compiler context: owns modules and types; one thread at a time.
    oxide_context;
    /// Compile options (target, line info, ...).
    oxide_options;
    /// A compiler module: kernels built with the C API or imported from bitcode.
    oxide_module;
    /// A GPU; lives as long as the process.
    oxide_device;
    /// An ordered queue of work on one device.
    oxide_stream;
    /// A marker in a stream, with timing.
    oxide_event;
    /// Work captured once from a stream, replayed with `oxide_graph_launch`.
    oxide_graph;
    /// Device memory.
    oxide_buffer;
    /// PTX or a cubin loaded on a device.
    oxide_loaded_module;
    /// A kernel of a loaded module.
    oxide_kernel;
}

/// `oxide_launch_contract`: what every launch of a kernel must satisfy (`fields`: `OXIDE_CONTRACT_*`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct oxide_launch_contract {
    /// Which fields the kernel declares.
    pub fields: u32,
    /// 1, 2 or 3.
    pub domain: u32,
    /// The exact block.
    pub block: [u32; 3],
    /// Dynamic shared memory allowed, in bytes (inclusive).
    pub smem_min: u32,
    /// See `smem_min`.
    pub smem_max: u32,
    /// Its alignment.
    pub smem_align: u32,
    /// The oldest compute capability (major, minor).
    pub min_cc: [u32; 2],
}

/// Grid, block, dynamic shared memory and cluster shape of a launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct oxide_launch_config {
    /// Blocks.
    pub grid: [u32; 3],
    /// Threads per block.
    pub block: [u32; 3],
    /// Dynamic shared memory in bytes; 0: the manifest's.
    pub smem: u32,
    /// Blocks per cluster; all 0: the manifest's cluster shape.
    pub cluster: [u32; 3],
    /// `OXIDE_LAUNCH_*` flags.
    pub flags: u32,
}

/// One unit of LLVM bitcode for `oxide_bitcode_kernel_key`.
#[repr(C)]
pub struct oxide_bitcode_ref {
    /// A name for messages (NUL-terminated).
    pub name: *const c_char,
    /// The bytes.
    pub data: *const c_void,
    /// Their number.
    pub size: usize,
}

/// A strided view of device memory (`oxide_tensor`): a tile kernel's tensor argument.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct oxide_tensor {
    /// `size_of::<oxide_tensor>()`.
    pub struct_size: usize,
    /// The allocation's address.
    pub data: u64,
    /// Element [0, .., 0] is at data + byte_offset.
    pub byte_offset: u64,
    /// The element's oxide_scalar code.
    pub elem: u32,
    /// 1 to 4: the first `rank` entries of shape and strides are used.
    pub rank: u32,
    /// Elements per dim.
    pub shape: [i64; 4],
    /// In elements.
    pub strides: [i64; 4],
    /// Non-zero: the kernel may write it.
    pub is_mutable: u32,
    /// 0.
    pub reserved: u32,
}

/// `oxide_arg_kind`: a scalar's value.
pub const OXIDE_ARG_SCALAR: u32 = 0;
/// `oxide_arg_kind`: the `oxide_tensor` at `bytes`.
pub const OXIDE_ARG_TENSOR: u32 = 4;

/// One argument of a launch checked against the manifest (`oxide_arg`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct oxide_arg {
    /// `OXIDE_ARG_*`.
    pub kind: u32,
    /// A scalar's oxide_scalar code; a tensor's element's.
    pub ty: u32,
    /// A tensor: non-zero lets the kernel write it.
    pub is_mutable: u32,
    /// 0.
    pub reserved: u32,
    /// A scalar: its bits in the low-order bytes.
    pub value: u64,
    /// Unused here (buffers).
    pub ptr: u64,
    /// Unused here (buffers).
    pub len: u64,
    /// A tensor: its `oxide_tensor`.
    pub bytes: *const c_void,
    /// A tensor: `size_of::<oxide_tensor>()`.
    pub size: usize,
}

// the C layouts (include/oxide.h): 104 and 56 bytes on every 64-bit target oxide runs on
const _: () = assert!(std::mem::size_of::<oxide_tensor>() == 104 && std::mem::size_of::<oxide_arg>() == 56);

/// Called once on a driver thread when a stream's earlier work has completed (`OXIDE_OK`) or
/// the device failed first (`OXIDE_ERROR_CUDA`); it must not call CUDA or oxide.
pub type oxide_stream_callback = unsafe extern "C" fn(user: *mut c_void, status: oxide_status);

macro_rules! api {
    ($($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $(-> $r:ty)?;)*) => {
        extern "C" {
            $($(#[$m])* pub fn $name($($a: $t),*) $(-> $r)?;)*
        }

        /// The same functions as pointer types, for a liboxide opened with `dlopen`: look the
        /// symbol up by the type's name and transmute it to the type.
        pub mod fn_types {
            use super::*;
            $($(#[$m])* pub type $name = unsafe extern "C" fn($($a: $t),*) $(-> $r)?;)*
        }
    };
}

api! {
    /// The name of a status, e.g. "OXIDE_ERROR_NO_DEVICE".
    fn oxide_status_name(s: oxide_status) -> *const c_char;
    /// The message of the last failed call on this thread ("" if none yet).
    fn oxide_last_error() -> *const c_char;
    /// liboxide's version, e.g. "0.1.0".
    fn oxide_version() -> *const c_char;

    /// A new compiler context.
    fn oxide_context_create(out: *mut *mut oxide_context) -> oxide_status;
    /// Destroy a context and everything it owns (NULL is ignored).
    fn oxide_context_destroy(ctx: *mut oxide_context);
    /// New options with the defaults (target sm_90a, opt level 3).
    fn oxide_options_create(out: *mut *mut oxide_options) -> oxide_status;
    /// Destroy options (NULL is ignored).
    fn oxide_options_destroy(opts: *mut oxide_options);
    /// The target SM, e.g. "sm_90a".
    fn oxide_options_set_target(opts: *mut oxide_options, sm: *const c_char) -> oxide_status;
    /// Emit line info (`.loc`) for profilers and sanitizers.
    fn oxide_options_set_line_info(opts: *mut oxide_options, enable: c_int) -> oxide_status;
    /// A new, empty module in `ctx`.
    fn oxide_module_create(ctx: *mut oxide_context, name: *const c_char, out: *mut *mut oxide_module)
        -> oxide_status;
    /// Import a unit of rustc's LLVM bitcode (its `#[kernel]` entries) into a module.
    fn oxide_module_import_bitcode(m: *mut oxide_module, data: *const c_void, size: usize, unit: *const c_char)
        -> oxide_status;
    /// Compile a module to PTX carrying its manifest; `*ptx` lives until the next compile.
    fn oxide_module_compile(m: *mut oxide_module, opts: *const oxide_options, ptx: *mut *const c_char, len: *mut usize)
        -> oxide_status;
    /// The textual LLVM IR of the last compile of `m`.
    fn oxide_module_get_llvm_ir(m: *mut oxide_module, out: *mut *const c_char) -> oxide_status;
    /// A key (64 hex digits and a NUL) for bitcode units that depends only on what their kernels
    /// are: an edit to host-only code keeps it.
    fn oxide_bitcode_kernel_key(units: *const oxide_bitcode_ref, n: usize, opts: *const oxide_options, key: *mut c_char)
        -> oxide_status;

    /// The number of GPUs.
    fn oxide_device_count(count: *mut c_int) -> oxide_status;
    /// The GPU with this index (0-based).
    fn oxide_device_get(index: c_int, out: *mut *mut oxide_device) -> oxide_status;
    /// The GPU's name, e.g. "NVIDIA H200".
    fn oxide_device_name(dev: *const oxide_device, name: *mut *const c_char) -> oxide_status;
    /// The GPU's compute capability, e.g. 9 and 0.
    fn oxide_device_compute_capability(dev: *const oxide_device, major: *mut c_int, minor: *mut c_int)
        -> oxide_status;
    /// Wait for all work on the device.
    fn oxide_device_synchronize(dev: *mut oxide_device) -> oxide_status;
    /// Encode a tiled TMA descriptor (128 bytes, 64-byte aligned) into `desc128`.
    fn oxide_tma_desc_encode_tiled(
        dev: *mut oxide_device,
        desc128: *mut c_void,
        dtype: c_int,
        rank: u32,
        global_addr: u64,
        dims: *const u64,
        strides_bytes: *const u64,
        box_: *const u32,
        elem_strides: *const u32,
        swizzle_bytes: c_int,
    ) -> oxide_status;

    /// A new stream (flags 1: non-blocking).
    fn oxide_stream_create(dev: *mut oxide_device, flags: c_uint, out: *mut *mut oxide_stream) -> oxide_status;
    /// The device's default stream.
    fn oxide_stream_default(dev: *mut oxide_device, out: *mut *mut oxide_stream) -> oxide_status;
    /// Destroy a stream (the default stream: nothing happens).
    fn oxide_stream_destroy(s: *mut oxide_stream);
    /// Wait until everything queued on the stream has run.
    fn oxide_stream_synchronize(s: *mut oxide_stream) -> oxide_status;
    /// `*done` = 1 when all work queued so far has completed.
    fn oxide_stream_query(s: *mut oxide_stream, done: *mut c_int) -> oxide_status;
    /// Later work on `s` waits for `e`.
    fn oxide_stream_wait_event(s: *mut oxide_stream, e: *mut oxide_event) -> oxide_status;
    /// Run `f(user, status)` once when the work queued on `s` so far has completed.
    fn oxide_stream_add_callback(s: *mut oxide_stream, f: oxide_stream_callback, user: *mut c_void) -> oxide_status;
    /// Record the work queued on `s` from now on into a graph instead of running it.
    fn oxide_stream_begin_capture(s: *mut oxide_stream) -> oxide_status;
    /// End the capture: the recorded work as an executable graph.
    fn oxide_stream_end_capture(s: *mut oxide_stream, out: *mut *mut oxide_graph) -> oxide_status;
    /// Queue one replay of the graph on `s`.
    fn oxide_graph_launch(g: *mut oxide_graph, s: *mut oxide_stream) -> oxide_status;
    /// Destroy a graph (NULL is ignored).
    fn oxide_graph_destroy(g: *mut oxide_graph);
    /// A new event.
    fn oxide_event_create(dev: *mut oxide_device, flags: c_uint, out: *mut *mut oxide_event) -> oxide_status;
    /// Destroy an event.
    fn oxide_event_destroy(e: *mut oxide_event);
    /// Record `e` on `s`.
    fn oxide_event_record(e: *mut oxide_event, s: *mut oxide_stream) -> oxide_status;
    /// Wait for the event's work.
    fn oxide_event_synchronize(e: *mut oxide_event) -> oxide_status;
    /// `*done` = 1 when the event's work has completed.
    fn oxide_event_query(e: *mut oxide_event, done: *mut c_int) -> oxide_status;
    /// Milliseconds between two recorded, completed events.
    fn oxide_event_elapsed_ms(start: *mut oxide_event, end: *mut oxide_event, ms: *mut f32) -> oxide_status;

    /// Device memory of `bytes` (>= 1) bytes.
    fn oxide_buffer_alloc(dev: *mut oxide_device, bytes: usize, out: *mut *mut oxide_buffer) -> oxide_status;
    /// Free device memory (NULL is ignored).
    fn oxide_buffer_free(b: *mut oxide_buffer);
    /// The buffer's device address.
    fn oxide_buffer_ptr(b: *const oxide_buffer) -> u64;
    /// Page-locked host memory of `bytes` bytes.
    fn oxide_host_alloc(dev: *mut oxide_device, bytes: usize, out: *mut *mut c_void) -> oxide_status;
    /// Free memory from `oxide_host_alloc` (NULL is ignored).
    fn oxide_host_free(ptr: *mut c_void) -> oxide_status;
    /// Queue a host-to-device copy.
    fn oxide_memcpy_htod_async(s: *mut oxide_stream, dst: u64, src: *const c_void, bytes: usize) -> oxide_status;
    /// Queue a device-to-host copy.
    fn oxide_memcpy_dtoh_async(s: *mut oxide_stream, dst: *mut c_void, src: u64, bytes: usize) -> oxide_status;
    /// Queue a device-to-device copy.
    fn oxide_memcpy_dtod_async(s: *mut oxide_stream, dst: u64, src: u64, bytes: usize) -> oxide_status;
    /// Queue setting `count` elements of `elem` (1, 2 or 4) bytes to the low bytes of `value`.
    fn oxide_memset_async(s: *mut oxide_stream, dst: u64, value: u32, count: usize, elem: c_uint) -> oxide_status;

    /// Load PTX text (with or without an oxide manifest) on a device.
    fn oxide_loaded_module_load_ptx(
        dev: *mut oxide_device,
        ptx: *const c_char,
        len: usize,
        out: *mut *mut oxide_loaded_module,
    ) -> oxide_status;
    /// Unload a module.
    fn oxide_loaded_module_destroy(m: *mut oxide_loaded_module);
    /// A kernel of a loaded module, by manifest name or entry name.
    fn oxide_loaded_module_get_kernel(m: *mut oxide_loaded_module, name: *const c_char, out: *mut *mut oxide_kernel)
        -> oxide_status;
    /// Launch with parameters laid out as the PTX entry's (`params[i]` points at parameter i).
    fn oxide_kernel_launch_raw(
        k: *mut oxide_kernel,
        s: *mut oxide_stream,
        cfg: *const oxide_launch_config,
        params: *mut *mut c_void,
    ) -> oxide_status;
    /// Launch with arguments checked against the kernel's manifest (and laid out as its PTX
    /// parameters by liboxide, with what the lowering added to them, such as a TMA descriptor).
    fn oxide_kernel_launch_ex(
        k: *mut oxide_kernel,
        s: *mut oxide_stream,
        cfg: *const oxide_launch_config,
        args: *const oxide_arg,
        nargs: usize,
    ) -> oxide_status;
    /// Check a launch shape against a loaded kernel's contract, the device's and its own limits.
    fn oxide_kernel_check_launch(k: *mut oxide_kernel, cfg: *const oxide_launch_config) -> oxide_status;
    /// Check a launch shape against a launch contract and the device's limits, without launching.
    fn oxide_launch_contract_check(
        dev: *mut oxide_device,
        kernel: *const c_char,
        contract: *const oxide_launch_contract,
        cfg: *const oxide_launch_config,
    ) -> oxide_status;

    /// The device's index (0-based).
    fn oxide_device_index(dev: *const oxide_device, index: *mut c_int) -> oxide_status;
    /// Whether kernels on `dev` can use `peer`'s memory once peer access is enabled.
    fn oxide_device_can_access_peer(dev: *const oxide_device, peer: *const oxide_device, can: *mut c_int)
        -> oxide_status;
    /// Let kernels on `dev` use `peer`'s memory (one direction).
    fn oxide_device_enable_peer_access(dev: *mut oxide_device, peer: *mut oxide_device) -> oxide_status;
    /// Whether oxide enabled `dev`'s access to `peer`.
    fn oxide_device_peer_access_enabled(dev: *const oxide_device, peer: *const oxide_device, enabled: *mut c_int)
        -> oxide_status;
    /// Queue a copy from `src` on `src_dev` to `dst` on `dst_dev` (the stream: either device's).
    fn oxide_memcpy_peer_async(
        s: *mut oxide_stream,
        dst_dev: *mut oxide_device,
        dst: u64,
        src_dev: *mut oxide_device,
        src: u64,
        bytes: usize,
    ) -> oxide_status;
}
