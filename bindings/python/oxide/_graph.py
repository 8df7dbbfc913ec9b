"""Work described once and run many times: CUDA graphs (captured from a stream, or made from
tasks), lazy tasks (launches, copies, memsets, composed in sequence or side by side), and pinned
host arrays, whose copies are truly asynchronous and may go into graphs."""
from __future__ import annotations

from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Tuple, Type, Union

from ._errors import check
from ._ffi import ffi, lib
from ._handle import Layout, Owned
from ._tables import SIZE
from ._types import TO_TYPESTR, numpy_dtype, scalar_name

if TYPE_CHECKING:
    import numpy

    from ._runtime import DeviceArray, Device, Dims, Kernel, Stream


def _runtime() -> ModuleType:
    from . import _runtime
    return _runtime


class Graph(Owned):
    """An executable CUDA graph: `stream.end_capture()`, the `with stream.capture() as cap:` block
    (`cap.graph`), or `task.graph()`. `graph.launch(stream=None)` replays its work; the memory it
    uses must stay alive as long as the graph may be launched (the graph keeps the tasks' objects
    alive, not the captured launches' arguments)."""

    __slots__ = ("_h", "device", "_keep", "__weakref__")
    device: Device
    _keep: Tuple[object, ...]

    def __init__(self, handle: Any, device: Device, keep: Tuple[object, ...] = ()) -> None:
        self._h, self.device, self._keep = handle, device, keep

    def launch(self, stream: object = None) -> None:
        """Queue one replay on stream (None: the default stream) and return."""
        sh = _runtime().resolve_stream(stream, self.device)[0]
        check(lib.oxide_graph_launch(self._h, sh))

    def _release(self, h: Any) -> None:
        lib.oxide_graph_destroy(h)

    def close(self) -> None:
        """Destroy it now (also on garbage collection)."""
        self._close()


class Capture:
    """`with stream.capture() as cap:` records the work queued on the stream in the block (oxide's
    launches, and any library's work on the same CUstream) into `cap.graph` instead of running
    it. The capture ends even when the block raises (the graph is then dropped)."""

    def __init__(self, stream: Stream) -> None:
        self.graph: Optional[Graph]
        self.stream, self.graph = stream, None

    def __enter__(self) -> Capture:
        self.stream.begin_capture()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        g = self.stream.end_capture()
        if exc_type is not None:
            g.close()
        else:
            self.graph = g


def begin_capture(stream: Stream) -> None:
    check(lib.oxide_stream_begin_capture(stream._h))


def end_capture(stream: Stream) -> Graph:
    out = ffi.new("oxide_graph **")
    check(lib.oxide_stream_end_capture(stream._h, out))
    return Graph(out[0], stream.device)


# ---------------------------------------------------------------------------------------------
# tasks


