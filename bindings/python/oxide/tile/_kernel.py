"""@ot.kernel: specialisation per signature, the IR text, compile (through liboxide's module
cache), launch on the GPU and run in the interpreter."""
import ast
import inspect
import numbers
import re
import textwrap
import threading

from .._builder import Context
from .._errors import OxideError
from ._compiler import _HINTS, Compiler, stored_tensors
from ._gen import CompileError, Fail
from ._types import BY_ARRAY_NAME, Tensor, constexpr, float32, int32, int64

_HINT_KEYS = _HINTS  # the hints of the IR (lib/tile/kernel.c), in its order


def _is_constexpr(annotation):
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


def array_dtype(x):
    """Our dtype for an array's element type (NumPy, PyTorch, CuPy, ml_dtypes), or None."""
    d = getattr(x, "dtype", None)
    if d is None:
        return None
    name = getattr(d, "name", None) or str(d)
    return BY_ARRAY_NAME.get(str(name).replace("torch.", ""))


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, numbers.Number) \
        and getattr(x, "ndim", len(getattr(x, "shape", ()))) > 0


class TensorSpec:
    """Stands for a tensor argument when only the signature matters (kernel.ir(...),
    kernel.specialize(...)): its element type and rank."""

    def __init__(self, dtype, rank):
        self.dtype, self.shape, self.ndim = dtype, (1,) * rank, rank


class Specialization:
    """One signature's kernel: `ir` (text), `lines` (the Python line of each IR line), `module`
    (the parsed, verified IRModule), `runtime_args` (which arguments the kernel takes at run
    time)."""

    def __init__(self, key, ir, lines, module, runtime):
        self.key, self.ir, self.lines, self.module, self.runtime = key, ir, lines, module, runtime
        self.ptx = {}     # (target, tile variants) -> PTX text
        self.loaded = {}  # (device index, target, tile variants) -> oxide.Module


