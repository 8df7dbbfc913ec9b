//! The tile ops that are not loads and stores: `dot`, elementwise arithmetic (operators and
//! methods), comparisons and `select`, and rank-1 reductions to a scalar.
use core::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Rem, Sub};

use crate::intrinsics::*;
use crate::tile::TileValue;
use crate::{Element, Tile, Tile1, Tile3};

/// The elements `Tile::splat` takes at run time.
pub trait Splat: Element {
    #[doc(hidden)]
    fn splat(v: Self, ty: u64) -> u32;
}
impl Splat for f32 {
    fn splat(v: f32, ty: u64) -> u32 {
        __oxide_tile_splat_f32(v, ty)
    }
}
impl Splat for i32 {
    fn splat(v: i32, ty: u64) -> u32 {
        __oxide_tile_splat_i32(v, ty)
    }
}
impl Splat for i64 {
    fn splat(v: i64, ty: u64) -> u32 {
        __oxide_tile_splat_i64(v, ty)
    }
}

/// The elements of `dot` operands: bf16, f16 and fp8 (any mix of e4m3 and e5m2, sm_89+).
pub trait DotElement: Element {}
impl DotElement for crate::bf16 {}
impl DotElement for crate::f16 {}
impl DotElement for crate::f8e4m3 {}
impl DotElement for crate::f8e5m2 {}

/// `acc + a·b` (`tile.dot`): M, N and K must be at least 16; the accumulator is f32.
pub fn dot<A: DotElement, B: DotElement, const M: usize, const K: usize, const N: usize>(
    a: Tile<A, M, K>,
    b: Tile<B, K, N>,
    acc: Tile<f32, M, N>,
) -> Tile<f32, M, N> {
    Tile::from_handle(__oxide_tile_dot(a.handle(), b.handle(), acc.handle(), <Tile<f32, M, N>>::TY))
}

/// The batched `dot`: `[B, M, K] x [B, K, N] + [B, M, N]`.
pub fn dot3<A: DotElement, B2: DotElement, const B: usize, const M: usize, const K: usize, const N: usize>(
    a: Tile3<A, B, M, K>,
    b: Tile3<B2, B, K, N>,
    acc: Tile3<f32, B, M, N>,
) -> Tile3<f32, B, M, N> {
    Tile3::from_handle(__oxide_tile_dot(a.handle(), b.handle(), acc.handle(), <Tile3<f32, B, M, N>>::TY))
}

/// `c ? a : b` per element (`select`, `c` a bool tile of the same shape).
pub fn select<X: TileValue>(c: X::With<bool>, a: X, b: X) -> X {
    X::from_handle(__oxide_tile_select(c.handle(), a.handle(), b.handle()))
}

/// Comparison predicates (oxide_pred codes of `icmp`/`fcmp`: signed for integers, ordered for floats).
#[derive(Clone, Copy)]
#[repr(u32)]
pub enum Cmp {
    /// ==
    Eq = 0,
    /// !=
    Ne = 1,
    /// <
    Lt = 2,
    /// <=
    Le = 3,
    /// >
    Gt = 4,
    /// >=
    Ge = 5,
}

const fn pred(c: Cmp, float: bool) -> u32 {
    // fcmp's ordered predicates follow icmp's signed ones in oxide_pred: oeq = 10 .. oge = 15
    if float {
        10 + c as u32
    } else {
        c as u32
    }
}

/// The elementwise ops every tile type has.
pub trait Elementwise: TileValue {
    /// `self OP other` per element, a bool tile (`icmp` signed / `fcmp` ordered).
    fn cmp(self, c: Cmp, other: Self) -> Self::With<bool> {
        let p = pred(c, Self::Elem::FLOAT);
        let h = if Self::Elem::FLOAT {
            __oxide_tile_fcmp(self.handle(), other.handle(), p)
        } else {
            __oxide_tile_icmp(self.handle(), other.handle(), p)
        };
        <Self::With<bool>>::from_handle(h)
    }
    /// The larger of the two per element (`fmax` / `smax`).
    fn max(self, other: Self) -> Self {
        let f = if Self::Elem::FLOAT { __oxide_tile_fmax } else { __oxide_tile_smax };
        Self::from_handle(f(self.handle(), other.handle()))
    }
    /// The smaller of the two per element (`fmin` / `smin`).
    fn min(self, other: Self) -> Self {
        let f = if Self::Elem::FLOAT { __oxide_tile_fmin } else { __oxide_tile_smin };
        Self::from_handle(f(self.handle(), other.handle()))
    }
    /// `self * b + c` per element, rounded once (`fma`).
    fn mul_add(self, b: Self, c: Self) -> Self {
        Self::from_handle(__oxide_tile_fma(self.handle(), b.handle(), c.handle()))
    }
    /// `self` to the power `b` per element (`pow`).
    fn powf(self, b: Self) -> Self {
        Self::from_handle(__oxide_tile_pow(self.handle(), b.handle()))
    }
    /// The absolute value (`fabs` / `iabs`).
    fn abs(self) -> Self {
        let f = if Self::Elem::FLOAT { __oxide_tile_fabs } else { __oxide_tile_iabs };
        Self::from_handle(f(self.handle()))
    }
}

