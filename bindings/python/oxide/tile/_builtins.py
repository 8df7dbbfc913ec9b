"""The ot.* functions a kernel body calls, each mapped onto oxide's tile ops (docs/tile.md).
Outside a kernel they only raise: they are compiled, never run."""
from ._gen import Fail, Val
from ._types import Scalar, Tensor, Tile, bool_, dtype, float32, int32, int64


class Builtin:
    __slots__ = ("name", "impl", "pyfn", "__doc__")

    def __init__(self, name, impl, pyfn=None):
        self.name, self.impl, self.pyfn, self.__doc__ = name, impl, pyfn, impl.__doc__

    def __call__(self, *a, **k):
        if self.pyfn is not None:  # e.g. ot.cdiv, also useful on the host for grids
            return self.pyfn(*a, **k)
        raise RuntimeError(f"ot.{self.name} is compiled, not run: call it inside an @ot.kernel function")

    def __repr__(self):
        return f"<ot.{self.name}>"


BUILTINS = {}


def builtin(fn):
    name = fn.__name__.rstrip("_")
    BUILTINS[name] = Builtin(name, fn)
    return fn


def _const_int(x, what):
    if isinstance(x, bool) or not isinstance(x, int):
        raise Fail(f"{what} must be a compile-time integer (a literal or an ot.constexpr argument), got "
                   f"{_describe(x)}")
    return x


def _shape(x, what="a tile shape"):
    if isinstance(x, int) and not isinstance(x, bool):
        return (x,)
    if not isinstance(x, (tuple, list)):
        raise Fail(f"{what} must be a tuple of compile-time integers, got {_describe(x)}")
    return tuple(_const_int(d, f"every dim of {what}") for d in x)


def _describe(x):
    if isinstance(x, Val):
        return f"a runtime value ({x.ty})"
    return f"{x!r}"


def _tile(x, what):
    if not (isinstance(x, Val) and isinstance(x.ty, Tile)):
        raise Fail(f"{what} must be a tile, got {_describe(x)}")
    return x


def _tensor(x, what):
    if not (isinstance(x, Val) and isinstance(x.ty, Tensor)):
        raise Fail(f"{what} must be a tensor argument of the kernel, got {_describe(x)}")
    return x


def _dtype(x, what="dtype"):
    if not isinstance(x, dtype):
        raise Fail(f"{what} must be an ot dtype (ot.float32, ot.bfloat16, ...), got {_describe(x)}")
    return x


def _axis(x, rank):
    a = _const_int(x, "axis")
    if a < 0:
        a += rank
    return a


@builtin
def program_id(g, axis=0):
    """The index of this program instance on grid axis 0, 1 or 2 (i32)."""
    return g.op("tile.program_id", [], Scalar(int32), {"imm": _const_int(axis, "axis")}, hint="pid")


@builtin
def num_programs(g, axis=0):
    """The grid's size on axis 0, 1 or 2 (i32)."""
    return g.op("tile.num_programs", [], Scalar(int32), {"imm": _const_int(axis, "axis")})


