"""Stand-ins for CuPy and PyTorch where they are not installed: modules with the attributes oxide
reads of them (an array's pointer, dtype, size, contiguity; the framework's current stream) and
the __cuda_array_interface__ each builds, counting what oxide asked for. `install(monkeypatch)`
registers them as `cupy` and `torch` for one test; bench/launch_host.py uses them too."""
import sys
import types

import numpy as np


class _Mem:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class _Stream:
    def __init__(self, ptr):
        self.ptr = self.cuda_stream = ptr


def _c_strides(shape, itemsize):
    out, step = [], itemsize
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


def cupy_module():
    """A `cupy` with `ndarray(ptr, shape, dtype, strides=None)` and `cuda.get_current_stream()`;
    `mod.current` is the current stream's handle, `mod.stream_calls` counts the look-ups and
    `mod.cai_reads` the __cuda_array_interface__ accesses."""
    mod = types.ModuleType("cupy")
    mod.current, mod.stream_calls, mod.cai_reads = 0, 0, 0

    def get_current_stream():
        mod.stream_calls += 1
        return _Stream(mod.current)
    mod.cuda = types.SimpleNamespace(get_current_stream=get_current_stream)

    class ndarray:  # noqa: N801 - CuPy's name, which oxide recognises
        __module__ = "cupy"

        def __init__(self, ptr, shape, dtype=np.float32, strides=None):
            self.shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
            self.dtype = np.dtype(dtype)
            self.size = int(np.prod(self.shape))
            self.data = _Mem(ptr)
            c = _c_strides(self.shape, self.dtype.itemsize)
            self.strides = c if strides is None else tuple(strides)
            self._c_contiguous = all(s == w for d, s, w in zip(self.shape, self.strides, c) if d != 1)

        @property
        def __cuda_array_interface__(self):  # as CuPy builds it (v3: its current stream, 1 for the default)
            mod.cai_reads += 1
            s = mod.cuda.get_current_stream().ptr
            return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr, "version": 3,
                    "stream": s or 1, "strides": None if self._c_contiguous else self.strides,
                    "data": (self.data.ptr if self.size else 0, False)}
    mod.ndarray = ndarray
    return mod


def torch_module():
    """A `torch` with `Tensor(ptr, shape, dtype, stride=None, cuda=True)`, dtypes float32, float64,
    bfloat16, int32, and `_C._cuda_getCurrentRawStream(index)`; `mod.current` is the current
    stream's handle, `mod.stream_calls` lists the device indices asked for and `mod.cai_reads`
    counts the __cuda_array_interface__ accesses."""
    mod = types.ModuleType("torch")
    mod.current, mod.stream_calls, mod.cai_reads = 0, [], 0

    class dtype:  # noqa: N801 - torch's name
        __module__ = "torch"

        def __init__(self, name, itemsize, typestr):
            self.name, self.itemsize, self.typestr = name, itemsize, typestr

        def __repr__(self):
            return f"torch.{self.name}"
    for name, size, ts in (("float32", 4, "<f4"), ("float64", 8, "<f8"), ("bfloat16", 2, None), ("int32", 4, "<i4")):
        setattr(mod, name, dtype(name, size, ts))

    def raw_stream(index):
        mod.stream_calls.append(index)
        return mod.current
    mod._C = types.SimpleNamespace(_cuda_getCurrentRawStream=raw_stream)

    class Tensor:
        __module__ = "torch"

        def __init__(self, ptr, shape, dtype=None, stride=None, cuda=True):
            self.shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
            self.dtype = dtype or mod.float32
            self._ptr, self.is_cuda, self._n = ptr, cuda, int(np.prod(self.shape))
            c = _c_strides(self.shape, 1)
            self._stride = c if stride is None else tuple(stride)
            self._contig = all(s == w for d, s, w in zip(self.shape, self._stride, c) if d != 1)

        def data_ptr(self):
            return self._ptr

        def numel(self):
            return self._n

        def is_contiguous(self):
            return self._contig

        def stride(self):
            return self._stride

        def element_size(self):
            return self.dtype.itemsize

        def __dlpack_device__(self):
            return (2 if self.is_cuda else 1, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("the fake torch tensor is not consumed through DLPack")

        @property
        def __cuda_array_interface__(self):  # as torch/_tensor.py builds it (v2, no stream)
            mod.cai_reads += 1
            if not self.is_cuda:
                raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")
            if self.dtype.typestr is None:
                raise TypeError(f"dtype {self.dtype} is not supported by __cuda_array_interface__")
            itemsize = self.element_size()
            strides = None if self.is_contiguous() else tuple(s * itemsize for s in self.stride())
            ptr = self.data_ptr() if self.numel() > 0 else 0
            return dict(typestr=self.dtype.typestr, shape=tuple(self.shape), strides=strides, data=(ptr, False),
                        version=2)
    mod.Tensor = Tensor
    return mod


def install(monkeypatch):
    """Register fresh fakes as `cupy` and `torch` for one test; returns (cupy, torch)."""
    cp, torch = cupy_module(), torch_module()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "torch", torch)
    return cp, torch
