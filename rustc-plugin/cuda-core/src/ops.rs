//! Lazy GPU work: a `DeviceOperation` describes work and runs it when asked (`.sync()`,
//! `.await`, or as part of a composition). Operations borrow their buffers for their lifetime,
//! so safe code cannot free or touch a buffer while work on it may be in flight.
use crate::{sys, CudaError, CudaStream, LaunchConfig, Module, Result};
use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The PTX parameters of one launch, each stored with its alignment.
#[derive(Default, Clone)]
pub struct ParamBuffer {
    data: Vec<u64>,
    offsets: Vec<usize>,
    used: usize,
}

impl ParamBuffer {
    /// An empty parameter buffer.
    pub fn new() -> Self {
        Self::default()
    }
    fn push_raw(&mut self, p: *const u8, size: usize, align: usize) {
        let align = align.clamp(1, 8);
        let off = (self.used + align - 1) & !(align - 1);
        let end = off + size.max(1);
        let words = end.div_ceil(8);
        if self.data.len() < words {
            self.data.resize(words, 0);
        }
        unsafe { std::ptr::copy_nonoverlapping(p, (self.data.as_mut_ptr() as *mut u8).add(off), size) };
        self.offsets.push(off);
        self.used = end;
    }
    /// A scalar or pointer parameter.
    pub fn push_value<T: Copy>(&mut self, v: &T) {
        self.push_raw(v as *const T as *const u8, std::mem::size_of::<T>(), std::mem::align_of::<T>());
    }
    /// A by-value bytes parameter (e.g. a closure's captures).
    pub fn push_bytes_of<T>(&mut self, v: &T) {
        self.push_raw(v as *const T as *const u8, std::mem::size_of::<T>(), std::mem::align_of::<T>());
    }
    pub(crate) fn pointers(&self) -> Vec<*mut c_void> {
        let base = self.data.as_ptr() as *mut u8;
        self.offsets.iter().map(|&o| unsafe { base.add(o) as *mut c_void }).collect()
    }
}

/// The arguments of a tile kernel's launch. liboxide checks them against the kernel's manifest
/// and lays out its PTX parameters, which for a tensor can be more than its pointer, shape and
/// strides (a TMA descriptor and its flag, where the lowering reads the tensor through TMA).
#[derive(Default, Clone)]
pub struct TileArgs {
    tensors: Vec<sys::oxide_tensor>,
    /// (kind, oxide_scalar code, mutable, a scalar's bits or the tensor's index in `tensors`)
    args: Vec<(u32, u32, bool, u64)>,
}

impl TileArgs {
    /// No arguments yet.
    pub fn new() -> Self {
        Self::default()
    }
    #[doc(hidden)]
    pub fn push_tensor(&mut self, ptr: u64, elem: u32, mutable: bool, shape: &[i64], strides: &[i64]) {
        let mut t = sys::oxide_tensor {
            struct_size: std::mem::size_of::<sys::oxide_tensor>(),
            data: ptr,
            elem,
            rank: shape.len() as u32,
            is_mutable: mutable as u32,
            ..Default::default()
        };
        t.shape[..shape.len()].copy_from_slice(shape);
        t.strides[..strides.len()].copy_from_slice(strides);
        self.args.push((sys::OXIDE_ARG_TENSOR, elem, mutable, self.tensors.len() as u64));
        self.tensors.push(t);
    }
    /// A scalar of oxide_scalar type `code` (its bits, as the C API takes them).
    #[doc(hidden)]
    pub fn push_scalar<T: Copy>(&mut self, code: u32, v: &T) {
        let mut bits = 0u64;
        let n = std::mem::size_of::<T>().min(8);
        unsafe { std::ptr::copy_nonoverlapping(v as *const T as *const u8, &mut bits as *mut u64 as *mut u8, n) };
        self.args.push((sys::OXIDE_ARG_SCALAR, code, false, bits));
    }
    /// The C arguments, pointing into self.
    pub(crate) fn raw(&self) -> Vec<sys::oxide_arg> {
        let arg = |&(kind, ty, mutable, v): &(u32, u32, bool, u64)| {
            let tensor = kind == sys::OXIDE_ARG_TENSOR;
            sys::oxide_arg {
                kind,
                ty,
                is_mutable: mutable as u32,
                reserved: 0,
                value: if tensor { 0 } else { v },
                ptr: 0,
                len: 0,
                bytes: if tensor { &self.tensors[v as usize] as *const _ as *const c_void } else { std::ptr::null() },
                size: if tensor { std::mem::size_of::<sys::oxide_tensor>() } else { 0 },
            }
        };
        self.args.iter().map(arg).collect()
    }
}

