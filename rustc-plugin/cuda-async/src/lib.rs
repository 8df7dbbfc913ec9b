//! oxide's async layer: lazy `DeviceOperation`s (from `kernel_async(...)` methods) composed with
//! `.and_then`, `zip!`, run with `.sync()` or `.await` (no async runtime needed: `block_on`,
//! which sleeps until the GPU has finished).
#![warn(missing_docs)]
mod executor;
pub use cuda_core::{AndThen, DeviceOperation, LaunchOp, Zip};
pub use executor::block_on;

/// Run operations concurrently on separate streams: `zip!(a, b)`, `zip!(a, b, c)` (nested pairs).
#[macro_export]
macro_rules! zip {
    ($a:expr, $b:expr $(,)?) => { $crate::DeviceOperation::zip($a, $b) };
    ($a:expr, $b:expr, $($rest:expr),+ $(,)?) => { $crate::DeviceOperation::zip($a, $crate::zip!($b, $($rest),+)) };
}
