"""oxide.interpret: run a tile kernel on the CPU with NumPy arrays (oxide_tile_interpret;
docs/tile.md, "The interpreter").

    mod = oxide.Context().parse(open("examples/tile/matmul_bf16.oxir").read())
    oxide.interpret(mod, "matmul_bf16", (2, 2), a_bits, b_bits, c_bits)

Tensor parameters take NumPy arrays (any strides, host memory; written in place when the
parameter is `mut`, so such an array must be writeable). The array's dtype gives the element:
float32, float16, int8, int32, int64 (and their unsigned twins) as themselves; NumPy has no bf16
or fp8, so a bf16 tensor is a uint16 array of bf16 bit patterns and an fp8 tensor a uint8 array
of fp8 bit patterns; ml_dtypes' bfloat16, float8_e4m3fn and float8_e5m2 arrays are accepted too.
Scalar parameters take Python ints and floats, converted to the parameter's type.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, Union

from ._errors import check
from ._ffi import ffi, lib
from ._types import SCALAR_ID, scalar_bits

if TYPE_CHECKING:
    from ._builder import IRModule

# dtype name -> oxide_scalar name of the oxide_tensor's elem.
_TENSOR_ELEM = {"float32": "f32", "float16": "f16", "int8": "i8", "uint8": "u8", "int32": "i32", "uint32": "u32",
                "int64": "i64", "uint64": "u64", "uint16": "bf16", "bfloat16": "bf16", "float8_e4m3fn": "u8",
                "float8_e5m2": "u8"}
_KERNEL = re.compile(r"^tile_kernel @([A-Za-z0-9_.$]+)\((.*?)\)(?: hints\(.*?\))? \{$", re.M)


def _signature(module: IRModule, kernel: str) -> Optional[List[Tuple[str, str]]]:
    """[(name, type text)] of the tile kernel's parameters, read from the module's canonical text."""
    out = ffi.new("const char **")
    check(lib.oxide_module_print(module._alive(), out))
    for m in _KERNEL.finditer(ffi.string(out[0]).decode()):
        if m.group(1) == kernel:
            params = [p.split(": ", 1) for p in m.group(2).split(", ") if p]
            return [(n.lstrip("%"), t) for n, t in params]
    return None  # the library names the missing kernel


def _tensor(arr: Any, what: str, keep: List[object]) -> Any:
    import numpy as np
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{what} is a tensor: pass a NumPy array, got {type(arr).__name__}")
    elem = _TENSOR_ELEM.get(arr.dtype.name)
    if elem is None:
        raise TypeError(f"{what}: arrays of {arr.dtype} are not tensors (use float32, float16, int8, int32, int64, "
                        "uint16 for bf16 bits, uint8 for fp8 bits)")
    if not 1 <= arr.ndim <= 4:
        raise ValueError(f"{what}: a tensor has 1 to 4 dims, the array has {arr.ndim}")
    if any(s % arr.itemsize for s in arr.strides):
        raise ValueError(f"{what}: strides {arr.strides} are not whole elements of {arr.itemsize} bytes")
    t = ffi.new("oxide_tensor *")
    keep.append(t)
    t.struct_size = ffi.sizeof("oxide_tensor")
    t.data = arr.__array_interface__["data"][0]
    t.elem = SCALAR_ID[elem]
    t.rank = arr.ndim
    for d in range(arr.ndim):
        t.shape[d] = arr.shape[d]
        t.strides[d] = arr.strides[d] // arr.itemsize
    t.is_mutable = 1 if arr.flags.writeable else 0
    return t


def interpret(module: IRModule, kernel: str, grid: Union[int, Sequence[int]], *args: object,
              print: Optional[Callable[[str], object]] = None, max_steps: int = 0, max_memory: int = 0) -> None:
    """Run tile kernel `kernel` of IRModule `module` over `grid` (an int or a tuple of up to three)
    on the CPU. print(text) receives each tile.print line; max_steps and max_memory bound the run
    (0: the library's defaults). Raises the OxideError of the failed call (LaunchError for
    arguments that do not fit the kernel, VerifyError, UnsupportedError when the step budget runs
    out, ...)."""
    g = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(g) <= 3:
        raise ValueError(f"grid has 1 to 3 dims, got {grid!r}")
    g = g + (1,) * (3 - len(g))
    sig = _signature(module, kernel) or []
    keep: List[object] = []
    cargs = ffi.new("oxide_arg[]", max(len(args), 1))
    for i, value in enumerate(args):
        name, ty = sig[i] if i < len(sig) else (f"#{i + 1}", None)
        what = f"{kernel}(): argument {i + 1} '{name}'"
        if ty is not None and ty.startswith("tensor<"):
            t = _tensor(value, what, keep)
            cargs[i].kind = lib.OXIDE_ARG_TENSOR
            cargs[i].type = t.elem
            cargs[i].is_mutable = t.is_mutable
            cargs[i].bytes = t
            cargs[i].size = ffi.sizeof("oxide_tensor")
        elif ty in SCALAR_ID:
            cargs[i].kind = lib.OXIDE_ARG_SCALAR
            cargs[i].type = SCALAR_ID[ty]
            cargs[i].value = scalar_bits(str(ty), value, what)
        else:  # more arguments than parameters: the library reports the count
            cargs[i].kind = lib.OXIDE_ARG_SCALAR
    opts = ffi.new("oxide_interp_options *")
    opts.struct_size = ffi.sizeof("oxide_interp_options")
    opts.max_steps = max_steps
    opts.max_memory = max_memory
    failure: List[BaseException] = []
    if print is not None:
        def on_print(_user: Any, text: Any) -> None:
            if not failure:
                try:
                    print(ffi.string(text).decode("utf-8", "replace"))
                except BaseException as e:  # raised again once the call returns
                    failure.append(e)
        cb = ffi.callback("void(void *, const char *)", on_print)
        keep.append(cb)
        opts.print = cb
    st = lib.oxide_tile_interpret(module._alive(), kernel.encode(), g, cargs, len(args), opts)
    if failure:
        raise failure[0]
    check(st)
