"""The front end's types: dtypes (ot.float32, ...), the constexpr marker, and the IR types of
the values a kernel computes with (scalars, tiles, tensors)."""
from dataclasses import dataclass


class dtype:
    """An element type: `ot.float32`, `ot.bfloat16`, ... `name` is the surface name, `ir` the
    IR's name, `kind` one of "f" (float), "f8" (fp8: storage only, cast before arithmetic),
    "i" (signed integer) and "b" (bool)."""

    __slots__ = ("name", "ir", "kind", "bits")

    def __init__(self, name, ir, kind, bits):
        self.name, self.ir, self.kind, self.bits = name, ir, kind, bits

    @property
    def is_float(self):
        return self.kind in ("f", "f8")

    @property
    def is_int(self):
        return self.kind in ("i", "b")

    def __repr__(self):
        return f"ot.{self.name}"


float32 = dtype("float32", "f32", "f", 32)
float16 = dtype("float16", "f16", "f", 16)
bfloat16 = dtype("bfloat16", "bf16", "f", 16)
float64 = dtype("float64", "f64", "f", 64)
float8_e4m3 = dtype("float8_e4m3", "f8e4m3", "f8", 8)
float8_e5m2 = dtype("float8_e5m2", "f8e5m2", "f8", 8)
int8 = dtype("int8", "i8", "i", 8)
int16 = dtype("int16", "i16", "i", 16)
int32 = dtype("int32", "i32", "i", 32)
int64 = dtype("int64", "i64", "i", 64)
bool_ = dtype("bool", "i1", "b", 1)

DTYPES = (float32, float16, bfloat16, float64, float8_e4m3, float8_e5m2, int8, int16, int32, int64, bool_)
BY_IR = {d.ir: d for d in DTYPES}

# What array libraries call their element types (numpy's str(dtype), torch's str(dtype) without
# "torch.", ml_dtypes' names for bf16 and fp8) -> ours.
BY_ARRAY_NAME = {"float32": float32, "float16": float16, "bfloat16": bfloat16, "float64": float64,
                 "float8_e4m3fn": float8_e4m3, "float8_e4m3": float8_e4m3, "float8_e5m2": float8_e5m2,
                 "int8": int8, "int16": int16, "int32": int32, "int64": int64, "bool": bool_}


class constexpr:
    """Annotation of a compile-time argument (`BLOCK_M: ot.constexpr`): each value it is called
    with compiles its own specialisation, in which the value is a Python constant."""


def promote(a, b):
    """The element type two operands compute in (NumPy-like): float beats int, the wider wins,
    f16 with bf16 is f32."""
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if a.is_float:
        if float64 in (a, b):
            return float64
        if a.bits == b.bits or float32 in (a, b):
            return float32
        return a if a.bits > b.bits else b
    return a if a.bits >= b.bits else b


@dataclass(frozen=True)
class Scalar:
    dtype: dtype

    @property
    def ir(self):
        return self.dtype.ir

    def __str__(self):
        return self.ir


@dataclass(frozen=True)
class Tile:
    shape: tuple
    dtype: dtype

    @property
    def ir(self):
        return f"tile<{'x'.join(map(str, self.shape))} x {self.dtype.ir}>"

    def with_dtype(self, d):
        return Tile(self.shape, d)

    def __str__(self):
        return self.ir


@dataclass(frozen=True)
class Tensor:
    rank: int
    dtype: dtype
    mut: bool

    @property
    def ir(self):
        return f"tensor<{'mut ' if self.mut else ''}{self.rank} x {self.dtype.ir}>"

    def __str__(self):
        return self.ir
