//! `block_on`: runs one future on the calling thread, which sleeps (`std::thread::park`) while
//! the future is pending and is woken by its waker, e.g. by the stream callback that an awaited
//! GPU operation queues after its work.
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Drive a future to completion on this thread. Between polls the thread sleeps until the future's
/// waker is called (an awaited GPU operation calls it when the GPU has finished), so waiting on
/// the GPU costs no CPU time.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        // An unpark that came before this park makes it return at once: no wake-up is lost.
        std::thread::park();
    }
}
