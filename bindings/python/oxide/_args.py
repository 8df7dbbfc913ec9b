"""Launch arguments: each manifest parameter gets a converter, made once per kernel, that checks a
Python value against it and returns the four integers of its oxide_arg (the oxide scalar,
is_mutable, the value / device pointer / bytes address, the length / byte size). A launch hands
them to C in one list (oxide_py_launch in oxide_build.py), which packs the oxide_arg array.

CuPy arrays and torch tensors are recognised by type and read through their own attributes
(pointer, dtype, size, contiguity): their __cuda_array_interface__ builds a new dict at every
access (in Python, for torch), which cost more than the rest of the launch. Anything unusual
about one (strided, empty, a dtype oxide has no name for) goes the general way, through
__cuda_array_interface__ or DLPack, which give the same checks and messages.

The fast lane (oxide_fast.c) takes most launches before any of this: in C, for
DeviceArrays, CuPy arrays, torch tensors and Python ints, floats and bools, reading the same attributes
and launching at once. It trusts a framework dtype only once the converter here has accepted it
for that parameter (the `ok` lists the two share), and leaves everything else, errors included,
to the converters, so the checks and messages stay the ones written here."""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple


from . import _interop, _oxide_cffi
from ._errors import LaunchError
from ._ffi import ffi, lib
from ._types import SCALAR_ID, scalar_bits

_BUFFER, _BYTES, _TMA, _TENSOR = lib.OXIDE_ARG_BUFFER, lib.OXIDE_ARG_BYTES, lib.OXIDE_ARG_TMA_DESC, lib.OXIDE_ARG_TENSOR
ARG_KIND = {"scalar": lib.OXIDE_ARG_SCALAR, "slice": _BUFFER, "ptr": _BUFFER, "bytes": _BYTES, "tma_desc": _TMA,
            "tensor": _TENSOR}
# oxide_tensor: struct_size data byte_offset elem rank shape[4] strides[4] is_mutable reserved
TENSOR = struct.Struct("<QQQII4q4qII")
assert ffi.sizeof("oxide_tensor") == TENSOR.size and ffi.offsetof("oxide_tensor", "is_mutable") == 96
_UNSEEN = object()
# What the fast lane does with each parameter kind (oxide_fast.c: FAST_BUF, FAST_SCALAR, FAST_SLOW).
_FAST_CODE = {"slice": 0, "ptr": 0, "scalar": 1}
if lib.oxide_py_fast_install() != 0:  # pragma: no cover - only without memory
    raise ImportError("oxide: the launch path's C functions could not be installed")
# LaunchBase: the base class whose C __call__ is oxide.Kernel's (the fast lane, else Kernel._call).
LaunchBase: type = getattr(_oxide_cffi, "LaunchBase")
fast_setup: Callable[..., Any] = getattr(_oxide_cffi, "fast_setup")
_fast_spec: Callable[..., Any] = getattr(_oxide_cffi, "fast_spec")

# The four integers of one oxide_arg, and the converter that makes them from a Python value (value,
# the launch's stream context, the list of objects to keep alive until the launch).
Arg = Tuple[int, int, int, int]
Conv = Callable[[Any, Any, List[object]], Arg]

if TYPE_CHECKING:
    from ._manifest import KernelInfo, Param
    from ._runtime import Device


def buffer_arg(scalar: str, ptr: int, n: int, mutable: bool) -> Arg:
    """The four integers of a buffer argument (what a DeviceArray keeps for its launches)."""
    return (SCALAR_ID[scalar], 1 if mutable else 0, ptr, n)


