"""Interface scalar types (oxide_scalar) and their NumPy, __cuda_array_interface__ and DLPack
spellings, and the conversion of Python values to a scalar's bits."""
from __future__ import annotations

import importlib
import struct
from typing import TYPE_CHECKING, Any, Dict, Tuple

if TYPE_CHECKING:
    import numpy

from ._ffi import lib
from ._tables import NUMPY as NUMPY, SCALARS as SCALARS, SIZE as SIZE

SCALAR_ID = {n: i for i, n in enumerate(SCALARS)}
# fp8 borrows "uint8" as its NumPy name (no NumPy dtype of its own): "uint8" still means u8.
FROM_NUMPY = {v: k for k, v in NUMPY.items() if not k.startswith("f8")}
# __cuda_array_interface__ typestr (byte order stripped) -> scalar.
FROM_TYPESTR = {"b1": "bool", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64", "u1": "u8", "u2": "u16",
                "u4": "u32", "u8": "u64", "f2": "f16", "f4": "f32", "f8": "f64"}
TO_TYPESTR = {v: ("|" if SIZE[v] == 1 else "<") + k for k, v in FROM_TYPESTR.items()}
# DLPack (code, bits) -> scalar. Codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool.
FROM_DLPACK = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (1, 16): "u16",
               (1, 32): "u32", (1, 64): "u64", (2, 16): "f16", (2, 32): "f32", (2, 64): "f64",
               (4, 16): "bf16", (6, 8): "bool", (1, 1): "bool", (10, 8): "f8e4m3", (11, 8): "f8e5m2"}
# DLPack 1.1 float8 codes (kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 11) are above; torch's dtypes
# by name, for torch tensors passed as tensor arguments.
FROM_TORCH = {"float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2", "bfloat16": "bf16", "float16": "f16",
              "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint8": "u8", "bool": "bool"}

_INT_RANGE: Dict[str, Tuple[int, int]] = {"i8": (-(1 << 7), 1 << 7), "i16": (-(1 << 15), 1 << 15), "i32": (-(1 << 31), 1 << 31),
              "i64": (-(1 << 63), 1 << 63), "u8": (0, 1 << 8), "u16": (0, 1 << 16), "u32": (0, 1 << 32),
              "u64": (0, 1 << 64)}

_f32 = struct.Struct("<f")
_u32 = struct.Struct("<I")
_f64 = struct.Struct("<d")
_u64 = struct.Struct("<Q")
_f16 = struct.Struct("<e")
_u16 = struct.Struct("<H")


def scalar_name(s: object) -> str:
    """Normalise a scalar type given as a name ("f32"), a NumPy dtype or type, or an oxide_scalar."""
    if isinstance(s, str):
        if s in SCALAR_ID:
            return s
        if s in FROM_NUMPY:
            return FROM_NUMPY[s]
        raise ValueError(f"unknown scalar type {s!r}; known: {', '.join(SCALARS)}")
    if isinstance(s, int) and 0 <= s < len(SCALARS):
        return SCALARS[s]
    name = getattr(s, "name", None) or getattr(getattr(s, "dtype", None), "name", None)
    if name is None and isinstance(s, type):
        name = s.__name__
    if name in FROM_NUMPY:
        return FROM_NUMPY[name]
    raise ValueError(f"unknown scalar type {s!r}; known: {', '.join(SCALARS)}")


def numpy_dtype(scalar: str) -> numpy.dtype[Any]:
    """The NumPy dtype of an interface scalar (bf16 needs ml_dtypes)."""
    import numpy as np
    if scalar == "bf16":
        try:
            ml_dtypes = importlib.import_module("ml_dtypes")  # optional, and untyped
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            raise TypeError("bf16 has no NumPy dtype; install ml_dtypes for one") from None
    return np.dtype(NUMPY[scalar])


def _bf16_bits(v: float) -> int:
    b: int = _u32.unpack(_f32.pack(v))[0]
    if (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF):  # NaN stays a quiet NaN
        return (b >> 16) | 0x40
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def scalar_bits(scalar: str, value: Any, what: str) -> int:
    """The bits of value as a scalar of type scalar (low-order bits of a u64), or TypeError /
    OverflowError naming `what` (e.g. "vecadd(): argument 3 'n'")."""
    if scalar in _INT_RANGE:
        if isinstance(value, float) or (hasattr(value, "dtype") and value.dtype.kind == "f"):
            raise TypeError(f"{what} is an integer ({scalar}), got the float {value!r}")
        try:
            v = int(value.__index__())
        except (AttributeError, TypeError):
            raise TypeError(f"{what} is an integer ({scalar}), got {type(value).__name__}") from None
        lo, hi = _INT_RANGE[scalar]
        if not lo <= v < hi:
            raise OverflowError(f"{what} is {scalar}, and {v} is out of its range [{lo}, {hi - 1}]")
        return v & 0xFFFFFFFFFFFFFFFF
    if scalar == "bool":
        if isinstance(value, (bool, int)) or type(value).__name__ == "bool_":
            return 1 if value else 0
        raise TypeError(f"{what} is a bool, got {type(value).__name__}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} is a float ({scalar}), got {type(value).__name__}") from None
    if scalar == "f32":
        return int(_u32.unpack(_f32.pack(f))[0])
    if scalar == "f64":
        return int(_u64.unpack(_f64.pack(f))[0])
    if scalar == "f16":
        return int(_u16.unpack(_f16.pack(f))[0])
    if scalar == "bf16":
        return _bf16_bits(f)
    raise TypeError(f"{what}: unknown scalar type {scalar}")


assert lib.OXIDE_SCALAR_F64 == SCALAR_ID["f64"]
