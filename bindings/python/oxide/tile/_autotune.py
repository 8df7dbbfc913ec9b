"""@ot.autotune: the configurations of an @ot.kernel (hints and constexpr values) timed on the
first launch of each shape class, the fastest launched; built on liboxide's autotuner
(oxide_autotune_*, docs/tile.md "Autotuning"), which keeps the winners in the module cache
directory and puts the outputs back after tuning."""
import numbers
import threading

from .._errors import error_for
from .._ffi import ffi, lib
from ._gen import CompileError
from ._kernel import _HINT_KEYS, Kernel, _device_index, _framework_stream, _is_array


class Config:
    """One configuration: constexpr values and hints, e.g. `Config(BM=128, BN=128, BK=64, warps=8,
    stages=3)`. Triton's spelling `Config({"BM": 128}, num_warps=8, num_stages=3)` is accepted too."""

    def __init__(self, kwargs=None, num_warps=None, num_stages=None, **params):
        params = {**(kwargs or {}), **params}
        if num_warps is not None:
            params["warps"] = num_warps
        if num_stages is not None:
            params["stages"] = num_stages
        self.hints = {k: v for k, v in params.items() if k in _HINT_KEYS}
        self.kwargs = {k: v for k, v in params.items() if k not in _HINT_KEYS}
        self.label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"

    def all(self):
        return {**self.kwargs, **self.hints}

    def __repr__(self):
        return f"ot.Config({self.label})"


class _Tuner:
    """The C autotuner of one signature (argument types): its configurations, the ones the Python
    front end could not compile, and the argument packer."""

    def __init__(self, c, index, failed, packer, timer):
        self.c, self.index, self.failed, self.packer, self.timer = c, index, failed, packer, timer

    def __del__(self):
        if getattr(self, "c", None) is not None:
            lib.oxide_autotune_destroy(self.c)
            self.c = None


