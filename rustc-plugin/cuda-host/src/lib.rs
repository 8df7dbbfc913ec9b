//! cuda-oxide's `cuda_host` names, so that programs written against its documented API port with
//! their `use` lines unchanged: `use cuda_host::cuda_module;`, `cuda_host::load_kernel_module`.
//! Everything here is cuda-core's (the generated code of `#[cuda_module]` names `cuda_core` and
//! `cuda_device`, so a program depends on those two crates as well).
#![warn(missing_docs)]

pub use cuda_core::{
    embedded_ptx, CudaContext, CudaStream, KernelContract, LaunchConfig, LaunchConfig1D, LaunchConfig2D,
    LaunchConfig3D, LaunchContract, Module, PreparedLaunch, Result,
};
pub use cuda_device::cuda_module;

use std::path::PathBuf;

/// Where `load_kernel_module` looks for `NAME.ptx`, in order.
fn candidates(name: &str) -> Vec<PathBuf> {
    let file = if name.ends_with(".ptx") { name.to_string() } else { format!("{name}.ptx") };
    let mut dirs = vec![PathBuf::from(".")];
    if let Some(exe_dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.to_path_buf())) {
        dirs.push(exe_dir.join("oxide"));
        dirs.push(exe_dir);
    }
    dirs.into_iter().map(|d| d.join(&file)).collect()
}

/// The module `name`: the PTX file `name.ptx` (or `name` if it ends in `.ptx`) in the working
/// directory, in `oxide/` beside the program (where `cargo oxide build` puts its copy) or beside
/// the program; else the PTX the program carries. Launches are checked against that PTX's
/// manifest.
pub fn load_kernel_module(ctx: &CudaContext, name: &str) -> Result<Module> {
    for path in candidates(name) {
        if let Ok(ptx) = std::fs::read(&path) {
            return Module::load_ptx(ctx, &ptx);
        }
    }
    Module::load_embedded(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_looked_for_by_name_then_embedded() {
        let c = candidates("vecadd");
        assert_eq!(c[0], PathBuf::from("./vecadd.ptx"));
        assert!(c.iter().all(|p| p.file_name().unwrap() == "vecadd.ptx"));
        assert!(c.iter().any(|p| p.parent().unwrap().ends_with("oxide")));
        assert_eq!(candidates("k.ptx")[0], PathBuf::from("./k.ptx"));
    }
}
