"""Interoperation with other GPU libraries: device memory described by __cuda_array_interface__
(CuPy, PyTorch, Numba; v3 streams honoured) or DLPack (__dlpack__), and foreign streams
(__cuda_stream__, torch's .cuda_stream, CuPy's .ptr, or a raw CUstream handle)."""
from __future__ import annotations

import ctypes
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._errors import LaunchError, check
from ._ffi import ffi, lib
from ._tables import NUMPY, SIZE
from ._types import FROM_DLPACK, FROM_TORCH, FROM_TYPESTR

if TYPE_CHECKING:
    from ._runtime import Device, Stream

Shape = Tuple[int, ...]
# What describe() finds: (ptr, elements, scalar, mutable, shape, strides in bytes or None).
Desc = Tuple[int, int, str, bool, Shape, Optional[Shape]]
# What tensor_view() finds: (ptr, scalar, shape, strides in elements, mutable).
View = Tuple[int, str, Shape, Shape, bool]
# A launch's stream context: (oxide_stream*, CUstream handle[, the framework it came from]).
StreamCtx = Tuple[Any, ...]

# ---------------------------------------------------------------------------------------------
# streams


def stream_handle(obj: object) -> int:
    """The CUstream handle (an int) of a foreign stream object."""
    if isinstance(obj, int):
        return obj
    f = getattr(obj, "__cuda_stream__", None)
    if f is not None:
        v = f() if callable(f) else f
        return int(v[1] if isinstance(v, tuple) else v)
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(obj, attr, None)
        if v is not None:
            v = getattr(v, "value", v)  # ctypes c_void_p (Numba)
            return int(v or 0)
    raise TypeError(f"stream= takes an oxide.Stream, an object with __cuda_stream__ (or .cuda_stream / .ptr), "
                    f"or a raw CUstream handle (int); got {type(obj).__name__}")


_wrapped: Dict[Tuple[int, int], Stream] = {}  # (device index, handle) -> oxide.Stream wrapping it
# Per device index, handle -> the address of the oxide_stream wrapping it: the launch path's C
# lane reads these (each cleared in place whenever _wrapped lets go of the streams behind it).
_addrs: Dict[int, Dict[int, int]] = {}


_DEFAULT = (ffi.NULL, 0)


def foreign_stream(obj: object, device: Device) -> Tuple[Any, int]:
    """(oxide_stream*, handle) for a foreign stream; wrappers are cached by handle."""
    if type(obj) is int:
        h = obj
    else:
        from ._runtime import Stream
        if isinstance(obj, Stream):
            return obj._h, obj.handle
        h = stream_handle(obj)
    if h == 0 or h == 1:  # the legacy default stream (CAI and CUDA spell it 0 or 1)
        return _DEFAULT
    key = (device.index, h)
    s = _wrapped.get(key)
    if s is None:
        from ._runtime import Stream
        if len(_wrapped) > 256:
            for addrs in _addrs.values():
                addrs.clear()
            _wrapped.clear()
        out = ffi.new("oxide_stream **")
        check(lib.oxide_stream_wrap(device._h, ffi.cast("void *", h), out))
        s = _wrapped[key] = Stream._adopt(out[0], device, owned=True)
        stream_addrs(device)[h] = int(ffi.cast("uintptr_t", s._h))
    return s._h, h


def stream_addrs(device: Device) -> Dict[int, int]:
    """The handle -> oxide_stream address dict of device's wrapped streams (the same dict each time)."""
    return _addrs.setdefault(device.index, {})


def stream_addr(h: int, device: Device) -> int:
    """The address of the oxide_stream for the raw CUstream h (0: the default), wrapping it if new."""
    sh, _ = foreign_stream(h, device)
    return int(ffi.cast("uintptr_t", sh))


def forget_streams(device: Device) -> None:
    stream_addrs(device).clear()
    for key in [k for k in _wrapped if k[0] == device.index]:
        del _wrapped[key]


def _sync_event(device: Device) -> Any:
    ev = device._sync_event
    if ev is None:
        out = ffi.new("oxide_event **")
        check(lib.oxide_event_create(device._h, lib.OXIDE_EVENT_DISABLE_TIMING, out))
        ev = device._sync_event = out[0]
    return ev


