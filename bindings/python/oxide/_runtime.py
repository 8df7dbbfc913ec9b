"""Devices, streams, events, device arrays, loaded modules and kernel launches."""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, Union

from . import _dlpack, _graph, _interop
from ._errors import LaunchError, NoDeviceError, NoDriverError, check, error_for
from ._ffi import ffi, lib
from ._handle import Layout, Owned
from ._manifest import Manifest, read_manifest
from ._args import _UNSEEN, ArgPacker, LaunchBase, buffer_arg, fast_setup
from ._types import SIZE, TO_TYPESTR, numpy_dtype, scalar_name

if TYPE_CHECKING:
    import numpy

    from ._graph import Capture, Graph, HostArray, Task
    from ._manifest import KernelInfo, Param

# A grid or block: an int, or 1 to 3 ints.
Dims = Union[int, Sequence[int]]


# ---------------------------------------------------------------------------------------------
# devices


def driver_version() -> int:
    """CUDA version the driver supports (e.g. 13000). Raises NoDriverError without a driver."""
    v = ffi.new("int *")
    check(lib.oxide_driver_version(v))
    return int(v[0])


def device_count() -> int:
    """Number of GPUs the driver sees; 0 without a driver or GPU."""
    n = ffi.new("int *")
    st = lib.oxide_device_count(n)
    if st in (lib.OXIDE_ERROR_NO_DRIVER, lib.OXIDE_ERROR_NO_DEVICE):
        return 0
    check(st)
    return int(n[0])


def is_available() -> bool:
    """True when a CUDA driver and at least one GPU are present."""
    return device_count() > 0


def devices() -> List[Device]:
    """All GPUs, as Device objects ([] without a driver or GPU)."""
    return [Device(i) for i in range(device_count())]


def no_gpu_reason() -> Optional[str]:
    """Why no GPU can be used here (a sentence), or None when one can."""
    n = ffi.new("int *")
    st = lib.oxide_device_count(n)
    if st == lib.OXIDE_OK and n[0] > 0:
        return None
    return error_for(st).message if st else "the driver sees no GPU"


_devices: Dict[int, Device] = {}
_devices_lock = threading.Lock()


class Device:
    """A GPU, by index (CUDA_VISIBLE_DEVICES applies). `Device(0)` is the same object each time and
    lives as long as the process. Raises NoDriverError / NoDeviceError when there is none."""

    __slots__ = ("_h", "index", "_default_stream", "_sync_event", "__weakref__")
    _h: Any
    index: int
    _default_stream: Optional[Stream]
    _sync_event: Optional[Event]

    def __new__(cls, index: Union[int, Device] = 0) -> Device:
        if isinstance(index, Device):
            return index
        index = int(index)
        d = _devices.get(index)
        if d is not None:
            return d
        with _devices_lock:
            d = _devices.get(index)
            if d is None:
                out = ffi.new("oxide_device **")
                check(lib.oxide_device_get(index, out))
                d = object.__new__(cls)
                d._h, d.index, d._default_stream, d._sync_event = out[0], index, None, None
                _devices[index] = d
        return d

    def _get(self, fn: Any, ctype: str = "int *") -> int:
        v = ffi.new(ctype)
        check(fn(self._h, v))
        return int(v[0])

    @property
    def name(self) -> str:
        """The GPU's name ("NVIDIA H200")."""
        p = ffi.new("const char **")
        check(lib.oxide_device_name(self._h, p))
        return str(ffi.string(p[0]).decode())

    @property
    def compute_capability(self) -> Tuple[int, int]:
        """(major, minor): (9, 0) on an H200."""
        a, b = ffi.new("int *"), ffi.new("int *")
        check(lib.oxide_device_compute_capability(self._h, a, b))
        return (a[0], b[0])

    @property
    def target(self) -> str:
        """The oxide target for this GPU ("sm_90a" on an H200)."""
        major, minor = self.compute_capability
        if (major, minor) in ((9, 0), (10, 0)):
            return f"sm_{major}{minor}a"
        return f"sm_{major}{minor}"

    @property
    def sm_count(self) -> int:
        """Number of streaming multiprocessors."""
        return self._get(lib.oxide_device_sm_count)

    @property
    def total_memory(self) -> int:
        """Device memory in bytes."""
        return self._get(lib.oxide_device_total_memory, "size_t *")

    def memory_info(self) -> Tuple[int, int]:
        """(free_bytes, total_bytes) now."""
        f, t = ffi.new("size_t *"), ffi.new("size_t *")
        check(lib.oxide_device_memory_info(self._h, f, t))
        return (f[0], t[0])

    def attribute(self, cu_attribute: int) -> int:
        """A CUdevice_attribute's value (cuDeviceGetAttribute)."""
        v = ffi.new("int *")
        check(lib.oxide_device_attribute(self._h, int(cu_attribute), v))
        return int(v[0])

    def synchronize(self) -> None:
        """Wait for all work queued on the device."""
        check(lib.oxide_device_synchronize(self._h))

    def check(self) -> None:
        """Raise DeviceFailedError if a kernel fault has failed this device."""
        check(lib.oxide_device_check(self._h))

    def reset(self) -> None:
        """Reset the primary context (clears a failed state; invalidates every handle made on it)."""
        check(lib.oxide_device_reset(self._h))
        self._default_stream = None
        self._sync_event = None
        _interop.forget_streams(self)

    def make_current(self) -> None:
        """Make the device's primary context current on this thread (for other CUDA libraries)."""
        check(lib.oxide_device_make_current(self._h))

    @property
    def default_stream(self) -> Stream:
        """The device's default (legacy NULL) stream."""
        if self._default_stream is None:
            out = ffi.new("oxide_stream **")
            check(lib.oxide_stream_default(self._h, out))
            self._default_stream = Stream._adopt(out[0], self, owned=False)
        return self._default_stream

    def create_stream(self, non_blocking: bool = False) -> Stream:
        """A new Stream on this device."""
        return Stream(self, non_blocking=non_blocking)

    def __repr__(self) -> str:
        try:
            return f"<oxide.Device {self.index}: {self.name} (sm_{''.join(map(str, self.compute_capability))})>"
        except Exception:
            return f"<oxide.Device {self.index}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.index == self.index

    def __hash__(self) -> int:
        return hash(("oxide.Device", self.index))