class Task(Owned):
    """Lazy work on one device, run when submitted: `kernel.task(*args, grid=..., block=...)`,
    `Task.copy(dst, src)`, `Task.memset(array, byte)`, composed with `Task.sequence(*tasks)` (one
    after the other) and `Task.join(*tasks)` (side by side). `task.submit(stream=None)` queues it,
    `task.sync(stream=None)` queues it and waits, `task.graph()` captures it once as a Graph. A
    task keeps the arrays and kernels it uses alive."""

    __slots__ = ("_h", "device", "_keep", "__weakref__")
    device: Device
    _keep: Tuple[object, ...]

    def __init__(self, handle: Any, device: Device, keep: Tuple[object, ...]) -> None:
        self._h, self.device, self._keep = handle, device, keep

    @classmethod
    def _made(cls, fn: Any, device: Device, keep: Tuple[object, ...], *args: Any) -> Task:
        out = ffi.new("oxide_task **")
        check(fn(*args, out))
        return cls(out[0], device, keep)

    @classmethod
    def launch(cls, kernel: Kernel, args: Sequence[object], grid: Optional[Dims], block: Optional[Dims] = None,
               smem: int = 0, cluster: Optional[Dims] = None, cooperative: bool = False) -> Task:
        """The task of one checked launch (kernel.task is the usual spelling)."""
        rt = _runtime()
        packer = kernel._packer
        if packer is None:
            kernel._bad_call(args, grid, block)
        keep: list[object] = []  # the packed bytes and tensors: oxide_task_launch copies them
        vals = packer.values(args, None, keep)
        rows = ffi.new("oxide_arg[]", max(packer.n, 1))
        lib.oxide_py_fill(packer.kinds, vals or ffi.NULL, packer.n, rows)
        if grid is None or (block is None and kernel._block is None):
            kernel._bad_call(args, grid, block)
        cfg = ffi.new("oxide_launch_config *")
        cfg.grid = list(rt._dims(grid))
        blk = rt._dims(block) if block is not None else kernel._block
        cfg.block = list(blk) if blk is not None else [0, 0, 0]
        cfg.smem = smem
        if cluster is not None:
            cfg.cluster = list(rt._dims(cluster))
        cfg.flags = lib.OXIDE_LAUNCH_COOPERATIVE if cooperative else 0
        # oxide_task_launch copies the arguments (bytes too); the arrays must outlive the task.
        return cls._made(lib.oxide_task_launch, kernel.device, (kernel, tuple(args)), kernel._h, cfg, rows,
                         packer.n)

    @classmethod
    def copy(cls, dst: Union[DeviceArray, HostArray], src: Union[DeviceArray, HostArray]) -> Task:
        """A copy between DeviceArrays and HostArrays (host to device, device to host, device to
        device) of the same size in bytes. Copies of pageable memory (NumPy arrays) are refused:
        the task may run long after the call, and graphs need pinned memory."""
        from ._runtime import DeviceArray
        _same_size(dst, src)
        keep = (dst, src)
        if isinstance(dst, DeviceArray) and isinstance(src, HostArray):
            return cls._made(lib.oxide_task_copy_htod, dst.device, keep, dst.device._h, dst.ptr, src._p, dst.nbytes)
        if isinstance(dst, HostArray) and isinstance(src, DeviceArray):
            return cls._made(lib.oxide_task_copy_dtoh, src.device, keep, src.device._h, dst._p, src.ptr, src.nbytes)
        if isinstance(dst, DeviceArray) and isinstance(src, DeviceArray):
            return cls._made(lib.oxide_task_copy_dtod, dst.device, keep, dst.device._h, dst.ptr, src.ptr, src.nbytes)
        raise TypeError(f"Task.copy(dst, src) copies between oxide.DeviceArray and oxide.HostArray (pinned) "
                        f"memory; got {type(dst).__name__} and {type(src).__name__} (copy a NumPy array into "
                        f"an oxide.HostArray first: h = oxide.HostArray.from_numpy(x))")

    @classmethod
    def memset(cls, array: DeviceArray, value: int = 0) -> Task:
        """Set every byte of a DeviceArray to value (0..255)."""
        if not 0 <= value <= 255:
            raise ValueError(f"Task.memset sets bytes: value must be 0..255, got {value}")
        return cls._made(lib.oxide_task_memset, array.device, (array,), array.device._h, array.ptr, value,
                         array.nbytes, 1)

    @classmethod
    def _compose(cls, fn: Any, what: str, tasks: Sequence[Task]) -> Task:
        if not tasks:
            raise ValueError(f"Task.{what}() takes at least one task")
        for t in tasks:
            if not isinstance(t, Task):
                raise TypeError(f"Task.{what}() takes Tasks, got {type(t).__name__}")
        arr = ffi.new("oxide_task *[]", [t._h for t in tasks])
        return cls._made(fn, tasks[0].device, tuple(tasks), arr, len(tasks))

    @classmethod
    def sequence(cls, *tasks: Task) -> Task:
        """The tasks one after the other."""
        return cls._compose(lib.oxide_task_sequence, "sequence", tasks)

    @classmethod
    def join(cls, *tasks: Task) -> Task:
        """The tasks side by side (separate streams); done when all are."""
        return cls._compose(lib.oxide_task_join, "join", tasks)

    def submit(self, stream: object = None) -> None:
        """Queue the task's work on stream (None: the default stream) and return."""
        check(lib.oxide_task_submit(self._h, _runtime().resolve_stream(stream, self.device)[0]))

    def sync(self, stream: object = None) -> None:
        """Queue the task's work on stream and wait for it."""
        check(lib.oxide_task_sync(self._h, _runtime().resolve_stream(stream, self.device)[0]))

    def graph(self) -> Graph:
        """Capture the task once as an executable Graph."""
        out = ffi.new("oxide_graph **")
        check(lib.oxide_graph_create(self._h, out))
        return Graph(out[0], self.device, (self,))

    def _release(self, h: Any) -> None:
        lib.oxide_task_destroy(h)

    def close(self) -> None:
        """Destroy it now (also on garbage collection)."""
        self._close()