def order_after(producer: int, sctx: StreamCtx, device: Device) -> None:
    """CAI v3: make the launch stream wait for the producer's stream (unless they are the same)."""
    consumer_h, consumer = sctx[0], sctx[1]
    if producer == consumer or (producer in (1, 0) and consumer == 0):
        return
    psh, _ = foreign_stream(producer, device)
    if psh == ffi.NULL:
        psh = device.default_stream._h
    if consumer_h == ffi.NULL:
        consumer_h = device.default_stream._h
    ev = _sync_event(device)
    check(lib.oxide_event_record(ev, psh))
    check(lib.oxide_stream_wait_event(consumer_h, ev))


# ---------------------------------------------------------------------------------------------
# frameworks: CuPy arrays and torch tensors recognised by type, read through their own attributes
# (their __cuda_array_interface__ builds a new dict at every access, in Python for torch), and
# their current streams


def _no_stream(index: int) -> int:
    return 0


class Framework:
    """CuPy or PyTorch: which classes are its arrays, and its current stream on a device. The
    module is looked up in sys.modules at each use (it is imported already if one of its arrays
    exists), so nothing here imports a framework."""

    __slots__ = ("name", "bases", "_mod", "_current")

    def __init__(self, name: str, bases: Tuple[str, ...]) -> None:
        self._mod: Any = None
        self._current: Callable[[int], int] = _no_stream
        self.name, self.bases = name, bases

    def owns(self, cls: type) -> bool:
        """Whether cls is one of the framework's array classes (or a subclass of one)."""
        for c in cls.__mro__:
            mod = getattr(c, "__module__", "") or ""
            if (mod == self.name or mod.startswith(self.name + ".")) and c.__name__ in self.bases:
                return True
        return False

    def current_stream(self, device: Device) -> int:
        """The CUstream handle (an int) the framework queues its work on now, on device."""
        mod = sys.modules.get(self.name)
        if mod is None:
            return 0
        if mod is not self._mod:
            self._mod, self._current = mod, self._resolve(mod)
        return self._current(device.index)

    def _resolve(self, mod: Any) -> Callable[[int], int]:
        if self.name == "torch":
            raw = getattr(getattr(mod, "_C", None), "_cuda_getCurrentRawStream", None)
            if raw is not None:  # what torch's own compiler calls: an int, no Stream object made
                current: Callable[[int], int] = raw
                return current
            return lambda index: mod.cuda.current_stream(index).cuda_stream
        get = mod.cuda.get_current_stream  # CuPy's current device, as its CAI does
        return lambda index: get().ptr

    def launch_stream(self, device: Device) -> StreamCtx:
        """The launch context (oxide_stream*, handle, self) for a launch given no stream=."""
        sh, h = foreign_stream(self.current_stream(device), device)
        return (sh, h, self)


CUPY = Framework("cupy", ("ndarray", "_ndarray_base"))
TORCH = Framework("torch", ("Tensor",))
_frameworks: Dict[type, Optional[Framework]] = {}  # type -> CUPY, TORCH or None


def framework_of(cls: type) -> Optional[Framework]:
    """CUPY, TORCH or None for the type of an argument (cached per type)."""
    try:
        return _frameworks[cls]
    except KeyError:
        pass
    fw = CUPY if CUPY.owns(cls) else TORCH if TORCH.owns(cls) else None
    if len(_frameworks) > 4096:
        _frameworks.clear()
    _frameworks[cls] = fw
    return fw


def dtype_is(dtype: Any, which: int, elem: str, what: str, ok: List[object]) -> bool:
    """Whether a CuPy (which 0: a NumPy dtype) or torch (1) dtype is the scalar elem; remembered in
    ok[which] when it is. LaunchError when it is another scalar oxide knows; False when oxide
    knows none (the general path then says what it can)."""
    if which:
        scalar = FROM_TORCH.get(str(dtype).rpartition(".")[2])
    else:
        typestr = getattr(dtype, "str", "")
        scalar = None if typestr[:1] == ">" else FROM_TYPESTR.get(typestr[1:])
    if scalar is None:
        return False
    if scalar != elem:
        raise LaunchError(f"{what} takes {elem} elements, got an array of {scalar}{astype_hint(elem)}")
    ok[which] = dtype
    return True