def _device(d: Union[None, int, Device]) -> Device:
    if d is None:
        return Device(0)
    return d if isinstance(d, Device) else Device(d)


def synchronize(device: Union[None, int, Device] = None) -> None:
    """Wait for all work on a device (default: device 0)."""
    _device(device).synchronize()


# ---------------------------------------------------------------------------------------------
# streams and events


class Stream(Owned):
    """An ordered queue of work on one device. `Stream(device, non_blocking=False)` makes a new one;
    `Stream.wrap(handle)` wraps a CUstream made elsewhere (an int, or an object with
    `__cuda_stream__`, `.cuda_stream` or `.ptr`). `__cuda_stream__` lets other libraries use it."""

    __slots__ = ("_h", "device", "handle", "_owned", "_keep", "_addr", "__weakref__")
    device: Device
    handle: int
    _owned: bool
    _keep: object
    _addr: object  # the oxide_stream's address for the launch path's C lane; False once closed

    def __init__(self, device: Union[None, int, Device] = None, non_blocking: bool = False) -> None:
        dev = _device(device)
        out = ffi.new("oxide_stream **")
        check(lib.oxide_stream_create(dev._h, lib.OXIDE_STREAM_NON_BLOCKING if non_blocking else 0, out))
        self._init(out[0], dev, True)

    def _init(self, h: Any, dev: Device, owned: bool) -> None:
        self._h, self.device, self._owned, self._keep = h, dev, owned, None
        self._addr = int(ffi.cast("uintptr_t", h))
        p = ffi.new("void **")
        check(lib.oxide_stream_native(h, p))
        self.handle = int(ffi.cast("uintptr_t", p[0]))

    @classmethod
    def _adopt(cls, h: Any, dev: Device, owned: bool) -> Stream:
        s = object.__new__(cls)
        s._init(h, dev, owned)
        return s

    @classmethod
    def wrap(cls, stream: object, device: Union[None, int, Device] = None) -> Stream:
        """Wrap a foreign stream (raw CUstream int, or an object with __cuda_stream__, .cuda_stream
        or .ptr) without taking ownership; the object is kept alive while the wrapper lives."""
        dev = _device(device)
        handle = _interop.stream_handle(stream)
        out = ffi.new("oxide_stream **")
        check(lib.oxide_stream_wrap(dev._h, ffi.cast("void *", handle), out))
        s = cls._adopt(out[0], dev, True)
        if not isinstance(stream, int):
            s._keep = stream
        return s

    def __cuda_stream__(self) -> Tuple[int, int]:
        """(0, CUstream handle): the CUDA stream protocol, for other libraries."""
        return (0, self.handle)

    @property
    def ptr(self) -> int:
        """The CUstream handle (as CuPy spells it)."""
        return self.handle

    def synchronize(self) -> None:
        """Wait for all work queued on the stream."""
        check(lib.oxide_stream_synchronize(self._h))

    def query(self) -> bool:
        """True when all work queued so far has completed."""
        d = ffi.new("int *")
        check(lib.oxide_stream_query(self._h, d))
        return bool(d[0])

    def wait(self, what: Union[Event, Stream]) -> None:
        """Make later work here wait for an Event, or for everything queued so far on another Stream."""
        if isinstance(what, Stream):
            ev = Event(self.device, timing=False)
            ev.record(what)
            what = ev
        check(lib.oxide_stream_wait_event(self._h, what._h))

    def record(self, event: Optional[Event] = None) -> Event:
        """Record an event (a new one if none is given) here and return it."""
        ev = event if event is not None else Event(self.device)
        ev.record(self)
        return ev

    def begin_capture(self) -> None:
        """Record the work queued here from now on into a graph instead of running it (not on the
        default stream); end_capture() gives the Graph."""
        _graph.begin_capture(self)

    def end_capture(self) -> Graph:
        """End the capture begin_capture() started and return the captured Graph."""
        return _graph.end_capture(self)

    def capture(self) -> Capture:
        """`with stream.capture() as cap: ...` then `cap.graph.launch(stream)`."""
        return _graph.Capture(self)

    def _release(self, h: Any) -> None:
        self._addr = False
        if self._owned:
            lib.oxide_stream_destroy(h)

    def close(self) -> None:
        """Destroy the stream now (after its work completes); also on garbage collection."""
        self._close()

    def __exit__(self, *exc: object) -> None:
        self.synchronize()

    def __repr__(self) -> str:
        return f"<oxide.Stream 0x{self.handle:x} on device {self.device.index}>"


