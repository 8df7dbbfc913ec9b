// The stanza the refused tile-kernel crates (tile_memory, tile_table, tile_dot_small) share:
// each crate's file holds only the body that cannot be lifted into tile IR, and `cargo oxide
// build` must refuse it naming the kernel, the source line and what to write instead
// (tests/rust/run.sh). The host launches it once, so that the instance is in the final link.
//
// Each crate does `include!("../../refused_tile_kernel.rs");` and then
//     refused_tile_kernel! { |x, y, n| { ... } }
// which makes `bad_tile(x: Tensor<f32, 2>, y: TensorMut<f32, 2>, n: i32)`. tile_full_runtime
// writes its kernel out, so that the refused line is its file's, and takes the host side only:
//     refused_tile_host! {}
use cuda_core::{CudaContext, DeviceBuffer, DeviceTensor, DeviceTensorMut};
use cuda_device::cuda_module;

#[allow(unused_macros)]
macro_rules! refused_tile_host {
    () => {
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
    };
}

#[allow(unused_macros)]
macro_rules! refused_tile_kernel {
    (|$x:ident, $y:ident, $n:ident| $body:block) => {
        #[cuda_module]
        mod kernels {
            #[allow(unused_imports)]
            use cuda_tile::{program_id, tile_kernel, Tensor, TensorMut, Tile};

            #[tile_kernel]
            pub fn bad_tile($x: Tensor<f32, 2>, mut $y: TensorMut<f32, 2>, $n: i32) $body
        }

        refused_tile_host! {}
    };
}