def cupy_order(sctx: Optional[StreamCtx], device: Optional[Device]) -> None:
    """CuPy's __cuda_array_interface__ (v3) names its current stream as the array's; a launch on
    another stream waits for it, as the generic path does."""
    if sctx is not None and device is not None and (len(sctx) < 3 or sctx[2] is not CUPY):
        order_after(CUPY.current_stream(device) or 1, sctx, device)


# ---------------------------------------------------------------------------------------------
# device memory


def astype_hint(elem: str) -> str:
    return f" (convert it first, e.g. x.astype(numpy.{NUMPY[elem]}) or x.to(torch.{NUMPY[elem]}))"


def _param_var(what: str) -> str:
    # "vecadd(): argument 1 'a' (slice<f32>)" -> "a"
    try:
        return what.split("'")[1]
    except IndexError:
        return "x"


def host_memory_error(v: object, what: str) -> LaunchError:
    name = _param_var(what)
    kind = "a NumPy array" if type(v).__module__ == "numpy" else f"host memory ({type(v).__module__}." \
        f"{type(v).__name__})"
    return LaunchError(
        f"{what} needs device memory, but got {kind}, which lives in host memory. Copy it to the GPU first:\n"
        f"    {name}_dev = oxide.DeviceArray.from_numpy({name})\n"
        f"and pass {name}_dev (read results back with {name}_dev.to_numpy()); CuPy and PyTorch CUDA arrays "
        f"are accepted as they are.")


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _contiguous(shape: Sequence[int], strides: Optional[Sequence[int]], itemsize: int) -> bool:
    if strides is None:
        return True
    expect = itemsize
    for dim, st in zip(reversed(shape), reversed(strides)):
        if dim != 1 and st != expect:
            return False
        expect *= dim
    return True


def describe(v: Any, what: str, device: Optional[Device], sctx: Optional[StreamCtx],
             keep: Optional[List[object]] = None, kname: Optional[str] = None) -> Desc:
    """(ptr, elements, scalar, mutable, shape, strides) of device memory given as v, or LaunchError."""
    try:
        cai = v.__cuda_array_interface__
    except AttributeError:
        cai = None
    if cai is not None:
        return _from_cai(v, cai, what, device, sctx)
    mod = type(v).__module__
    if mod == "numpy" or (hasattr(v, "__array_interface__") and not hasattr(v, "__dlpack_device__")):
        raise host_memory_error(v, what)
    if hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
        dev_type = v.__dlpack_device__()[0]
        if dev_type in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return _from_dlpack(v, what, device, sctx, keep)
        raise host_memory_error(v, what)
    if isinstance(v, (list, tuple, bytes, bytearray, memoryview)):
        raise host_memory_error(v, what)
    raise LaunchError(f"{what} needs device memory: an oxide.DeviceArray, or an object with "
                      f"__cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, Numba); got {type(v).__name__}")


def _cai_scalar(cai: Dict[str, Any], what: str) -> str:
    typestr = cai["typestr"]
    scalar = FROM_TYPESTR.get(typestr[1:])
    if scalar is None or typestr[0] == ">":
        raise LaunchError(f"{what}: element type {typestr!r} of the given array is not one oxide passes")
    if cai.get("mask") is not None:
        raise LaunchError(f"{what}: masked arrays are not supported")
    return scalar


def _from_cai(v: object, cai: Dict[str, Any], what: str, device: Optional[Device],
              sctx: Optional[StreamCtx]) -> Desc:
    scalar = _cai_scalar(cai, what)
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if not _contiguous(shape, strides, SIZE[scalar]):
        raise LaunchError(f"{what} needs contiguous memory; the given array has strides {tuple(strides or ())}: pass a "
                          f"contiguous copy (x.contiguous() in PyTorch, cupy.ascontiguousarray(x) in CuPy)")
    ptr, readonly = cai["data"]
    stream = cai.get("stream")
    if stream is not None and device is not None and sctx is not None:
        order_after(int(stream), sctx, device)
    return ptr or 0, _prod(shape), scalar, not readonly, shape, strides