class ArgPacker:
    """Turns Python arguments into the oxide_arg array of one kernel's manifest signature, checking
    count, kind and element type on the way (the C library checks them again, with mutability).
    It needs no GPU: `ArgPacker(kernel_info).pack(args)` is how the checks are tested on a CPU."""

    def __init__(self, info: Optional[KernelInfo], device: Optional[Device] = None) -> None:
        self.info, self.name, self.device = info, info.name if info else "?", device
        self.params = info.params if info else ()
        self.n = len(self.params)
        # per buffer parameter, the CuPy and the torch dtype objects last found to be its element type
        self.oks: Tuple[Optional[List[object]], ...] = tuple(
            [None, None] if p.kind in ("slice", "ptr") else None for p in self.params)
        self.convs = tuple(self._converter(i, p) for i, p in enumerate(self.params))
        self.kinds = ffi.new("uint32_t[]", [ARG_KIND[p.kind] for p in self.params] or [0])

    def _converter(self, i: int, p: Param) -> Conv:
        """A function (value, sctx, keep) -> the four integers of parameter i's oxide_arg."""
        what = f"{self.name}(): argument {i + 1} '{p.name}' ({p.describe()})"
        if p.kind == "scalar":
            st = str(p.type)
            sid = SCALAR_ID[st]

            def conv(v: Any, sctx: Any, keep: List[object]) -> Arg:
                return (sid, 0, scalar_bits(st, v, what), 0)
            return conv
        if p.kind in ("slice", "ptr"):
            return self._buffer_converter(p, what, self.oks[i] or [None, None])
        if p.kind == "tensor":
            return self._tensor_converter(p, what)
        size = p.size if p.kind == "bytes" else 128

        def conv_bytes(v: Any, sctx: Any, keep: List[object]) -> Arg:
            try:
                cd = ffi.from_buffer(v)
            except TypeError:
                raise LaunchError(f"{what} takes {size} bytes (a bytes-like object: bytes, a NumPy record or "
                                  f"array, a ctypes structure), got {type(v).__name__}") from None
            if len(cd) != size:
                raise LaunchError(f"{what} takes exactly {size} bytes, got {len(cd)}")
            keep.append(cd)
            return (SCALAR_ID["u8"], 0, int(ffi.cast("uintptr_t", cd)), len(cd))
        return conv_bytes

    def _buffer_converter(self, p: Param, what: str, ok: List[object]) -> Conv:
        from ._runtime import DeviceArray
        elem = str(p.type)
        eid, device = SCALAR_ID[elem], self.device
        fw_get, framework_of, dtype_is = _interop._frameworks.get, _interop.framework_of, _interop.dtype_is
        cupy, torch, cupy_order, describe = _interop.CUPY, _interop.TORCH, _interop.cupy_order, _interop.describe

        def conv(v: Any, sctx: Any, keep: List[object]) -> Arg:
            t = type(v)
            if t is DeviceArray:
                if v.scalar != elem:
                    raise LaunchError(f"{what} takes {elem} elements, got a DeviceArray of {v.scalar}"
                                      f"{_interop.astype_hint(elem)}")
                made: Arg = v._arg
                return made
            fw = fw_get(t, _UNSEEN)
            if fw is _UNSEEN:
                fw = framework_of(t)
            if fw is torch:
                if v.is_cuda and v.is_contiguous():
                    n = v.numel()
                    if n and (v.dtype is ok[1] or dtype_is(v.dtype, 1, elem, what, ok)):
                        return (eid, 1, v.data_ptr(), n)
            elif fw is cupy:
                n = v.size
                if n and v._c_contiguous and (v.dtype is ok[0] or dtype_is(v.dtype, 0, elem, what, ok)):
                    cupy_order(sctx, device)
                    return (eid, 1, v.data.ptr, n)
            ptr, n, scalar, mutable, _, _ = describe(v, what, device, sctx, keep)
            if scalar != elem:
                raise LaunchError(f"{what} takes {elem} elements, got an array of {scalar}"
                                  f"{_interop.astype_hint(elem)}")
            return (eid, 1 if mutable else 0, ptr, n)
        return conv

    def _tensor_converter(self, p: Param, what: str) -> Conv:
        """A tensor argument becomes an oxide_tensor (packed into bytes that keep holds until the
        launch is made) and the oxide_arg pointing at it. The checks say what the C layer would."""
        elem = str(p.type)
        eid, rank, mut, device = SCALAR_ID[elem], p.rank, p.mutable, self.device
        tpack, size, pad = TENSOR.pack, TENSOR.size, (0,) * 4
        from_buffer, cast = ffi.from_buffer, ffi.cast

        def conv(v: Any, sctx: Any, keep: List[object]) -> Arg:
            ptr, scalar, shape, strides, mutable = _interop.tensor_view(v, what, device, sctx, keep)
            if len(shape) != rank:
                raise LaunchError(f"{what} is a tensor of rank {rank}, got rank {len(shape)}")
            if scalar != elem:
                raise LaunchError(f"{what} is a tensor of {elem}, got a tensor of {scalar}"
                                  f"{_interop.astype_hint(elem)}")
            if mut and not mutable:
                raise LaunchError(f"{what} is a mutable tensor (the kernel writes it), got a read-only one")
            raw = tpack(size, ptr, 0, eid, rank, *(shape + pad)[:4], *(strides + pad)[:4], 1 if mutable else 0, 0)
            cd = from_buffer(raw)
            keep.append(cd)
            keep.append(raw)
            return (eid, 1 if mutable else 0, int(cast("uintptr_t", cd)), size)
        return conv

    def fast_spec(self, handle: Any, fixed_block: bool) -> Any:
        """The fast lane's description of this kernel (a capsule that LaunchBase.__call__ reads from
        Kernel._fast), or None without a device or with more parameters than the lane packs on
        its stack (32)."""
        if self.device is None or self.n > 32:
            return None
        codes = tuple(_FAST_CODE.get(p.kind, 2) for p in self.params)
        eids = tuple(SCALAR_ID[str(p.type)] if c < 2 else 0 for p, c in zip(self.params, codes))
        dev = self.device
        return _fast_spec(int(ffi.cast("uintptr_t", handle)), fixed_block, dev, dev.index,
                          _interop.stream_addrs(dev), lambda h: _interop.stream_addr(h, dev), codes, eids, self.oks)

    def check_count(self, args: Sequence[object]) -> None:
        """LaunchError unless args has one value per parameter."""
        if len(args) != self.n:
            names = ", ".join(p.name for p in self.params)
            raise LaunchError(f"{self.name}() takes {self.n} argument{'s' if self.n != 1 else ''} ({names}), "
                              f"got {len(args)}")

    def values(self, args: Sequence[object], sctx: Any = None, keep: Optional[List[object]] = None) -> List[int]:
        """The flat list of four integers per argument that oxide_py_launch takes."""
        self.check_count(args)
        keep = [] if keep is None else keep
        vals: List[int] = []
        for conv, v in zip(self.convs, args):
            vals += conv(v, sctx, keep)
        return vals

    def pack(self, args: Sequence[object], sctx: Any = None, keep: Optional[List[object]] = None) -> bytes:
        """The oxide_arg array (bytes, n * 56) for args, packed by the C code launches use; keep
        collects objects that must live until the launch is made."""
        vals = self.values(args, sctx, keep)
        rows = ffi.new("oxide_arg[]", max(self.n, 1))
        lib.oxide_py_fill(self.kinds, vals or ffi.NULL, self.n, rows)
        return bytes(ffi.buffer(rows, self.n * ffi.sizeof("oxide_arg")))