def _same_size(dst: Union[DeviceArray, HostArray], src: Union[DeviceArray, HostArray]) -> None:
    if dst.nbytes != src.nbytes:
        raise ValueError(f"size mismatch: the destination holds {dst.nbytes} bytes, the source {src.nbytes}")


# ---------------------------------------------------------------------------------------------
# pinned host memory


class HostArray(Owned, Layout):
    """Page-locked (pinned) host memory holding a C-contiguous array of one scalar type:
    `HostArray(shape, dtype="f32", device=None)`, `HostArray.from_numpy(x)`. `.numpy()` is a NumPy
    view of it (which keeps it alive); copies to and from device memory with a stream
    (`DeviceArray.copy_from_host(h, stream)`, `.copy_to_host(h, stream)`) return at once, and
    `Task.copy` puts them into tasks and graphs."""

    __slots__ = ("_h", "_p", "ptr", "shape", "scalar", "size", "nbytes", "device", "__weakref__")
    _p: Any

    def __init__(self, shape: Union[int, Sequence[int]], dtype: object = "f32",
                 device: Union[None, int, Device] = None) -> None:
        rt = _runtime()
        self.device = rt._device(device)
        self.shape = rt._shape(shape)
        self.scalar = scalar_name(dtype)
        self.size = rt._prod(self.shape)
        self.nbytes = self.size * SIZE[self.scalar]
        out = ffi.new("void **")
        check(lib.oxide_host_alloc(self.device._h, max(self.nbytes, 1), out))
        self._h = self._p = out[0]
        self.ptr = int(ffi.cast("uintptr_t", self._p))

    @classmethod
    def from_numpy(cls, array: object, device: Union[None, int, Device] = None) -> HostArray:
        """A new pinned array holding a copy of array."""
        import numpy as np
        host = np.ascontiguousarray(array)
        h = cls(host.shape, host.dtype, device)
        h.numpy()[...] = host
        return h

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """The NumPy dtype of the elements."""
        return numpy_dtype(self.scalar)

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy's array interface (version 3) over the pinned memory."""
        typestr = TO_TYPESTR.get(self.scalar) or self.dtype.str
        return {"shape": self.shape, "typestr": typestr, "data": (self.ptr, False), "version": 3}

    def numpy(self) -> numpy.ndarray[Any, Any]:
        """A NumPy array over this memory (no copy; it keeps this HostArray alive)."""
        import numpy as np
        return np.asarray(self)

    def _release(self, h: Any) -> None:
        lib.oxide_host_free(h)

    def free(self) -> None:
        """Free the pinned memory now (also on garbage collection)."""
        self._close()

    def __repr__(self) -> str:
        return f"<oxide.HostArray shape={self.shape} dtype={self.scalar} pinned>"
