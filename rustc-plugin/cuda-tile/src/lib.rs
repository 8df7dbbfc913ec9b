//! oxide's Tile track in Rust: what one program instance does to whole tiles.
//!
//! A `#[tile_kernel]` (inside a `#[cuda_module]`) is written with [`Tile`] values and
//! [`Tensor`] / [`TensorMut`] parameters and never names a thread. It is compiled like a SIMT
//! kernel, from the bitcode of the normal host build, but liboxide does not run the Rust code on
//! the GPU: lib/import_tile.c lifts the calls of this crate's intrinsics into oxide's tile IR
//! (docs/tile.md), and the tile compiler makes the kernel. So the methods here have host stubs
//! that never run, and the shapes are const generics: a matmul of mismatched tiles, or a tile
//! dim that is not a power of two, is a compile error.
//!
//! ```ignore
//! #[tile_kernel(warps = 4)]
//! pub fn matmul(a: Tensor<bf16, 2>, b: Tensor<bf16, 2>, mut c: TensorMut<bf16, 2>) {
//!     let (om, on) = (program_id(0) * 64, program_id(1) * 64);
//!     let mut acc = Tile::<f32, 64, 64>::zeros();
//!     let mut k = 0;
//!     while k < a.shape(1) {
//!         acc = dot(Tile::<bf16, 64, 32>::load(&a, [om, k]), Tile::<bf16, 32, 64>::load(&b, [k, on]), acc);
//!         k += 32;
//!     }
//!     c.store([om, on], acc.cast());
//! }
//! ```
#![no_std]
#![warn(missing_docs)]

use core::marker::PhantomData;

pub use cuda_macros::tile_kernel;

#[rustfmt::skip]
#[doc(hidden)]
pub mod intrinsics;
mod ops;
mod tile;

use cuda_device::abi::*;
use intrinsics::*;

pub use ops::*;
pub use tile::{Tile, Tile1, Tile3};

