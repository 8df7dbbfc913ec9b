//! A dot whose K is 8: the shapes agree (const generics check that), but tile.dot needs M, N and
//! K of at least 16, a rule of the tile IR. Refused at build time, naming the kernel and line.
include!("../../refused_tile_kernel.rs");

refused_tile_kernel! { |x, y, n| {
    let a = Tile::<f32, 16, 8>::load(&x, [n, 0]).cast::<cuda_tile::bf16>();
    let b = Tile::<f32, 8, 16>::load(&x, [0, n]).cast::<cuda_tile::bf16>();
    y.store([0, 0], cuda_tile::dot(a, b, Tile::zeros()));
} }
