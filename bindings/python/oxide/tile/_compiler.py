"""From a Python function's AST to oxide tile IR text, for one signature.

Python values (numbers, dtypes, tuples, constexpr arguments) are computed here, at compile
time; everything that depends on the kernel's arguments becomes IR. `for ... in range(...)` is a
counted loop whose loop-carried variables (those assigned in the body and defined before it)
are block parameters; `if` on a runtime scalar is cond_br to two blocks that branch to a merge
block whose parameters are the variables either side assigned. Each IR line remembers the
Python line it came from, so that errors from liboxide point at the user's source."""
import ast
import builtins
import operator

from . import _builtins as B
from ._gen import Fail, Gen, Val
from ._types import Scalar, Tensor, Tile, dtype, float32, int32, int64

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "shl",
           ast.RShift: "shr"}
_PYOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
          ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
          ast.RShift: operator.rshift, ast.Pow: operator.pow}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PYCMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
          ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_HINTS = ("warps", "stages", "group", "persistent", "consumer_groups", "cluster", "producer")


class Undef:
    """A name with no value on some path (assigned in one branch only, or only inside a loop)."""

    def __init__(self, why):
        self.why = why


def assigned_names(stmts):
    out = []
    for s in stmts:
        for n in ast.walk(s):
            targets = []
            if isinstance(n, (ast.Assign,)):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = [n.target]
            elif isinstance(n, ast.For):
                targets = [n.target]
            for t in targets:
                for m in ast.walk(t):
                    if isinstance(m, ast.Name) and m.id not in out:
                        out.append(m.id)
    return out


