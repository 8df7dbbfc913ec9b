#!/usr/bin/env python3
"""bench/tile: the Tile track's rows (bench/README.md, "tile"), one Python process on the H200.

    tile_matmul_bf16_MxNxK@cublas|@triton oxide_tflops peer_tflops ratio
    tile_matmul_fp8_MxNxK@cublas           oxide_tflops peer_tflops ratio
    tile_softmax_RxC@triton|@torch         oxide_GBps peer_GBps ratio
    tile_layernorm_RxC@triton|@torch       oxide_GBps peer_GBps ratio
    tile_attention_B_H_S_D[_causal]@cudnn|@flash  oxide_tflops peer_tflops ratio
    tile_attention_decode                  oxide_GBps copy_GBps fraction
    tile_rust_matmul_bf16_MxNxK|softmax_RxC|layernorm_RxC@oxir  rust oxir ratio  (bench/tile/rust_rows.py)
    tile_compile_matmul                    oxide_ms triton_ms ratio      (lower is better)
    tile_lines_matmul                      rust_lines python_lines       (CPU)

Each row's oxide and peer run on the same random inputs; oxide's output is checked against the
peer's first (a mismatch prints `NAME@PEER WRONG: ...` and fails the run), then the two
alternate launch by launch, CUDA-event timed, median of the runs after warm-up. A kernel the
compiler refuses as not lowered yet prints `NAME@PEER UNSUPPORTED: message`; any other failure
prints `NAME@PEER ERROR: message` and fails the run.

Options: --dry-run (no GPU: build every row's oxide IR and compile it to PTX, launch nothing),
--only TEXT (rows whose name contains TEXT, repeatable), --runs N, --compile-rounds N.
Without a GPU it prints the CPU row, then `SKIPPED: no GPU (...)`, and exits 77."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import lines  # noqa: E402
import oxide_kernels  # noqa: E402
import rust_rows  # noqa: E402

MATMUL_BF16 = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (4000, 4000, 4000)]
MATMUL_FP8 = [(4096, 4096, 4096), (8192, 8192, 8192)]
SOFTMAX = [(8192, 4096), (32768, 1024)]
LAYERNORM = [(8192, 4096), (8192, 8192)]
ATTENTION = [(4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (8, 16, 8192, 64, False)]  # B, H, S, D, causal
ATTENTION_DECODE = (64, 32, 8, 8192, 128)  # B, H_q, H_kv, S_kv, D; one query per sequence
EPS = 1e-5


def shape_rows():
    """(row stem, kind, dims) for every GPU row's shape, in printing order."""
    x = lambda d: "x".join(map(str, d))  # noqa: E731
    return ([(f"tile_matmul_bf16_{x(d)}", "matmul_bf16", d) for d in MATMUL_BF16]
            + [(f"tile_matmul_fp8_{x(d)}", "matmul_fp8", d) for d in MATMUL_FP8]
            + [(f"tile_softmax_{x(d)}", "softmax", d) for d in SOFTMAX]
            + [(f"tile_layernorm_{x(d)}", "layernorm", d) for d in LAYERNORM]
            + [("tile_attention_" + "_".join(map(str, d[:4])) + ("_causal" if d[4] else ""), "attention", d)
               for d in ATTENTION]
            + [("tile_attention_decode", "attention_decode", ATTENTION_DECODE)])


def out(line):
    print(line, flush=True)


def note(line):
    print("# " + line, flush=True)


def wanted(name, only):
    return not only or any(o in name for o in only)


# ---- the dry run: IR and PTX for every row, nothing launched ----

def dry_run(only):
    import oxide
    ks = oxide_kernels.Kernels()
    bad = 0
    for name, (kern, grid, args, consts) in ks.dry_calls(shape_rows()):
        if not wanted(name, only):
            continue
        kern = getattr(kern, "kernel", kern)  # an autotuned kernel: its configurations share the body
        ir = kern.ir(*args, **consts)
        try:
            ptx = kern.compile(*args, target="sm_90a", **consts)
            what = f"PTX {len(ptx)} bytes"
        except oxide.OxideError as e:
            what = f"{'UNSUPPORTED' if e.status_name == 'OXIDE_ERROR_UNSUPPORTED' else 'ERROR'}: {e.message}"
            bad += e.status_name != "OXIDE_ERROR_UNSUPPORTED"
        out(f"dry-run {name}: {kern.name} {consts} grid {grid}, {len(ir.splitlines())} IR lines, {what}")
    bad += rust_rows.dry(wanted, only, out)
    return 1 if bad else 0


