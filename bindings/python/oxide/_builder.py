"""The IR builder: write kernels from Python, verify them, print them, compile them to PTX.

    ctx = oxide.Context()
    m = ctx.create_module("demo")
    k = m.add_kernel("scale")
    x, n = k.slice_param("x", "f32", mut=True)
    s = k.scalar_param("s", "f32")
    entry, body, done = k.block(), k.block(), k.block()
    i = entry.global_id_x()
    entry.cond_br(entry.icmp(i, n, pred="ult"), body, done)
    p = body.offset(x, i, elem="f32")
    body.store(body.mul(body.load(p, "f32", align=4), s), p, align=4)
    body.br(done)
    done.ret()
    ptx = m.compile(target="sm_90a")
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _ops
from ._errors import check
from ._ffi import ffi, lib
from ._handle import Owned
from ._manifest import Manifest
from ._types import SCALAR_ID, scalar_name

TypeLike = _ops.TypeLike

_SCALAR_TYPES = {"void": lib.OXIDE_TYPE_VOID, "i1": lib.OXIDE_TYPE_I1, "i8": lib.OXIDE_TYPE_I8,
                 "i16": lib.OXIDE_TYPE_I16, "i32": lib.OXIDE_TYPE_I32, "i64": lib.OXIDE_TYPE_I64,
                 "i128": lib.OXIDE_TYPE_I128, "f16": lib.OXIDE_TYPE_F16, "bf16": lib.OXIDE_TYPE_BF16,
                 "f32": lib.OXIDE_TYPE_F32, "f64": lib.OXIDE_TYPE_F64}
_FLOAT_KINDS = {lib.OXIDE_TYPE_F16, lib.OXIDE_TYPE_BF16, lib.OXIDE_TYPE_F32, lib.OXIDE_TYPE_F64}
SPACES = {"generic": lib.OXIDE_AS_GENERIC, "global": lib.OXIDE_AS_GLOBAL, "shared": lib.OXIDE_AS_SHARED,
          "constant": lib.OXIDE_AS_CONSTANT, "local": lib.OXIDE_AS_LOCAL, "param": lib.OXIDE_AS_PARAM}
SCOPES = {"cta": 0, "cluster": 1, "gpu": 2, "sys": 3}
ORDERS = {"relaxed": 0, "acquire": 1, "release": 2, "acq_rel": 3, "seq_cst": 4}
PREDS = {n: i for i, n in enumerate(
    ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge", "oeq", "one", "olt", "ole", "ogt", "oge",
     "ord", "uno", "ueq", "une", "fult", "fule", "fugt", "fuge"))}
_ENUM_ATTRS = {_ops._K_SCOPE: ("scope", SCOPES), _ops._K_ORDER: ("order", ORDERS), _ops._K_PRED: ("pred", PREDS)}


class Context(Owned):
    """A compiler context: owns types and every IR module made in it. Use from one thread at a time."""

    def __init__(self) -> None:
        out = ffi.new("oxide_context **")
        check(lib.oxide_context_create(out))
        self._h: Any = out[0]
        self._types: Dict[Any, Type] = {}

    def _release(self, h: Any) -> None:
        lib.oxide_context_destroy(h)

    def close(self) -> None:
        """Destroy the context and every module made in it (also on garbage collection)."""
        self._close()

    def _wrap_type(self, h: Any) -> Type:
        t = self._types.get(h)
        if t is None:
            t = self._types[h] = Type(self, h)
        return t

    def type(self, spec: TypeLike) -> Type:
        """A type from its text name: "i32", "f32", "void", "ptr" (generic), "ptr.global",
        "ptr.shared", ...; Type objects pass through."""
        if isinstance(spec, Type):
            return spec
        out = ffi.new("oxide_type **")
        if spec in _SCALAR_TYPES:
            check(lib.oxide_type_scalar(self._h, _SCALAR_TYPES[spec], out))
        elif spec == "ptr" or (isinstance(spec, str) and spec.startswith("ptr.")):
            space = spec[4:] if spec != "ptr" else "generic"
            if space not in SPACES:
                raise ValueError(f"unknown address space {space!r}; known: {', '.join(SPACES)}")
            check(lib.oxide_type_pointer(self._h, SPACES[space], out))
        elif isinstance(spec, str) and spec in ("bool", "u8", "u16", "u32", "u64"):
            raise ValueError(f"{spec!r} is an interface type (kernel parameters); IR types are i1..i128, f16, bf16, "
                             f"f32, f64 and pointers")
        else:
            raise ValueError(f"unknown type {spec!r}; give i1 i8 i16 i32 i64 i128 f16 bf16 f32 f64 void, ptr or "
                             f"ptr.SPACE, or build vectors, arrays and structs with ctx.vector/array/struct")
        return self._wrap_type(out[0])

    def pointer(self, space: str = "generic") -> Type:
        """A pointer type in an address space: "generic", "global", "shared", "constant", "local",
        "param"."""
        return self.type("ptr" if space == "generic" else f"ptr.{space}")

    def vector(self, elem: TypeLike, count: int) -> Type:
        """A vector of count elements of elem (e.g. 4 x f32)."""
        out = ffi.new("oxide_type **")
        check(lib.oxide_type_vector(self._h, self.type(elem)._h, count, out))
        return self._wrap_type(out[0])

    def array(self, elem: TypeLike, count: int) -> Type:
        """An array of count elements of elem."""
        out = ffi.new("oxide_type **")
        check(lib.oxide_type_array(self._h, self.type(elem)._h, count, out))
        return self._wrap_type(out[0])

    def struct(self, fields: Iterable[TypeLike]) -> Type:
        """A struct of the given field types, in order."""
        hs = [self.type(f)._h for f in fields]
        out = ffi.new("oxide_type **")
        check(lib.oxide_type_struct(self._h, ffi.new("oxide_type *[]", hs), len(hs), out))
        return self._wrap_type(out[0])

    def create_module(self, name: str) -> IRModule:
        """A new, empty IR module in this context."""
        out = ffi.new("oxide_module **")
        check(lib.oxide_module_create(self._h, name.encode(), out))
        return IRModule(self, out[0])

    def parse(self, text: Union[str, bytes]) -> IRModule:
        """Parse the text form into a new module (ParseError names line:column)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        out = ffi.new("oxide_module **")
        check(lib.oxide_module_parse(self._h, data, len(data), out))
        return IRModule(self, out[0])


