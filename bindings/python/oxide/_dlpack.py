"""DLPack out: DeviceArray.__dlpack__ and __dlpack_device__ as the array API standard specifies
them, so torch.from_dlpack, cupy.from_dlpack and jax take a DeviceArray without a copy.

A consumer that gives max_version >= (1, 0) gets a versioned capsule ("dltensor_versioned",
DLPack 1.0: with the read-only flag for read-only arrays, and the copied flag for copy=True);
otherwise a "dltensor" capsule (DLPack 0.8, which has no read-only flag, so a read-only array is
refused with BufferError, as NumPy does). The capsule holds a reference to the array until the
consumer calls the deleter (or, when no consumer took it, until the capsule goes)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ._ffi import ffi, lib

if TYPE_CHECKING:
    from ._runtime import DeviceArray

KDLCUDA = 2
# scalar -> DLPack (code, bits). Codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool, 10/11 float8.
TO_DLPACK = {"bool": (6, 8), "i8": (0, 8), "i16": (0, 16), "i32": (0, 32), "i64": (0, 64), "u8": (1, 8),
             "u16": (1, 16), "u32": (1, 32), "u64": (1, 64), "f16": (2, 16), "bf16": (4, 16), "f32": (2, 32),
             "f64": (2, 64), "f8e4m3": (10, 8), "f8e5m2": (11, 8)}
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2
VERSION = (1, 0)

_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DESTRUCTOR = int(ffi.cast("uintptr_t", ffi.addressof(lib, "oxide_py_capsule_destructor")))
_NAMES = {v: int(ffi.cast("uintptr_t", lib.oxide_py_capsule_name(v))) for v in (0, 1)}

# manager_ctx handle address -> (handle, array, managed struct, shape/strides): what a capsule
# holds alive until its deleter runs.
_live: Dict[int, List[Any]] = {}


def _release(m: Any) -> None:
    key = int(ffi.cast("uintptr_t", m.manager_ctx))
    m.manager_ctx = ffi.NULL
    m.deleter = ffi.NULL
    _live.pop(key, None)


def oxide_py_dl_deleter(m: Any) -> None:
    _release(m)


def oxide_py_dlv_deleter(m: Any) -> None:
    _release(m)


# The deleters C calls (cffi finds them by name), registered without a decorator cffi leaves untyped.
ffi.def_extern()(oxide_py_dl_deleter)
ffi.def_extern()(oxide_py_dlv_deleter)


def device(array: DeviceArray) -> Tuple[int, int]:
    return (KDLCUDA, array.device.index)


def _consumer_stream(stream: object) -> int:
    if stream is None:
        return 1  # the standard's meaning of None for CUDA: the legacy default stream
    if not isinstance(stream, int):
        raise TypeError(f"__dlpack__(stream=...) takes an int (a CUstream handle, 1, 2 or -1), got "
                        f"{type(stream).__name__}")
    if stream == 0:
        raise ValueError("__dlpack__(stream=0) is ambiguous for CUDA (the standard disallows it): pass 1 for "
                         "the legacy default stream or 2 for the per-thread one")
    return stream


def export(array: DeviceArray, stream: object = None, max_version: Optional[Tuple[int, int]] = None,
           dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
    """The capsule of array.__dlpack__(stream=, max_version=, dl_device=, copy=)."""
    from . import _interop
    if dl_device is not None and tuple(dl_device) != device(array):
        raise BufferError(f"__dlpack__: the array is on CUDA device {array.device.index} and is exported there; "
                          f"dl_device={tuple(dl_device)!r} would need a copy to another device (copy it with "
                          f"to_numpy() for the CPU)")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if copy is True:
        array = array.copy()
    elif array.readonly and not versioned:
        raise BufferError("__dlpack__: the array is read-only, which a DLPack 0.8 capsule cannot say; ask for a "
                          "versioned one (max_version=(1, 0)) or export a copy")
    s = _consumer_stream(stream)
    if s != -1:
        # The consumer uses the data on stream s: work queued on the default stream (which orders
        # all blocking streams) comes first.
        _interop.order_after(1, _interop.foreign_stream(s, array.device), array.device)
    shape = ffi.new("int64_t[]", list(array.shape) or [1])
    strides = ffi.new("int64_t[]", list(_interop._c_strides(array.shape)) or [1])
    if versioned:
        m = ffi.new("DLManagedTensorVersioned *")
        m.version.major, m.version.minor = VERSION
        m.flags = (FLAG_READ_ONLY if array.readonly else 0) | (FLAG_IS_COPIED if copy is True else 0)
        m.deleter = lib.oxide_py_dlv_deleter
    else:
        m = ffi.new("DLManagedTensor *")
        m.deleter = lib.oxide_py_dl_deleter
    t = m.dl_tensor
    t.data = ffi.cast("void *", array.ptr)
    t.device.device_type, t.device.device_id = device(array)
    t.ndim = len(array.shape)
    t.dtype.code, t.dtype.bits = TO_DLPACK[array.scalar]
    t.dtype.lanes = 1
    t.shape, t.strides, t.byte_offset = shape, strides, 0
    state: List[Any] = [None, array, m, shape, strides]
    handle = state[0] = ffi.new_handle(state)
    m.manager_ctx = handle
    _live[int(ffi.cast("uintptr_t", handle))] = state
    capsule: object = _PyCapsule_New(int(ffi.cast("uintptr_t", m)), ctypes.c_char_p(_NAMES[int(versioned)]), _DESTRUCTOR)
    return capsule
