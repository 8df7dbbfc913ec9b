//! `Tile::full` of a value computed at run time: full takes a constant (an attribute of the IR).
//! Refused naming this file and line, saying to use Tile::splat. Written out in full (not through
//! refused_tile_kernel.rs) so that the line is this file's.
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;

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

fn main() {
    let Some(ctx) = CudaContext::new_or_skip(0) else { return };
    let s = ctx.default_stream();
    let m = kernels::load(&ctx).unwrap();
    let dx = DeviceBuffer::from_host(&s, &[1.0f32; 256]).unwrap();
    let mut dy = DeviceBuffer::<f32>::zeroed(&s, 256).unwrap();
    let tx = DeviceTensor::new(&dx, [16, 16]).unwrap();
    let mut ty = DeviceTensorMut::new(&mut dy, [16, 16]).unwrap();
    m.bad_tile(&s, (1, 1, 1), &tx, &mut ty, 3).unwrap();
}