class Type:
    """An IR type (interned: equal types are the same object)."""

    __slots__ = ("ctx", "_h")

    def __init__(self, ctx: Context, h: Any) -> None:
        self.ctx, self._h = ctx, h

    @property
    def name(self) -> str:
        """The type's text form ("f32", "ptr.global", "<4 x f32>")."""
        return str(ffi.string(lib.oxide_type_get_name(self._h)).decode())

    @property
    def kind(self) -> int:
        """Its oxide_type_kind number (lib.OXIDE_TYPE_*)."""
        return int(lib.oxide_type_get_kind(self._h))

    @property
    def is_float(self) -> bool:
        """True for f16, bf16, f32 and f64."""
        return self.kind in _FLOAT_KINDS

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<oxide.Type {self.name}>"


class Options(Owned):
    """Compile options: target ("sm_90a"), ptx_version ((8, 5) or None), opt_level (0..3),
    fast_math, line_info, tile_variants ("all", the default, "plain" or "tma": which variants of a
    tile kernel with TMA-capable loads are built; oxide_options_set_tile_variants in oxide.h)."""

    def __init__(self, target: Optional[str] = None, ptx_version: Optional[Tuple[int, int]] = None,
                 opt_level: Optional[int] = None, fast_math: bool = False, line_info: bool = False,
                 tile_variants: str = "all") -> None:
        out = ffi.new("oxide_options **")
        check(lib.oxide_options_create(out))
        self._h = out[0]
        if target is not None:
            check(lib.oxide_options_set_target(self._h, target.encode()))
        if ptx_version is not None:
            check(lib.oxide_options_set_ptx_version(self._h, int(ptx_version[0]), int(ptx_version[1])))
        if opt_level is not None:
            check(lib.oxide_options_set_opt_level(self._h, int(opt_level)))
        if fast_math:
            check(lib.oxide_options_set_fast_math(self._h, 1))
        if line_info:
            check(lib.oxide_options_set_line_info(self._h, 1))
        if tile_variants != "all":
            which = {"plain": lib.OXIDE_TILE_VARIANTS_PLAIN, "tma": lib.OXIDE_TILE_VARIANTS_TMA}.get(tile_variants)
            if which is None:
                raise ValueError(f"tile_variants is 'all', 'plain' or 'tma', not {tile_variants!r}")
            check(lib.oxide_options_set_tile_variants(self._h, which))

    @property
    def target(self) -> str:
        """The target SM ("sm_90a"), the default's when none was given."""
        return str(ffi.string(lib.oxide_options_get_target(self._h)).decode())

    def _release(self, h: Any) -> None:
        lib.oxide_options_destroy(h)

    def close(self) -> None:
        """Free the options now (also on garbage collection)."""
        self._close()