class Event(Owned):
    """A marker in a stream, with timing unless timing=False."""

    __slots__ = ("_h", "device", "__weakref__")

    def __init__(self, device: Union[None, int, Device] = None, timing: bool = True,
                 blocking_sync: bool = False) -> None:
        self.device = _device(device)
        flags = (0 if timing else lib.OXIDE_EVENT_DISABLE_TIMING) | (
            lib.OXIDE_EVENT_BLOCKING_SYNC if blocking_sync else 0)
        out = ffi.new("oxide_event **")
        check(lib.oxide_event_create(self.device._h, flags, out))
        self._h = out[0]

    def record(self, stream: object = None) -> Event:
        """Record the event on stream (None: the default stream); returns the event."""
        sh, _ = resolve_stream(stream, self.device)
        check(lib.oxide_event_record(self._h, sh))
        return self

    def synchronize(self) -> None:
        """Wait until the work before the event's last record has completed."""
        check(lib.oxide_event_synchronize(self._h))

    def query(self) -> bool:
        """True when the work before the event's last record has completed."""
        d = ffi.new("int *")
        check(lib.oxide_event_query(self._h, d))
        return bool(d[0])

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this (recorded, completed) event to end."""
        ms = ffi.new("float *")
        check(lib.oxide_event_elapsed_ms(self._h, end._h, ms))
        return float(ms[0])

    def _release(self, h: Any) -> None:
        lib.oxide_event_destroy(h)

    def close(self) -> None:
        """Destroy the event now (also on garbage collection)."""
        self._close()


def resolve_stream(stream: object, device: Optional[Device]) -> Tuple[Any, int]:
    """(oxide_stream* or NULL, native handle) for stream=None, a Stream, or a foreign stream."""
    if stream is None:
        return ffi.NULL, 0
    if type(stream) is Stream:
        return stream._h, stream.handle
    return _interop.foreign_stream(stream, _device(device))


# ---------------------------------------------------------------------------------------------
# device memory


def _shape(shape: Union[int, Sequence[int]]) -> Tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class DeviceArray(Owned, Layout):
    """Device memory holding a C-contiguous array of one scalar type.

    `DeviceArray.from_numpy(x)`, `.empty(shape, dtype)`, `.zeros(...)`; `.to_numpy()` copies back.
    It has `shape`, `dtype` (NumPy), `scalar` (oxide name, e.g. "f32"), `size`, `nbytes`, `ptr`,
    and `__cuda_array_interface__` so CuPy, PyTorch and Numba can use it without a copy."""

    __slots__ = ("_h", "ptr", "shape", "scalar", "size", "nbytes", "device", "_readonly", "_owner", "_arg",
                 "__weakref__")
    _readonly: bool
    _owner: object
    _arg: Any

    def __init__(self, shape: Union[int, Sequence[int]], dtype: object = "f32",
                 device: Union[None, int, Device] = None, *, readonly: bool = False) -> None:
        dev = _device(device)
        self.shape = _shape(shape)
        self.scalar = scalar_name(dtype)
        self.size = _prod(self.shape)
        self.nbytes = self.size * SIZE[self.scalar]
        out = ffi.new("oxide_buffer **")
        check(lib.oxide_buffer_alloc(dev._h, max(self.nbytes, 1), out))
        self._h, self.device, self._owner = out[0], dev, None
        self.ptr = lib.oxide_buffer_ptr(self._h)
        self.readonly = readonly

    @classmethod
    def empty(cls, shape: Union[int, Sequence[int]], dtype: object = "f32",
              device: Union[None, int, Device] = None) -> DeviceArray:
        """A new, uninitialised device array."""
        return cls(shape, dtype, device)

    @classmethod
    def zeros(cls, shape: Union[int, Sequence[int]], dtype: object = "f32",
              device: Union[None, int, Device] = None) -> DeviceArray:
        """A new device array of zeros."""
        a = cls(shape, dtype, device)
        a.zero()
        return a

    @classmethod
    def from_numpy(cls, array: object, device: Union[None, int, Device] = None, stream: object = None,
                   readonly: bool = False) -> DeviceArray:
        """Copy a NumPy array (or anything np.asarray takes) to a new device array."""
        import numpy as np
        host = np.ascontiguousarray(array)
        a = cls(host.shape, host.dtype, device, readonly=readonly)
        a.copy_from_numpy(host, stream)
        return a

    @classmethod
    def wrap(cls, obj: object, device: Union[None, int, Device] = None) -> DeviceArray:
        """A DeviceArray viewing the memory of an object with __cuda_array_interface__ or __dlpack__
        (no copy; obj is kept alive)."""
        ptr, n, scalar, mutable, shape, _ = _interop.describe(obj, "wrap()", None, None)
        dev = _device(device)
        out = ffi.new("oxide_buffer **")
        check(lib.oxide_buffer_wrap(dev._h, ptr, max(n * SIZE[scalar], 1), out))
        a = object.__new__(cls)
        a._h, a.ptr, a.shape, a.scalar, a.size = out[0], ptr, tuple(shape), scalar, n
        a.nbytes, a.device, a._owner = n * SIZE[scalar], dev, obj
        a.readonly = not mutable
        return a

    @property
    def readonly(self) -> bool:
        """True: launches pass it as read-only (a kernel's mut parameters refuse it)."""
        return self._readonly

    @readonly.setter
    def readonly(self, value: bool) -> None:
        self._readonly = bool(value)
        # The oxide_arg this array becomes in a launch, made once (the launch path copies it).
        self._arg = buffer_arg(self.scalar, self.ptr, self.size, not self._readonly)

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """The NumPy dtype of the elements."""
        return numpy_dtype(self.scalar)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def copy_from_numpy(self, array: object, stream: object = None) -> DeviceArray:
        """Copy a host array of the same size in bytes into this one (waits for the copy); returns self."""
        import numpy as np
        host = np.ascontiguousarray(array)
        if host.nbytes != self.nbytes:
            raise ValueError(f"size mismatch: the device array holds {self.nbytes} bytes, the host array {host.nbytes}")
        src = ffi.from_buffer(host)
        if stream is None:
            check(lib.oxide_memcpy_htod(self.device._h, self.ptr, src, self.nbytes))
        else:
            sh, _ = resolve_stream(stream, self.device)
            check(lib.oxide_memcpy_htod_async(sh, self.ptr, src, self.nbytes))
            check(lib.oxide_stream_synchronize(sh))
        return self

    def to_numpy(self, out: Optional[numpy.ndarray[Any, Any]] = None, stream: object = None) -> numpy.ndarray[Any, Any]:
        """Copy to a new (or the given) NumPy array and return it. With a stream, the copy is
        ordered after the work queued there (and waited for)."""
        import numpy as np
        if out is None:
            out = np.empty(self.shape, dtype=self.dtype)
        elif not out.flags.c_contiguous or out.nbytes != self.nbytes:
            raise ValueError("out must be a C-contiguous array of the same size")
        dst = ffi.from_buffer(out)
        if stream is None:
            check(lib.oxide_memcpy_dtoh(self.device._h, dst, self.ptr, self.nbytes))
        else:
            sh, _ = resolve_stream(stream, self.device)
            check(lib.oxide_memcpy_dtoh_async(sh, dst, self.ptr, self.nbytes))
            check(lib.oxide_stream_synchronize(sh))
        return out

    numpy = to_numpy

    def copy_from_host(self, host: HostArray, stream: object = None) -> DeviceArray:
        """Copy a pinned oxide.HostArray of the same size in; with a stream the copy is queued there
        and the call returns at once (keep host alive and unchanged until the stream gets there)."""
        _host_copy(self, host, stream, True)
        return self

    def copy_to_host(self, host: HostArray, stream: object = None) -> HostArray:
        """Copy into a pinned oxide.HostArray of the same size; with a stream the copy is queued there
        and the call returns at once (read host after synchronizing the stream)."""
        _host_copy(self, host, stream, False)
        return host

    def copy_to(self, other: DeviceArray, stream: object = None) -> DeviceArray:
        """Device-to-device copy into another DeviceArray of the same size."""
        if other.nbytes != self.nbytes:
            raise ValueError("size mismatch")
        if stream is None:
            check(lib.oxide_memcpy_dtod(self.device._h, other.ptr, self.ptr, self.nbytes))
        else:
            sh, _ = resolve_stream(stream, self.device)
            check(lib.oxide_memcpy_dtod_async(sh, other.ptr, self.ptr, self.nbytes))
        return other

    def copy(self) -> DeviceArray:
        """A new device array holding a copy of this one."""
        c = DeviceArray(self.shape, self.scalar, self.device)
        return self.copy_to(c)

    def zero(self, stream: object = None) -> DeviceArray:
        """Set every byte to 0 (queued on stream when one is given); returns self."""
        if self.nbytes:
            if stream is None:
                check(lib.oxide_memset(self.device._h, self.ptr, 0, self.nbytes, 1))
            else:
                sh, _ = resolve_stream(stream, self.device)
                check(lib.oxide_memset_async(sh, self.ptr, 0, self.nbytes, 1))
        return self

    def reshape(self, *shape: Union[int, Sequence[int]]) -> DeviceArray:
        """A view of the same memory with another shape of as many elements."""
        dims = _shape(shape[0] if len(shape) == 1 else shape)  # type: ignore[arg-type]  # ints, or one sequence
        if _prod(dims) != self.size:
            raise ValueError(f"cannot reshape {self.size} elements into {dims}")
        v = object.__new__(DeviceArray)
        v._h, v.ptr, v.shape, v.scalar, v.size = None, self.ptr, dims, self.scalar, self.size
        v.nbytes, v.device, v._owner = self.nbytes, self.device, self
        v.readonly = self.readonly
        return v

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """The CUDA array interface (version 3), for CuPy, PyTorch and Numba."""
        if self.scalar not in TO_TYPESTR:
            raise AttributeError(f"{self.scalar} has no __cuda_array_interface__ type string")
        return {"shape": self.shape, "typestr": TO_TYPESTR[self.scalar], "data": (self.ptr, self.readonly),
                "version": 3, "strides": None, "stream": None}

    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        """A DLPack capsule of this array (the array API standard's protocol): versioned (DLPack 1.0,
        with the read-only flag) when max_version allows it. stream is the consumer's CUstream
        (None or 1: the legacy default, 2: per-thread, -1: no ordering); work queued before on the
        default stream is ordered before it. copy=True exports a copy."""
        return _dlpack.export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(kDLCUDA = 2, device index)."""
        return _dlpack.device(self)

    def _release(self, h: Any) -> None:
        lib.oxide_buffer_free(h)

    def free(self) -> None:
        """Free the device memory now (wait for work that uses it first); also on garbage collection."""
        self._close()

    def __repr__(self) -> str:
        return f"<oxide.DeviceArray shape={self.shape} dtype={self.scalar} ptr=0x{self.ptr:x}>"


def _host_copy(dev: DeviceArray, host: HostArray, stream: object, in_: bool) -> None:
    if type(host) is not _graph.HostArray:
        raise TypeError(f"DeviceArray.{'copy_from_host' if in_ else 'copy_to_host'}() takes an oxide.HostArray "
                        f"(pinned memory; NumPy arrays go through copy_from_numpy / to_numpy), got "
                        f"{type(host).__name__}")
    if host.nbytes != dev.nbytes:
        raise ValueError(f"size mismatch: the device array holds {dev.nbytes} bytes, the host array {host.nbytes}")
    if stream is None:
        st = (lib.oxide_memcpy_htod(dev.device._h, dev.ptr, host._p, dev.nbytes) if in_ else
              lib.oxide_memcpy_dtoh(dev.device._h, host._p, dev.ptr, dev.nbytes))
    else:
        sh = resolve_stream(stream, dev.device)[0]
        st = (lib.oxide_memcpy_htod_async(sh, dev.ptr, host._p, dev.nbytes) if in_ else
              lib.oxide_memcpy_dtoh_async(sh, host._p, dev.ptr, dev.nbytes))
    check(st)


# ---------------------------------------------------------------------------------------------
# loaded modules and kernels


_dims_cache: Dict[Any, Any] = {}


def _dims(d: Any) -> Any:
    if isinstance(d, list):
        d = tuple(d)
    c = _dims_cache.get(d)
    if c is None:
        if isinstance(d, int):
            t = (d, 1, 1)
        else:
            t = tuple(int(x) for x in d) + (1,) * (3 - len(d))  # type: ignore[assignment]  # checked next
            if len(t) != 3:
                raise ValueError(f"grid and block take 1 to 3 dimensions, got {d!r}")
        if min(t) < 1:
            raise ValueError(f"grid and block dimensions must be >= 1, got {d!r}")
        c = ffi.new("uint32_t[3]", t)
        if len(_dims_cache) > 1024:
            _dims_cache.clear()
        _dims_cache[d] = c
    return c


class Module(Owned):
    """A module loaded on a device: `Module.load(path)` (PTX, or a cubin with `manifest=`),
    `Module.from_ptx(text)`. Kernels are attributes (`mod.vecadd`) or items (`mod["map<f32>"]`)."""

    def __init__(self, handle: Any, device: Device) -> None:
        self._h, self.device = handle, device
        self._kernels: Dict[str, Kernel] = {}
        m = lib.oxide_loaded_module_manifest(handle)
        self.manifest = Manifest(*read_manifest(m)) if m != ffi.NULL else None

    @classmethod
    def from_ptx(cls, ptx: Union[str, bytes], device: Union[None, int, Device] = None) -> Module:
        """Load PTX text (JIT-compiled by the driver); its manifest gives the kernels' checked signatures."""
        dev = _device(device)
        data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
        out = ffi.new("oxide_loaded_module **")
        check(lib.oxide_loaded_module_load_ptx(dev._h, data, len(data), out))
        return cls(out[0], dev)

    @classmethod
    def from_cubin(cls, image: bytes, manifest: Union[None, str, bytes] = None,
                   device: Union[None, int, Device] = None) -> Module:
        """Load a cubin or fatbin; manifest is the PTX it came from (or its manifest line)."""
        dev = _device(device)
        data = bytes(image)
        man = manifest.encode() if isinstance(manifest, str) else manifest
        out = ffi.new("oxide_loaded_module **")
        check(lib.oxide_loaded_module_load_cubin(dev._h, data, len(data), man if man else ffi.NULL,
                                                 len(man) if man else 0, out))
        return cls(out[0], dev)

    @classmethod
    def load(cls, path: str, device: Union[None, int, Device] = None, manifest: Union[None, str, bytes] = None) -> Module:
        """Load a .ptx file, or a cubin/fatbin (manifest: path to or text of the PTX it came from)."""
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] == b"\x7fELF" or path.endswith((".cubin", ".fatbin")):
            if manifest is not None and os.path.exists(str(manifest)):
                with open(manifest, "rb") as f:
                    manifest = f.read()
            return cls.from_cubin(data, manifest, device)
        return cls.from_ptx(data, device)

    @property
    def kernels(self) -> Tuple[str, ...]:
        """Names of the kernels the manifest declares."""
        return tuple(k.name for k in self.manifest.kernels) if self.manifest else ()

    @property
    def jit_log(self) -> str:
        """The JIT compiler's info log of the load ("" if none)."""
        return str(ffi.string(lib.oxide_loaded_module_jit_log(self._h)).decode("utf-8", "replace"))

    def kernel(self, name: str) -> Kernel:
        """The kernel named name (by manifest name, else .entry name); NotFoundError lists the kernels."""
        k = self._kernels.get(name)
        if k is None:
            out = ffi.new("oxide_kernel **")
            check(lib.oxide_loaded_module_get_kernel(self._h, name.encode(), out))
            info = self.manifest[name] if self.manifest and name in self.manifest else None
            if info is None and self.manifest:
                entry = ffi.string(lib.oxide_kernel_name(out[0])).decode()
                info = self.manifest[entry] if entry in self.manifest else None
            k = Kernel(self, out[0], info)
            self._kernels[name] = k
        return k

    __getitem__ = kernel

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.kernel(name)
        except Exception as e:
            raise AttributeError(f"module has no kernel {name!r}; it has: {', '.join(self.kernels) or 'none'}") from e

    def __dir__(self) -> List[str]:
        return list(super().__dir__()) + [k for k in self.kernels if k.isidentifier()]

    def _release(self, h: Any) -> None:
        self._kernels = {}
        lib.oxide_loaded_module_destroy(h)

    def unload(self) -> None:
        """Unload the module now (its kernels die with it); also on garbage collection."""
        self._close()

    def __repr__(self) -> str:
        return f"<oxide.Module kernels={list(self.kernels)} on device {self.device.index}>"


