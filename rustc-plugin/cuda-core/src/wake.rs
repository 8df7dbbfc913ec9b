//! What an `.await` on GPU work waits on: a stream callback (`oxide_stream_add_callback`) queued
//! after the work, which wakes the task when the GPU has finished it, so the thread sleeps
//! meanwhile instead of polling. The callback also runs when the device failed first, with the
//! error, so a waiting task is always woken.
use crate::{sys, CudaError, CudaStream, DeviceOperation, Result};
use std::future::Future;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Set by the driver's thread when the stream reaches the callback.
struct Signal {
    done: AtomicBool,
    status: AtomicI32,
    waker: Mutex<Option<Waker>>,
}

unsafe extern "C" fn stream_done(user: *mut c_void, status: sys::oxide_status) {
    let s = Arc::from_raw(user as *const Signal);
    s.status.store(status, Ordering::Relaxed);
    s.done.store(true, Ordering::Release);
    let w = s.waker.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(w) = w {
        // A panic must not unwind into the driver's thread.
        let _ = catch_unwind(AssertUnwindSafe(|| w.wake()));
    }
}

/// A callback queued on a stream after the work so far, and the task it wakes.
struct Callback {
    // None: the driver has no stream callbacks; the task polls the stream instead.
    signal: Option<Arc<Signal>>,
}

impl Callback {
    fn queue(stream: &CudaStream, cx: &Context<'_>) -> Result<Callback> {
        let signal = Arc::new(Signal {
            done: AtomicBool::new(false),
            status: AtomicI32::new(sys::OXIDE_OK),
            waker: Mutex::new(Some(cx.waker().clone())),
        });
        let raw = stream.raw()?;
        let user = Arc::into_raw(signal.clone()) as *mut c_void;
        let st = unsafe { sys::oxide_stream_add_callback(raw, stream_done, user) };
        if st == sys::OXIDE_OK {
            return Ok(Callback { signal: Some(signal) });
        }
        let err = CudaError::from_status(st);
        drop(unsafe { Arc::from_raw(user as *const Signal) }); // the callback was not queued
        if st == sys::abi::OXIDE_ERROR_UNSUPPORTED {
            return Ok(Callback { signal: None });
        }
        Err(err)
    }

    /// Ready once the stream has reached the callback (or failed).
    fn poll(&self, stream: &CudaStream, cx: &Context<'_>) -> Poll<Result<()>> {
        let Some(s) = &self.signal else {
            return match stream.is_done() {
                Ok(true) => Poll::Ready(Ok(())),
                Ok(false) => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                Err(e) => Poll::Ready(Err(e)),
            };
        };
        if !s.done.load(Ordering::Acquire) {
            {
                let mut w = s.waker.lock().unwrap_or_else(PoisonError::into_inner);
                if !w.as_ref().is_some_and(|old| old.will_wake(cx.waker())) {
                    *w = Some(cx.waker().clone());
                }
            }
            // The callback may have run before the new waker was stored: look again.
            if !s.done.load(Ordering::Acquire) {
                return Poll::Pending;
            }
        }
        if s.status.load(Ordering::Relaxed) == sys::OXIDE_OK {
            return Poll::Ready(Ok(()));
        }
        // The stream knows what failed (and names the kernel).
        Poll::Ready(stream.synchronize().and(Err(CudaError::other(
            "the device failed before the awaited work completed (the stream reported no error)",
        ))))
    }

    fn finished(&self, stream: &CudaStream) -> bool {
        match &self.signal {
            Some(s) => s.done.load(Ordering::Acquire),
            None => stream.is_done().unwrap_or(true),
        }
    }
}

/// GPU work queued on a stream of its own, and the callback after it.
pub(crate) struct Waiting {
    stream: CudaStream,
    callback: Callback,
}

impl Waiting {
    /// Queue `op` on a new stream, with a callback after it that wakes `cx`'s task.
    pub(crate) fn start<O: DeviceOperation>(op: &mut O, cx: &Context<'_>) -> Result<Waiting> {
        let stream = op.context().new_stream()?;
        let queued = op.enqueue(&stream).and_then(|()| Callback::queue(&stream, cx));
        match queued {
            Ok(callback) => Ok(Waiting { stream, callback }),
            Err(e) => {
                // Part of the work may be queued already: it must not outlive the borrows.
                let _ = stream.synchronize();
                Err(e)
            }
        }
    }

    /// Ready once the work has completed (or failed).
    pub(crate) fn poll(&self, cx: &Context<'_>) -> Poll<Result<()>> {
        self.callback.poll(&self.stream, cx)
    }
}

impl Drop for Waiting {
    // A future dropped before its work completed (a cancelled task) waits for the GPU here, so
    // that the buffers the work borrows are not freed or reused while it runs.
    fn drop(&mut self) {
        if !self.callback.finished(&self.stream) {
            let _ = self.stream.synchronize();
        }
    }
}

/// `stream.done().await`: completes when all the work queued on the stream before the first poll
/// has run (e.g. after `launch_on`, or a graph's replays), woken like `.await` on an operation.
pub struct StreamDone<'s> {
    stream: &'s CudaStream,
    callback: Option<Callback>,
}

impl CudaStream {
    /// A future that completes when the work queued here so far has run; the waiting thread
    /// sleeps meanwhile (`cuda_async::block_on`, or any executor).
    pub fn done(&self) -> StreamDone<'_> {
        StreamDone { stream: self, callback: None }
    }
}

impl Future for StreamDone<'_> {
    type Output = Result<()>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = &mut *self;
        if this.callback.is_none() {
            match Callback::queue(this.stream, cx) {
                Ok(c) => this.callback = Some(c),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        this.callback.as_ref().unwrap().poll(this.stream, cx)
    }
}