def stored_tensors(tree):
    """Names passed as the first argument of ot.store / ot.atomic_add: their tensors are mut."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in ("store", "atomic_add"):
                out.add(n.args[0].id)
    return out


class Compiler:
    def __init__(self, fdef, name, first_line, fglobals, params, hints):
        """params: [(name, kind, info)], kind "tensor" (Tensor), "scalar" (dtype) or "const"."""
        self.fdef, self.name, self.off, self.globals = fdef, name, first_line - 1, fglobals
        self.params, self.hints = params, hints
        self.g = Gen()
        self.env = {}

    # ---- the whole function ----
    def compile(self):
        g = self.g
        g.line = self.fdef.lineno + self.off
        sig = []
        for pname, kind, info in self.params:
            if kind == "const":
                self.env[pname] = info
                continue
            ty = info if kind == "tensor" else Scalar(info)
            v = Val(f"%{pname}", ty)
            self.env[pname] = v
            sig.append(f"{v.name}: {ty.ir}")
        hints = ", ".join(f"{k}={int(self.hints[k])}" for k in _HINTS if k in self.hints)
        head = f"tile_kernel @{self.name}({', '.join(sig)})" + (f" hints({hints})" if hints else "") + " {"
        body = list(self.fdef.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        if body and isinstance(body[-1], ast.Return) and body[-1].value is None:
            body = body[:-1]
        self.block(body)
        g.line = (self.fdef.end_lineno or self.fdef.lineno) + self.off
        g.emit("ret")
        return g.render([(f"module @{self.name}", 0), ("", 0), (head, self.fdef.lineno + self.off)])

    def block(self, stmts):
        for s in stmts:
            self.g.line = s.lineno + self.off
            try:
                self.stmt(s)
            except Fail as e:
                if e.node is None:
                    e.node = s
                raise

    # ---- statements ----
    def stmt(self, s):
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            raise Fail(self.unsupported(s), s)
        m(s)

    def unsupported(self, s):
        what = {"While": "'while' loops are not supported in a tile kernel: use for i in range(...)",
                "Break": "'break' is not supported in a tile kernel (loops are counted)",
                "Continue": "'continue' is not supported in a tile kernel: use if around the rest of the body",
                "Return": "'return' is only allowed as the kernel's last statement, without a value",
                "With": "'with' is not supported in a tile kernel", "Try": "'try' is not supported in a tile kernel",
                "FunctionDef": "nested functions are not supported in a tile kernel",
                "Lambda": "lambdas are not supported in a tile kernel",
                "ListComp": "comprehensions are not supported in a tile kernel",
                "Global": "'global' is not supported in a tile kernel",
                "Delete": "'del' is not supported in a tile kernel"}
        return what.get(type(s).__name__, f"{type(s).__name__} is not supported in a tile kernel")

    def s_Expr(self, s):
        if isinstance(s.value, ast.Constant):
            return
        self.expr(s.value)

    def s_Pass(self, s):
        pass

    def s_Assign(self, s):
        v = self.expr(s.value)
        for t in s.targets:
            self.assign(t, v)

    def s_AnnAssign(self, s):
        if s.value is None:
            raise Fail("a declaration without a value does nothing in a tile kernel", s)
        self.assign(s.target, self.expr(s.value))

    def s_AugAssign(self, s):
        if not isinstance(s.target, ast.Name):
            raise Fail("only names can be assigned in a tile kernel", s)
        cur = self.name_value(s.target)
        self.assign(s.target, self.binop(type(s.op), cur, self.expr(s.value), s))

    def assign(self, t, v):
        if isinstance(t, ast.Name):
            if isinstance(v, Val):
                self.g.name_after(v, t.id)
            self.env[t.id] = v
        elif isinstance(t, (ast.Tuple, ast.List)):
            if not isinstance(v, (tuple, list)) or len(v) != len(t.elts):
                raise Fail(f"cannot unpack {self.describe(v)} into {len(t.elts)} names", t)
            for e, x in zip(t.elts, v):
                self.assign(e, x)
        else:
            raise Fail("only names (and tuples of names) can be assigned in a tile kernel: tensors are written "
                       "with ot.store", t)

    def s_Assert(self, s):
        c = self.expr(s.test)
        if isinstance(c, Val):
            raise Fail("assert takes a compile-time condition (runtime checks are not supported)", s)
        if not c:
            msg = self.expr(s.msg) if s.msg is not None else "assertion failed"
            raise Fail(f"assert: {msg}", s)

    def s_If(self, s):
        c = self.expr(s.test)
        if not isinstance(c, Val):  # a compile-time condition: only the taken side is compiled
            self.block(s.body if c else s.orelse)
            return
        g = self.g
        cond = g.cond(c)
        names = assigned_names(s.body + s.orelse)
        then_b, else_b = g.new_block([]), g.new_block([])
        g.cond_br(cond, then_b, else_b)
        before = dict(self.env)
        ends = []
        for blk, stmts in ((then_b, s.body), (else_b, s.orelse)):
            self.env = dict(before)
            g.fill(blk)
            self.block(stmts)
            ends.append((g.cur, self.env))
        g.line = s.lineno + self.off
        merged, after = self.merge_branches(names, before, ends[0][1], ends[1][1], s)
        merge_b = g.new_block([ty for _, ty in merged], names=[n for n, _ in merged])
        for end, env in ends:
            g.fill(end)  # a tile constant is made in the branch that needs it
            g.br(merge_b, [self.coerce(env[n], ty, n, s) for n, ty in merged])
        g.fill(merge_b)
        for (n, _), p in zip(merged, merge_b.params):
            after[n] = p
        self.env = after

    def merge_branches(self, names, before, env_t, env_f, s):
        """([(name, type)] of the names either side assigned that differ, and the env after the if
        for the others)."""
        after = dict(before)
        merged = []
        for n in names:
            a, b = env_t.get(n), env_f.get(n)
            if a is None or b is None or isinstance(a, Undef) or isinstance(b, Undef):
                if a is not b:
                    after[n] = Undef(f"'{n}' is assigned on only one side of the if at line {s.lineno + self.off}")
                continue
            if a is b:
                after[n] = a
                continue
            if not isinstance(a, Val) and not isinstance(b, Val):
                if a == b and type(a) is type(b):
                    after[n] = a
                    continue
                if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
                    raise Fail(f"'{n}' is a compile-time value that differs between the sides of a runtime if "
                               f"({a!r} and {b!r})", s)
            merged.append((n, self.join_type(n, a, b, s)))
        return merged, after

    def join_type(self, n, a, b, s):
        ta = a.ty if isinstance(a, Val) else None
        tb = b.ty if isinstance(b, Val) else None
        if ta is not None and tb is not None and ta != tb:
            raise Fail(f"'{n}' is {ta} on one path and {tb} on the other; give it one type", s)
        t = ta or tb
        if t is None:
            d = float32 if isinstance(a, float) or isinstance(b, float) else self.g.dtype_of(a)
            t = Scalar(d)
        if isinstance(t, Tensor):
            raise Fail(f"'{n}' names a different tensor on each path", s)
        return t

    def coerce(self, x, ty, n, s):
        g = self.g
        if isinstance(x, Val):
            if x.ty != ty:
                raise Fail(f"'{n}' is {x.ty} here but {ty} where it was first given a value; give it one type "
                           f"(convert with .to(...))", s)
            return x
        if not isinstance(x, (int, float)):
            raise Fail(f"'{n}' holds the compile-time value {x!r}, which cannot change at run time", s)
        return g.tile_of(x, ty) if isinstance(ty, Tile) else g.const(x, ty.dtype)

    def s_For(self, s):
        g = self.g
        it = s.iter
        if not (isinstance(it, ast.Call) and self.expr(it.func) is builtins.range):
            raise Fail("a tile kernel loops with for NAME in range(start, stop, step)", s)
        if not isinstance(s.target, ast.Name) or s.orelse:
            raise Fail("for takes one loop variable and no else", s)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise Fail("range takes 1 to 3 positional arguments", s)
        args = [self.expr(a) for a in it.args]
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        if isinstance(step, Val) or not isinstance(step, int) or step == 0:
            raise Fail(f"the step of range must be a non-zero compile-time integer, got {self.describe(step)}", s)
        idx = int64 if any(isinstance(x, Val) and x.ty.dtype is int64 for x in (start, stop)) else int32
        for x in (start, stop):
            if isinstance(x, Val) and not (isinstance(x.ty, Scalar) and x.ty.dtype.is_int):
                raise Fail(f"range bounds must be integer scalars, got {x.ty}", s)
            if isinstance(x, float):
                raise Fail(f"range bounds must be integers, got {x!r}", s)
        body_names = [n for n in assigned_names(s.body) if n != s.target.id]
        carried = [n for n in body_names if n in self.env and not isinstance(self.env[n], Undef)]
        inits = []
        for n in carried:
            v = self.env[n]
            if not isinstance(v, Val):
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise Fail(f"'{n}' holds the compile-time value {v!r} and is assigned in a loop with runtime "
                               f"trip count; give it a runtime value or assign it outside the loop", s)
                v = g.const(v, g.dtype_of(v))
            if isinstance(v.ty, Tensor):
                raise Fail(f"'{n}' is a tensor and cannot be reassigned in a loop", s)
            inits.append(v)
        start_v, stop_v = g.scalar(start, idx), g.scalar(stop, idx)
        hdr = g.new_block([Scalar(idx)] + [v.ty for v in inits], names=[s.target.id] + carried)
        g.br(hdr, [start_v] + inits)
        g.fill(hdr)
        more = g.op("icmp", [hdr.params[0], stop_v], Scalar(B.bool_), {"pred": "slt" if step > 0 else "sgt"})
        body_b, exit_b = g.new_block([]), g.new_block([])
        g.cond_br(more, body_b, exit_b)
        before = dict(self.env)
        g.fill(body_b)
        self.env[s.target.id] = hdr.params[0]
        for n, p in zip(carried, hdr.params[1:]):
            self.env[n] = p
        self.block(s.body)
        g.line = s.lineno + self.off
        nexts = [self.coerce(self.env[n] if not isinstance(self.env.get(n), Undef) else self.undef(n, s), p.ty, n, s)
                 for n, p in zip(carried, hdr.params[1:])]
        step_v = g.const(step, idx)
        g.br(hdr, [g.op("add", [hdr.params[0], step_v], Scalar(idx), hint="i")] + nexts)
        g.fill(exit_b)
        self.env = before
        for n, p in zip(carried, hdr.params[1:]):
            self.env[n] = p
        line = s.lineno + self.off
        for n in body_names + [s.target.id]:
            if n not in carried:
                self.env[n] = Undef(f"'{n}' is assigned only inside the loop at line {line}, which may run no times; "
                                    f"give it a value before the loop")

    def undef(self, n, s):
        raise Fail(self.env[n].why, s)

    # ---- expressions ----
    def expr(self, e):
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise Fail(self.unsupported(e), e)
        try:
            return m(e)
        except Fail as f:
            if f.node is None:
                f.node = e
            raise

    def describe(self, v):
        return f"a runtime value ({v.ty})" if isinstance(v, Val) else repr(v)

    def e_Constant(self, e):
        return e.value

    def e_Tuple(self, e):
        return tuple(self.expr(x) for x in e.elts)

    e_List = e_Tuple

    def name_value(self, e):
        n = e.id
        if n in self.env:
            v = self.env[n]
            if isinstance(v, Undef):
                raise Fail(v.why, e)
            return v
        if n in assigned_names(self.fdef.body):
            raise Fail(f"'{n}' is used before it is assigned", e)
        if n in self.globals:
            return self.globals[n]
        if hasattr(builtins, n):
            return getattr(builtins, n)
        raise Fail(f"name '{n}' is not defined", e)

    def e_Name(self, e):
        return self.name_value(e)

    def e_Attribute(self, e):
        base = self.expr(e.value)
        if isinstance(base, Val):
            return B.tile_method(self.g, base, e.attr)
        try:
            return getattr(base, e.attr)
        except AttributeError:
            raise Fail(f"{base!r} has no attribute {e.attr!r}", e) from None

    def e_Subscript(self, e):
        base = self.expr(e.value)
        sl = e.slice
        if isinstance(base, B.TensorShape):
            return base.index(self.g, self.expr(sl))
        if isinstance(base, Val) and isinstance(base.ty, Tile):
            return self.tile_index(base, sl, e)
        idx = self.expr(sl) if not isinstance(sl, ast.Slice) else slice(*(self.expr(x) if x else None
                                                                         for x in (sl.lower, sl.upper, sl.step)))
        if isinstance(idx, Val):
            raise Fail("indexing with a runtime value is not supported", e)
        try:
            return base[idx]
        except Exception as x:
            raise Fail(f"cannot index {base!r} with {idx!r}: {x}", e) from None

    def tile_index(self, v, sl, e):
        """x[:, None] and the like: None inserts a size-1 dim (expand_dims), ':' keeps one."""
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        axis = 0
        for it in items:
            if isinstance(it, ast.Constant) and it.value is None:
                v = B.expand_dims(self.g, v, axis)
                axis += 1
            elif isinstance(it, ast.Slice) and it.lower is None and it.upper is None and it.step is None:
                axis += 1
            else:
                raise Fail("a tile is indexed only with ':' and None (to add a dim); load tiles with ot.load", e)
        return v

    def e_BinOp(self, e):
        return self.binop(type(e.op), self.expr(e.left), self.expr(e.right), e)

    def binop(self, op, a, b, e):
        if not isinstance(a, Val) and not isinstance(b, Val):
            if op not in _PYOPS:
                raise Fail(f"operator {op.__name__} is not supported", e)
            try:
                return _PYOPS[op](a, b)
            except Exception as x:
                raise Fail(f"{a!r} {op.__name__} {b!r}: {x}", e) from None
        if op is ast.Pow:
            if isinstance(b, int) and 1 <= b <= 4:
                r = a
                for _ in range(b - 1):
                    r = self.g.binary("mul", r, a)
                return r
            raise Fail("** takes a small constant integer exponent (1 to 4) in a tile kernel", e)
        if op not in _BINOPS:
            raise Fail(f"operator {op.__name__} is not supported on tiles", e)
        return self.g.binary(_BINOPS[op], a, b)

    def e_UnaryOp(self, e):
        v = self.expr(e.operand)
        if not isinstance(v, Val):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[type(e.op)](v)
        g = self.g
        if isinstance(e.op, ast.USub):
            return g.op("neg", [v], v.ty) if v.ty.dtype.is_float else g.binary("sub", 0, v)
        if isinstance(e.op, ast.UAdd):
            return v
        if isinstance(e.op, ast.Not):
            c = g.cond(v)
            return g.binary("xor", c, g.const(1, B.bool_))
        return g.op("not", [v], v.ty)

    def e_Compare(self, e):
        if len(e.ops) != 1:
            raise Fail("chained comparisons are not supported: use (a < b) & (b < c)", e)
        a, b = self.expr(e.left), self.expr(e.comparators[0])
        op = type(e.ops[0])
        if not isinstance(a, Val) and not isinstance(b, Val):
            if op in (ast.In, ast.NotIn):
                return (a in b) == (op is ast.In)
            return _PYCMP[op](a, b)
        if op not in _CMPOPS:
            raise Fail(f"comparison {op.__name__} is not supported on runtime values", e)
        return self.g.binary(_CMPOPS[op], a, b)

    def e_BoolOp(self, e):
        vals = []
        for x in e.values:
            v = self.expr(x)
            if not isinstance(v, Val):
                if isinstance(e.op, ast.And) and not v:
                    return v
                if isinstance(e.op, ast.Or) and v:
                    return v
                continue
            vals.append(self.g.cond(v))
        if not vals:
            return self.expr(e.values[-1])
        r = vals[0]
        for v in vals[1:]:
            r = self.g.binary("and" if isinstance(e.op, ast.And) else "or", r, v)
        return r

    def e_IfExp(self, e):
        c = self.expr(e.test)
        if not isinstance(c, Val):
            return self.expr(e.body if c else e.orelse)
        return B.where(self.g, c, self.expr(e.body), self.expr(e.orelse))

    def e_Call(self, e):
        f = self.expr(e.func)
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                v = self.expr(a.value)
                if not isinstance(v, (tuple, list)):
                    raise Fail("*args takes a compile-time tuple", a)
                args.extend(v)
            else:
                args.append(self.expr(a))
        kw = {k.arg: self.expr(k.value) for k in e.keywords if k.arg is not None}
        if isinstance(f, B.Builtin):
            try:
                return f.impl(self.g, *args, **kw)
            except TypeError as x:
                raise Fail(f"ot.{f.name}: {x}".replace(f"{f.impl.__name__}()", f"ot.{f.name}()"), e) from None
        if isinstance(f, B.Method):
            return f.fn(self.g, *args, **kw)
        if isinstance(f, dtype):
            (x,) = args
            return self.g.cast(x, f) if isinstance(x, Val) else x
        if f is builtins.range:
            raise Fail("range is only allowed as the iterable of a for loop", e)
        if any(isinstance(a, Val) for a in list(args) + list(kw.values())):
            if f in (builtins.min, builtins.max) and len(args) >= 2 and not kw:
                # the compile-time arguments fold first, so only runtime values become ops
                consts = [a for a in args if not isinstance(a, Val)]
                vals = [a for a in args if isinstance(a, Val)] + ([f(consts)] if consts else [])
                r = vals[0]
                for x in vals[1:]:
                    r = self.g.binary("min" if f is builtins.min else "max", r, x)
                return r
            if f is builtins.float:
                return self.g.cast(args[0], float32)
            if f is builtins.int:
                return self.g.cast(args[0], int32)
            name = getattr(f, "__name__", repr(f))
            raise Fail(f"'{name}' is not an ot function: only ot.* functions take runtime values in a tile kernel "
                       f"(plain Python functions may run on compile-time values)", e)
        try:  # a Python function of compile-time values runs now (math.sqrt(2), helpers on constexprs)
            return f(*args, **kw)
        except Fail:
            raise
        except Exception as x:
            raise Fail(f"calling {getattr(f, '__name__', f)!r} at compile time failed: {type(x).__name__}: {x}",
                       e) from None