_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack_open(v: Any, what: str, sctx: Optional[StreamCtx]) -> Tuple[object, Any, str]:
    """(capsule, DLTensor, scalar) of v's __dlpack__, made for the launch's stream."""
    consumer = sctx[1] if sctx else 0
    try:
        cap = v.__dlpack__(stream=consumer if consumer else 1)
    except TypeError:
        cap = v.__dlpack__()
    t = ffi.cast("DLManagedTensor *", _GetPointer(cap, b"dltensor")).dl_tensor
    key = (t.dtype.code, t.dtype.bits)
    scalar = FROM_DLPACK.get(key)
    if scalar is None or t.dtype.lanes != 1:
        raise LaunchError(f"{what}: DLPack element type (code {key[0]}, {key[1]} bits) is not one oxide passes")
    return cap, t, scalar


def _from_dlpack(v: Any, what: str, device: Optional[Device], sctx: Optional[StreamCtx],
                 keep: Optional[List[object]]) -> Desc:
    cap, t, scalar = _dlpack_open(v, what, sctx)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None
    if t.strides != ffi.NULL:
        strides = tuple(t.strides[i] * SIZE[scalar] for i in range(t.ndim))
    if not _contiguous(shape, strides, SIZE[scalar]):
        raise LaunchError(f"{what} needs contiguous memory; pass a contiguous copy")
    ptr = int(ffi.cast("uintptr_t", t.data)) + t.byte_offset
    if keep is not None:
        keep.append(cap)  # the capsule's destructor calls the producer's deleter when it goes
    return ptr, _prod(shape), scalar, True, shape, strides


# ---------------------------------------------------------------------------------------------
# tensors: a strided view (pointer, dtype, shape, strides in elements, writability)


def tensor_view(v: Any, what: str, device: Optional[Device], sctx: Optional[StreamCtx], keep: List[object]) -> View:
    """(ptr, scalar, shape, strides in elements, mutable) of device memory given as v, strided or
    not: a torch tensor (read directly: its fp8 dtypes have no __cuda_array_interface__), an
    object with __cuda_array_interface__, or one with __dlpack__. LaunchError otherwise."""
    if type(v).__module__ == "torch" and hasattr(v, "data_ptr"):
        return _torch_view(v, what)
    try:
        cai = v.__cuda_array_interface__
    except AttributeError:
        cai = None
    if cai is not None:
        return _cai_view(cai, what, device, sctx)
    if hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
        if v.__dlpack_device__()[0] in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return _dlpack_view(v, what, sctx, keep)
        raise host_memory_error(v, what)
    describe(v, what, device, sctx, keep)  # raises the error that fits (host memory, unknown object)
    raise LaunchError(f"{what} needs a strided view of device memory, got {type(v).__name__}")


def _c_strides(shape: Sequence[int]) -> Shape:
    """The strides (elements) of a C-contiguous array of shape."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


def _torch_view(v: Any, what: str) -> View:
    if not v.is_cuda:
        raise host_memory_error(v, what)
    name = str(v.dtype).rpartition(".")[2]
    scalar = FROM_TORCH.get(name)
    if scalar is None:
        raise LaunchError(f"{what}: torch dtype {name} is not one oxide passes")
    return v.data_ptr(), scalar, tuple(v.shape), tuple(v.stride()), True


def _cai_view(cai: Dict[str, Any], what: str, device: Optional[Device], sctx: Optional[StreamCtx]) -> View:
    scalar = _cai_scalar(cai, what)
    shape = tuple(cai["shape"])
    size = SIZE[scalar]
    strides = cai.get("strides")
    if strides is None:
        strides = _c_strides(shape)
    else:
        if any(s % size for s in strides):
            raise LaunchError(f"{what}: strides {tuple(strides)} (bytes) are not whole elements of {scalar} "
                              f"({size} bytes)")
        strides = tuple(s // size for s in strides)
    ptr, readonly = cai["data"]
    stream = cai.get("stream")
    if stream is not None and device is not None and sctx is not None:
        order_after(int(stream), sctx, device)
    return ptr or 0, scalar, shape, strides, not readonly


def _dlpack_view(v: Any, what: str, sctx: Optional[StreamCtx], keep: List[object]) -> View:
    cap, t, scalar = _dlpack_open(v, what, sctx)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides != ffi.NULL:  # DLPack strides count elements already
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:
        strides = _c_strides(shape)
    keep.append(cap)
    return int(ffi.cast("uintptr_t", t.data)) + t.byte_offset, scalar, shape, strides, True