macro_rules! float8 {
    ($($(#[$m:meta])* $name:ident),*) => {$(
        $(#[$m])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(transparent)]
        pub struct $name(pub u8);
    )*};
}
float8!(
    /// fp8 with 4 exponent and 3 mantissa bits (max 448, no infinity): tile and tensor elements only
    f8e4m3,
    /// fp8 with 5 exponent and 2 mantissa bits (max 57344, infinities): tile and tensor elements only
    f8e5m2
);

/// bfloat16 (8 exponent, 7 mantissa bits), as its bits.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct bf16(pub u16);

/// IEEE half precision, as its bits.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct f16(pub u16);

impl bf16 {
    /// The nearest bf16 (round to nearest even; NaN stays NaN).
    pub fn from_f32(x: f32) -> Self {
        let b = x.to_bits();
        if x.is_nan() {
            return bf16((b >> 16) as u16 | 0x40);
        }
        bf16(((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16)
    }
    /// The f32 of the same value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// 2^e for a normal f32 exponent (no_std has no powi).
const fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

impl f8e4m3 {
    /// The value of these bits (NaN for 0x7f and 0xff; no infinities).
    pub fn to_f32(self) -> f32 {
        let (s, e, m) = (self.0 >> 7, (self.0 >> 3) & 15, self.0 & 7);
        if e == 15 && m == 7 {
            return f32::NAN;
        }
        let v = if e == 0 { m as f32 / 8.0 * pow2(-6) } else { (1.0 + m as f32 / 8.0) * pow2(e as i32 - 7) };
        if s == 1 {
            -v
        } else {
            v
        }
    }
    /// The nearest e4m3 (ties to even), saturating at ±448; NaN stays NaN.
    pub fn from_f32(x: f32) -> Self {
        nearest(x, |b| f8e4m3(b).to_f32(), 0x7f)
    }
}

impl f8e5m2 {
    /// The value of these bits (infinities and NaNs as IEEE).
    pub fn to_f32(self) -> f32 {
        let (s, e, m) = (self.0 >> 7, (self.0 >> 2) & 31, self.0 & 3);
        let v = match (e, m) {
            (31, 0) => f32::INFINITY,
            (31, _) => f32::NAN,
            (0, _) => m as f32 / 4.0 * pow2(-14),
            _ => (1.0 + m as f32 / 4.0) * pow2(e as i32 - 15),
        };
        if s == 1 {
            -v
        } else {
            v
        }
    }
    /// The nearest e5m2 (ties to even), saturating at ±57344; NaN stays NaN.
    pub fn from_f32(x: f32) -> Self {
        nearest(x, |b| f8e5m2(b).to_f32(), 0x7f)
    }
}

/// The finite fp8 code nearest x among the 256 (ties to the even code), NaN's code for NaN:
/// host-side conversion for preparing inputs, not fast.
fn nearest<T: From<u8>>(x: f32, value: impl Fn(u8) -> f32, nan: u8) -> T {
    if x.is_nan() {
        return T::from(nan);
    }
    let mut best = 0u8;
    for b in 0..=255u8 {
        let (v, w) = (value(b), value(best));
        if !v.is_finite() {
            continue;
        }
        let (dv, dw) = ((v - x).abs(), (w - x).abs());
        if dv < dw || (dv == dw && b & 1 == 0 && best & 1 == 1) {
            best = b;
        }
    }
    T::from(best)
}

impl From<u8> for f8e4m3 {
    fn from(b: u8) -> Self {
        f8e4m3(b)
    }
}

impl From<u8> for f8e5m2 {
    fn from(b: u8) -> Self {
        f8e5m2(b)
    }
}

/// An element of tiles and tensors: its oxide_scalar code (lib/scalars.def).
pub trait Element: Copy + 'static {
    /// The oxide_scalar code (`bool` is the IR's `i1`).
    const CODE: u32;
    /// Whether it is a float (elementwise `/` is `fdiv`, comparisons `fcmp`).
    const FLOAT: bool;
}

macro_rules! elements {
    ($($t:ty => $code:expr, $float:expr);* $(;)?) => {$(
        impl Element for $t {
            const CODE: u32 = $code;
            const FLOAT: bool = $float;
        }
    )*};
}
elements! {
    f32 => OXIDE_SCALAR_F32, true; bf16 => OXIDE_SCALAR_BF16, true; f16 => OXIDE_SCALAR_F16, true;
    f8e4m3 => OXIDE_SCALAR_F8E4M3, true; f8e5m2 => OXIDE_SCALAR_F8E5M2, true; i32 => OXIDE_SCALAR_I32, false;
    i64 => OXIDE_SCALAR_I64, false; i8 => OXIDE_SCALAR_I8, false; bool => OXIDE_SCALAR_BOOL, false;
}

/// The u64 a tile type travels as in the intrinsics (lib/import_tile.c reads it back):
/// element code, rank, then each dim in 17 bits. Evaluated at compile time, so a dim that is
/// not a power of two from 1 to 65536 stops the build here.
#[doc(hidden)]
pub const fn tile_type(code: u32, dims: &[usize]) -> u64 {
    let mut ty = code as u64 | (dims.len() as u64) << 8;
    let mut i = 0;
    while i < dims.len() {
        assert!(dims[i].is_power_of_two() && dims[i] <= 65536, "every tile dim must be a power of two from 1 to 65536");
        ty |= (dims[i] as u64) << (10 + 17 * i);
        i += 1;
    }
    ty
}

/// A tensor parameter of a tile kernel, read only: a strided view of device memory of rank R
/// (1 to 4) whose shape and strides come with the launch.
pub struct Tensor<T: Element, const R: usize> {
    index: u32,
    _t: PhantomData<T>,
}

/// A tensor parameter the kernel writes (`tensor<mut ...>`).
pub struct TensorMut<T: Element, const R: usize> {
    index: u32,
    _t: PhantomData<T>,
}

macro_rules! tensor_common {
    ($t:ident) => {
        impl<T: Element, const R: usize> $t<T, R> {
            #[doc(hidden)]
            pub const fn __param(index: u32) -> Self {
                assert!(R >= 1 && R <= 4, "a tensor has rank 1 to 4");
                $t { index, _t: PhantomData }
            }
            #[doc(hidden)]
            pub fn __index(&self) -> u32 {
                self.index
            }
            /// The size of dim `axis` (`tile.dim`).
            pub fn dim(&self, axis: u32) -> i64 {
                __oxide_tile_dim(self.index, axis)
            }
            /// The size of dim `axis` as an i32 (dims past 2^31 - 1 are not supported).
            pub fn shape(&self, axis: u32) -> i32 {
                self.dim(axis) as i32
            }
        }
    };
}
tensor_common!(Tensor);
tensor_common!(TensorMut);

/// Host-side helpers for programs that check tile kernels against a CPU reference.
pub mod host {
    /// `n` values in [lo, hi), never zero, from `seed` (xorshift): the same on every run.
    pub fn sample(n: usize, seed: u64, lo: f32, hi: f32) -> impl Iterator<Item = f32> {
        let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
        (0..n).map(move |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = lo + (s >> 40) as f32 / (1u64 << 24) as f32 * (hi - lo);
            if v.abs() < 1e-3 {
                (lo + hi) / 2.0 + 0.5
            } else {
                v
            }
        })
    }
}

/// The program's index on grid axis `axis` (0, 1 or 2).
pub fn program_id(axis: u32) -> i32 {
    __oxide_tile_program_id(axis)
}

/// The grid's size on axis `axis`.
pub fn num_programs(axis: u32) -> i32 {
    __oxide_tile_num_programs(axis)
}

/// Implementation details of `#[tile_kernel]`; lib/import_tile.c reads these layouts.
#[doc(hidden)]
pub mod __private {
    pub use core::any::TypeId;

    /// One tile kernel instance, referenced by the `__oxide_tile_kernel_tag` call in its entry.
    #[repr(C)]
    pub struct TileKernelDesc {
        pub tid: TypeId,
        pub name_ptr: *const u8,
        pub name_len: usize,
        pub generic: u32,
        pub nparams: u32,
        pub params: &'static [TileParamDesc],
        pub warps: u32,
        /// 0 (the layout is 64 bytes)
        pub reserved: u32,
    }
    unsafe impl Sync for TileKernelDesc {}

    /// kind: OXIDE_PARAM_SCALAR or OXIDE_PARAM_TENSOR; elem: the oxide_scalar code.
    #[repr(C)]
    pub struct TileParamDesc {
        pub name_ptr: *const u8,
        pub name_len: usize,
        pub kind: u32,
        pub elem: u32,
        pub rank: u32,
        pub mutable: u32,
    }
    unsafe impl Sync for TileParamDesc {}

    /// Stands for a `const B: bool` of a generic tile kernel in the type that names its instance.
    pub struct Flag<const B: bool>;

    /// A scalar parameter type of a tile kernel and its oxide_scalar code.
    pub trait ScalarParam: Copy + 'static {
        const CODE: u32;
    }
    macro_rules! scalar_params {
        ($($t:ty => $c:ident),*) => {$(impl ScalarParam for $t { const CODE: u32 = cuda_device::abi::$c; })*};
    }
    scalar_params!(i32 => OXIDE_SCALAR_I32, i64 => OXIDE_SCALAR_I64, u32 => OXIDE_SCALAR_U32,
                   u64 => OXIDE_SCALAR_U64, f32 => OXIDE_SCALAR_F32);
}