/// What a launch passes: PTX parameters laid out by the caller, or a tile kernel's arguments.
enum Params {
    Raw(ParamBuffer),
    Tile(TileArgs),
}

/// Work for the GPU that has not run yet.
pub trait DeviceOperation: Sized {
    /// What the operation gives when it has run.
    type Output;
    /// Queue the work on `stream` (does not wait).
    fn enqueue(&mut self, stream: &CudaStream) -> Result<()>;
    /// The result, once the queued work has completed.
    fn finish(self) -> Self::Output;
    /// The context whose default stream `.sync()` uses.
    fn context(&self) -> &crate::CudaContext;

    /// Run on the context's default stream and wait.
    fn sync(mut self) -> Result<Self::Output> {
        let s = self.context().default_stream();
        self.enqueue(&s)?;
        s.synchronize()?;
        Ok(self.finish())
    }
    /// Run on `stream` and wait.
    fn sync_on(mut self, stream: &CudaStream) -> Result<Self::Output> {
        self.enqueue(stream)?;
        stream.synchronize()?;
        Ok(self.finish())
    }
    /// Queue on `stream` and return without waiting.
    fn launch_on(mut self, stream: &CudaStream) -> Result<Self::Output> {
        self.enqueue(stream)?;
        Ok(self.finish())
    }
    /// This, then the operation `f` makes from its output (queued after it on the same stream).
    fn and_then<B: DeviceOperation, F: FnOnce(Self::Output) -> B>(self, f: F) -> AndThen<Self, B, F> {
        AndThen { a: Some(self), f: Some(f), b: None }
    }
    /// Both at once, on two streams; done when both are.
    fn zip<B: DeviceOperation>(self, b: B) -> Zip<Self, B> {
        Zip { a: self, b }
    }
}

/// One kernel launch (made by the `name_async` methods of `#[cuda_module]`).
pub struct LaunchOp<'a> {
    module: &'a Module,
    entry: Cow<'static, str>,
    cfg: LaunchConfig,
    params: Params,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a> LaunchOp<'a> {
    #[doc(hidden)]
    pub fn new(module: &'a Module, entry: Cow<'static, str>, cfg: LaunchConfig, params: ParamBuffer) -> Self {
        LaunchOp { module, entry, cfg, params: Params::Raw(params), _borrow: PhantomData }
    }
    /// A tile kernel's launch (`#[tile_kernel]`'s launch methods): its arguments checked by liboxide.
    #[doc(hidden)]
    pub fn new_tile(module: &'a Module, entry: Cow<'static, str>, cfg: LaunchConfig, args: TileArgs) -> Self {
        LaunchOp { module, entry, cfg, params: Params::Tile(args), _borrow: PhantomData }
    }
    /// The PTX entry this launches.
    pub fn entry(&self) -> &str {
        &self.entry
    }
}

impl DeviceOperation for LaunchOp<'_> {
    type Output = ();
    fn enqueue(&mut self, stream: &CudaStream) -> Result<()> {
        match &self.params {
            Params::Raw(p) => unsafe { self.module.launch_raw(&self.entry, stream, &self.cfg, p) },
            Params::Tile(a) => self.module.launch_tile(&self.entry, stream, &self.cfg, a),
        }
    }
    fn finish(self) {}
    fn context(&self) -> &crate::CudaContext {
        self.module.context()
    }
}

/// `a.and_then(f)`: `a`, then the operation `f` makes from its output (same stream).
pub struct AndThen<A, B, F> {
    a: Option<A>,
    f: Option<F>,
    b: Option<B>,
}

