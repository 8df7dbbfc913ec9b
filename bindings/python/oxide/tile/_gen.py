"""The IR writer: blocks of text instructions, each remembering the Python line it came from,
and the typed operations (casts, splats, broadcasts, arithmetic) every construct of the surface
is made of. The AST compiler (_compiler.py) drives it; the builtins (_builtins.py) call it."""
import math

from ._types import BY_IR, Scalar, Tensor, Tile, bool_, float32, int32, int64, promote


class CompileError(Exception):
    """A tile kernel could not be compiled. `filename` and `lineno` are the user's source
    position; `message` says what is wrong; `ir_error` is liboxide's message when the parser or
    verifier refused the generated IR."""

    def __init__(self, message, filename=None, lineno=None, source_line=None, ir_error=None):
        self.message, self.filename, self.lineno, self.ir_error = message, filename, lineno, ir_error
        where = f"{filename}:{lineno}: " if filename else ""
        text = f"{where}{message}"
        if source_line:
            text += f"\n    {source_line.strip()}"
        super().__init__(text)


class Fail(Exception):
    """Raised while compiling; the compiler adds the Python position of the node at fault."""

    def __init__(self, message, node=None):
        super().__init__(message)
        self.message, self.node = message, node


class Val:
    """An SSA value of the generated IR: its %name and its type (Scalar, Tile or Tensor)."""

    __slots__ = ("name", "ty")

    def __init__(self, name, ty):
        self.name, self.ty = name, ty

    def __repr__(self):
        return f"<{self.name}: {self.ty}>"


class Block:
    __slots__ = ("label", "params", "lines", "pyline", "order")

    def __init__(self, label, params, pyline):
        self.label, self.params, self.lines, self.pyline, self.order = label, params, [], pyline, None


def _fmt_num(v, d):
    if d.is_float:
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, float):
        if not v.is_integer():
            raise Fail(f"{v!r} is not an integer, but the element type is {d.name}")
        v = int(v)
    return str(int(bool(v)) if d.kind == "b" else int(v))