def _options(opts: Optional[Options], kw: Mapping[str, Any]) -> Options:
    if opts is not None:
        if kw:
            raise TypeError("give either an Options object or keyword options, not both")
        return opts
    return Options(**kw)


class IRModule(Owned):
    """An IR module: kernels, device functions and globals. Compile with `.compile(target=...)`."""

    def __init__(self, ctx: Context, h: Any) -> None:
        self.ctx, self._h = ctx, h

    def _alive(self) -> Any:
        if self._h is None or self.ctx._h is None:
            raise ValueError("the module (or its context) has been destroyed")
        return self._h

    def add_kernel(self, name: str) -> Function:
        """A new kernel (an entry point) named name; add its parameters, then its blocks."""
        out = ffi.new("oxide_function **")
        check(lib.oxide_module_add_kernel(self._alive(), name.encode(), out))
        return Function(self, out[0], name, True)

    def add_function(self, name: str, ret: TypeLike = "void") -> Function:
        """A new device function returning ret, callable from kernels with Block.call."""
        out = ffi.new("oxide_function **")
        check(lib.oxide_module_add_function(self._alive(), name.encode(), self.ctx.type(ret)._h, out))
        return Function(self, out[0], name, False)

    def get_function(self, name: str) -> Function:
        """The kernel or device function named name (NotFoundError if there is none)."""
        out = ffi.new("oxide_function **")
        check(lib.oxide_module_get_function(self._alive(), name.encode(), out))
        return Function(self, out[0], name, None)

    def add_global(self, name: str, type: TypeLike, space: str = "global", align: int = 0,
                   init: Optional[bytes] = None) -> str:
        """A module-level variable in "global", "shared" or "constant" space; init: bytes of its size."""
        out = ffi.new("oxide_global **")
        data = bytes(init) if init is not None else None
        check(lib.oxide_module_add_global(self._alive(), name.encode(), self.ctx.type(type)._h, SPACES[space], align,
                                          data if data is not None else ffi.NULL, len(data) if data else 0, out))
        return name

    def verify(self, opts: Optional[Options] = None, **kw: Any) -> None:
        """Run the verifier (VerifyError names the op and its position); with options, also the
        target's rules."""
        o = _options(opts, kw) if (opts or kw) else None
        check(lib.oxide_module_verify(self._alive(), o._h if o else ffi.NULL))

    def print(self) -> str:
        """The module in oxide's text IR (docs/ir.md)."""
        out = ffi.new("const char **")
        check(lib.oxide_module_print(self._alive(), out))
        return str(ffi.string(out[0]).decode())

    __str__ = print

    def compile(self, opts: Optional[Options] = None, **kw: Any) -> str:
        """Verify and compile to PTX text (with its manifest). Keywords: target, ptx_version,
        opt_level, fast_math, line_info (or pass an Options)."""
        o = _options(opts, kw)
        ptx, n = ffi.new("const char **"), ffi.new("size_t *")
        check(lib.oxide_module_compile(self._alive(), o._h, ptx, n))
        return str(ffi.unpack(ptx[0], n[0]).decode())

    def compile_cached(self, opts: Optional[Options] = None, cache_dir: Optional[str] = None,
                       **kw: Any) -> Tuple[str, bool]:
        """compile() through liboxide's on-disk module cache (docs/c-api.md, "The module cache"):
        returns (ptx, hit). cache_dir None: $OXIDE_CACHE_DIR or ~/.cache/oxide; "": no cache."""
        o = _options(opts, kw)
        ptx, n, hit = ffi.new("const char **"), ffi.new("size_t *"), ffi.new("int *")
        d = ffi.new("char[]", str(cache_dir).encode()) if cache_dir is not None else ffi.NULL
        check(lib.oxide_module_compile_cached(self._alive(), o._h, d, ptx, n, hit))
        return str(ffi.unpack(ptx[0], n[0]).decode()), bool(hit[0])

    def cache_key(self, opts: Optional[Options] = None, **kw: Any) -> str:
        """The module cache's key for this module and options (64 hex digits)."""
        o = _options(opts, kw)
        out = ffi.new("char[65]")
        check(lib.oxide_module_cache_key(self._alive(), o._h, out))
        return str(ffi.string(out).decode())

    def llvm_ir(self) -> str:
        """Textual LLVM IR of the last compile."""
        out = ffi.new("const char **")
        check(lib.oxide_module_get_llvm_ir(self._alive(), out))
        return str(ffi.string(out[0]).decode())

    def import_bitcode(self, data: bytes, unit_name: str = "unit") -> None:
        """Add LLVM bitcode (e.g. a Rust crate's) to the module as a unit named unit_name."""
        data = bytes(data)
        check(lib.oxide_module_import_bitcode(self._alive(), data, len(data), unit_name.encode()))

    def manifest(self, opts: Optional[Options] = None, **kw: Any) -> Manifest:
        """The manifest the compiled PTX carries."""
        return Manifest.from_ptx(self.compile(opts, **kw))

    def _release(self, h: Any) -> None:
        if self.ctx._h is not None:  # a destroyed context took its modules with it
            lib.oxide_module_destroy(h)

    def destroy(self) -> None:
        """Destroy the module now (also on garbage collection); its functions and values die with it."""
        self._close()


