//! CUDA graphs: a sequence of launches and copies recorded once (stream capture) and replayed
//! with one call, which saves the per-operation launch cost of work that repeats.
//!
//! The recorded operations are the lazy ones (`name_async` launches, [`CopyOp`]s, `and_then`
//! chains of them). Recording runs nothing, so it is safe; a replay is `unsafe`, because the
//! graph keeps only the addresses its work uses. One graph typically writes a buffer in one step
//! and reads it in the next, which no set of Rust borrows held by the graph can express (a `&mut`
//! and a `&` of one buffer at once), so the caller keeps the rule instead: see
//! [`CudaGraph::launch`].
use crate::ops::{AndThen, LaunchOp};
use crate::pinned::CopyOp;
use crate::{check, sys, CudaContext, CudaError, CudaStream, DeviceOperation, Result};

/// An operation a graph can record: launches, copies, and `and_then` sequences of them. `zip`
/// is not one: its helper streams and events are made while it is queued, which a capture
/// cannot contain.
///
/// ```compile_fail,E0277
/// # fn f(ctx: &cuda_core::CudaContext, a: cuda_core::LaunchOp<'_>, b: cuda_core::LaunchOp<'_>) {
/// use cuda_core::{CudaGraph, DeviceOperation};
/// let mut g = CudaGraph::capture(ctx).unwrap();
/// g.record(a.zip(b)).unwrap();
/// # }
/// ```
pub trait Capturable: DeviceOperation {}
impl Capturable for LaunchOp<'_> {}
impl Capturable for CopyOp<'_> {}
impl<A: Capturable, B: Capturable, F: FnOnce(A::Output) -> B> Capturable for AndThen<A, B, F> {}

/// A graph being recorded, from [`CudaGraph::capture`]; [`GraphCapture::end`] makes the graph.
pub struct GraphCapture {
    stream: CudaStream,
    recorded: usize,
    ended: bool,
}

/// Recorded GPU work, replayed by [`CudaGraph::launch`].
pub struct CudaGraph {
    raw: *mut sys::oxide_graph,
    ctx: CudaContext,
    recorded: usize,
}

impl CudaGraph {
    /// Start recording on a stream of `ctx`'s made for it: add work with
    /// [`GraphCapture::record`], then call [`GraphCapture::end`].
    pub fn capture(ctx: &CudaContext) -> Result<GraphCapture> {
        let stream = ctx.new_stream()?;
        check(unsafe { sys::oxide_stream_begin_capture(stream.raw()?) })?;
        Ok(GraphCapture { stream, recorded: 0, ended: false })
    }

    /// Queue one replay of all the recorded work on `stream` (returns without waiting; several
    /// replays on one stream run one after another).
    ///
    /// # Safety
    /// Until the replay has completed (synchronize the stream): the device buffers, pinned
    /// buffers and modules that the recorded operations borrowed are alive, the host writes none
    /// of the memory the work reads and reads none it writes, and no other work uses the memory
    /// the graph writes. (The same rule as for a launch whose `launch_on` has returned.)
    pub unsafe fn launch(&self, stream: &CudaStream) -> Result<()> {
        check(unsafe { sys::oxide_graph_launch(self.raw, stream.raw()?) })
    }

    /// The number of operations recorded.
    pub fn len(&self) -> usize {
        self.recorded
    }

    /// Never true: [`GraphCapture::end`] refuses to make an empty graph.
    pub fn is_empty(&self) -> bool {
        self.recorded == 0
    }

    /// The context the graph runs on.
    pub fn context(&self) -> &CudaContext {
        &self.ctx
    }
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        unsafe { sys::oxide_graph_destroy(self.raw) }
    }
}

impl GraphCapture {
    /// Record `op` (it does not run now; every replay runs it, on the memory it borrowed now).
    /// Its output is returned at once: for launches and copies, `()`.
    pub fn record<O: Capturable>(&mut self, mut op: O) -> Result<O::Output> {
        op.enqueue(&self.stream)?;
        self.recorded += 1;
        Ok(op.finish())
    }

    /// The number of operations recorded so far.
    pub fn len(&self) -> usize {
        self.recorded
    }

    /// True before the first `record`.
    pub fn is_empty(&self) -> bool {
        self.recorded == 0
    }

    /// Stop recording and make the graph. Errors: nothing was recorded; CUDA refused the
    /// captured work (e.g. a synchronous copy or `synchronize` on this thread while recording).
    pub fn end(mut self) -> Result<CudaGraph> {
        let mut g = std::ptr::null_mut();
        self.ended = true;
        let ended = check(unsafe { sys::oxide_stream_end_capture(self.stream.raw()?, &mut g) });
        if self.recorded == 0 {
            unsafe { sys::oxide_graph_destroy(g) };
            return Err(CudaError::other(
                "CudaGraph: nothing was recorded: add launches or copies with GraphCapture::record before end()",
            ));
        }
        ended?;
        Ok(CudaGraph { raw: g, ctx: self.stream.context().clone(), recorded: self.recorded })
    }
}

impl Drop for GraphCapture {
    // A capture dropped without end() (an error on the way) is ended, so its stream is freed.
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut g = std::ptr::null_mut();
        if let Ok(s) = self.stream.raw() {
            if unsafe { sys::oxide_stream_end_capture(s, &mut g) } == sys::OXIDE_OK {
                unsafe { sys::oxide_graph_destroy(g) };
            }
        }
    }
}