macro_rules! unary {
    ($($(#[$m:meta])* $name:ident => $stub:ident),* $(,)?) => {
        /// Elementwise math on float tiles (the IR's math rows).
        pub trait FloatMath: TileValue {
            $($(#[$m])* fn $name(self) -> Self { Self::from_handle($stub(self.handle())) })*
        }
    };
}
unary!(
    /// `sqrt`
    sqrt => __oxide_tile_sqrt,
    /// `rsqrt`: 1 / sqrt
    rsqrt => __oxide_tile_rsqrt,
    /// `exp`
    exp => __oxide_tile_exp,
    /// `exp2`
    exp2 => __oxide_tile_exp2,
    /// `log` (natural)
    ln => __oxide_tile_log,
    /// `log2`
    log2 => __oxide_tile_log2,
    /// `tanh`
    tanh => __oxide_tile_tanh,
    /// `erf`
    erf => __oxide_tile_erf,
    /// `floor`
    floor => __oxide_tile_floor,
    /// `ceil`
    ceil => __oxide_tile_ceil,
);

macro_rules! operators {
    ($name:ident [$($d:ident),*]) => {
        impl<T: Element, $(const $d: usize),*> Elementwise for $name<T, $($d),*> {}
        impl<T: Element, $(const $d: usize),*> FloatMath for $name<T, $($d),*> {}
        operators!(@bin $name [$($d),*] Add add __oxide_tile_add __oxide_tile_add);
        operators!(@bin $name [$($d),*] Sub sub __oxide_tile_sub __oxide_tile_sub);
        operators!(@bin $name [$($d),*] Mul mul __oxide_tile_mul __oxide_tile_mul);
        operators!(@bin $name [$($d),*] Div div __oxide_tile_fdiv __oxide_tile_sdiv);
        operators!(@bin $name [$($d),*] Rem rem __oxide_tile_srem __oxide_tile_srem);
        operators!(@bin $name [$($d),*] BitAnd bitand __oxide_tile_and __oxide_tile_and);
        operators!(@bin $name [$($d),*] BitOr bitor __oxide_tile_or __oxide_tile_or);
        operators!(@bin $name [$($d),*] BitXor bitxor __oxide_tile_xor __oxide_tile_xor);
        impl<T: Element, $(const $d: usize),*> Neg for $name<T, $($d),*> {
            type Output = Self;
            fn neg(self) -> Self {
                Self::from_handle(__oxide_tile_neg(self.handle()))
            }
        }
    };
    (@bin $name:ident [$($d:ident),*] $tr:ident $m:ident $float:ident $int:ident) => {
        impl<T: Element, $(const $d: usize),*> $tr for $name<T, $($d),*> {
            type Output = Self;
            fn $m(self, o: Self) -> Self {
                let f = if T::FLOAT { $float } else { $int };
                Self::from_handle(f(self.handle(), o.handle()))
            }
        }
    };
}
operators!(Tile1[N]);
operators!(Tile [M, N]);
operators!(Tile3 [B, M, N]);

impl<const N: usize> Tile1<f32, N> {
    /// The sum of all elements, a scalar (`tile.reduce` of a rank-1 tile).
    pub fn sum(self) -> f32 {
        __oxide_tile_reduce_f32(self.handle(), 0)
    }
    /// The largest element (NaN propagates).
    pub fn max_value(self) -> f32 {
        __oxide_tile_reduce_f32(self.handle(), 1)
    }
}

impl<const N: usize> Tile1<i32, N> {
    /// The sum of all elements, a scalar.
    pub fn sum(self) -> i32 {
        __oxide_tile_reduce_i32(self.handle(), 0)
    }
}