# ---- timing ----

class Timer:
    """Alternating CUDA-event timing of two launches on the current stream."""

    def __init__(self, torch, runs):
        self.torch, self.runs = torch, runs

    def _head_start(self, n):
        """A sleeping kernel first (about 0.5 ms a run), so the host queues every launch before
        the GPU reaches them: the events then time the kernels, not the host's launch cost."""
        if hasattr(self.torch.cuda, "_sleep"):
            self.torch.cuda._sleep(n * 1_000_000)

    def pair(self, fa, fb, warmup=3, runs=None):
        torch = self.torch
        for _ in range(warmup):
            fa()
            fb()
        torch.cuda.synchronize()
        n = runs or self.runs
        ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(n)]
        self._head_start(n)
        for i, e in enumerate(ev):
            first, second = ((fa, 0), (fb, 2)) if i % 2 == 0 else ((fb, 2), (fa, 0))
            for f, j in (first, second):
                e[j].record()
                f()
                e[j + 1].record()
        torch.cuda.synchronize()
        ta = statistics.median(e[0].elapsed_time(e[1]) for e in ev)
        tb = statistics.median(e[2].elapsed_time(e[3]) for e in ev)
        return ta, tb

    def one(self, f, warmup=3, runs=None):
        torch = self.torch
        for _ in range(warmup):
            f()
        torch.cuda.synchronize()
        n = runs or self.runs
        ev = [[torch.cuda.Event(enable_timing=True) for _ in range(2)] for _ in range(n)]
        self._head_start(n)
        for e in ev:
            e[0].record()
            f()
            e[1].record()
        torch.cuda.synchronize()
        return statistics.median(e[0].elapsed_time(e[1]) for e in ev)


# ---- the rows ----

class Failed(Exception):
    """A row that fails the run; its text says how."""


