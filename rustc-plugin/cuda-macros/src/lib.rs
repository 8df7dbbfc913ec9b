//! oxide's proc macros (syn 1, from Debian's packages).
//!
//! `#[kernel]` keeps the function as written and adds a generated entry point with a fixed C ABI
//! (scalars and pointers only: a slice is pointer + length, anything else travels as bytes behind
//! a pointer), tagged with a constant descriptor that liboxide's importer reads (lib/import.c).
//! `#[cuda_module]` does that for each `#[kernel]` in a module and adds `load(&ctx)` and typed
//! launch methods. `#[launch_bounds]`/`#[cluster_launch]` record kernel attributes; `#[device]`
//! marks helpers usable from host and device (a no-op: every Rust function is).
#![warn(missing_docs)]
extern crate proc_macro;

mod contract;
mod kernel;
mod tile;

use proc_macro::TokenStream;

/// A GPU entry point. See the crate docs and docs/rust.md.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::kernel_attr(attr.into(), item.into()).into()
}

/// A module of kernels: generates `load(&CudaContext) -> Result<Module>` and, per kernel,
/// `Module::name(&stream, cfg, args...)` and `Module::name_async(cfg, args...)`.
#[proc_macro_attribute]
pub fn cuda_module(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::module_attr(attr.into(), item.into()).into()
}

/// A function callable from kernels and from the host. Every Rust function already is; the
/// attribute documents the intent and keeps it from being inlined away from view.
#[proc_macro_attribute]
pub fn device(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// `#[launch_bounds(max_threads)]` or `#[launch_bounds(max_threads, min_blocks)]` on a kernel.
#[proc_macro_attribute]
pub fn launch_bounds(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::marker("launch_bounds", attr.into(), item.into()).into()
}

/// `#[cluster_launch(x, y, z)]` on a kernel: the cluster shape it is compiled and launched with.
#[proc_macro_attribute]
pub fn cluster_launch(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::marker("cluster_launch", attr.into(), item.into()).into()
}

/// `#[launch_contract(domain = 1, block = (256, 1, 1), dynamic_shared = 1024,
/// dynamic_shared_alignment = 16, min_compute_capability = (8, 0))]` on a kernel: the launch
/// shapes it accepts (`dynamic_shared_range = (lo, hi)` for a range). Inside `#[cuda_module]`
/// its launches take a `PreparedLaunch` from `module.prepare_NAME(LaunchConfig1D::new(..))`;
/// see docs/rust.md, "Launch contracts".
#[proc_macro_attribute]
pub fn launch_contract(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::marker("launch_contract", attr.into(), item.into()).into()
}

/// A tile kernel (docs/rust-tile.md): inside a `#[cuda_module]`,
/// `#[tile_kernel]` or `#[tile_kernel(warps = 8)]`.
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    tile::tile_kernel_attr(attr.into(), item.into()).into()
}