class Kernel:
    """A tile kernel compiled from a Python function's source (see docs/tile.md, "Python")."""

    def __init__(self, fn, target=None, cache_dir=None, **hints):
        for k in hints:
            if k not in _HINT_KEYS:
                raise TypeError(f"@ot.kernel: unknown option {k!r}; it takes target, cache_dir and the hints "
                                f"{', '.join(_HINT_KEYS)}")
        self.fn, self.hints, self.target, self.cache_dir = fn, hints, target, cache_dir
        self.__name__ = self.name = fn.__name__
        self.__doc__ = fn.__doc__
        try:
            lines, first = inspect.getsourcelines(fn)
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError) as e:
            raise CompileError(f"@ot.kernel compiles {fn.__name__} from its source, which Python cannot find "
                               f"({e}): define it in a file") from None
        self.first_line, self.source_lines = first, lines
        tree = ast.parse(textwrap.dedent("".join(lines)))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            raise CompileError(f"@ot.kernel applies to a def, not {type(fdef).__name__}", self.filename, first)
        self.fdef = fdef
        self.signature = inspect.signature(fn)
        self.constexprs = {n for n, p in self.signature.parameters.items() if _is_constexpr(p.annotation)}
        self.mutable = stored_tensors(fdef)
        self.stats = {"specialized": 0, "compiled": 0, "cache_hits": 0}
        self._specs = {}
        self._ctx = Context()
        self._lock = threading.RLock()

    # ---- signatures ----
    def _bind(self, args, kwargs):
        try:
            b = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}: {e}") from None
        b.apply_defaults()
        return b.arguments

    def _classify(self, bound):
        """[(name, kind, info)] and the key: tensors by rank, element and mutability, scalars by
        type, constexprs by value."""
        params, key = [], []
        for n, v in bound.items():
            if n in self.constexprs:
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(f"{self.name}: constexpr {n}={v!r} must be hashable (a number, dtype, tuple, "
                                    f"string)") from None
                params.append((n, "const", v))
                key.append(("c", n, type(v).__name__, v))
            elif _is_array(v):
                d = array_dtype(v)
                if d is None:
                    raise TypeError(f"{self.name}: argument {n} has element type {v.dtype}, which a tensor cannot "
                                    f"hold; give one of {', '.join(sorted(BY_ARRAY_NAME))}")
                rank = len(v.shape)
                if not 1 <= rank <= 4:
                    raise TypeError(f"{self.name}: argument {n} has rank {rank}; tensors have rank 1 to 4")
                t = Tensor(rank, d, n in self.mutable)
                params.append((n, "tensor", t))
                key.append(("t", n, t.ir))
            elif isinstance(v, numbers.Integral):
                d = int32 if -2**31 <= int(v) < 2**31 else int64
                params.append((n, "scalar", d))
                key.append(("s", n, d.ir))
            elif isinstance(v, numbers.Real):
                params.append((n, "scalar", float32))
                key.append(("s", n, "f32"))
            else:
                raise TypeError(f"{self.name}: argument {n} is a {type(v).__name__}; a tile kernel takes arrays "
                                f"(NumPy, PyTorch, CuPy), ints, floats and ot.constexpr values")
        return params, tuple(key)

    def specialize(self, *args, **kwargs):
        """The Specialization for these arguments (generated, parsed and verified once per key)."""
        bound = self._bind(args, kwargs)
        params, key = self._classify(bound)
        with self._lock:
            spec = self._specs.get(key)
            if spec is None:
                spec = self._specs[key] = self._generate(key, params)
            return spec

    def ir(self, *args, **kwargs):
        """The tile IR text this kernel compiles to for these arguments."""
        return self.specialize(*args, **kwargs).ir

    def _where(self, lineno):
        src = self.source_lines[lineno - self.first_line] if 0 <= lineno - self.first_line < len(
            self.source_lines) else None
        return self.filename, lineno, src

    def _generate(self, key, params):
        comp = Compiler(self.fdef, self.name, self.first_line, self.fn.__globals__, params, self.hints)
        try:
            text, lines = comp.compile()
        except Fail as f:
            line = getattr(f.node, "lineno", None)
            line = line + self.first_line - 1 if line is not None else comp.g.line
            raise CompileError(f"in tile kernel {self.name}: {f.message}", *self._where(line)) from None
        try:
            mod = self._ctx.parse(text)
            mod.verify(target=self.target or "sm_90a")
        except OxideError as e:
            raise self._ir_error(e, text, lines) from e
        self.stats["specialized"] += 1
        return Specialization(key, text, lines, mod, [n for n, kind, _ in params if kind != "const"])

    def _ir_error(self, e, text, lines):
        """liboxide's message names the IR line:col; point at the Python line it came from."""
        msg = e.message
        m = re.search(r"(?:^|at )(\d+):(\d+): ", msg)
        if not m:
            return CompileError(f"in tile kernel {self.name}: {msg}", self.filename, self.first_line, ir_error=msg)
        ir_line = int(m.group(1))
        pyline = lines[ir_line - 1] if 0 < ir_line <= len(lines) else 0
        op = re.search(r"'([a-z0-9_.]+)'", msg[:m.start()]) if m.start() else None
        rest = msg[m.end():]
        what = f"'{op.group(1)}': {rest}" if op and not rest.startswith("'") else rest
        ir_text = text.splitlines()[ir_line - 1].strip() if 0 < ir_line <= len(text.splitlines()) else ""
        return CompileError(f"in tile kernel {self.name}: {what} (IR line {ir_line}: {ir_text})",
                            *self._where(pyline or self.first_line), ir_error=msg)

    # ---- compile, launch, interpret ----
    def compile(self, *args, target=None, **kwargs):
        """PTX for these arguments, through liboxide's module cache (docs/c-api.md)."""
        spec = self.specialize(*args, **kwargs)
        return self._ptx(spec, target or self.target or "sm_90a")

    def _ptx(self, spec, target, variants="all"):
        with self._lock:
            ptx = spec.ptx.get((target, variants))
            if ptx is None:
                ptx, hit = spec.module.compile_cached(target=target, tile_variants=variants,
                                                      cache_dir=self.cache_dir)
                self.stats["cache_hits" if hit else "compiled"] += 1
                spec.ptx[(target, variants)] = ptx
            return ptx

    def __getitem__(self, grid):
        """kernel[grid](*args, stream=None): grid is an int, a tuple, or a function of the bound
        arguments (a dict) returning one."""
        def launch(*args, stream=None, **kwargs):
            return self._launch(grid, args, kwargs, stream)
        return launch

    def _grid(self, grid, args, kwargs):
        if callable(grid):
            grid = grid(dict(self._bind(args, kwargs)))
        g = (grid,) if isinstance(grid, numbers.Integral) else tuple(grid)
        if not 1 <= len(g) <= 3:
            raise TypeError(f"{self.name}: the grid has 1 to 3 dims, got {grid!r}")
        return tuple(int(x) for x in g) + (1,) * (3 - len(g))

    def _launch(self, grid, args, kwargs, stream):
        from .. import _runtime
        g = self._grid(grid, args, kwargs)
        spec = self.specialize(*args, **kwargs)
        bound = self._bind(args, kwargs)
        rt = [bound[n] for n in spec.runtime]
        dev_index = next((_device_index(v) for v in rt if _device_index(v) is not None), 0)
        device = _runtime.Device(dev_index)
        target = self.target or device.target
        # Specialised on the tensors' alignment, as Triton is on divisibility: one variant of a
        # kernel with TMA-capable loads is compiled and JIT-compiled, not both (docs/tile.md).
        variants = "tma" if all(_tma_ready(v) for v in rt if _is_array(v)) else "plain"
        with self._lock:
            mod = spec.loaded.get((dev_index, target, variants))
            if mod is None:
                mod = _runtime.Module.from_ptx(self._ptx(spec, target, variants), device)
                spec.loaded[(dev_index, target, variants)] = mod
        if stream is None:
            stream = _framework_stream(rt, dev_index)
        # The tensor arguments are packed by the runtime (oxide_tensor, OXIDE_ARG_TENSOR); the
        # block is the one the tile compiler chose, which the manifest carries.
        return mod.kernel(self.name)(*rt, grid=g, stream=stream)

    def interpret(self, grid, *args, **kwargs):
        """Run the kernel in liboxide's tile interpreter on NumPy arrays (mut ones are written)."""
        import oxide
        run = getattr(oxide, "interpret", None)
        if run is None:
            try:
                from .._interp import interpret as run
            except ImportError:
                raise NotImplementedError("oxide.interpret (the tile interpreter) is not in this build of oxide")
        g = self._grid(grid, args, kwargs)
        spec = self.specialize(*args, **kwargs)
        bound = self._bind(args, kwargs)
        return run(spec.module, self.name, g, *[bound[n] for n in spec.runtime])

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name} is a tile kernel: launch it with {self.name}[grid](...), or run it with "
                        f"{self.name}.interpret(grid, ...)")

    def __repr__(self):
        return f"<ot.kernel {self.name} ({len(self._specs)} specialisations)>"