class Gen:
    def __init__(self):
        self.blocks = []
        self.counter = 0
        self.line = 0  # the Python line of the construct being compiled
        self.entry = self.new_block([])
        self.consts = {}  # (type, text) -> Val, emitted at the top of the entry block
        self.const_lines = []
        self.cur = None
        self.fill(self.entry)

    # ---- blocks and names ----
    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}.{self.counter}"

    def new_block(self, param_types, hint="p", names=()):
        names = list(names) + [hint] * (len(param_types) - len(names))
        b = Block(f"^b{len(self.blocks)}", [Val(self.fresh(n), t) for t, n in zip(param_types, names)], self.line)
        self.blocks.append(b)
        return b

    def fill(self, block):
        """Make block the one instructions go to. Blocks are written in the order they are first
        filled, so a value's definition comes before its uses in the text too."""
        if block.order is None:
            block.order = sum(b.order is not None for b in self.blocks)
        self.cur = block

    def name_after(self, v, pyname):
        """Give the value just defined the Python name it is assigned to, so the IR reads like
        the source (%acc.15 rather than %v.15)."""
        if self.cur.lines and self.cur.lines[-1][0].startswith(v.name + " = "):
            new = f"%{pyname}.{v.name.rsplit('.', 1)[1]}"
            text, line = self.cur.lines[-1]
            self.cur.lines[-1] = (new + text[len(v.name):], line)
            v.name = new

    def emit(self, text):
        self.cur.lines.append((text, self.line))

    def op(self, name, operands, ty, attrs=None, hint="v"):
        v = Val(self.fresh(hint), ty)
        ops = " " + ", ".join(o.name for o in operands) if operands else ""
        at = " {" + ", ".join(f"{k}={a}" for k, a in attrs.items()) + "}" if attrs else ""
        self.emit(f"{v.name} = {name}{ops}{at} : {ty.ir}")
        return v

    def void(self, name, operands, attrs=None):
        at = " {" + ", ".join(f"{k}={a}" for k, a in attrs.items()) + "}" if attrs else ""
        self.emit(f"{name} " + ", ".join(o.name for o in operands) + at)

    def br(self, dest, args=()):
        self.emit(f"br {dest.label}" + (f"({', '.join(a.name for a in args)})" if args else ""))

    def cond_br(self, cond, t, f):
        self.emit(f"cond_br {cond.name}, {t.label}, {f.label}")

    def const(self, value, d):
        """A scalar constant of element type d, defined once at the top of the entry block."""
        if d.kind == "f8":
            raise Fail(f"there are no {d.name} scalars: fp8 exists only as tile elements")
        text = _fmt_num(value, d)
        key = (d.ir, text)
        v = self.consts.get(key)
        if v is None:
            v = self.consts[key] = Val(self.fresh("c"), Scalar(d))
            self.const_lines.append((f"{v.name} = const {{value={text}}} : {d.ir}", self.line))
        return v

    # ---- the text, and the Python line of each IR line ----
    def render(self, header):
        """(text, lines): lines[i] is the Python line of IR line i + 1 (0: none)."""
        out, lines = [], []
        for text, pyline in header:
            out.append(text)
            lines.append(pyline)
        for b in sorted((b for b in self.blocks if b.order is not None), key=lambda b: b.order):
            params = ", ".join(f"{p.name}: {p.ty.ir}" for p in b.params)
            out.append(f"{b.label}({params}):" if params else f"{b.label}:")
            lines.append(b.pyline)
            body = (self.const_lines + b.lines) if b is self.entry else b.lines
            for text, pyline in body:
                out.append("  " + text)
                lines.append(pyline)
        out.append("}")
        lines.append(0)
        return "\n".join(out) + "\n", lines

    # ---- typed operations ----
    def dtype_of(self, x):
        if isinstance(x, Val):
            return x.ty.dtype
        if isinstance(x, bool):
            return bool_
        if isinstance(x, int):
            return int32 if -2**31 <= x < 2**31 else int64
        if isinstance(x, float):
            return float32
        raise Fail(f"{x!r} ({type(x).__name__}) is not a number, scalar or tile")

    def scalar(self, x, d=None):
        """x as a scalar Val (of element type d when given, converting)."""
        if isinstance(x, Val):
            if not isinstance(x.ty, Scalar):
                raise Fail(f"expected a scalar, got {x.ty}")
            return x if d is None else self.cast_scalar(x, d)
        return self.const(x, d or self.dtype_of(x))

    def cast_scalar(self, v, d):
        s = v.ty.dtype
        if s is d:
            return v
        if d.kind == "f8" or s.kind == "f8":
            raise Fail(f"there are no {(d if d.kind == 'f8' else s).name} scalars: fp8 exists only as tile elements")
        if s.is_int and d.is_int:
            if s.kind == "b":
                name = "zext"
            else:
                name = "trunc" if d.bits < s.bits else "sext"
        elif s.is_int:
            name = "sitofp" if s.kind != "b" else None
            if name is None:
                v = self.cast_scalar(v, int32)
                name = "sitofp"
        elif d.is_int:
            if d.kind == "b":
                return self.op("fcmp", [v, self.const(0.0, s)], Scalar(bool_), {"pred": "une"})
            name = "fptosi"
        else:
            name = "fptrunc" if d.bits < s.bits or (d.bits == s.bits) else "fpext"
            if d.bits == s.bits:  # f16 <-> bf16: through f32
                v = self.op("fpext", [v], Scalar(float32))
                name = "fptrunc"
        return self.op(name, [v], Scalar(d))

    def cast_tile(self, v, d):
        return v if v.ty.dtype is d else self.op("tile.cast", [v], v.ty.with_dtype(d))

    def cast(self, x, d):
        if isinstance(x, Val) and isinstance(x.ty, Tile):
            return self.cast_tile(x, d)
        return self.scalar(x, d)

    def tile_of(self, x, ty):
        """x (a number, a scalar or a tile) as a tile of type ty: numbers become tile.full, scalars
        are converted to the element and splatted (the IR never mixes a scalar with a tile),
        tiles are broadcast and converted."""
        if isinstance(x, Val) and isinstance(x.ty, Tile):
            x = self.cast_tile(x, ty.dtype)
            return self.broadcast(x, ty.shape)
        if isinstance(x, Val):
            if not isinstance(x.ty, Scalar):
                raise Fail(f"a {x.ty} cannot be used as a tile")
            return self.op("tile.splat", [self.cast_scalar(x, ty.dtype)], ty)
        return self.op("tile.full", [], ty, {"value": _fmt_num(x, ty.dtype)})

    def broadcast(self, v, shape):
        shape = tuple(shape)
        if v.ty.shape == shape:
            return v
        if len(v.ty.shape) > len(shape):
            raise Fail(f"{v.ty} cannot broadcast to shape {list(shape)}: it has more dims")
        while len(v.ty.shape) < len(shape):
            v = self.op("tile.expand_dims", [v], Tile((1,) + v.ty.shape, v.ty.dtype), {"imm": 0})
        for i, (a, b) in enumerate(zip(v.ty.shape, shape)):
            if a != b and a != 1:
                raise Fail(f"{v.ty} cannot broadcast to shape {list(shape)}: dim {i} is {a}; only dims of size 1 "
                           f"stretch")
        return self.op("tile.broadcast", [v], Tile(shape, v.ty.dtype))

    @staticmethod
    def broadcast_shape(a, b):
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and 1 not in (x, y):
                raise Fail(f"shapes {list(a)} and {list(b)} do not match: dim {i} is {x} and {y}; only dims of "
                           f"size 1 broadcast")
            out.append(max(x, y))
        return tuple(out)

    def unify(self, a, b, want=None):
        """Bring two operands to one type: (a, b, dtype). A Python number takes the other side's
        element type (as in Triton); tiles broadcast; scalars with tiles are splatted."""
        ta = a.ty if isinstance(a, Val) else None
        tb = b.ty if isinstance(b, Val) else None
        for t in (ta, tb):
            if isinstance(t, Tensor):
                raise Fail(f"a tensor ({t}) is not a value: ot.load a tile from it")
        if ta is None and tb is None:
            d = promote(self.dtype_of(a), self.dtype_of(b))
        elif ta is None or tb is None:
            v, n = (b, a) if ta is None else (a, b)
            d = v.ty.dtype
            if isinstance(n, float) and not d.is_float:
                d = float32
        else:
            d = promote(ta.dtype, tb.dtype)
            if isinstance(ta, Tile) != isinstance(tb, Tile):
                tile_d = (ta if isinstance(ta, Tile) else tb).dtype
                sc_d = (tb if isinstance(ta, Tile) else ta).dtype
                d = tile_d if tile_d.is_float == sc_d.is_float or tile_d.is_float else d
        if want is not None:
            d = want
        shapes = [t.shape for t in (ta, tb) if isinstance(t, Tile)]
        if shapes:
            shape = shapes[0] if len(shapes) == 1 else self.broadcast_shape(*shapes)
            ty = Tile(shape, d)
            return self.tile_of(a, ty), self.tile_of(b, ty), d
        return self.scalar(a, d), self.scalar(b, d), d

    def result_type(self, v, d):
        return v.ty.with_dtype(d) if isinstance(v.ty, Tile) else Scalar(d)

    _ARITH = {"add": ("add", "add"), "sub": ("sub", "sub"), "mul": ("mul", "mul"), "max": ("fmax", "smax"),
              "min": ("fmin", "smin"), "and": (None, "and"), "or": (None, "or"), "xor": (None, "xor"),
              "shl": (None, "shl"), "shr": (None, "ashr"), "mod": ("frem", "srem"), "floordiv": (None, "sdiv")}
    _PRED = {"lt": ("olt", "slt"), "le": ("ole", "sle"), "gt": ("ogt", "sgt"), "ge": ("oge", "sge"),
             "eq": ("oeq", "eq"), "ne": ("une", "ne")}

    def binary(self, kind, a, b):
        if kind == "truediv":
            a, b, d = self.unify(a, b)
            if not d.is_float:
                a, b, d = self.cast(a, float32), self.cast(b, float32), float32
            return self.op("fdiv", [a, b], a.ty)
        if kind == "floordiv":
            a, b, d = self.unify(a, b)
            if d.is_float:
                return self.op("floor", [self.op("fdiv", [a, b], a.ty)], a.ty)
        elif kind in self._PRED:
            a, b, d = self.unify(a, b)
            f, i = self._PRED[kind]
            return self.op("fcmp" if d.is_float else "icmp", [a, b], self.result_type(a, bool_),
                           {"pred": f if d.is_float else i})
        else:
            a, b, d = self.unify(a, b)
        f, i = self._ARITH[kind]
        name = f if d.is_float else i
        if name is None:
            raise Fail(f"'{kind}' takes integers, got {d.name}")
        return self.op(name, [a, b], a.ty)

    def unary(self, name, x, float_only=True):
        if not isinstance(x, Val):
            x = self.scalar(x, float32 if float_only else None)
        if float_only and not x.ty.dtype.is_float:
            x = self.cast(x, float32)
        return self.op(name, [x], x.ty)

    def cond(self, x):
        """A scalar i1 for a runtime condition."""
        if isinstance(x, Val) and isinstance(x.ty, Tile):
            raise Fail(f"a tile ({x.ty}) is not a condition: use ot.where(cond, a, b) for elementwise choice")
        v = self.scalar(x)
        return v if v.ty.dtype is bool_ else self.binary("ne", v, 0)

    def to_index(self, x):
        """A load/store offset: an i32 or i64 scalar."""
        v = self.scalar(x)
        if v.ty.dtype not in (int32, int64):
            if v.ty.dtype.is_float:
                raise Fail(f"an offset must be an integer, got {v.ty}")
            v = self.cast_scalar(v, int32)
        return v


def ir_dtype(name):
    return BY_IR[name]
