//! A tile kept in an array indexed at run time: the array lives in memory, and tiles exist only
//! as values of the tile IR. Refused: "a tile stored to memory".
include!("../../refused_tile_kernel.rs");

refused_tile_kernel! { |x, y, n| {
    let mut tiles = [Tile::<f32, 16, 16>::zeros(); 8];
    let mut i = 0;
    while i < 8 {
        tiles[i as usize] = Tile::<f32, 16, 16>::load(&x, [i * 16, 0]);
        i += 1;
    }
    y.store([0, 0], tiles[(n & 7) as usize]);
} }
