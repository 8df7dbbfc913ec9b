// The stanza the refused-kernel crates (alloc, inline_asm, std_call, x86, wide_float) share, so
// that each crate's file holds only the kernel it tests: `cargo oxide build` must refuse that
// kernel, naming it and the reason (tests/rust/run.sh). The host program launches it once over
// four elements, as a real caller would, so that the kernel instance is in the final link where
// liboxide sees it; it never runs.
//
// Each crate does `include!("../../refused_kernel.rs");` and then
//     refused_kernel! { input: [VALUE; 4], kernel: |x: &[ELEM], i| { ... } }
// which makes the kernel `bad_kernel(x: &[ELEM], mut y: DisjointSlice<f32>)`: thread i writes the
// block's value to y[i].
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

macro_rules! refused_kernel {
    (input: $input:expr, kernel: |$x:ident: &[$elem:ident], $i:ident| $body:block) => {
        #[cuda_module]
        mod kernels {
            use super::*;

            #[kernel]
            pub fn bad_kernel($x: &[$elem], mut y: DisjointSlice<f32>) {
                let idx = thread::index_1d();
                let $i = idx.get();
                if let Some(o) = y.get_mut(idx) {
                    *o = $body;
                }
            }
        }

        fn main() {
            let ctx = CudaContext::new(0).unwrap();
            let s = ctx.default_stream();
            let x = DeviceBuffer::from_host(&s, &$input).unwrap();
            let mut y = DeviceBuffer::<f32>::zeroed(&s, 4).unwrap();
            kernels::load(&ctx).unwrap().bad_kernel(&s, LaunchConfig::for_num_elems(4), &x, &mut y).unwrap();
        }
    };
}
