"""The `tile_rust_*` rows (bench/README.md, "tile"): tile kernels written in Rust
(examples/rust/tile_matmul, tile_softmax, tile_layernorm, exported with `cargo oxide build
--release --module`: tests/bindings/data/rust_tile_*.ptx, remade by tests/bindings/data/regen.sh)
against the same kernels written in text IR (examples/tile/*.oxir, compiled here by liboxide):

    tile_rust_matmul_bf16_MxNxK@oxir     rust_tflops oxir_tflops ratio
    tile_rust_softmax_RxC@oxir           rust_GBps oxir_GBps ratio
    tile_rust_layernorm_RxC@oxir         rust_GBps oxir_GBps ratio

The goal is a ratio of at least 0.98: a Rust tile kernel is lifted into the same tile IR and
compiled by the same compiler. Both take the same inputs; their outputs must agree (the softmax
bit for bit: its PTX is the same), then they alternate launch by launch as the other rows do."""
import os

from oxide_kernels import ROOT

DATA = os.path.join(ROOT, "tests", "bindings", "data")
TEXT = os.path.join(ROOT, "examples", "tile")

# (row stem, kernel, dims): the .oxir kernels' own tile sizes (64x64x32 matmul, 16 rows of at
# most 1024 for softmax and layernorm), at shapes of the other rows
ROWS = [("tile_rust_matmul_bf16_4096x4096x4096", "matmul_bf16", (4096, 4096, 4096)),
        ("tile_rust_softmax_32768x1024", "softmax_f32", (32768, 1024)),
        ("tile_rust_layernorm_8192x1024", "layernorm_bf16", (8192, 1024))]


def modules(oxide, target):
    """{kernel: (Rust-built module, text-IR-built module)}, the PTX files' names checked."""
    ctx = oxide.Context()
    out = {}
    for _, kern, _ in ROWS:
        stem = kern.split("_")[0]
        with open(os.path.join(TEXT, kern + ".oxir")) as f:
            ptx = ctx.parse(f.read()).compile(target=target)
        out[kern] = (oxide.Module.load(os.path.join(DATA, f"rust_tile_{stem}.ptx")), oxide.Module.from_ptx(ptx))
    return out


class Loaded:
    """One kernel of a loaded module in the shape Bench.row launches (`kern[grid](*args)`, and
    `kern.compile(...)`, which has nothing to do: the module is compiled and loaded)."""

    def __init__(self, mod, name):
        self.mod, self.name = mod, name

    def compile(self, *args, **kw):
        return None

    def __getitem__(self, grid):
        return lambda *args: self.mod[self.name](*args, grid=grid)


def run(bench, wanted):
    """Every row the --only filter wants (wanted(name, only)), printed through bench.row."""
    torch, oxide = bench.torch, bench.oxide
    rows = [r for r in ROWS if wanted(r[0] + "@oxir", bench.only)]
    if not rows:
        return
    mods = modules(oxide, bench.target)
    for stem, kern, dims in rows:
        rust, text = (Loaded(m, kern) for m in mods[kern])
        if kern == "matmul_bf16":
            M, N, K = dims
            a, b = bench.randn(M, K, dtype=torch.bfloat16), bench.randn(K, N, dtype=torch.bfloat16)
            got, ref = (torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(2))
            grid, ins = ((M + 63) // 64, (N + 63) // 64), (a, b)
            unit, check, runs = ("TFLOP/s", 2.0 * M * N * K / 1e9), bench.rel_frobenius(1e-3), None
        elif kern == "softmax_f32":
            R, C = dims
            x = bench.randn(R, C, scale=3.0)
            got, ref = torch.empty_like(x), torch.empty_like(x)
            grid, ins = ((R + 15) // 16,), (x,)
            unit, check, runs = ("GB/s", 2.0 * R * C * 4 / 1e6), bench.close(0, 0), bench.short_runs
        else:
            R, C = dims
            x = bench.randn(R, C, dtype=torch.bfloat16)
            w, b = bench.randn(C, dtype=torch.bfloat16), bench.randn(C, dtype=torch.bfloat16)
            got, ref = torch.empty_like(x), torch.empty_like(x)
            grid, ins = ((R + 15) // 16,), (x, w, b)
            unit, check, runs = ("GB/s", (2.0 * R * C + 2.0 * C) * 2 / 1e6), bench.close(1e-2, 1e-2), bench.short_runs
        tail = (1e-5,) if kern == "layernorm_bf16" else ()

        def run_text(ins=ins, ref=ref, tail=tail, text=text, grid=grid):
            text[grid](*ins, ref, *tail)
            return ref
        bench.row(stem, "oxir", unit, (rust, grid, ins + (got,) + tail, {}), got, run_text, check, runs=runs)


def dry(wanted, only, out):
    """The dry run's part (no GPU): each Rust module's manifest must give its kernel the same
    parameters and block as the text IR's compiled here. Returns the number of mismatches."""
    import oxide
    ctx, bad = oxide.Context(), 0
    for stem, kern, _ in ROWS:
        if not wanted(stem + "@oxir", only):
            continue
        with open(os.path.join(DATA, f"rust_tile_{kern.split('_')[0]}.ptx")) as f:
            rust = oxide.Manifest.from_ptx(f.read())[kern]
        with open(os.path.join(TEXT, kern + ".oxir")) as f:
            text = oxide.Manifest.from_ptx(ctx.parse(f.read()).compile(target="sm_90a"))[kern]
        same = [p.describe() for p in rust.params] == [p.describe() for p in text.params] and \
            tuple(rust.block) == tuple(text.block)
        bad += not same
        out(f"dry-run {stem}@oxir: Rust module {rust.signature()} block {tuple(rust.block)}"
            + ("" if same else f" DIFFERS from the text IR's {text.signature()} block {tuple(text.block)}"))
    return bad
