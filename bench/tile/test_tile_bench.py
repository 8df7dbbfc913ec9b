"""CPU tests of bench/tile's own logic: how a row is reported (figures, WRONG, UNSUPPORTED,
ERROR) with the GPU work replaced by stand-ins, the kernel line counts, and the dry run.
Run: python3 -m pytest -q bench/tile (oxide installed, no GPU needed)."""
import os
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

oxide = pytest.importorskip("oxide")
import lines  # noqa: E402
import tile_bench  # noqa: E402
from oxide._errors import UnsupportedError, VerifyError  # noqa: E402


class FakeCuda:
    @staticmethod
    def synchronize():
        pass


class FakeTorch:
    cuda = FakeCuda


class FakeTimer:
    """Fixed medians: oxide 4 ms, the peer 2 ms (what Timer would return)."""

    def __init__(self):
        self.calls = []

    def pair(self, fa, fb, runs=None):
        self.calls.append(("pair", runs))
        return 4.0, 2.0

    def one(self, f, runs=None):
        self.calls.append(("one", runs))
        return 2.0


class FakeKernel:
    name = "k"

    def __init__(self, error=None):
        self.error, self.launched = error, 0

    def compile(self, *args, target=None, **consts):
        if self.error:
            raise self.error


class FakeKernels:
    @staticmethod
    def launch(call):
        call[0].launched += 1


def bench(only=None):
    b = tile_bench.Bench.__new__(tile_bench.Bench)
    b.oxide, b.torch, b.only, b.timer, b.ks = oxide, FakeTorch, only, FakeTimer(), FakeKernels
    b.target, b.failed = "sm_90a", 0
    return b


def run_row(capsys, kernel, check=lambda got, want: None, only=None, runs=None):
    b = bench(only)
    b.row("tile_x_8x8", "peer", ("TFLOP/s", 100.0), (kernel, (1,), (), {}), "got", lambda: "want", check,
          runs=runs)
    return b, capsys.readouterr().out.splitlines()


def test_row_figures_and_ratio(capsys):
    k = FakeKernel()
    b, out = run_row(capsys, k, runs=100)
    # 100 TFLOP per ms over 4 ms and 2 ms; ratio peer_ms / oxide_ms, so > 1 means oxide is faster
    assert out == ["tile_x_8x8@peer 25.00 50.00 0.500"]
    assert b.failed == 0 and k.launched >= 1 and b.timer.calls == [("pair", 100)]


def test_row_without_a_peer_name_counts_the_peer_s_own_amount(capsys):
    # tile_attention_decode: oxide reads 100 GB per ms' worth, the copy moves twice the bytes
    b = bench()
    b.row("tile_attention_decode", None, ("GB/s", 100.0), (FakeKernel(), (1,), (), {}), "got", lambda: "want",
          lambda got, want: None, peer_amount=200.0)
    assert capsys.readouterr().out.splitlines() == ["tile_attention_decode 25.00 100.00 0.250"]


def test_row_wrong(capsys):
    seen = []
    b, out = run_row(capsys, FakeKernel(), check=lambda got, want: seen.append((got, want)) or "max abs error 3")
    assert out == ["tile_x_8x8@peer WRONG: max abs error 3"]
    assert seen == [("got", "want")] and b.failed == 1 and b.timer.calls == []


def test_row_unsupported_times_the_peer_alone(capsys):
    b, out = run_row(capsys, FakeKernel(UnsupportedError("fp8 tile.dot is not lowered\non the general path yet")))
    assert out == ["tile_x_8x8@peer UNSUPPORTED: fp8 tile.dot is not lowered on the general path yet "
                   "(peer 50.0 TFLOP/s)"]
    assert b.failed == 0 and b.timer.calls == [("one", None)]


