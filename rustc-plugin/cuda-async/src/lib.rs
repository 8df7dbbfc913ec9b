//! oxide's async layer: lazy `DeviceOperation`s (from `kernel_async(...)` methods) composed with
//! `.and_then`, `zip!`, run with `.sync()` or `.await` (no async runtime needed: `block_on`).
#![warn(missing_docs)]
pub use cuda_core::{AndThen, DeviceOperation, LaunchOp, Zip};

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// Run operations concurrently on separate streams: `zip!(a, b)`, `zip!(a, b, c)` (nested pairs).
#[macro_export]
macro_rules! zip {
    ($a:expr, $b:expr $(,)?) => { $crate::DeviceOperation::zip($a, $b) };
    ($a:expr, $b:expr, $($rest:expr),+ $(,)?) => { $crate::DeviceOperation::zip($a, $crate::zip!($b, $($rest),+)) };
}

fn noop_waker() -> Waker {
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

/// Drive a future to completion on this thread (polls, yielding between polls).
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let w = noop_waker();
    let mut cx = Context::from_waker(&w);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}
