//! Prepared launches of kernels with a `#[launch_contract]` (docs/rust.md, "Launch contracts").
//!
//! `module.prepare_NAME(LaunchConfig1D::new(grid, block, smem))?` checks the shape against the
//! kernel's contract and the live device's limits once (liboxide's
//! `oxide_launch_contract_check` and, for a non-generic kernel, `oxide_kernel_check_launch`: the
//! same rules every launch of the kernel meets from C, C++ and Python) and gives a `PreparedLaunch` branded with the kernel, which only that kernel's
//! launch methods take. The configuration types are the contract's domain: a 1-dimensional
//! kernel's `prepare_NAME` takes a `LaunchConfig1D`, so a 2-dimensional shape is a type error.
use crate::{check, sys, LaunchConfig, Module, Result};
use std::ffi::CString;
use std::marker::PhantomData;

/// A kernel's launch contract, as `#[launch_contract]` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchContract {
    /// 1, 2 or 3 dimensions: the grid and block are 1 beyond them.
    pub domain: u32,
    /// Exactly this block (x, y, z); the PTX says `.reqntid`.
    pub block: Option<(u32, u32, u32)>,
    /// The dynamic shared memory allowed, (min, max) bytes; equal for an exact size.
    pub dynamic_shared: Option<(u32, u32)>,
    /// The dynamic shared memory's alignment in the PTX.
    pub dynamic_shared_alignment: Option<u32>,
    /// The oldest GPU (major, minor) the kernel runs on.
    pub min_compute_capability: Option<(u32, u32)>,
}

impl LaunchContract {
    /// The C API's form (include/oxide.h, `oxide_launch_contract`).
    pub fn raw(&self) -> sys::oxide_launch_contract {
        use cuda_device::__private as bits;
        let mut c =
            sys::oxide_launch_contract { fields: bits::CONTRACT_DOMAIN, domain: self.domain, ..Default::default() };
        if let Some((x, y, z)) = self.block {
            c.fields |= bits::CONTRACT_BLOCK;
            c.block = [x, y, z];
        }
        if let Some((lo, hi)) = self.dynamic_shared {
            c.fields |= bits::CONTRACT_SMEM;
            c.smem_min = lo;
            c.smem_max = hi;
        }
        if let Some(a) = self.dynamic_shared_alignment {
            c.fields |= bits::CONTRACT_SMEM_ALIGN;
            c.smem_align = a;
        }
        if let Some((major, minor)) = self.min_compute_capability {
            c.fields |= bits::CONTRACT_MIN_CC;
            c.min_cc = [major, minor];
        }
        c
    }
    /// Check a launch shape against this contract and the limits of the device `module` is
    /// loaded on (what `prepare_NAME` does); `kernel` names the kernel in the error, which names
    /// the contract field or limit and the value given.
    pub fn check(&self, module: &Module, kernel: &str, cfg: &LaunchConfig) -> Result<()> {
        let name = CString::new(kernel).map_err(|_| crate::CudaError::other("kernel name with NUL"))?;
        check(unsafe {
            sys::oxide_launch_contract_check(module.context().raw(), name.as_ptr(), &self.raw(), &cfg.raw())
        })
    }
}

/// Implemented by `#[cuda_module]` for each kernel with a contract, on its brand type
/// `kernels::contract::NAME`.
pub trait KernelContract {
    /// The configuration type of the kernel's domain (`LaunchConfig1D`, `2D` or `3D`).
    type Config: LaunchShape;
    /// The kernel's name, for messages.
    const NAME: &'static str;
    /// Its contract.
    const CONTRACT: LaunchContract;
}

mod sealed {
    pub trait Sealed {}
}

/// A launch shape of a fixed number of dimensions.
pub trait LaunchShape: sealed::Sealed + Copy {
    /// The shape as a general configuration.
    fn launch_config(&self) -> LaunchConfig;
}

/// A 1-dimensional launch: `grid` blocks of `block` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig1D {
    grid: u32,
    block: u32,
    shared_mem_bytes: u32,
}

impl LaunchConfig1D {
    /// `grid` blocks of `block` threads, with `shared_mem_bytes` of dynamic shared memory.
    pub fn new(grid: u32, block: u32, shared_mem_bytes: u32) -> Self {
        LaunchConfig1D { grid, block, shared_mem_bytes }
    }
    /// Enough blocks of `block` threads for one thread per element.
    pub fn for_num_elems(n: u32, block: u32, shared_mem_bytes: u32) -> Self {
        Self::new(n.div_ceil(block.max(1)).max(1), block, shared_mem_bytes)
    }
}

/// A 2-dimensional launch: (x, y) blocks of (x, y) threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig2D {
    grid: (u32, u32),
    block: (u32, u32),
    shared_mem_bytes: u32,
}

impl LaunchConfig2D {
    /// `grid` blocks of `block` threads, with `shared_mem_bytes` of dynamic shared memory.
    pub fn new(grid: (u32, u32), block: (u32, u32), shared_mem_bytes: u32) -> Self {
        LaunchConfig2D { grid, block, shared_mem_bytes }
    }
}

/// A 3-dimensional launch: (x, y, z) blocks of (x, y, z) threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig3D {
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_mem_bytes: u32,
}

impl LaunchConfig3D {
    /// `grid` blocks of `block` threads, with `shared_mem_bytes` of dynamic shared memory.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32), shared_mem_bytes: u32) -> Self {
        LaunchConfig3D { grid, block, shared_mem_bytes }
    }
}

impl sealed::Sealed for LaunchConfig1D {}
impl sealed::Sealed for LaunchConfig2D {}
impl sealed::Sealed for LaunchConfig3D {}
impl LaunchShape for LaunchConfig1D {
    fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::new((self.grid, 1, 1), (self.block, 1, 1), self.shared_mem_bytes)
    }
}
impl LaunchShape for LaunchConfig2D {
    fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::new((self.grid.0, self.grid.1, 1), (self.block.0, self.block.1, 1), self.shared_mem_bytes)
    }
}
impl LaunchShape for LaunchConfig3D {
    fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::new(self.grid, self.block, self.shared_mem_bytes)
    }
}

/// A launch shape checked against kernel `K`'s contract and the device, made only by
/// `module.prepare_NAME(..)`; only `K`'s launch methods take it.
pub struct PreparedLaunch<K: KernelContract> {
    cfg: LaunchConfig,
    _kernel: PhantomData<fn() -> K>,
}

impl<K: KernelContract> Clone for PreparedLaunch<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: KernelContract> Copy for PreparedLaunch<K> {}

impl<K: KernelContract> std::fmt::Debug for PreparedLaunch<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedLaunch<{}>({:?})", K::NAME, self.cfg)
    }
}

impl<K: KernelContract> PreparedLaunch<K> {
    /// Check `shape` against `K`'s contract and the limits of the device `module` is loaded on.
    /// The error names the kernel, the contract field or limit, and the value given.
    #[doc(hidden)]
    pub fn prepare(module: &Module, shape: K::Config) -> Result<Self> {
        let cfg = shape.launch_config();
        K::CONTRACT.check(module, K::NAME, &cfg)?;
        // a non-generic kernel is loaded under its name: its own limits too (the threads a block
        // its registers allow); a generic one's instances are checked by each launch
        if let Ok(k) = module.kernel(K::NAME) {
            check(unsafe { sys::oxide_kernel_check_launch(k, &cfg.raw()) })?;
        }
        Ok(PreparedLaunch { cfg, _kernel: PhantomData })
    }
    /// The configuration it launches with.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }
}
