"""DeviceArray.__dlpack__ / __dlpack_device__ read by a consumer written here (as torch and CuPy
read capsules: take the pointer, rename the capsule "used_...", call the deleter when done), on a
GPU or the fake driver; torch.from_dlpack and cupy.from_dlpack where those are installed."""
import ctypes
import gc
import weakref

import numpy as np
import pytest

import oxide

ffi = oxide._ffi
_py = ctypes.pythonapi
_py.PyCapsule_IsValid.restype = ctypes.c_int
_py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetPointer.restype = ctypes.c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_SetName.restype = ctypes.c_int
_py.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED = {b"dltensor": ctypes.c_char_p(b"used_dltensor"),
         b"dltensor_versioned": ctypes.c_char_p(b"used_dltensor_versioned")}


def consume(cap):
    """What a consumer does: (name, managed struct); the capsule is marked used."""
    for name, ctype in ((b"dltensor", "DLManagedTensor *"), (b"dltensor_versioned", "DLManagedTensorVersioned *")):
        if _py.PyCapsule_IsValid(cap, name):
            m = ffi.cast(ctype, _py.PyCapsule_GetPointer(cap, name))
            assert _py.PyCapsule_SetName(cap, _USED[name]) == 0
            return name, m
    raise AssertionError("not a DLPack capsule")


def check_tensor(t, d, dtype):
    assert int(ffi.cast("uintptr_t", t.data)) == d.ptr and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (2, d.device.index)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == dtype
    assert [t.shape[i] for i in range(t.ndim)] == list(d.shape)
    c = np.empty(d.shape, np.int8).strides  # C-contiguous strides of 1-byte elements: element strides
    assert [t.strides[i] for i in range(t.ndim)] == list(c)


@pytest.mark.parametrize("scalar,dtype", [("f32", (2, 32, 1)), ("i64", (0, 64, 1)), ("bf16", (4, 16, 1)),
                                          ("u8", (1, 8, 1)), ("bool", (6, 8, 1)), ("f8e4m3", (10, 8, 1))])
def test_capsules_describe_the_array(device, scalar, dtype):
    d = oxide.DeviceArray((3, 5, 2), scalar, device)
    assert d.__dlpack_device__() == (2, device.index)
    name, m = consume(d.__dlpack__())
    assert name == b"dltensor"
    check_tensor(m.dl_tensor, d, dtype)
    m.deleter(m)
    name, m = consume(d.__dlpack__(max_version=(1, 2), stream=-1))
    assert name == b"dltensor_versioned" and (m.version.major, m.version.minor) == (1, 0) and m.flags == 0
    check_tensor(m.dl_tensor, d, dtype)
    m.deleter(m)


def test_capsule_keeps_the_array_alive(device):
    d = oxide.DeviceArray(64, "f32", device)
    ref = weakref.ref(d)
    cap = d.__dlpack__(max_version=(1, 0))
    del d
    gc.collect()
    assert ref() is not None  # the capsule holds it
    _, m = consume(cap)
    del cap
    gc.collect()
    assert ref() is not None  # consumed: the consumer holds it until it calls the deleter
    m.deleter(m)
    gc.collect()
    assert ref() is None
    d = oxide.DeviceArray(64, "f32", device)
    ref = weakref.ref(d)
    cap = d.__dlpack__()
    del d, cap  # never consumed: the capsule's destructor calls the deleter
    gc.collect()
    assert ref() is None


def test_read_only_copy_and_refusals(device):
    x = np.random.default_rng(8).standard_normal(40).astype(np.float32)
    ro = oxide.DeviceArray.from_numpy(x, readonly=True)
    with pytest.raises(BufferError, match="read-only"):
        ro.__dlpack__()
    _, m = consume(ro.__dlpack__(max_version=(1, 0)))
    assert m.flags == 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    m.deleter(m)
    _, m = consume(ro.__dlpack__(max_version=(1, 0), copy=True))
    assert m.flags == 2  # a writable copy: DLPACK_FLAG_BITMASK_IS_COPIED
    assert int(ffi.cast("uintptr_t", m.dl_tensor.data)) != ro.ptr
    copy = oxide.DeviceArray.wrap(_Ptr(int(ffi.cast("uintptr_t", m.dl_tensor.data)), 40))
    np.testing.assert_array_equal(copy.to_numpy(), x)
    m.deleter(m)
    with pytest.raises(BufferError, match="dl_device"):
        ro.__dlpack__(max_version=(1, 0), dl_device=(1, 0))
    with pytest.raises(ValueError, match=r"stream=0\) is ambiguous"):
        ro.__dlpack__(max_version=(1, 0), stream=0)
    with pytest.raises(TypeError, match="takes an int"):
        ro.__dlpack__(max_version=(1, 0), stream="s")


class _Ptr:
    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "version": 3}


def test_oxide_consumes_its_own_capsules(device):
    """The round trip through oxide's DLPack consumer (which uses the launch stream for stream=)."""
    x = np.arange(12, dtype=np.int32)
    d = oxide.DeviceArray.from_numpy(x)

    class OnlyDLPack:
        def __dlpack__(self, stream=None):
            return d.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return d.__dlpack_device__()
    w = oxide.DeviceArray.wrap(OnlyDLPack())
    assert w.ptr == d.ptr and w.scalar == "i32" and w.shape == (12,)
    np.testing.assert_array_equal(w.to_numpy(), x)
    s = oxide.Stream(device)
    d.__dlpack__(stream=s.handle)  # ordered after the default stream's work; never consumed


def test_frameworks_take_it(device):
    x = np.random.default_rng(9).standard_normal(33).astype(np.float32)
    d = oxide.DeviceArray.from_numpy(x)
    tried = 0
    try:
        import torch
        if torch.cuda.is_available():
            np.testing.assert_array_equal(torch.from_dlpack(d).cpu().numpy(), x)
            tried += 1
    except ImportError:
        pass
    try:
        import cupy
        np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(d)), x)
        tried += 1
    except ImportError:
        pass
    if not tried:
        pytest.skip("neither torch (with CUDA) nor CuPy is installed")
