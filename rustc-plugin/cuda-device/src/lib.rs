//! oxide's device API: what `#[kernel]` functions use on the GPU.
//!
//! Kernels are ordinary Rust compiled by the stable toolchain for the host; liboxide takes the
//! bitcode of that compile and makes PTX from it (docs/rust.md). The names follow cuda-oxide so
//! that its users' code ports: `thread::index_1d()`, `DisjointSlice`, `SharedArray`,
//! `thread::sync_threads()`, `atomic::DeviceAtomicU32`, `warp::shuffle_xor`, `cluster::block_rank`,
//! `gpu_printf!`.
#![no_std]
#![warn(missing_docs)]
#![allow(non_snake_case)]

pub use cuda_macros::{cluster_launch, cuda_module, device, kernel, launch_bounds, launch_contract};

pub mod abi;
pub mod atomic;
pub mod cluster;
mod disjoint;
pub mod hopper;
pub mod tma;
pub mod wgmma;
#[rustfmt::skip]
pub mod intrinsics;
pub mod math;
pub mod printf;
mod shared;
pub mod thread;
pub mod warp;

pub use disjoint::DisjointSlice;
pub use shared::{DynamicSharedArray, SharedArray};
pub use thread::{ThreadIndex, ThreadIndex2D};

/// Implementation details used by the code that `#[kernel]` and `#[cuda_module]` generate.
/// The layouts here are read by liboxide's importer (lib/import.c): change both together.
#[doc(hidden)]
pub mod __private {
    use crate::abi::*;
    pub use core::any::TypeId;

    pub const KIND_SCALAR: u32 = OXIDE_PARAM_SCALAR;
    pub const KIND_SLICE: u32 = OXIDE_PARAM_SLICE;
    pub const KIND_PTR: u32 = OXIDE_PARAM_PTR;
    pub const KIND_BYTES: u32 = OXIDE_PARAM_BYTES;
    /// A 128-byte TMA descriptor by value (`&TensorMap` parameter): grid_constant in PTX.
    pub const KIND_TMA_DESC: u32 = OXIDE_PARAM_TMA_DESC;

    /// One kernel instance, referenced by the `__oxide_kernel_tag` call in its entry.
    #[repr(C)]
    pub struct KernelDesc {
        pub tid: TypeId, /* identity of the instance: TypeId of its generic arguments */
        pub name_ptr: *const u8,
        pub name_len: usize,
        pub generic: u32,
        pub nparams: u32,
        pub params: &'static [ParamDesc],
        pub launch_bounds: [u32; 2],
        pub cluster: [u32; 3],
        pub dyn_smem: u32,
        /// `#[launch_contract]`: include/oxide.h's `oxide_launch_contract`, field for field
        /// (fields, domain, block[3], smem_min, smem_max, smem_align, min_cc[2]); all 0: none.
        pub contract: [u32; 10],
    }
    unsafe impl Sync for KernelDesc {}

    /// The `fields` bits of a launch contract (lib/contract.def, generated into `abi`).
    pub const CONTRACT_DOMAIN: u32 = OXIDE_CONTRACT_DOMAIN;
    pub const CONTRACT_BLOCK: u32 = OXIDE_CONTRACT_BLOCK;
    pub const CONTRACT_SMEM: u32 = OXIDE_CONTRACT_SMEM;
    pub const CONTRACT_SMEM_ALIGN: u32 = OXIDE_CONTRACT_SMEM_ALIGN;
    pub const CONTRACT_MIN_CC: u32 = OXIDE_CONTRACT_MIN_CC;

    #[repr(C)]
    pub struct ParamDesc {
        pub name_ptr: *const u8,
        pub name_len: usize,
        pub kind: u32,
        pub mutable: u32,
        pub size: u32,
        pub align: u32,
        pub elem: TypeId, /* scalar type, slice/pointer element type */
    }
    unsafe impl Sync for ParamDesc {}

    #[repr(C)]
    pub struct ScalarEntry {
        pub tid: TypeId,
        pub code: u32, /* oxide_scalar */
        pub size: u32,
    }

    macro_rules! scalars {
        ($($t:ty => $code:expr),* $(,)?) => {
            /// The interface scalar types (oxide_scalar codes), found by the importer by name.
            #[no_mangle]
            #[used]
            pub static __OXIDE_SCALAR_TYPES: [ScalarEntry; 0 $(+ { let _ = $code; 1 })*] = [
                $(ScalarEntry { tid: TypeId::of::<$t>(), code: $code, size: core::mem::size_of::<$t>() as u32 }),*
            ];
        };
    }
    scalars! {
        bool => OXIDE_SCALAR_BOOL, i8 => OXIDE_SCALAR_I8, i16 => OXIDE_SCALAR_I16, i32 => OXIDE_SCALAR_I32,
        i64 => OXIDE_SCALAR_I64, isize => OXIDE_SCALAR_I64, u8 => OXIDE_SCALAR_U8, u16 => OXIDE_SCALAR_U16,
        u32 => OXIDE_SCALAR_U32, u64 => OXIDE_SCALAR_U64, usize => OXIDE_SCALAR_U64, f32 => OXIDE_SCALAR_F32,
        f64 => OXIDE_SCALAR_F64,
        crate::atomic::DeviceAtomicU32 => OXIDE_SCALAR_U32, crate::atomic::DeviceAtomicI32 => OXIDE_SCALAR_I32,
        crate::atomic::DeviceAtomicU64 => OXIDE_SCALAR_U64, crate::atomic::DeviceAtomicI64 => OXIDE_SCALAR_I64,
        crate::atomic::DeviceAtomicF32 => OXIDE_SCALAR_F32, crate::atomic::DeviceAtomicF64 => OXIDE_SCALAR_F64,
    }

    /// Identity tag of a kernel instance: the two halves of a TypeId folded into one u64.
    /// The host computes it at run time, the importer from the descriptor's constant.
    pub fn instance_tag<M: 'static>() -> u64 {
        let t = TypeId::of::<M>();
        assert!(core::mem::size_of::<TypeId>() == 16);
        let w: [usize; 2] = unsafe { core::mem::transmute_copy(&t) };
        (w[0] as u64) ^ (w[1] as u64)
    }

    /// Marks a kernel entry. The importer finds these calls, reads `desc` and removes them.
    #[inline(always)]
    pub fn kernel_tag(desc: &'static KernelDesc) {
        crate::intrinsics::__oxide_kernel_tag(desc as *const KernelDesc as *const u8)
    }

    pub const fn bytes_size(size: usize) -> u32 {
        if size == 0 {
            1
        } else {
            size as u32
        }
    }
}
