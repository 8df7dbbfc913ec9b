//! `Tile::full` of a value computed at run time: full takes a constant (an attribute of the IR).
//! Refused naming this file and line, saying to use Tile::splat. The kernel is written out (not
//! through refused_tile_kernel!) so that the line is this file's; the host side is shared.
include!("../../refused_tile_kernel.rs");

#[cuda_module]
mod kernels {
    use cuda_tile::{tile_kernel, Tensor, TensorMut, Tile};

    #[tile_kernel]
    pub fn bad_tile(x: Tensor<f32, 2>, mut y: TensorMut<f32, 2>, n: i32) {
        let t = Tile::<f32, 16, 16>::load(&x, [0, 0]);
        let scale = Tile::<f32, 16, 16>::full(n as f64); // refused: n is not a constant
        y.store([0, 0], t * scale);
    }
}

refused_tile_host! {}