class Function:
    """A kernel or device function being built."""

    def __init__(self, module: IRModule, h: Any, name: str, is_kernel: Optional[bool]) -> None:
        self.module, self._h, self.name, self.is_kernel = module, h, name, is_kernel
        self.ctx = module.ctx
        self._blocks: List[Block] = []

    def _val(self, h: Any) -> Value:
        return Value(self.module, h)

    # ---- kernel parameters, each with its interface kind ----
    def scalar_param(self, name: str, type: str) -> Value:
        """A scalar parameter of interface type type ("i32", "u64", "f32", "bool", ...)."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_kernel_add_scalar_param(self._h, name.encode(), SCALAR_ID[scalar_name(type)], out))
        return self._val(out[0])

    def slice_param(self, name: str, elem: str, mut: bool = False) -> Tuple[Value, Value]:
        """Returns (ptr, len): a ptr.global to the first element and the i64 element count."""
        p, n = ffi.new("oxide_value **"), ffi.new("oxide_value **")
        check(lib.oxide_kernel_add_slice_param(self._h, name.encode(), SCALAR_ID[scalar_name(elem)], int(bool(mut)),
                                               p, n))
        return self._val(p[0]), self._val(n[0])

    def ptr_param(self, name: str, elem: str, mut: bool = False) -> Value:
        """A pointer parameter to elements of elem (a ptr.global value); mut: the kernel writes it."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_kernel_add_ptr_param(self._h, name.encode(), SCALAR_ID[scalar_name(elem)], int(bool(mut)),
                                             out))
        return self._val(out[0])

    def bytes_param(self, name: str, size: int, align: int = 8) -> Value:
        """size bytes passed by value (a struct, a closure's captures); a ptr.param to them."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_kernel_add_bytes_param(self._h, name.encode(), size, align, out))
        return self._val(out[0])

    def tma_desc_param(self, name: str) -> Value:
        """A TMA descriptor passed by value (128 bytes; sm_90)."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_kernel_add_tma_desc_param(self._h, name.encode(), out))
        return self._val(out[0])

    # ---- device-function parameters ----
    def param(self, name: str, type: TypeLike) -> Value:
        """A device function's parameter of IR type type."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_function_add_param(self._h, name.encode(), self.ctx.type(type)._h, out))
        return self._val(out[0])

    # ---- kernel attributes ----
    def set_launch_bounds(self, max_threads: int, min_blocks: int = 0) -> None:
        """The most threads a block of this kernel has (and, optionally, blocks per SM to aim for)."""
        check(lib.oxide_kernel_set_launch_bounds(self._h, max_threads, min_blocks))

    def set_cluster(self, x: int, y: int = 1, z: int = 1) -> None:
        """The cluster shape every launch of this kernel uses (sm_90)."""
        check(lib.oxide_kernel_set_cluster(self._h, x, y, z))

    def set_dyn_smem(self, nbytes: int) -> None:
        """Dynamic shared memory each launch gets unless the launch names its own."""
        check(lib.oxide_kernel_set_dyn_smem(self._h, nbytes))

    def block(self, *param_types: TypeLike) -> Block:
        """Append a block with parameters of the given types (the first block is the entry and has
        none); the block's parameter values are in `.params`."""
        types = [self.ctx.type(t)._h for t in param_types]
        out = ffi.new("oxide_block **")
        vals = ffi.new("oxide_value *[]", max(len(types), 1))
        check(lib.oxide_function_add_block(self._h, ffi.new("oxide_type *[]", types) if types else ffi.NULL,
                                           len(types), out, vals))
        b = Block(self, out[0], tuple(self._val(vals[i]) for i in range(len(types))))
        self._blocks.append(b)
        return b


