"""oxide.tile: tile kernels written as Python functions (docs/tile.md, "Python").

    import oxide.tile as ot

    @ot.kernel
    def add(x, y, out, BLOCK: ot.constexpr):
        o = ot.program_id(0) * BLOCK
        ot.store(out, (o,), ot.load(x, (o,), (BLOCK,)) + ot.load(y, (o,), (BLOCK,)))

    print(add.ir(x, y, out, BLOCK=1024))     # the tile IR for this signature
    add[(n + 1023) // 1024](x, y, out, BLOCK=1024)        # on the GPU (torch / CuPy arrays)
    add.interpret((n + 1023) // 1024, x, y, out, BLOCK=1024)  # in the interpreter (NumPy)

The function is compiled from its source (its AST), never run: ot.* calls, arithmetic on tiles
and scalars, `for i in range(...)` and `if` become oxide tile IR.
"""
from ._autotune import Autotuner, Config, autotune
from ._builtins import BUILTINS as _B
from ._gen import CompileError
from ._kernel import Kernel, TensorSpec, kernel
from ._types import (bfloat16, bool_, constexpr, dtype, float8_e4m3, float8_e5m2, float16, float32, float64, int8,
                     int16, int32, int64)

program_id = _B["program_id"]
num_programs = _B["num_programs"]
cdiv = _B["cdiv"]
load = _B["load"]
store = _B["store"]
atomic_add = _B["atomic_add"]
full = _B["full"]
zeros = _B["zeros"]
arange = _B["arange"]
dot = _B["dot"]
cast = _B["cast"]
where = _B["where"]
exp = _B["exp"]
exp2 = _B["exp2"]
log = _B["log"]
log2 = _B["log2"]
sqrt = _B["sqrt"]
rsqrt = _B["rsqrt"]
tanh = _B["tanh"]
erf = _B["erf"]
floor = _B["floor"]
ceil = _B["ceil"]
abs = _B["abs"]
maximum = _B["maximum"]
minimum = _B["minimum"]
sigmoid = _B["sigmoid"]
fma = _B["fma"]
broadcast_to = _B["broadcast_to"]
expand_dims = _B["expand_dims"]
reshape = _B["reshape"]
permute = _B["permute"]
trans = _B["trans"]
sum = _B["sum"]
max = _B["max"]
min = _B["min"]
print = _B["print"]

__all__ = ["Autotuner", "CompileError", "Config", "Kernel", "TensorSpec", "abs", "arange", "atomic_add", "autotune",
           "bfloat16", "bool_", "broadcast_to", "cast", "cdiv", "ceil", "constexpr", "dot", "dtype", "erf", "exp",
           "exp2", "expand_dims", "float16", "float32", "float64", "float8_e4m3", "float8_e5m2", "floor", "fma",
           "full", "int16", "int32", "int64", "int8", "kernel", "load", "log", "log2", "max", "maximum", "min",
           "minimum", "num_programs", "permute", "print", "program_id", "reshape", "rsqrt", "sigmoid", "sqrt",
           "store", "sum", "tanh", "trans", "where", "zeros"]