def test_row_other_compile_error_fails(capsys):
    b, out = run_row(capsys, FakeKernel(VerifyError("bad tile")))
    assert len(out) == 1 and out[0].startswith("tile_x_8x8@peer ERROR: oxide's k did not compile: ")
    assert "bad tile" in out[0] and b.failed == 1


def test_row_peer_exception_fails(capsys):
    b = bench()
    b.row("tile_x_8x8", "peer", ("GB/s", 1.0), (FakeKernel(), 1, (), {}), "got", lambda: 1 / 0,
          lambda got, want: None)
    out = capsys.readouterr().out.splitlines()
    assert out == ["tile_x_8x8@peer ERROR: ZeroDivisionError: division by zero"] and b.failed == 1


def test_row_filtered_out(capsys):
    k = FakeKernel()
    b, out = run_row(capsys, k, only=["softmax"])
    assert out == [] and k.launched == 0 and b.failed == 0


def test_python_lines(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(textwrap.dedent('''\
        import oxide.tile as ot


        @ot.kernel(warps=8)
        def k(a, b, BLOCK: ot.constexpr):
            """docstring,
            two lines"""
            # a comment

            x = ot.load(a, (0,),
                        (BLOCK,))  # a call over two lines counts twice
            ot.store(b, (0,), x)


        def helper():
            return 1


        @ot.kernel
        def empty(a):
            pass
        '''))
    assert lines.python_kernels(str(f)) == [("k", 3), ("empty", 1)]


def test_python_lines_of_the_example():
    # examples/python/tile_matmul.py's kernel body, counted by hand: 7 lines
    path = os.path.join(tile_bench.oxide_kernels.EXAMPLES, "tile_matmul.py")
    assert lines.python_kernels(path) == [("matmul", 7)]
    text, _ = lines.row()
    assert text == "tile_lines_matmul %s 7" % ("n/a" if lines.rust_lines() is None else lines.rust_lines())


def test_rust_lines(tmp_path):
    f = tmp_path / "main.rs"
    f.write_text(textwrap.dedent('''\
        use oxide::tile;

        #[tile::kernel]
        fn matmul(a: Tensor, b: Tensor) {
            // a comment
            let acc = zeros();

            for k in 0..n {
                acc = dot(a, b, acc);
            }
        }

        fn host() {
            println!("not counted");
        }
        '''))
    assert lines._rust_kernel_lines([str(f)]) == 4


def test_dry_run_builds_every_row(capsys):
    assert tile_bench.dry_run(None) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(tile_bench.shape_rows()) + len(tile_bench.rust_rows.ROWS)
    for line, (stem, _, _) in zip(out[len(tile_bench.shape_rows()):], tile_bench.rust_rows.ROWS):
        assert line.startswith(f"dry-run {stem}@oxir: Rust module ") and "DIFFERS" not in line, line
    for line, (stem, kind, _) in zip(out, tile_bench.shape_rows()):
        assert line.startswith(f"dry-run {stem}: ")
        # every row compiles to PTX, but the fp8 dot may be refused as not lowered yet
        assert "PTX" in line or (kind == "matmul_fp8" and "UNSUPPORTED: " in line), line


def test_rust_rows_dry_run_catches_another_interface(tmp_path, capsys, monkeypatch):
    """A Rust module whose kernel's parameters differ from the text IR's is counted."""
    rr = tile_bench.rust_rows
    for name in os.listdir(rr.DATA):
        text = open(os.path.join(rr.DATA, name)).read() if name.endswith(".ptx") else None
        if text is not None:
            if name == "rust_tile_softmax.ptx":
                text = text.replace('"mut":true', '"mut":false')
            (tmp_path / name).write_text(text)
    monkeypatch.setattr(rr, "DATA", str(tmp_path))
    assert rr.dry(tile_bench.wanted, None, print) == 1
    out = capsys.readouterr().out.splitlines()
    assert [ln for ln in out if "DIFFERS" in ln] == [ln for ln in out if "tile_rust_softmax" in ln], out
