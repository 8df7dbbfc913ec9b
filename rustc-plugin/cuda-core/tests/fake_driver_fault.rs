//! An awaited kernel that faults, on the fake driver (a program of its own: the fault fails the
//! device for the rest of the process). The await returns the error, naming the kernel, instead
//! of sleeping for ever, and later work is refused.
mod common;
use cuda_core::{LaunchConfig, LaunchOp, ParamBuffer};
use std::borrow::Cow;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn a_fault_ends_the_await_with_the_error() {
    let Some(ctx) = common::ctx() else { return };
    let (tx, rx) = mpsc::channel();
    // the awaiting thread reports; a hang is a failure after 10 s, not a hung test
    std::thread::spawn(move || {
        let m = common::module(&ctx);
        let mut p = ParamBuffer::new();
        p.push_value(&0u64);
        let op = LaunchOp::new(&m, Cow::Borrowed("oob_write"), LaunchConfig::for_num_elems(1), p);
        let first = cuda_async::block_on(async { op.await });
        let again = cuda_async::block_on(async {
            let mut p = ParamBuffer::new();
            p.push_value(&0u64);
            LaunchOp::new(&m, Cow::Borrowed("oob_write"), LaunchConfig::for_num_elems(1), p).await
        });
        let _ = tx.send((first, again));
    });
    let (first, again) = rx.recv_timeout(Duration::from_secs(10)).expect("the await did not end after a fault");
    let e = first.expect_err("a faulting kernel awaited without an error");
    assert_eq!(e.status_name(), "OXIDE_ERROR_CUDA", "{e}");
    assert!(e.message.contains("CUDA_ERROR_ILLEGAL_ADDRESS") && e.message.contains("oob_write"), "{e}");
    let e = again.expect_err("work on a failed device was accepted");
    assert_eq!(e.status_name(), "OXIDE_ERROR_DEVICE_FAILED", "{e}");
}