class Autotuner:
    """What @ot.autotune makes of an @ot.kernel: `tuner[grid](*args)` launches the best
    configuration for the arguments' shape class (see docs/tile.md, "Autotuning")."""

    def __init__(self, kernel, configs, key=None, restore=True, reset_to_zero=(), warmup=1, reps=10,
                 cache_dir=None, shapes="exact", timer=None):
        if not isinstance(kernel, Kernel):
            raise TypeError("@ot.autotune goes above @ot.kernel (it tunes a tile kernel), got "
                            f"{type(kernel).__name__}")
        self.kernel, self.name = kernel, kernel.name
        self.configs = list(configs)
        if not self.configs or not all(isinstance(c, Config) for c in self.configs):
            raise ValueError(f"@ot.autotune({self.name}): configs must be a non-empty list of ot.Config")
        params = list(kernel.signature.parameters)
        self.runtime = [n for n in params if n not in kernel.constexprs]
        for c in self.configs:
            bad = [k for k in c.kwargs if k not in kernel.constexprs]
            if bad:
                raise TypeError(f"@ot.autotune({self.name}): {c!r} sets {', '.join(bad)}, which "
                                f"{'is not a constexpr' if len(bad) == 1 else 'are not constexprs'} of the kernel "
                                f"(its constexprs: {', '.join(sorted(kernel.constexprs)) or 'none'}; hints: "
                                f"{', '.join(_HINT_KEYS)})")
        if key is not None and not callable(key):
            key = list(key)
            for k in key:
                if k not in params:
                    raise TypeError(f"@ot.autotune({self.name}): key names {k!r}, which is not a parameter "
                                    f"({', '.join(params)})")
        self.key = key
        reset_to_zero = list(reset_to_zero or ())
        for n in reset_to_zero:
            if n not in self.runtime:
                raise TypeError(f"@ot.autotune({self.name}): reset_to_zero names {n!r}, which is not a tensor "
                                f"parameter ({', '.join(self.runtime)})")
        if shapes not in ("exact", "pow2"):
            raise ValueError(f"@ot.autotune({self.name}): shapes is 'exact' or 'pow2', got {shapes!r}")
        self.zero_mask = sum(1 << self.runtime.index(n) for n in reset_to_zero)
        self.flags = (0 if restore else lib.OXIDE_AUTOTUNE_NO_RESTORE) | (
            lib.OXIDE_AUTOTUNE_SHAPES_POW2 if shapes == "pow2" else 0)
        self.warmup, self.reps, self.timer = int(warmup), int(reps), timer
        self.cache_dir = cache_dir if cache_dir is not None else kernel.cache_dir
        # One kernel per configuration, for its hints (the IR carries them).
        self._variants = [Kernel(kernel.fn, target=kernel.target, cache_dir=self.cache_dir,
                                 **{**kernel.hints, **c.hints}) for c in self.configs]
        self._tuners = {}   # the runtime signature -> _Tuner
        self._winners = {}  # (shape class, device, argument types) -> configuration index
        self._lock = threading.RLock()
        self.stats = {"tuned": 0, "from_disk": 0, "from_memory": 0}
        self.best_config, self.report = None, ""
        self.__name__, self.__doc__ = kernel.__name__, kernel.__doc__

    # ---- keys ----
    def _fixed(self, bound):
        """The constexprs given at the launch, (name, value) in parameter order."""
        return tuple((n, bound[n]) for n in bound if n in self.kernel.constexprs)

    def _shape_class(self, bound):
        fixed = self._fixed(bound)
        tail = " " + repr(fixed) if fixed else ""
        if callable(self.key):
            return repr(self.key(dict(bound))) + tail
        names = self.key if self.key is not None else [n for n in self.runtime if _is_array(bound[n])]
        return repr(tuple(tuple(int(d) for d in bound[n].shape) if _is_array(bound[n]) else bound[n]
                          for n in names)) + tail

    def _bind(self, args, kwargs):
        try:
            b = self.kernel.signature.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}: {e}") from None
        # a constexpr no configuration sets may be given at the launch (as in Triton): it is part
        # of the shape class and of the tuner's signature
        given = [n for n in b.arguments if n in self.kernel.constexprs and any(n in c.kwargs for c in self.configs)]
        if given:
            raise TypeError(f"{self.name}: {', '.join(given)} {'is' if len(given) == 1 else 'are'} set by the "
                            f"autotuner's configurations; do not pass {'it' if len(given) == 1 else 'them'}")
        missing = [n for n in self.runtime if n not in b.arguments]
        if missing:
            raise TypeError(f"{self.name}: missing argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return b.arguments

    # ---- launch ----
    def __getitem__(self, grid):
        """tuner[grid](*args, stream=None): grid is an int, a tuple, or a function of the meta
        parameters (the arguments and the configuration's values, a dict) returning one."""
        def launch(*args, stream=None, **kwargs):
            return self._launch(grid, args, kwargs, stream)
        return launch

    def _grid(self, grid, bound, config):
        if callable(grid):
            grid = grid({**bound, **config.all()})
        g = (grid,) if isinstance(grid, numbers.Integral) else tuple(grid)
        if not 1 <= len(g) <= 3:
            raise TypeError(f"{self.name}: the grid has 1 to 3 dims, got {grid!r}")
        return tuple(int(x) for x in g) + (1,) * (3 - len(g))

    def _launch(self, grid, args, kwargs, stream):
        bound = self._bind(args, kwargs)
        rt = [bound[n] for n in self.runtime]
        dev_index = next((_device_index(v) for v in rt if _device_index(v) is not None), 0)
        cls = self._shape_class(bound)
        fast = (cls, dev_index, tuple((str(v.dtype), len(v.shape)) if _is_array(v) else type(v).__name__
                                      for v in rt))
        with self._lock:
            i = self._winners.get(fast)
        if i is not None:
            self.stats["from_memory"] += 1
            c = self.configs[i]
            return self._variants[i][self._grid(grid, bound, c)](*args, stream=stream, **kwargs, **c.kwargs)
        with self._lock:
            return self._tune(grid, args, kwargs, bound, rt, dev_index, cls, fast, stream)

    def _tune(self, grid, args, kwargs, bound, rt, dev_index, cls, fast, stream):
        from .. import _interop, _runtime
        tuner, specs = self._tuner_for(args, kwargs)
        device = _runtime.Device(dev_index)
        if tuner.packer is None:
            tuner.packer = self._packer(specs, tuner, device)
        grids = ffi.new("uint32_t[]", [x for ci in tuner.index for x in self._grid(grid, bound, self.configs[ci])])
        if stream is None:
            stream = _framework_stream(rt, dev_index)
        sctx = _interop.foreign_stream(stream, device) if stream is not None else (ffi.NULL, 0)
        keep = []
        raw = tuner.packer.pack(rt, sctx, keep)
        cargs = ffi.from_buffer("oxide_arg[]", raw)
        # without a key the C tuner makes the class from the shapes (rounding them as asked)
        cls_c = cls.encode() if self.key is not None else ffi.NULL
        st = lib.oxide_autotune_launch(tuner.c, sctx[0], grids, len(tuner.index), cargs, len(rt), cls_c)
        if st:
            e = error_for(st)
            raise type(e)(e.message + "".join(f"{self.configs[ci].label}: skipped: {why}\n"
                                              for ci, why in tuner.failed))
        info = ffi.new("oxide_autotune_info *")
        info.struct_size = ffi.sizeof("oxide_autotune_info")
        lib.oxide_autotune_last(tuner.c, info)
        winner = tuner.index[info.winner]
        source = {lib.OXIDE_AUTOTUNE_TUNED: "tuned", lib.OXIDE_AUTOTUNE_FROM_DISK: "from_disk"}.get(
            info.source, "from_memory")
        self.stats[source] += 1
        if info.source == lib.OXIDE_AUTOTUNE_TUNED:
            self.report = ffi.string(info.report).decode() + "".join(
                f"{self.configs[ci].label}: skipped: {why}\n" for ci, why in tuner.failed)
        elif info.source == lib.OXIDE_AUTOTUNE_FROM_DISK:
            self.report = f"{self.configs[winner].label}: the winner found in the cache directory (not timed)\n"
        self.best_config = self.configs[winner]
        self._winners[fast] = winner
        return None

    def _tuner_for(self, args, kwargs):
        """The specialisation of every configuration, and the C tuner of their signature."""
        specs, failed = [], []
        for i, (c, v) in enumerate(zip(self.configs, self._variants)):
            try:
                specs.append((i, v.specialize(*args, **kwargs, **c.kwargs)))
            except CompileError as e:
                failed.append((i, str(e).splitlines()[0]))
        if not specs:
            raise CompileError(f"in tile kernel {self.name}: no configuration compiles:\n" + "".join(
                f"  {self.configs[i].label}: {why}\n" for i, why in failed))
        fixed = self._fixed(self.kernel.signature.bind_partial(*args, **kwargs).arguments)
        sig = (tuple(k for k in specs[0][1].key if k[0] != "c"), fixed)
        tuner = self._tuners.get(sig)
        if tuner is None:
            tuner = self._tuners[sig] = self._new_tuner(specs, failed)
        return tuner, specs

    def _new_tuner(self, specs, failed):
        opts = ffi.new("oxide_autotune_options *")
        opts.struct_size = ffi.sizeof("oxide_autotune_options")
        cache_dir = ffi.new("char[]", self.cache_dir.encode()) if self.cache_dir is not None else ffi.NULL
        opts.cache_dir = cache_dir
        compile_opts = ffi.NULL
        if self.kernel.target:
            p = ffi.new("oxide_options **")
            _check(lib.oxide_options_create(p))
            compile_opts = ffi.gc(p[0], lib.oxide_options_destroy)
            _check(lib.oxide_options_set_target(compile_opts, self.kernel.target.encode()))
        opts.compile = compile_opts
        opts.warmup, opts.reps, opts.flags, opts.reset_to_zero = self.warmup, self.reps, self.flags, self.zero_mask
        index = [i for i, _ in specs]
        hook = None
        if self.timer is not None:
            user = self.timer

            # an exception in the timer counts the configuration as failed (a negative time)
            def call(_, config, rep, measured):
                return float(user(index[config], rep, measured))
            hook = ffi.callback("double(void *, size_t, uint32_t, double)", call, onerror=lambda *exc: -1.0)
            opts.time_hook = hook
        out = ffi.new("oxide_autotuner **")
        _check(lib.oxide_autotune_create(opts, out))
        tuner = _Tuner(out[0], index, failed, None, hook)
        for i, spec in specs:
            _check(lib.oxide_autotune_add_config(tuner.c, spec.module._alive(), self.name.encode(), ffi.NULL,
                                                 ffi.NULL, 0, self.configs[i].label.encode(), ffi.NULL))
        return tuner

    def _packer(self, specs, tuner, device):
        """The argument packer of the signature, from the manifest of the first configuration
        that compiles (the C tuner then finds its PTX in the module cache)."""
        from .._args import ArgPacker
        from .._manifest import Manifest
        target = self.kernel.target or device.target
        errors = []
        for i, spec in specs:
            try:
                ptx = self._variants[i]._ptx(spec, target)
            except Exception as e:  # noqa: BLE001 - the C tuner reports each configuration's failure
                errors.append(f"{self.configs[i].label}: {e}")
                continue
            return ArgPacker(Manifest.from_ptx(ptx)[self.name], device)
        raise CompileError(f"in tile kernel {self.name}: no configuration compiles for {target}:\n  "
                           + "\n  ".join(errors + [f"{self.configs[i].label}: {w}" for i, w in tuner.failed]))

    def interpret(self, grid, *args, config=0, **kwargs):
        """Run configuration `config` (an index) in the tile interpreter on NumPy arrays."""
        c = self.configs[config]
        bound = self._bind(args, kwargs)
        return self._variants[config].interpret(self._grid(grid, bound, c), *args, **kwargs, **c.kwargs)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name} is an autotuned tile kernel: launch it with {self.name}[grid](...)")

    def __repr__(self):
        return f"<ot.autotune {self.name} ({len(self.configs)} configurations)>"


def _check(st):
    if st:
        raise error_for(st)


def autotune(configs, key=None, restore=True, reset_to_zero=None, warmup=1, reps=10, cache_dir=None,
             shapes="exact", timer=None):
    """@ot.autotune(configs=[ot.Config(...), ...], key=["M", "N", "K"]) above @ot.kernel.

    key: parameter names (a tensor counts by its shape, a scalar by its value), or a function of
    the arguments (a dict) returning the shape class; None: every tensor's shape. restore: put the
    outputs back after tuning (False: the tuning launches write them, as in Triton).
    reset_to_zero: tensor parameters set to zero before each configuration runs and before the
    winner's launch. shapes="pow2": without a key, shapes round up to powers of two. timer:
    timer(config_index, rep, measured_ms) -> ms counted instead (tests)."""
    def deco(kernel):
        return Autotuner(kernel, configs, key, restore, reset_to_zero, warmup, reps, cache_dir, shapes, timer)
    return deco