def _device_index(x):
    d = getattr(x, "device", None)
    if d is None or isinstance(d, str):
        return None
    for attr in ("index", "id"):
        v = getattr(d, attr, None)
        if isinstance(v, int):
            return v
    return None


def _tma_ready(x):
    """Whether array x's memory allows TMA copies, by the rule the runtime applies at launch
    (runtime/tma.c, oxide__rt_tma_bind): a 16-byte aligned base, a contiguous last dim, the other
    dims' pitches multiples of 16 bytes, every dim 1 to 2^31 - 1."""
    shape = tuple(x.shape)
    if hasattr(x, "data_ptr") and hasattr(x, "element_size"):  # torch: strides in elements
        es = x.element_size()
        base, strides = x.data_ptr(), tuple(s * es for s in x.stride())
    else:
        cai = getattr(x, "__cuda_array_interface__", None)
        if cai is None:
            return False
        es = int(cai["typestr"][2:])
        base, strides = cai["data"][0], cai.get("strides")
        if strides is None:  # C-contiguous
            strides, acc = [], es
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
    if not shape or base % 16 or strides[-1] != es:
        return False
    return all(1 <= n < 2**31 for n in shape) and all(s >= 1 and s % 16 == 0 for s in strides[:-1])


def _framework_stream(args, dev_index):
    """The current stream of the framework the arrays come from (torch, CuPy), else None."""
    for v in args:
        mod = type(v).__module__.split(".")[0]
        if mod == "torch":
            import torch
            return torch.cuda.current_stream(dev_index).cuda_stream
        if mod == "cupy":
            import cupy
            return cupy.cuda.get_current_stream().ptr
    return None


def kernel(fn=None, **options):
    """@ot.kernel or @ot.kernel(warps=8, stages=3, target=None, cache_dir=None)."""
    if fn is None:
        return lambda f: Kernel(f, **options)
    return Kernel(fn, **options)