class Bench:
    def __init__(self, torch, runs, only):
        import oxide
        self.oxide, self.torch, self.only = oxide, torch, only
        self.timer = Timer(torch, runs)
        # softmax and layernorm launches last well under a millisecond: five times the runs
        self.short_runs = 5 * runs
        self.ks = oxide_kernels.Kernels()
        self.target = oxide.Device(0).target
        self.gen = torch.Generator(device="cuda").manual_seed(20240601)
        self.failed = 0
        try:
            import peers_triton
            self.triton, self.triton_error = peers_triton, None
        except Exception as e:  # a machine without Triton still gets its other rows
            self.triton, self.triton_error = None, f"Triton could not be imported: {e}"

    def randn(self, *shape, dtype=None, scale=1.0):
        t = self.torch.randn(*shape, device="cuda", generator=self.gen) * scale
        return t.to(dtype) if dtype is not None else t

    def oxide_ready(self, call):
        """Compile oxide's kernel for this call; an UNSUPPORTED refusal comes back as its message."""
        kern, grid, args, consts = call
        kern = getattr(kern, "kernel", kern)  # an autotuned kernel: its configurations share the body
        try:
            kern.compile(*args, target=self.target, **consts)
        except self.oxide.OxideError as e:
            if e.status_name == "OXIDE_ERROR_UNSUPPORTED":
                return e.message
            raise Failed(f"oxide's {kern.name} did not compile: {e}") from None
        return None

    def row(self, name, peer, unit, call, got, run_peer, check, runs=None, peer_amount=None):
        """One `NAME@PEER oxide peer ratio` row (`NAME oxide peer ratio` when peer is None):
        oxide's call writes `got`, run_peer returns the peer's result, check(got, want) says what
        differs. unit is (name, its amount per millisecond): ("TFLOP/s", flop / 1e9) or ("GB/s",
        bytes / 1e6); peer_amount, where the peer's work is counted otherwise (a copy's bytes),
        is the peer's amount per millisecond."""
        unit_name, unit_per_ms = unit
        peer_per_ms = unit_per_ms if peer_amount is None else peer_amount
        full = name if peer is None else f"{name}@{peer}"
        if not wanted(full, self.only):
            return
        try:
            refused = self.oxide_ready(call)
            if refused is not None:
                run_peer()
                tp = self.timer.one(run_peer, runs=runs)
                out(f"{full} UNSUPPORTED: {' '.join(refused.split())} (peer {peer_per_ms / tp:.1f} {unit_name})")
                return
            run_ox = lambda: self.ks.launch(call)  # noqa: E731
            run_ox()
            want = run_peer()
            self.torch.cuda.synchronize()
            bad = check(got, want)
            if bad:
                raise Failed(f"WRONG: {bad}")
            to, tp = self.timer.pair(run_ox, run_peer, runs=runs)
            out(f"{full} {unit_per_ms / to:.2f} {peer_per_ms / tp:.2f} {(unit_per_ms / to) / (peer_per_ms / tp):.3f}")
        except Failed as f:
            self.failed += 1
            text = str(f)
            out(f"{full} {text if text.startswith('WRONG') else 'ERROR: ' + text}")
        except Exception as e:  # noqa: BLE001 - the row says what failed; the run goes on
            self.failed += 1
            out(f"{full} ERROR: {type(e).__name__}: {e}")
            if isinstance(e, getattr(self.oxide, "DeviceFailedError", ())):
                raise

    def no_triton(self, stem, why):
        if wanted(stem + "@triton", self.only):
            self.failed += 1
            out(f"{stem}@triton ERROR: no Triton peer ({why})")

    # ---- checks: oxide's output against the peer's, on the same inputs ----
    def rel_frobenius(self, limit):
        def check(got, want):
            g, w = got.float(), want.float()
            err = ((g - w).norm() / w.norm()).item()
            return None if err < limit else f"relative Frobenius error {err:.3g} (limit {limit})"
        return check

    def close(self, rtol, atol):
        def check(got, want):
            g, w = got.float(), want.float()
            if self.torch.allclose(g, w, rtol=rtol, atol=atol):
                return None
            return f"max abs error {(g - w).abs().max().item():.3g} (rtol {rtol}, atol {atol})"
        return check

    # ---- matmul ----
    def matmul_bf16(self, stem, dims):
        torch = self.torch
        M, N, K = dims
        a, b = self.randn(M, K, dtype=torch.bfloat16), self.randn(K, N, dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        call = self.ks.matmul_call(a, b, c)
        tf = ("TFLOP/s", 2.0 * M * N * K / 1e9)
        ref = torch.empty_like(c)
        self.row(stem, "cublas", tf, call, c, lambda: torch.matmul(a, b, out=ref), self.rel_frobenius(1e-2))
        if not wanted(stem + "@triton", self.only):
            return
        peer, why = self.triton_matmul(a, b, torch.matmul(a, b, out=ref))
        if peer is None:
            return self.no_triton(stem, why)
        tri = torch.empty_like(c)
        self.row(stem, "triton", tf, call, c, lambda: peer(a, b, tri), self.rel_frobenius(1e-2))

    def triton_matmul(self, a, b, ref):
        """The faster of the two Triton matmuls that run and agree with cuBLAS (autotuned first)."""
        if self.triton is None:
            return None, self.triton_error
        torch = self.torch
        best, why = None, []
        for name in ("matmul_blocked", "matmul_tma"):
            f = getattr(self.triton, name)
            c = torch.empty_like(ref)
            try:
                f(a, b, c)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - one peer failing leaves the other
                why.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
                continue
            err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
            if not err < 1e-2:
                why.append(f"{name}: disagrees with cuBLAS (relative error {err:.3g})")
                continue
            ms = self.timer.one(lambda: f(a, b, c))
            note(f"triton {name} {a.shape[0]}x{b.shape[1]}x{a.shape[1]}: {ms:.3f} ms")
            if best is None or ms < best[1]:
                best = (f, ms)
        for w in why:
            note("triton peer: " + w)
        return (best[0], None) if best else (None, "; ".join(why))

    def matmul_fp8(self, stem, dims):
        torch = self.torch
        M, N, K = dims
        a = self.randn(M, K, scale=2.0, dtype=torch.float8_e4m3fn)
        b = self.randn(N, K, scale=2.0, dtype=torch.float8_e4m3fn)  # N x K: K-major, as cuBLAS wants B
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        sa, sb = 0.375, 0.8125  # exact in f32, so both sides scale by the same numbers
        ta = torch.tensor(sa, device="cuda", dtype=torch.float32)
        tb = torch.tensor(sb, device="cuda", dtype=torch.float32)

        def peer():
            # torch._scaled_mm at its fastest: fast accumulation (cuBLASLt's FAST_ACCUM)
            return torch._scaled_mm(a, b.t(), scale_a=ta, scale_b=tb, out_dtype=torch.bfloat16, use_fast_accum=True)
        self.row(stem, "cublas", ("TFLOP/s", 2.0 * M * N * K / 1e9), self.ks.matmul_fp8_call(a, b, c, sa, sb), c, peer,
                 self.rel_frobenius(1e-2))

    # ---- softmax, layernorm ----
    def softmax(self, stem, dims):
        torch = self.torch
        R, C = dims
        x = self.randn(R, C, scale=3.0)
        y = torch.empty_like(x)
        call = self.ks.softmax_call(x, y)
        gb = ("GB/s", 2.0 * R * C * 4 / 1e6)  # read + write
        ref = torch.empty_like(x)
        check = self.close(1e-4, 1e-7)
        if self.triton is not None:
            self.row(stem, "triton", gb, call, y, lambda: self.triton.softmax(x, ref), check, runs=self.short_runs)
        else:
            self.no_triton(stem, self.triton_error)
        self.row(stem, "torch", gb, call, y, lambda: torch.softmax(x, dim=1), check, runs=self.short_runs)

    def layernorm(self, stem, dims):
        torch = self.torch
        R, C = dims
        x = self.randn(R, C, dtype=torch.bfloat16)
        w, b = self.randn(C, dtype=torch.bfloat16), self.randn(C, dtype=torch.bfloat16)
        y = torch.empty_like(x)
        call = self.ks.layernorm_call(x, w, b, y, EPS)
        gb = ("GB/s", (2.0 * R * C + 2.0 * C) * 2 / 1e6)  # x and y, w and b
        ref = torch.empty_like(x)
        check = self.close(1e-2, 1e-2)
        if self.triton is not None:
            self.row(stem, "triton", gb, call, y, lambda: self.triton.layernorm(x, w, b, ref, EPS), check,
                     runs=self.short_runs)
        else:
            self.no_triton(stem, self.triton_error)
        self.row(stem, "torch", gb, call, y, lambda: torch.nn.functional.layer_norm(x, (C,), w, b, EPS), check,
                 runs=self.short_runs)

    # ---- attention ----
    def attention_check(self, pv_abs):
        """|O - peer| within what both sides' bf16 roundings allow: each rounds P to bf16 before
        P.V (at most 2^-8 * (P @ |V|) after normalising) and O to bf16 (2^-8 * |O|); P @ |V| comes
        from the peer on |V| (itself bf16, hence the margin: 2.5 rather than 2 roundings)."""
        def check(got, want):
            g, w = got.float(), want.float()
            tol = 2.5 * 2.0 ** -8 * (pv_abs.float() + w.abs()) + 1e-6
            bad = ((g - w).abs() > tol).sum().item()
            if bad == 0 and bool(self.torch.isfinite(g).all()):
                return None
            return (f"{bad} of {g.numel()} elements beyond the bf16 bounds, max abs error "
                    f"{(g - w).abs().max().item():.3g}")
        return check

    def sdpa(self, backend, q, k, v, causal):
        from torch.nn.attention import sdpa_kernel
        with sdpa_kernel(backend):
            return self.torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def attention(self, stem, dims):
        torch = self.torch
        from torch.nn.attention import SDPBackend
        B, H, S, D, causal = dims
        q, k, v = (self.randn(B, H, S, D, dtype=torch.bfloat16) for _ in range(3))
        o, lse = torch.empty_like(q), torch.empty(B, H, S, device="cuda")
        call = self.ks.attention_call(q, k, v, o, lse, causal)
        tf = ("TFLOP/s", 4.0 * B * H * S * S * D / (2 if causal else 1) / 1e9)
        for peer, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
            if not wanted(f"{stem}@{peer}", self.only):
                continue
            try:
                pv_abs = self.sdpa(backend, q, k, v.abs(), causal)
            except Exception as e:  # noqa: BLE001 - a backend torch lacks here is this row's error
                self.failed += 1
                why = str(e).splitlines()[0][:200] if str(e) else ""
                out(f"{stem}@{peer} ERROR: torch SDPA {backend.name}: {type(e).__name__}: {why}")
                continue
            self.row(stem, peer, tf, call, o, lambda b=backend: self.sdpa(b, q, k, v, causal),
                     self.attention_check(pv_abs))
            del pv_abs

    def attention_decode(self, stem, dims):
        """Decode against a long K/V: GB/s of K/V read, against a device-to-device copy of the
        same bytes (its GB/s counts what it reads and writes: the memory traffic it achieves)."""
        torch = self.torch
        B, H_q, H_kv, S_kv, D = dims
        q = self.randn(B, H_q, 1, D, dtype=torch.bfloat16)
        k, v = (self.randn(B, H_kv, S_kv, D, dtype=torch.bfloat16) for _ in range(2))
        o, lse = torch.empty_like(q), torch.empty(B, H_q, 1, device="cuda")
        call = self.ks.attention_call(q, k, v, o, lse, False)
        kv_bytes = 2.0 * B * H_kv * S_kv * D * 2
        src = torch.empty(int(kv_bytes), dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        g = H_q // H_kv
        kr, vr = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        want = sdpa(q, kr, vr)
        check = self.attention_check(sdpa(q, kr, vr.abs()))
        del kr, vr

        def peer():
            dst.copy_(src)
            return want
        self.row(stem, None, ("GB/s", kv_bytes / 1e6), call, o, peer, check, peer_amount=2 * kv_bytes / 1e6)

    def all(self):
        for stem, kind, dims in shape_rows():
            if not (wanted(stem + "@", self.only) or any(wanted(stem + "@" + p, self.only)
                                                          for p in ("cublas", "triton", "torch", "cudnn",
                                                                    "flash"))):
                continue
            getattr(self, kind)(stem, dims)
            self.torch.cuda.empty_cache()
        rust_rows.run(self, wanted)


# ---- tile_compile_matmul: cold processes ----

def first_call(which):
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    with tempfile.TemporaryDirectory(prefix="tile-bench-oxide-") as ox, \
            tempfile.TemporaryDirectory(prefix="tile-bench-triton-") as tr:
        env["OXIDE_CACHE_DIR"], env["TRITON_CACHE_DIR"] = ox, tr
        p = subprocess.run([sys.executable, os.path.join(HERE, "first_call.py"), which], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    text = p.stdout.decode("utf-8", "replace")
    for line in text.splitlines():
        if line.startswith("first_call_ms "):
            return float(line.split()[1])
    raise Failed(f"first_call.py {which} (exit {p.returncode}): {text.strip()[-300:]}")


def compile_row(rounds):
    try:
        ox, tr = [], []
        for _ in range(rounds):  # alternating, so both see the same machine
            ox.append(first_call("oxide"))
            tr.append(first_call("triton"))
        note("tile_compile_matmul rounds: oxide " + " ".join(f"{v:.0f}" for v in ox) + " ms, triton "
             + " ".join(f"{v:.0f}" for v in tr) + " ms")
        mo, mt = statistics.median(ox), statistics.median(tr)
        out(f"tile_compile_matmul {mo:.1f} {mt:.1f} {mo / mt:.3f}")
        return 0
    except (Failed, subprocess.TimeoutExpired) as e:
        out(f"tile_compile_matmul ERROR: {e}")
        return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="build and compile every row's oxide kernel; no GPU")
    ap.add_argument("--only", action="append", help="rows whose name contains this text")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per row, after 3 warm-ups (default 20)")
    ap.add_argument("--compile-rounds", type=int, default=3, help="cold processes per side (default 3)")
    a = ap.parse_args()
    if a.runs < 20:
        ap.error("--runs: rows are medians of at least 20 runs")
    t0 = time.time()
    text, detail = lines.row()
    if wanted("tile_lines_matmul", a.only):
        out(text)
        note(detail)
    if a.dry_run:
        return dry_run(a.only)
    import oxide
    reason = oxide.no_gpu_reason()
    if reason:
        out(f"SKIPPED: no GPU ({reason}); the GPU rows need the H200 (--dry-run builds them here)")
        return 77
    try:
        import torch
    except ImportError as e:
        out(f"SKIPPED: no torch ({e}); the peers and the inputs are torch's")
        return 77
    note(oxide_kernels.describe())
    note(f"GPU {torch.cuda.get_device_name(0)}, torch {torch.__version__}, medians of {a.runs} runs (softmax and layernorm {5 * a.runs})")
    b = Bench(torch, a.runs, a.only)
    b.all()
    failed = b.failed
    if wanted("tile_compile_matmul", a.only):
        failed += compile_row(a.compile_rounds)
    note(f"bench/tile took {time.time() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