impl<A: DeviceOperation, B: DeviceOperation, F: FnOnce(A::Output) -> B> DeviceOperation for AndThen<A, B, F> {
    type Output = B::Output;
    fn enqueue(&mut self, stream: &CudaStream) -> Result<()> {
        let mut a = self.a.take().ok_or_else(|| CudaError::other("operation already run"))?;
        a.enqueue(stream)?;
        let mut b = (self.f.take().unwrap())(a.finish());
        b.enqueue(stream)?;
        self.b = Some(b);
        Ok(())
    }
    fn finish(self) -> B::Output {
        self.b.expect("and_then: finish before enqueue").finish()
    }
    fn context(&self) -> &crate::CudaContext {
        match (&self.a, &self.b) {
            (Some(a), _) => a.context(),
            (_, Some(b)) => b.context(),
            _ => panic!("and_then: no context"),
        }
    }
}

/// `a.zip(b)`: both at once on separate streams; the output is the pair.
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A: DeviceOperation, B: DeviceOperation> DeviceOperation for Zip<A, B> {
    type Output = (A::Output, B::Output);
    fn enqueue(&mut self, stream: &CudaStream) -> Result<()> {
        let ctx = stream.context().clone();
        let side = ctx.new_stream()?;
        let start = ctx.new_event()?;
        stream.record(&start)?;
        side.wait_event(&start)?;
        self.a.enqueue(stream)?;
        self.b.enqueue(&side)?;
        let done = ctx.new_event()?;
        side.record(&done)?;
        stream.wait_event(&done)?;
        Ok(())
    }
    fn finish(self) -> Self::Output {
        (self.a.finish(), self.b.finish())
    }
    fn context(&self) -> &crate::CudaContext {
        self.a.context()
    }
}

/// `op.await`: queues the work on a stream of its own at the first poll and completes when the
/// GPU has run it, woken by a stream callback, so the waiting thread can sleep. Needs no async
/// runtime (any executor, or `cuda_async::block_on`). Dropped before the work completed, it waits
/// for the GPU, so that the borrowed buffers outlive the work.
pub struct OpFuture<O: DeviceOperation> {
    op: Option<O>,
    // The work's stream and the callback that wakes the task (crate::wake), from the first poll.
    stream: Option<crate::wake::Waiting>,
}

impl<O: DeviceOperation + Unpin> Future for OpFuture<O> {
    type Output = Result<O::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.stream.is_none() {
            let op = this.op.as_mut().expect("polled after completion");
            match crate::wake::Waiting::start(op, cx) {
                Ok(w) => this.stream = Some(w),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        match this.stream.as_ref().unwrap().poll(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(this.op.take().expect("polled after completion").finish())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<'a> std::future::IntoFuture for LaunchOp<'a> {
    type Output = Result<()>;
    type IntoFuture = OpFuture<LaunchOp<'a>>;
    fn into_future(self) -> Self::IntoFuture {
        OpFuture { op: Some(self), stream: None }
    }
}

impl<A: DeviceOperation + Unpin, B: DeviceOperation + Unpin> std::future::IntoFuture for Zip<A, B> {
    type Output = Result<(A::Output, B::Output)>;
    type IntoFuture = OpFuture<Zip<A, B>>;
    fn into_future(self) -> Self::IntoFuture {
        OpFuture { op: Some(self), stream: None }
    }
}

impl<A: DeviceOperation + Unpin, B: DeviceOperation + Unpin, F: FnOnce(A::Output) -> B + Unpin> std::future::IntoFuture
    for AndThen<A, B, F>
{
    type Output = Result<B::Output>;
    type IntoFuture = OpFuture<AndThen<A, B, F>>;
    fn into_future(self) -> Self::IntoFuture {
        OpFuture { op: Some(self), stream: None }
    }
}

/// Wrap any operation as a future.
pub fn into_future<O: DeviceOperation + Unpin>(op: O) -> OpFuture<O> {
    OpFuture { op: Some(op), stream: None }
}