_ATTRS = {"max_threads_per_block": 0, "shared_bytes": 1, "const_bytes": 2, "local_bytes": 3, "num_regs": 4,
          "ptx_version": 5, "binary_version": 6, "max_dynamic_shared_bytes": 8}


class Kernel(LaunchBase):  # type: ignore[misc]  # LaunchBase is made at run time
    """A kernel of a loaded module. Call it with its arguments in manifest order and the launch
    shape: `k(a, b, out, grid=..., block=..., stream=None, smem=0, cluster=None, cooperative=False)`,
    or `k[grid, block](...)`. Arguments are checked against the manifest: count, kind, scalar and
    element type, mutability; a NumPy array where device memory is needed raises LaunchError
    showing the copy to make. The call itself is C (LaunchBase, bindings/python/oxide_fast.c) for
    the arguments met most, and _call below for everything else."""

    def __init__(self, module: Module, handle: Any, info: Optional[KernelInfo]) -> None:
        self.module, self._h, self.info = module, handle, info
        # The block the compiler chose (tile kernels): launches give only the grid.
        self._block = _dims(info.block) if info is not None and info.block else None
        self.name = ffi.string(lib.oxide_kernel_name(handle)).decode()
        self.entry = ffi.string(lib.oxide_kernel_entry(handle)).decode()
        self.device = module.device
        self._packer = ArgPacker(info, self.device) if info else None
        self._n = self._packer.n if self._packer else 0
        self._convs = self._packer.convs if self._packer else ()
        # The parameters an array can be given for (where a framework's current stream is looked for).
        self._arrays = tuple(i for i, p in enumerate(self.params) if p.kind in ("slice", "ptr", "tensor"))
        self._kinds = self._packer.kinds if self._packer else _NULL
        # The launch path's C lane (see _args.py), for the launches it can take.
        self._fast = self._packer.fast_spec(handle, self._block is not None) if self._packer else None

    @property
    def params(self) -> Tuple[Param, ...]:
        """The kernel's parameters, as its manifest declares them."""
        return self.info.params if self.info else ()

    def signature(self) -> str:
        """"name(a: slice<f32>, ...)", as the manifest declares it."""
        return self.info.signature() if self.info else f"{self.name}(?)"

    def _bad_call(self, args: Sequence[object], grid: object, block: object) -> NoReturn:
        if grid is None or (block is None and self._block is None):
            raise TypeError(f"{self.name}(): give the launch shape: grid=... and block=... (ints or tuples)")
        if self._packer is None:
            raise LaunchError(f"{self.name}: the module has no manifest, so its kernels cannot be called with "
                              f"checked arguments")
        self._packer.check_count(args)
        raise LaunchError(f"{self.name}(): the launch was refused ({len(args)} arguments, grid={grid!r}, "
                          f"block={block!r})")

    def _framework_stream(self, args: Sequence[object]) -> Tuple[Any, ...]:
        """With no stream=, the launch goes on the current stream of the framework (CuPy, torch)
        of the first argument that is one of its arrays, else on the default stream."""
        for i in self._arrays:
            t = type(args[i])
            if t is not DeviceArray:
                fw = _fw_get(t, _UNSEEN)
                if fw is _UNSEEN:
                    fw = _interop.framework_of(t)
                if fw is not None:
                    ctx: Tuple[Any, ...] = fw.launch_stream(self.device)  # type: ignore[attr-defined]
                    return ctx
        return _NULL_STREAM

    if TYPE_CHECKING:
        def __call__(self, *args: object, grid: Optional[Dims] = None, block: Optional[Dims] = None,
                     stream: object = None, smem: int = 0, cluster: Optional[Dims] = None,
                     cooperative: bool = False) -> None:
            """Launch with args in manifest order (checked against it) and the launch shape."""

    # ---- launch: the Python lane, for what the C lane leaves (see _args.py) ----
    def _call(self, *args: object, grid: Optional[Dims] = None, block: Optional[Dims] = None, stream: object = None,
              smem: int = 0, cluster: Optional[Dims] = None, cooperative: bool = False) -> None:
        """Launch with args in manifest order (checked against it) and the launch shape."""
        try:
            g = _dims_cache[grid]
            b = _dims_cache[block] if block is not None or self._block is None else self._block
        except (KeyError, TypeError):
            if grid is None or (block is None and self._block is None):
                self._bad_call(args, grid, block)
            g, b = _dims(grid), _dims(block) if block is not None else self._block
        n = self._n
        if len(args) != n:
            self._bad_call(args, grid, block)
        if stream is None:
            sctx = self._framework_stream(args) if self._arrays else _NULL_STREAM
            sh = sctx[0]
        elif type(stream) is Stream:
            sh = stream._h
            sctx = (sh, stream.handle)
        else:
            sctx = _interop.foreign_stream(stream, self.device)
            sh = sctx[0]
        vals: Any  # the flat ints of the arguments (a tuple or a list), or NULL for none
        if n:
            keep: List[object] = []
            convs = self._convs
            if n == 1:
                vals = convs[0](args[0], sctx, keep)
            elif n == 3:
                vals = convs[0](args[0], sctx, keep) + convs[1](args[1], sctx, keep) + convs[2](args[2], sctx, keep)
            else:
                vals = []
                for i in range(n):
                    vals += convs[i](args[i], sctx, keep)
        else:
            vals = _NULL
        if cluster is None and not cooperative:
            st = _launch(self._h, sh, g, b, smem, _NULL, self._kinds, vals, n)
        else:
            cfg = ffi.new("oxide_launch_config *")
            cfg.grid, cfg.block, cfg.smem = list(g), list(b), smem
            if cluster is not None:
                cfg.cluster = list(_dims(cluster))
            cfg.flags = lib.OXIDE_LAUNCH_COOPERATIVE if cooperative else 0
            st = _launch(self._h, sh, g, b, smem, cfg, self._kinds, vals, n)
        if st:
            raise error_for(st)

    def task(self, *args: object, grid: Optional[Dims] = None, block: Optional[Dims] = None, smem: int = 0,
             cluster: Optional[Dims] = None, cooperative: bool = False) -> Task:
        """This launch as a lazy oxide.Task (arguments checked now), for sequences and graphs."""
        return _graph.Task.launch(self, args, grid, block, smem, cluster, cooperative)

    def __getitem__(self, cfg: Any) -> Callable[..., None]:
        """`k[grid, block]` or `k[grid, block, stream]` or `k[grid, block, stream, smem]`: a launcher.
        A kernel whose block the compiler chose (a tile kernel) takes `k[grid]`, the grid an int or
        a tuple of 1 to 3 ints."""
        if self._block is not None:
            return lambda *args: self(*args, grid=cfg)
        if not isinstance(cfg, tuple) or not 2 <= len(cfg) <= 4:
            raise TypeError("use k[grid, block], k[grid, block, stream] or k[grid, block, stream, smem]")
        grid, block = cfg[0], cfg[1]
        stream = cfg[2] if len(cfg) > 2 else None
        smem = cfg[3] if len(cfg) > 3 else 0

        def launch(*args: object) -> None:
            return self(*args, grid=grid, block=block, stream=stream, smem=smem)
        return launch

    def attribute(self, name: str) -> int:
        """Compiled resources: num_regs, shared_bytes, local_bytes, const_bytes, max_threads_per_block,
        ptx_version, binary_version, max_dynamic_shared_bytes."""
        v = ffi.new("int *")
        check(lib.oxide_kernel_get_attribute(self._h, _ATTRS[name], v))
        return int(v[0])

    def occupancy(self, block_threads: int, smem: int = 0) -> int:
        """Blocks of block_threads threads (with smem bytes of dynamic shared memory) that fit on one SM."""
        v = ffi.new("int *")
        check(lib.oxide_kernel_occupancy(self._h, block_threads, smem, v))
        return int(v[0])

    def suggest_block_size(self, smem: int = 0) -> Tuple[int, int]:
        """(min_grid, block_threads) for the best occupancy."""
        g, b = ffi.new("int *"), ffi.new("int *")
        check(lib.oxide_kernel_suggest_block_size(self._h, smem, g, b))
        return (g[0], b[0])

    def __repr__(self) -> str:
        return f"<oxide.Kernel {self.signature()}>"


_NULL = ffi.NULL
_NULL_STREAM = (ffi.NULL, 0)
_fw_get = _interop._frameworks.get
_launch = lib.oxide_py_launch


def _raise_status(st: int) -> NoReturn:
    raise error_for(st)


fast_setup(DeviceArray, Stream, _interop._frameworks, _interop.CUPY, _interop.TORCH, _raise_status)
