//! The tile types: `Tile1<T, N>`, `Tile<T, M, N>`, `Tile3<T, B, M, N>`. A tile is a value of the
//! tile IR (an SSA value once lifted); on the host it is only a handle that the stubs pass along.
use core::marker::PhantomData;

use crate::intrinsics::*;
use crate::{tile_type, Element, Tensor, TensorMut};

/// What every tile type has: its handle and its type word.
pub trait TileValue: Copy {
    /// The element.
    type Elem: Element;
    /// The same shape with another element.
    type With<U: Element>: TileValue<Elem = U>;
    /// The type word (`tile_type`).
    const TY: u64;
    #[doc(hidden)]
    fn handle(self) -> u32;
    #[doc(hidden)]
    fn from_handle(h: u32) -> Self;
}

macro_rules! tile_struct {
    ($(#[$m:meta])* $name:ident [$($d:ident),*]) => {
        $(#[$m])*
        #[derive(Clone, Copy)]
        #[must_use]
        pub struct $name<T: Element, $(const $d: usize),*> {
            h: u32,
            _t: PhantomData<T>,
        }

        impl<T: Element, $(const $d: usize),*> TileValue for $name<T, $($d),*> {
            type Elem = T;
            type With<U: Element> = $name<U, $($d),*>;
            const TY: u64 = tile_type(T::CODE, &[$($d),*]);
            fn handle(self) -> u32 {
                self.h
            }
            fn from_handle(h: u32) -> Self {
                $name { h, _t: PhantomData }
            }
        }

        impl<T: Element, $(const $d: usize),*> $name<T, $($d),*> {
            /// Every element `value` (`tile.full`): a constant, converted to the element type.
            pub fn full(value: f64) -> Self {
                Self::from_handle(__oxide_tile_full(value, Self::TY))
            }
            /// Every element zero.
            pub fn zeros() -> Self {
                Self::full(0.0)
            }
            /// Every element a value computed at run time (`tile.splat`).
            pub fn splat(v: T) -> Self
            where
                T: crate::ops::Splat,
            {
                Self::from_handle(T::splat(v, Self::TY))
            }
            /// The same values as another element type (`tile.cast`).
            pub fn cast<U: Element>(self) -> $name<U, $($d),*> {
                $name::<U, $($d),*>::from_handle(__oxide_tile_cast(self.h, <$name<U, $($d),*>>::TY))
            }
            /// Any tile of the same element count, row-major order kept (`tile.reshape`).
            pub fn reshape<S: TileValue<Elem = T>>(self) -> S {
                S::from_handle(__oxide_tile_reshape(self.h, S::TY))
            }
            /// Dims of size 1 stretched to the target's (`tile.broadcast`; the same rank).
            pub fn broadcast<S: TileValue<Elem = T>>(self) -> S {
                S::from_handle(__oxide_tile_broadcast(self.h, S::TY))
            }
        }
    };
}

tile_struct!(
    /// A rank-1 tile of N elements.
    Tile1 [N]
);
tile_struct!(
    /// A rank-2 tile of M x N elements, row-major.
    Tile [M, N]
);
tile_struct!(
    /// A rank-3 tile of B x M x N elements (batched).
    Tile3 [B, M, N]
);

impl<T: Element, const N: usize> Tile1<T, N> {
    /// Elements `[o .. o + N)` of a rank-1 tensor, 0 outside it (`tile.load`).
    pub fn load(t: &Tensor<T, 1>, o: [i32; 1]) -> Self {
        Self::load_pad(t, o, 0.0)
    }
    /// As `load`, with `pad` outside the tensor (`f64::NEG_INFINITY` allowed for floats).
    pub fn load_pad(t: &Tensor<T, 1>, o: [i32; 1], pad: f64) -> Self {
        Self::from_handle(__oxide_tile_load_1d(t.__index(), o[0], pad, Self::TY))
    }
    /// `0, 1, .., N-1` (`tile.arange`; i32 tiles).
    pub fn arange() -> Self {
        Self::from_handle(__oxide_tile_arange(Self::TY))
    }
    /// A size-1 dim inserted at 1: `[N] -> [N, 1]` (`tile.expand_dims`).
    pub fn column(self) -> Tile<T, N, 1> {
        Tile::from_handle(__oxide_tile_expand_dims(self.h, 1, <Tile<T, N, 1>>::TY))
    }
    /// A size-1 dim inserted at 0: `[N] -> [1, N]`.
    pub fn row(self) -> Tile<T, 1, N> {
        Tile::from_handle(__oxide_tile_expand_dims(self.h, 0, <Tile<T, 1, N>>::TY))
    }
    /// M rows, each this tile: `[N] -> [M, N]`, Python's `x[None, :]` broadcast (`row` then
    /// `broadcast`). M is usually inferred from the tile it meets.
    pub fn repeat_rows<const M: usize>(self) -> Tile<T, M, N> {
        self.row().broadcast()
    }
    /// M columns, each this tile: `[N] -> [N, M]`, Python's `x[:, None]` broadcast (`column` then
    /// `broadcast`): a per-row value (a row max, a row sum) against a whole tile.
    pub fn repeat_cols<const M: usize>(self) -> Tile<T, N, M> {
        self.column().broadcast()
    }
}

impl<T: Element, const M: usize, const N: usize> Tile<T, M, N> {
    /// The M x N window of a rank-2 tensor at `o`, 0 outside it (`tile.load`).
    pub fn load(t: &Tensor<T, 2>, o: [i32; 2]) -> Self {
        Self::load_pad(t, o, 0.0)
    }
    /// As `load`, with `pad` outside the tensor (`f64::NEG_INFINITY` allowed for floats).
    pub fn load_pad(t: &Tensor<T, 2>, o: [i32; 2], pad: f64) -> Self {
        Self::from_handle(__oxide_tile_load_2d(t.__index(), o[0], o[1], pad, Self::TY))
    }
    /// The transpose (`tile.permute` [1, 0]).
    pub fn t(self) -> Tile<T, N, M> {
        Tile::from_handle(__oxide_tile_permute(self.h, 0x01, <Tile<T, N, M>>::TY))
    }
    fn reduce<const K: usize>(self, axis: u32, kind: u32) -> Tile1<T, K> {
        Tile1::from_handle(__oxide_tile_reduce(self.h, axis, kind, <Tile1<T, K>>::TY))
    }
    /// Each row's sum (over dim 1): `[M, N] -> [M]` (f16/bf16 sum in f32, as the IR does).
    pub fn sum_rows(self) -> Tile1<T, M> {
        self.reduce(1, 0)
    }
    /// Each row's maximum (NaN propagates).
    pub fn max_rows(self) -> Tile1<T, M> {
        self.reduce(1, 1)
    }
    /// Each row's minimum.
    pub fn min_rows(self) -> Tile1<T, M> {
        self.reduce(1, 2)
    }
    /// Each column's sum (over dim 0): `[M, N] -> [N]`.
    pub fn sum_cols(self) -> Tile1<T, N> {
        self.reduce(0, 0)
    }
    /// Each column's maximum.
    pub fn max_cols(self) -> Tile1<T, N> {
        self.reduce(0, 1)
    }
    /// Each column's minimum.
    pub fn min_cols(self) -> Tile1<T, N> {
        self.reduce(0, 2)
    }
}

impl<T: Element, const B: usize, const M: usize, const N: usize> Tile3<T, B, M, N> {
    /// The B x M x N window of a rank-3 tensor at `o`, 0 outside it (`tile.load`).
    pub fn load(t: &Tensor<T, 3>, o: [i32; 3]) -> Self {
        Self::load_pad(t, o, 0.0)
    }
    /// As `load`, with `pad` outside the tensor.
    pub fn load_pad(t: &Tensor<T, 3>, o: [i32; 3], pad: f64) -> Self {
        Self::from_handle(__oxide_tile_load_3d(t.__index(), o[0], o[1], o[2], pad, Self::TY))
    }
}

impl<T: Element> TensorMut<T, 1> {
    /// Writes the in-bounds elements of `x` at `o` (`tile.store`).
    pub fn store<const N: usize>(&mut self, o: [i32; 1], x: Tile1<T, N>) {
        __oxide_tile_store_1d(self.__index(), o[0], x.handle())
    }
    /// Adds `x` to the in-bounds elements at `o`, atomically per element (f32 or i32).
    pub fn atomic_add<const N: usize>(&mut self, o: [i32; 1], x: Tile1<T, N>) {
        __oxide_tile_atomic_add_1d(self.__index(), o[0], x.handle())
    }
}

impl<T: Element> TensorMut<T, 2> {
    /// Writes the in-bounds elements of `x` at `o` (`tile.store`).
    pub fn store<const M: usize, const N: usize>(&mut self, o: [i32; 2], x: Tile<T, M, N>) {
        __oxide_tile_store_2d(self.__index(), o[0], o[1], x.handle())
    }
    /// Adds `x` to the in-bounds elements at `o`, atomically per element (f32 or i32).
    pub fn atomic_add<const M: usize, const N: usize>(&mut self, o: [i32; 2], x: Tile<T, M, N>) {
        __oxide_tile_atomic_add_2d(self.__index(), o[0], o[1], x.handle())
    }
    /// The same tensor, read (`tile.load` of a `mut` tensor).
    pub fn as_input(&self) -> Tensor<T, 2> {
        Tensor::__param(self.__index())
    }
}

impl<T: Element> TensorMut<T, 3> {
    /// Writes the in-bounds elements of `x` at `o` (`tile.store`).
    pub fn store<const B: usize, const M: usize, const N: usize>(&mut self, o: [i32; 3], x: Tile3<T, B, M, N>) {
        __oxide_tile_store_3d(self.__index(), o[0], o[1], o[2], x.handle())
    }
}