@builtin
def cdiv(g, a, b):
    """ceil(a / b) for integers."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return g.binary("floordiv", g.binary("sub", g.binary("add", a, b), 1), b)


BUILTINS["cdiv"].pyfn = lambda a, b: -(-a // b)


def _offsets(g, t, offsets):
    offs = offsets if isinstance(offsets, (tuple, list)) else (offsets,)
    if len(offs) != t.ty.rank:
        raise Fail(f"{t.ty} takes {t.ty.rank} offset(s), one per dim; got {len(offs)}")
    return [g.to_index(o) for o in offs]


def _pad_text(pad, d):
    if isinstance(pad, Val):
        raise Fail("padding must be a compile-time number")
    from ._gen import _fmt_num
    return _fmt_num(pad, d)


@builtin
def load(g, tensor, offsets, shape, padding=0):
    """The tile of `shape` at `offsets` (one per dim, in elements) of `tensor`; elements outside
    the tensor are `padding`."""
    t = _tensor(tensor, "ot.load's first argument")
    shape = _shape(shape, "ot.load's shape")
    offs = _offsets(g, t, offsets)
    return g.op("tile.load", [t] + offs, Tile(shape, t.ty.dtype), {"pad": _pad_text(padding, t.ty.dtype)})


def _store_like(g, name, tensor, offsets, value, what):
    t = _tensor(tensor, f"{what}'s first argument")
    offs = _offsets(g, t, offsets)
    if not (isinstance(value, Val) and isinstance(value.ty, Tile)):
        raise Fail(f"{what} stores a tile; got {_describe(value)} (ot.full makes a tile of a value)")
    g.void(name, [t] + offs + [g.cast_tile(value, t.ty.dtype)])


@builtin
def store(g, tensor, offsets, value):
    """Write the tile `value` (converted to the tensor's element type) at `offsets`; elements
    outside the tensor are not written."""
    _store_like(g, "tile.store", tensor, offsets, value, "ot.store")


@builtin
def atomic_add(g, tensor, offsets, value):
    """Atomically add the tile `value` (f32 or i32) into `tensor` at `offsets`."""
    _store_like(g, "tile.atomic_add", tensor, offsets, value, "ot.atomic_add")


@builtin
def full(g, shape, value, dtype=float32):
    """A tile of `shape` whose every element is `value` (a number or a runtime scalar)."""
    ty = Tile(_shape(shape), _dtype(dtype))
    return g.tile_of(value, ty)


@builtin
def zeros(g, shape, dtype=float32):
    return g.tile_of(0, Tile(_shape(shape), _dtype(dtype)))


@builtin
def arange(g, start, end=None):
    """The i32 tile [start, end) (or [0, start)); its length must be a power of two."""
    if end is None:
        start, end = 0, start
    n = _const_int(end, "ot.arange's end") - _const_int(start, "ot.arange's start")
    v = g.op("tile.arange", [], Tile((n,), int32))
    return g.binary("add", v, start) if start else v


@builtin
def dot(g, a, b, acc=None):
    """acc + a @ b with f32 accumulation: a [M,K] and b [K,N] (or batched [B,M,K], [B,K,N]) of
    bf16, f16 or fp8; acc (default zeros) [M,N] of f32."""
    a, b = _tile(a, "ot.dot's a"), _tile(b, "ot.dot's b")
    shape = a.ty.shape[:-1] + b.ty.shape[-1:]
    if acc is None:
        acc = g.tile_of(0.0, Tile(shape, float32))
    acc = _tile(acc, "ot.dot's acc")
    return g.op("tile.dot", [a, b, acc], acc.ty, hint="acc")


@builtin
def cast(g, x, dtype):
    """x converted to `dtype` (fp8 saturates; float to int truncates)."""
    return g.cast(x, _dtype(dtype))


@builtin
def where(g, cond, a, b):
    """Elementwise `a if cond else b` (cond an i1 tile or a scalar)."""
    shapes = [v.ty.shape for v in (cond, a, b) if isinstance(v, Val) and isinstance(v.ty, Tile)]
    a, b, _ = g.unify(a, b)
    if shapes:
        shape = shapes[0]
        for s in shapes[1:]:
            shape = g.broadcast_shape(shape, s)
        a, b = g.broadcast(a, shape) if isinstance(a.ty, Tile) else g.tile_of(a, Tile(shape, a.ty.dtype)), \
            g.broadcast(b, shape) if isinstance(b.ty, Tile) else g.tile_of(b, Tile(shape, b.ty.dtype))
        c = g.tile_of(cond, Tile(shape, bool_)) if isinstance(cond, Val) and isinstance(cond.ty, Tile) \
            else g.tile_of(g.cond(cond), Tile(shape, bool_))
    else:
        c = g.cond(cond)
    return g.op("select", [c, a, b], a.ty)


def _math(name, op):
    def impl(g, x):
        return g.unary(op, x)
    impl.__name__ = name
    impl.__doc__ = f"Elementwise {op} (integers are converted to f32)."
    builtin(impl)


for _n, _o in (("exp", "exp"), ("exp2", "exp2"), ("log", "log"), ("log2", "log2"), ("sqrt", "sqrt"),
               ("rsqrt", "rsqrt"), ("tanh", "tanh"), ("erf", "erf"), ("floor", "floor"), ("ceil", "ceil")):
    _math(_n, _o)


@builtin
def abs_(g, x):
    if not isinstance(x, Val):
        return abs(x)
    return g.op("fabs" if x.ty.dtype.is_float else "iabs", [x], x.ty)


@builtin
def maximum(g, a, b):
    return g.binary("max", a, b)


@builtin
def minimum(g, a, b):
    return g.binary("min", a, b)


@builtin
def sigmoid(g, x):
    """1 / (1 + exp(-x))."""
    x = g.cast(x, float32) if not (isinstance(x, Val) and x.ty.dtype.is_float) else x
    return g.binary("truediv", 1.0, g.binary("add", 1.0, g.unary("exp", g.op("neg", [x], x.ty))))


@builtin
def fma(g, a, b, c):
    a, b, _ = g.unify(a, b)
    a, c, _ = g.unify(a, c)
    b, _, _ = g.unify(b, c)
    return g.op("fma", [a, b, c], a.ty)


@builtin
def broadcast_to(g, x, shape):
    x = _tile(x, "ot.broadcast_to's operand")
    return g.broadcast(x, _shape(shape))


@builtin
def expand_dims(g, x, axis):
    x = _tile(x, "ot.expand_dims's operand")
    a = _axis(axis, len(x.ty.shape) + 1)
    shape = x.ty.shape[:a] + (1,) + x.ty.shape[a:]
    return g.op("tile.expand_dims", [x], Tile(shape, x.ty.dtype), {"imm": a})


@builtin
def reshape(g, x, shape):
    x = _tile(x, "ot.reshape's operand")
    return g.op("tile.reshape", [x], Tile(_shape(shape), x.ty.dtype))


@builtin
def permute(g, x, *dims):
    x = _tile(x, "ot.permute's operand")
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    dims = tuple(_const_int(d, "a permute dim") for d in dims)
    if sorted(dims) != list(range(len(x.ty.shape))):
        raise Fail(f"permute dims {list(dims)} are not a permutation of 0..{len(x.ty.shape) - 1} for {x.ty}")
    shape = tuple(x.ty.shape[d] for d in dims)
    return g.op("tile.permute", [x], Tile(shape, x.ty.dtype), {"perm": "[" + ",".join(map(str, dims)) + "]"})


@builtin
def trans(g, x):
    x = _tile(x, "ot.trans's operand")
    n = len(x.ty.shape)
    return permute(g, x, *(tuple(range(n - 2)) + (n - 1, n - 2))) if n >= 2 else x


def _reduce(kind):
    def impl(g, x, axis=None, keep_dims=False):
        x = _tile(x, f"ot.{kind}'s operand")
        if x.ty.dtype.kind == "b" or x.ty.dtype.kind == "f8":
            x = g.cast_tile(x, int32 if x.ty.dtype.kind == "b" else float32)
        if axis is None:  # over everything: reshape to one dim first
            n = 1
            for d in x.ty.shape:
                n *= d
            if len(x.ty.shape) > 1:
                x = g.op("tile.reshape", [x], Tile((n,), x.ty.dtype))
            axis = 0
        a = _axis(axis, len(x.ty.shape))
        if not 0 <= a < len(x.ty.shape):
            raise Fail(f"axis {axis} is out of range for {x.ty}")
        rest = x.ty.shape[:a] + x.ty.shape[a + 1:]
        ty = Tile(rest, x.ty.dtype) if rest else Scalar(x.ty.dtype)
        r = g.op("tile.reduce", [x], ty, {"imm": a, "kind": kind})
        if keep_dims and rest:
            r = g.op("tile.expand_dims", [r], Tile(rest[:a] + (1,) + rest[a:], x.ty.dtype), {"imm": a})
        return r
    impl.__name__ = kind + "_"
    impl.__doc__ = f"The {kind} over `axis` (all dims when None); keep_dims keeps it as size 1."
    builtin(impl)


for _k in ("sum", "max", "min"):
    _reduce(_k)


@builtin
def print_(g, prefix, x):
    """Print a tile or scalar with a prefix string (from every program: debugging only)."""
    if not isinstance(prefix, str):
        raise Fail("ot.print's first argument is its prefix string")
    v = x if isinstance(x, Val) else g.scalar(x)
    s = prefix.replace("\\", "\\\\").replace('"', '\\"')
    g.void("tile.print", [v], {"str": f'"{s}"'})


def tile_method(g, v, name):
    """x.T, x.shape, x.dtype, x.to(...) on a tile; t.shape, t.dtype on a tensor."""
    if isinstance(v.ty, Tensor):
        if name == "shape":
            return TensorShape(v)
        if name == "dtype":
            return v.ty.dtype
        if name == "ndim":
            return v.ty.rank
    elif isinstance(v.ty, Tile):
        if name == "T":
            return trans(g, v)
        if name == "shape":
            return v.ty.shape
        if name == "dtype":
            return v.ty.dtype
        if name == "ndim":
            return len(v.ty.shape)
        if name == "to":
            return Method(lambda g_, d: cast(g_, v, d))
        for m in ("sum", "max", "min"):
            if name == m:
                return Method(lambda g_, *a, _m=m, **k: BUILTINS[_m].impl(g_, v, *a, **k))
    elif name == "to":
        return Method(lambda g_, d: cast(g_, v, d))
    elif name == "dtype":
        return v.ty.dtype
    raise Fail(f"{v.ty} has no attribute {name!r}")


class Method:
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class TensorShape:
    """t.shape: t.shape[i] is the size of dim i (tile.dim), an i32 (dims beyond 2^31 - 1 are not
    supported), read when the kernel runs."""

    def __init__(self, t):
        self.t = t

    def index(self, g, i):
        i = _const_int(i, "a shape index")
        if i < 0:
            i += self.t.ty.rank
        if not 0 <= i < self.t.ty.rank:
            raise Fail(f"dim {i} is out of range for {self.t.ty} (rank {self.t.ty.rank})")
        d = g.op("tile.dim", [self.t], Scalar(int64), {"imm": i}, hint="dim")
        return g.op("trunc", [d], Scalar(int32), hint="dim")
