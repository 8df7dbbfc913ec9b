"""Differential test of the tile interpreter: random tile programs from `oxide-difftest --tile --json`
(tools/difftest/tile_gen.c) run in oxide.interpret and in an independent NumPy evaluation of the
same program's structure (tile_numpy_eval.py), on inputs drawn here. Integers must agree bit for
bit; floats within the tolerance the generator derived for each output (docs/reliability.md, "Tile
programs"). A failure names the seed; `oxide-difftest --tile --print SEED` prints the program."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import oxide
import tile_numpy_eval as ev

ROOT = Path(__file__).resolve().parents[3]
SEED, COUNT = 1, int(os.environ.get("OXIDE_TILE_DIFFTEST_COUNT", "300"))


def difftest_binary():
    for cand in (os.environ.get("OXIDE_DIFFTEST"), os.environ.get("OXIDE_LIB_DIR") and
                 Path(os.environ["OXIDE_LIB_DIR"]) / "tools" / "oxide-difftest", ROOT / "build" / "tools" / "oxide-difftest"):
        if cand and Path(cand).is_file():
            return str(cand)
    return None


def programs(seed, count):
    exe = difftest_binary()
    if exe is None:
        if os.environ.get("OXIDE_LIB_DIR"):
            pytest.fail("oxide-difftest is not built next to liboxide (build the oxide_difftest target)")
        pytest.skip("oxide-difftest not found (set OXIDE_DIFFTEST or OXIDE_LIB_DIR)")
    out = subprocess.run([exe, "--tile", "--json", "--seed", str(seed), "--count", str(count)], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def storage(t, rng):
    """A tensor's whole buffer: floats +-k/128 (k 16..128), integers in range and never 0."""
    n = t["storage"]
    if t["elem"] in ev.FLOATS:
        v = (rng.integers(16, 129, n) / 128 * rng.choice([-1, 1], n)).astype(np.float32)
        return ev.write_storage(t["elem"], v)
    v = rng.integers(int(t["lo"]), int(t["hi"]) + 1, n)
    return ev.write_storage(t["elem"], np.where(v == 0, 1, v))


def view(buf, t):
    item = buf.itemsize
    return np.lib.stride_tricks.as_strided(buf[t["base"]:], shape=tuple(t["dims"]),
                                           strides=tuple(s * item for s in t["strides"]))


def run_one(ctx, prog, perturb=False):
    rng = np.random.default_rng(prog["seed"])
    base = {t["name"]: storage(t, rng) for t in prog["tensors"]}
    mine = {k: v.copy() for k, v in base.items()}
    theirs = {k: v.copy() for k, v in base.items()}
    mod = ctx.parse("module @tdiff\n\n" + prog["text"])
    args = [view(theirs[t["name"]], t) for t in prog["tensors"]]
    for t, a in zip(prog["tensors"], args):
        if t["kind"] == "in":
            a.flags.writeable = False  # a read-only tensor<...> parameter
    oxide.interpret(mod, prog["name"], tuple(prog["grid"]), *args, prog["n"], prog["x"])
    ev.evaluate(prog, {t["name"]: view(mine[t["name"]], t) for t in prog["tensors"]})
    if perturb:  # one element of the NumPy side's first output, moved past its tolerance
        t = next(t for t in prog["tensors"] if t["kind"] != "in")
        v = ev.read_storage(t["elem"], mine[t["name"]][:1])
        mine[t["name"]][:1] = ev.write_storage(t["elem"], v * 2 + 1 + 4 * t["tol"] if t["elem"] in ev.FLOATS else v ^ 1)
    problems = []
    for t in prog["tensors"]:
        if t["kind"] == "in":
            continue
        want = ev.read_storage(t["elem"], mine[t["name"]]).astype(np.float64)
        got = ev.read_storage(t["elem"], theirs[t["name"]]).astype(np.float64)
        both_nan = np.isnan(want) & np.isnan(got)
        bad = ~both_nan & ~(np.abs(want - got) <= t["tol"])
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            problems.append(f"seed {prog['seed']}: %{t['name']} storage[{k}]: NumPy {want[k]!r}, interpreter "
                            f"{got[k]!r} (tolerance {t['tol']:.3g}, {int(bad.sum())} elements differ); "
                            f"oxide-difftest --tile --print {prog['seed']} prints the program")
    return problems


def test_tile_programs_interpreter_vs_numpy():
    ctx = oxide.Context()
    progs = programs(SEED, COUNT)
    assert len(progs) == COUNT
    problems = [p for prog in progs for p in run_one(ctx, prog)]
    assert not problems, "\n".join(problems[:20])


def test_comparison_catches_a_difference():
    """The comparison can fail: one element moved past its tolerance is reported, with the seed."""
    ctx = oxide.Context()
    for prog in programs(SEED, 10):
        problems = run_one(ctx, prog, perturb=True)
        assert problems and f"seed {prog['seed']}" in problems[0]