class Value:
    """An SSA value. `.type` is its Type; `.name = "x"` names it in the text form."""

    __slots__ = ("module", "_h")

    def __init__(self, module: IRModule, h: Any) -> None:
        self.module, self._h = module, h

    @property
    def type(self) -> Type:
        """The value's IR type."""
        return self.module.ctx._wrap_type(lib.oxide_value_get_type(self._h))

    def set_name(self, name: str) -> Value:
        """Name the value in the text form (%name); returns the value."""
        check(lib.oxide_value_set_name(self._h, name.encode()))
        return self

    def __repr__(self) -> str:
        return f"<oxide.Value : {self.type.name}>"


def _values(vals: Sequence[Value]) -> Tuple[Any, int]:
    hs = [v._h for v in vals]
    return (ffi.new("oxide_value *[]", hs) if hs else ffi.NULL), len(hs)


class Block(_ops.OpsMixin):
    """A basic block; every op of lib/ops.def is a method (see _ops.py), plus br/cond_br/switch and
    a few conveniences (i32, i64, f32, f64 constants; global_id_x)."""

    def __init__(self, fn: Function, h: Any, params: Tuple[Value, ...]) -> None:
        self.fn, self._h, self.params = fn, h, params
        self.ctx = fn.ctx

    def _op(self, op: int, operands: Tuple[Value, ...], rtype: Optional[TypeLike],
            attrs: Tuple[_ops.Attr, ...]) -> Optional[Value]:
        ops, n = _values(operands)
        rt = self.ctx.type(rtype)._h if rtype is not None else ffi.NULL
        keep = []
        given = [(k, v) for k, v in attrs if v is not None]
        ca = ffi.new("oxide_attr[]", max(len(given), 1))
        for i, (k, v) in enumerate(given):
            ca[i].key = k
            if k in _ENUM_ATTRS:
                label, table = _ENUM_ATTRS[k]
                if isinstance(v, str):
                    if v not in table:
                        raise ValueError(f"{_ops.OP_NAMES[op]}: unknown {label} {v!r}; known: {', '.join(table)}")
                    v = table[v]
                ca[i].i = _int(v)
            elif k == _ops._K_VALUE:
                if rtype is not None and self.ctx.type(rtype).is_float:
                    ca[i].f = _float(v)
                elif isinstance(v, float):
                    raise TypeError(f"const: {v!r} is a float, but the type {rtype} is an integer")
                else:
                    ca[i].i = _int(v)
            elif k in (_ops._K_STR, _ops._K_SYM):
                s = ffi.new("char[]", str(v).lstrip("@").encode() if k == _ops._K_SYM else str(v).encode())
                keep.append(s)
                ca[i].s = s
            elif k == _ops._K_ELEM:
                ca[i].t = self.ctx.type(v)._h  # type: ignore[arg-type]  # what elem= was given
            else:
                ca[i].i = _int(v)
        out = ffi.new("oxide_value **")
        check(lib.oxide_build_op(self._h, op, ops, n, rt, ca if given else ffi.NULL, len(given), out))
        return Value(self.fn.module, out[0]) if out[0] != ffi.NULL else None

    # ---- terminators that name blocks ----
    def br(self, dest: Block, *args: Value) -> None:
        """Jump to dest, passing args as its block parameters."""
        a, n = _values(args)
        check(lib.oxide_build_br(self._h, dest._h, a, n))

    def cond_br(self, cond: Value, if_true: Block, if_false: Block, true_args: Sequence[Value] = (),
                false_args: Sequence[Value] = ()) -> None:
        """Jump to if_true when the i1 cond is set, else to if_false (each with its block arguments)."""
        ta, tn = _values(true_args)
        fa, fn = _values(false_args)
        check(lib.oxide_build_cond_br(self._h, cond._h, if_true._h, ta, tn, if_false._h, fa, fn))

    def switch(self, value: Value, default: Block, cases: Mapping[int, Block]) -> None:
        """cases: {int: block}."""
        items = list(cases.items())
        vals = ffi.new("int64_t[]", [int(k) for k, _ in items]) if items else ffi.NULL
        dests = ffi.new("oxide_block *[]", [b._h for _, b in items]) if items else ffi.NULL
        check(lib.oxide_build_switch(self._h, value._h, default._h, vals, dests, len(items)))

    # ---- conveniences ----
    def const_int(self, type: TypeLike, value: int) -> Value:
        """An integer constant of type type."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_build_const_int(self._h, self.ctx.type(type)._h, int(value), out))
        return Value(self.fn.module, out[0])

    def const_float(self, type: TypeLike, value: float) -> Value:
        """A floating-point constant of type type."""
        out = ffi.new("oxide_value **")
        check(lib.oxide_build_const_float(self._h, self.ctx.type(type)._h, float(value), out))
        return Value(self.fn.module, out[0])

    def i32(self, v: int) -> Value:
        """An i32 constant."""
        return self.const_int("i32", v)

    def i64(self, v: int) -> Value:
        """An i64 constant."""
        return self.const_int("i64", v)

    def f32(self, v: float) -> Value:
        """An f32 constant."""
        return self.const_float("f32", v)

    def f64(self, v: float) -> Value:
        """An f64 constant."""
        return self.const_float("f64", v)

    def global_id_x(self) -> Value:
        """ctaid.x * ntid.x + tid.x as i64 (no 32-bit overflow)."""
        c = self.zext(self.ctaid_x(), "i64")
        n = self.zext(self.ntid_x(), "i64")
        t = self.zext(self.tid_x(), "i64")
        return self.add(self.mul(c, n), t)


def _int(v: object) -> int:
    if isinstance(v, (int, bool)):
        return int(v)
    raise TypeError(f"expected an integer attribute, got {v!r}")


def _float(v: object) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    raise TypeError(f"expected a number, got {v!r}")
