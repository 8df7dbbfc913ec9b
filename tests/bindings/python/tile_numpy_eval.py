"""A NumPy evaluator of the random tile programs of `oxide-difftest --tile --json` (docs/reliability.md,
"Tile programs"): it walks each program's JSON structure -- loads, elementwise ops, casts, shape
ops, reductions, dots, loops, branches, stores, atomic adds -- and computes what docs/tile.md's
semantics say, with NumPy, for every program instance of the grid. It never reads the IR text and
shares no code with the interpreter; test_tile_difftest.py compares the two.

Representation: float tiles are float32 arrays holding values of their element type (f16 and
bf16 ops compute in f32 and round after each op), integer tiles are int64 arrays holding the
value wrapped to the element's width, i1 tiles int64 0 or 1; a scalar is a 0-d array."""
import math

import numpy as np

WIDTH = {"i1": 1, "i8": 8, "i32": 32}
FLOATS = ("f32", "f16", "bf16")
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32, "i8": np.int8}


def to_bf16_bits(x):
    """float32 values -> bf16 bits, to nearest even (values are finite)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def round_to(elem, x):
    """x (any float array) rounded to f32, then to elem; held as float32."""
    x = np.asarray(x).astype(np.float32)
    if elem == "f16":
        return x.astype(np.float16).astype(np.float32)
    if elem == "bf16":
        return from_bf16_bits(to_bf16_bits(x))
    return x


def wrap(elem, x):
    w = WIDTH[elem]
    x = np.asarray(x, np.int64)
    if w == 1:
        return x & 1
    if w == 64:
        return x
    return ((x + (1 << (w - 1))) & ((1 << w) - 1)) - (1 << (w - 1))


def unsigned(elem, x):
    return np.asarray(x, np.int64) & ((1 << WIDTH[elem]) - 1)


def read_storage(elem, arr):
    """Storage values (views included) as the evaluator holds them."""
    if elem == "bf16":
        return from_bf16_bits(arr)
    if elem in FLOATS:
        return np.asarray(arr).astype(np.float32)
    return np.asarray(arr).astype(np.int64)


def write_storage(elem, vals):
    if elem == "bf16":
        return to_bf16_bits(vals)
    if elem in FLOATS:
        return np.asarray(vals).astype(STORAGE[elem])
    return wrap(elem, vals).astype(STORAGE[elem])


# ---- elementwise ----

def int_binary(op, e, a, b):
    w = WIDTH[e]
    ua, ub = unsigned(e, a), unsigned(e, b)
    if op in ("add", "sub", "mul", "and", "or", "xor"):
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
             "xor": np.bitwise_xor}[op]
        return wrap(e, f(a, b))
    if op in ("shl", "lshr"):
        amt = np.minimum(ub, w - 1).astype(np.uint64)
        v = (ua.astype(np.uint64) << amt) if op == "shl" else (ua.astype(np.uint64) >> amt)
        v = (v & np.uint64((1 << w) - 1)).astype(np.int64)
        return wrap(e, np.where(ub >= w, 0, v))
    if op == "ashr":
        return np.where(ub >= w, np.where(a < 0, -1, 0), a >> np.minimum(ub, w - 1))
    smin = -(1 << (w - 1))
    if op in ("sdiv", "srem"):
        safe = np.where(b == 0, 1, b)
        q = (np.abs(a) // np.abs(safe)) * np.sign(a) * np.sign(safe)
        if op == "sdiv":
            return wrap(e, np.where(b == 0, -1, np.where((a == smin) & (b == -1), smin, q)))
        r = np.sign(a) * (np.abs(a) % np.abs(safe))
        return wrap(e, np.where(b == 0, a, np.where(b == -1, 0, r)))
    if op in ("udiv", "urem"):
        safe = np.where(ub == 0, 1, ub)
        if op == "udiv":
            return wrap(e, np.where(ub == 0, -1, ua // safe))
        return wrap(e, np.where(ub == 0, ua, ua % safe))
    if op in ("smin", "smax"):
        return (np.minimum if op == "smin" else np.maximum)(a, b)
    return wrap(e, (np.minimum if op == "umin" else np.maximum)(ua, ub))


def compare(op, pred, e, a, b):
    if op == "icmp" and pred[0] == "u":
        a, b = unsigned(e, a), unsigned(e, b)
    base = pred[1:] if pred[0] in "sufo" and pred not in ("eq", "ne") else pred
    if op == "fcmp" and pred.startswith("f"):
        base = pred[2:]  # fult, fuge: unordered or less / greater-equal
    r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[base]
    if op == "fcmp":
        nan = np.isnan(a) | np.isnan(b)
        r = (r | nan) if pred[0] in "uf" else (r & ~nan)
    return r.astype(np.int64)


def float_op(op, e, args):
    a = args[0]
    wide = [x.astype(np.float64) for x in args]
    if op in ("add", "sub", "mul", "fdiv"):
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "fdiv": np.divide}[op]
        return round_to(e, f(args[0], args[1]))  # in f32: numpy's float32 ops round once, as IEEE does
    if op in ("fmin", "fmax"):
        return round_to(e, (np.fmin if op == "fmin" else np.fmax)(args[0], args[1]))
    if op == "fma":
        return round_to(e, wide[0] * wide[1] + wide[2])
    if op == "neg":
        return -a
    if op == "fabs":
        return np.abs(a)
    if op in ("floor", "ceil", "sqrt"):
        return round_to(e, {"floor": np.floor, "ceil": np.ceil, "sqrt": np.sqrt}[op](a))
    # libm's functions of the f32 value, rounded to f32 and then to the element
    if op == "erf":
        return round_to(e, np.vectorize(math.erf, otypes=[np.float64])(wide[0]))
    return round_to(e, {"exp": np.exp, "tanh": np.tanh, "log": np.log}[op](wide[0]))


def cast(src, dst, x):
    if dst in FLOATS:
        return round_to(dst, x.astype(np.float64))
    if dst == "i1":
        return (x != 0).astype(np.int64)
    if src in FLOATS:
        w = WIDTH[dst]
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        return np.clip(t, -(2.0 ** (w - 1)), 2.0 ** (w - 1) - 1).astype(np.int64)
    return wrap(dst, x)


def reduce(kind, e, x, axis):
    k = x.shape[axis]
    acc = np.take(x, 0, axis=axis)
    for j in range(1, k):
        y = np.take(x, j, axis=axis)
        if kind == "sum":
            acc = (acc + y).astype(np.float32) if e in FLOATS else acc + y  # in index order, in f32
        elif e in FLOATS:
            acc = (np.fmax if kind == "max" else np.fmin)(acc, y)
        else:
            acc = (np.maximum if kind == "max" else np.minimum)(acc, y)
    if kind == "sum":
        acc = round_to(e, acc) if e in FLOATS else wrap(e, acc)
    return np.asarray(acc)


def dot(a, b, acc):
    c = acc.astype(np.float32)
    for k in range(a.shape[-1]):
        c = (c + a[..., :, k:k + 1] * b[..., k:k + 1, :]).astype(np.float32)  # products exact in f32
    return c


# ---- the program ----

class Program:
    def __init__(self, prog, views):
        """views: tensor name -> the array view to read and write (storage of the NumPy side)."""
        self.prog, self.views = prog, views
        self.tensors = {t["name"]: t for t in prog["tensors"]}

    def run(self):
        g = self.prog["grid"]
        for p1 in range(g[1]):
            for p0 in range(g[0]):
                env = {"n": np.asarray(self.prog["n"], np.int64), "x": np.asarray(self.prog["x"], np.float32)}
                self.block(self.prog["body"], env, (p0, p1))

    def offsets(self, s, env, pid):
        iv = int(env[s["iv"]]) if "iv" in s else 0
        return [c[0] * pid[0] + c[1] * pid[1] + c[2] * iv + c[3] for c in s["off"]]

    def window(self, t, offs, shape):
        """Index arrays of the tile's elements in the tensor, and where they are in bounds."""
        idx = [o + np.arange(n) for o, n in zip(offs, shape)]
        ok = [(i >= 0) & (i < d) for i, d in zip(idx, t["dims"])]
        mask = np.ones(shape, bool)
        for d, m in enumerate(ok):
            mask &= m.reshape([-1 if j == d else 1 for j in range(len(shape))])
        return idx, mask

    def block(self, stmts, env, pid):
        for s in stmts:
            self.stmt(s, env, pid)

    def stmt(self, s, env, pid):
        op = s["op"]
        if op == "for":
            lim = int(env["n"]) if s["lim"] == "n" else s["lim"]
            env[s["param"]] = env[s["init"]]
            for i in range(lim):
                env[s["iv"]] = np.asarray(i, np.int64)
                self.block(s["body"], env, pid)
                env[s["param"]] = env[s["next"]]
            return
        if op == "if":
            taken = compare("icmp", s["pred"], "i32", env["n"], np.asarray(s["rhs"], np.int64))
            self.block(s["then"] if taken else s["else"], env, pid)
            env[s["dst"]] = env[s["tv"] if taken else s["ev"]]
            return
        if op in ("load", "store", "atomic_add"):
            self.memory(s, env, pid)
            return
        e, shape, args = s["elem"], tuple(s["shape"]), [env[a] for a in s["args"]]
        env[s["dst"]] = self.value(op, e, shape, s, args)

    def memory(self, s, env, pid):
        t = self.tensors[s["t"]]
        view = self.views[s["t"]]
        offs = self.offsets(s, env, pid)
        if s["op"] == "load":
            shape = tuple(s["shape"])
            idx, mask = self.window(t, offs, shape)
            vals = read_storage(t["elem"], view[np.ix_(*[np.clip(i, 0, d - 1) for i, d in zip(idx, t["dims"])])])
            pad = np.float32(s["pad"]) if t["elem"] in FLOATS else np.int64(s["pad"])
            env[s["dst"]] = np.where(mask, vals, pad)
            return
        val = env[s["src"]]
        idx, mask = self.window(t, offs, val.shape)
        pos = np.nonzero(mask)
        where = tuple(idx[d][pos[d]] for d in range(len(idx)))
        v = val[pos]
        if s["op"] == "atomic_add":
            old = read_storage(t["elem"], view[where])
            v = (old + v).astype(np.float32) if t["elem"] in FLOATS else old + v
        view[where] = write_storage(t["elem"], v)

    def value(self, op, e, shape, s, args):
        fl = e in FLOATS
        if op == "tile.full":
            return np.full(shape, round_to(e, s["value"]) if fl else wrap(e, s["value"]))
        if op == "tile.splat":
            return np.full(shape, args[0])
        if op in ("icmp", "fcmp"):
            return compare(op, s["pred"], self.elem_of(s, args), args[0], args[1])
        if op == "select":
            return np.where(args[0] != 0, args[1], args[2])
        if op == "tile.cast":
            return cast(self.elem_of(s, args), e, args[0])
        if op == "tile.broadcast":
            return np.broadcast_to(args[0], shape).copy()
        if op == "tile.expand_dims":
            return np.expand_dims(args[0], s["imm"])
        if op == "tile.reshape":
            return args[0].reshape(shape)
        if op == "tile.permute":
            return np.transpose(args[0], s["perm"]).copy()
        if op == "tile.reduce":
            return reduce(s["kind"], e, args[0], s["imm"])
        if op == "tile.dot":
            return dot(args[0], args[1], args[2])
        if fl:
            return float_op(op, e, args)
        if op in ("neg", "not", "iabs"):
            a = args[0]
            return wrap(e, -a if op == "neg" else ~a if op == "not" else np.abs(a))
        return int_binary(op, e, args[0], args[1])

    def elem_of(self, s, args):
        """The element type of an op's first operand (the JSON names the result's only)."""
        return self.types[s["args"][0]]

    def typed(self):
        """Records each value's element type (compares and casts need their operand's)."""
        self.types = {"n": "i32", "x": "f32"}

        def walk(stmts):
            for s in stmts:
                if "dst" in s and "elem" in s:
                    self.types[s["dst"]] = s["elem"]
                if s["op"] == "for":
                    self.types[s["iv"]] = "i32"
                    walk(s["body"])
                    self.types[s["param"]] = self.types[s["init"]]
                if s["op"] == "if":
                    walk(s["then"])
                    walk(s["else"])
                    self.types[s["dst"]] = self.types[s["tv"]]

        walk(self.prog["body"])
        return self


def evaluate(prog, views):
    Program(prog, views).typed().run()
