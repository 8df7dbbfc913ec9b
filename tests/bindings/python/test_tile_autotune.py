"""@ot.autotune (docs/tile.md, "Autotuning"): configurations split into hints and constexprs, every
refusal, the choice of the least median time (times injected by the timer hook, so the choice is
known in advance), configurations the front end or liboxide cannot compile skipped with their
reasons, the winner known in the process, in a new tuner and in another process (the cache
directory), the outputs put back after tuning (or not, or zeroed), and on a GPU the tile matmul of
examples/python/tile_matmul.py autotuned over five configurations and checked against torch.

The kernel of the launch tests is y += x, so y tells how many launches the caller saw: on the fake
driver (scripts/test-python's second run) launches do nothing and y must come back as it was; on
a GPU the winner's one launch must give y0 + x exactly."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import oxide
import oxide.tile as ot

N = 3000


@ot.kernel
def acc(x, y, BLOCK: ot.constexpr):
    o = ot.program_id(0) * BLOCK
    ot.store(y, (o,), ot.load(y, (o,), (BLOCK,)) + ot.load(x, (o,), (BLOCK,)))


# 0..2 compile; 3 has a hint out of range, 4 a tile dim that is not a power of two (both refused by
# the front end), 5 a tile too large for one warp's registers (refused by liboxide's lowering)
CONFIGS = [ot.Config(BLOCK=256, warps=4), ot.Config(BLOCK=512, warps=8), ot.Config(BLOCK=1024, warps=4),
           ot.Config(BLOCK=256, warps=3), ot.Config(BLOCK=48), ot.Config(BLOCK=65536, warps=1)]


def grid(meta):
    return (ot.cdiv(meta["x"].shape[0], meta["BLOCK"]),)


class Timer:
    """Times per configuration: `prefer` gets 2 ms; configuration 1 gets 0.1 ms three times and
    9 ms otherwise (the least minimum, not the least median); the others about 5 ms. With `dirty`
    it writes junk into y, as a tuning launch leaving partial results would."""

    def __init__(self, prefer, dirty=None):
        self.prefer, self.dirty, self.calls = prefer, dirty, 0

    def __call__(self, config, rep, measured):
        self.calls += 1
        if self.dirty is not None and rep == 0:
            self.dirty.copy_from_numpy(np.full(N, -1000.0 - config, np.float32))
        if config == self.prefer:
            return 2.0
        if config == 1:
            return 0.1 if rep < 3 else 9.0
        return 5.0 + rep * 0.01


def tuned(tmp, timer=None, **kw):
    return ot.autotune(configs=CONFIGS, key=["x"], cache_dir=str(tmp), timer=timer, **kw)(acc)


# ---- no GPU needed ----

def test_config_splits_hints_from_constexprs():
    c = ot.Config(BM=128, BN=64, warps=8, stages=3)
    assert c.hints == {"warps": 8, "stages": 3} and c.kwargs == {"BM": 128, "BN": 64}
    assert c.label == "BM=128, BN=64, warps=8, stages=3"
    t = ot.Config({"BM": 64}, num_warps=4, num_stages=2)  # Triton's spelling
    assert t.hints == {"warps": 4, "stages": 2} and t.kwargs == {"BM": 64}


def test_refusals(tmp_path):
    with pytest.raises(TypeError, match="goes above @ot.kernel"):
        ot.autotune(configs=CONFIGS)(lambda x: x)
    with pytest.raises(ValueError, match="non-empty list of ot.Config"):
        ot.autotune(configs=[])(acc)
    with pytest.raises(TypeError, match="sets BM, which is not a constexpr"):
        ot.autotune(configs=[ot.Config(BM=64)])(acc)
    with pytest.raises(TypeError, match="key names 'M', which is not a parameter"):
        ot.autotune(configs=CONFIGS, key=["M"])(acc)
    with pytest.raises(TypeError, match="reset_to_zero names 'z'"):
        ot.autotune(configs=CONFIGS, reset_to_zero=["z"])(acc)
    with pytest.raises(ValueError, match="shapes is 'exact' or 'pow2'"):
        ot.autotune(configs=CONFIGS, shapes="round")(acc)
    t = tuned(tmp_path)
    x = np.ones(N, np.float32)
    with pytest.raises(TypeError, match="BLOCK is set by the autotuner's configurations"):
        t[grid](x, x, BLOCK=256)
    with pytest.raises(TypeError, match="missing argument y"):
        t[grid](x)
    with pytest.raises(TypeError, match="launch it with acc\\[grid\\]"):
        t(x, x)


def test_no_configuration_compiles():
    t = ot.autotune(configs=[CONFIGS[3], CONFIGS[4]])(acc)
    x = np.ones(N, np.float32)
    with pytest.raises(ot.CompileError) as e:
        t[grid](x, x.copy())
    msg = str(e.value)
    assert "no configuration compiles" in msg and "BLOCK=256, warps=3: " in msg and "BLOCK=48: " in msg
    assert "warps=3 is out of range" in msg and "power of two" in msg


def test_interpret_one_configuration():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.5, 2, N).astype(np.float32), rng.uniform(-2, 2, N).astype(np.float32)
    want = y + x
    tuned("/nonexistent").interpret(grid, x, y, config=1)
    assert np.array_equal(y, want)


# ---- on a device: the fake driver here, the GPU there ----

@pytest.fixture()
def data(device):
    rng = np.random.default_rng(7)
    x0 = rng.uniform(0.5, 2, N).astype(np.float32)
    y0 = rng.uniform(-2, 2, N).astype(np.float32)
    x, y = oxide.DeviceArray.from_numpy(x0), oxide.DeviceArray.from_numpy(y0)
    mock = "mock" in device.name
    return x, y, x0, y0, (lambda launches: y0 if mock or not launches else y0 + x0)


def test_choice_memory_disk_and_restore(data, tmp_path):
    x, y, x0, y0, want = data
    timer = Timer(prefer=2, dirty=y)
    t = tuned(tmp_path, timer)
    t[grid](x, y)
    assert t.best_config is CONFIGS[2] and t.stats["tuned"] == 1
    assert timer.calls == 3 * 10, "three configurations compile, ten timed runs each"
    print(t.report)
    assert "BLOCK=1024, warps=4: 2.0000 ms (median of 10) <- winner" in t.report
    assert "BLOCK=512, warps=8: 9.0000 ms" in t.report, "the median decides, not the minimum"
    assert "BLOCK=256, warps=3: skipped: " in t.report and "BLOCK=48: skipped: " in t.report
    assert "BLOCK=65536, warps=1: skipped: compile for " in t.report and "registers per thread" in t.report
    assert np.array_equal(y.to_numpy(), want(1)), "the tuning launches' writes must not be left in y"

    timer.calls = 0
    y.copy_from_numpy(y0)
    t[grid](x, y)
    assert t.stats["from_memory"] == 1 and timer.calls == 0
    assert np.array_equal(y.to_numpy(), want(1))

    # a new tuner of the same configurations reads the winner from the cache directory
    timer2 = Timer(prefer=0)
    t2 = tuned(tmp_path, timer2)
    y.copy_from_numpy(y0)
    t2[grid](x, y)
    assert t2.stats["from_disk"] == 1 and timer2.calls == 0 and t2.best_config is CONFIGS[2]
    assert t2.report == "BLOCK=1024, warps=4: the winner found in the cache directory (not timed)\n"
    assert np.array_equal(y.to_numpy(), want(1))

    # another shape class is tuned on its own
    x2, y2 = oxide.DeviceArray.from_numpy(x0[:1000]), oxide.DeviceArray.from_numpy(y0[:1000])
    t2[grid](x2, y2)
    assert t2.stats["tuned"] == 1 and t2.best_config is CONFIGS[0]


def test_a_constexpr_no_configuration_sets_is_given_at_the_launch(data, tmp_path):
    """As in Triton: configurations of hints only, BLOCK passed with the launch; each value of it
    is a shape class of its own, tuned over modules built with that value."""
    x, y, x0, y0, want = data
    t = ot.autotune(configs=[ot.Config(warps=4), ot.Config(warps=8)], key=["x"], cache_dir=str(tmp_path),
                    timer=lambda config, rep, ms: 1.0 + config)(acc)
    for block, stats in ((256, (1, 0)), (256, (1, 1)), (512, (2, 1))):
        y.copy_from_numpy(y0)
        t[grid](x, y, BLOCK=block)
        assert (t.stats["tuned"], t.stats["from_memory"]) == stats, (block, t.stats)
        assert t.best_config is t.configs[0] and np.array_equal(y.to_numpy(), want(1))
    with pytest.raises(TypeError, match="BLOCK is set by the autotuner's configurations"):
        tuned(tmp_path)[grid](x, y, BLOCK=256)


def test_another_process_reads_the_winner(data, tmp_path):
    x, y, *_ = data
    tuned(tmp_path, Timer(prefer=0))[grid](x, y)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent)] + sys.path))
    out = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"stats": {"tuned": 0, "from_disk": 1, "from_memory": 0}, "timer_calls": 0, "best": 0}


def test_without_restore_the_tuning_writes_stay(data, tmp_path):
    x, y, x0, y0, want = data
    t = tuned(tmp_path, Timer(prefer=0, dirty=y), restore=False)
    t[grid](x, y)
    assert not np.array_equal(y.to_numpy(), want(1))


def test_reset_to_zero(data, tmp_path):
    x, y, x0, y0, want = data
    t = tuned(tmp_path, Timer(prefer=0, dirty=y), reset_to_zero=["y"])
    t[grid](x, y)
    mock = np.array_equal(want(1), y0)
    assert np.array_equal(y.to_numpy(), np.zeros(N, np.float32) if mock else x0)


def test_every_configuration_fails_in_liboxide(data, tmp_path):
    x, y, *_ = data
    t = ot.autotune(configs=[CONFIGS[3], CONFIGS[5]], key=["x"], cache_dir=str(tmp_path))(acc)
    with pytest.raises(ot.CompileError) as e:
        t[grid](x, y)
    msg = str(e.value)
    assert "no configuration compiles for " in msg and "BLOCK=65536, warps=1: " in msg
    assert "registers per thread" in msg and "BLOCK=256, warps=3: " in msg and "warps=3 is out of range" in msg


def matmul_example():
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "python"))
    import tile_matmul
    return tile_matmul.matmul


# 256x256 output tiles with BK=256 need 264 KiB of shared memory for the dot's operands
TOO_MUCH_SMEM = ot.Config(BM=256, BN=256, BK=256, warps=16)


def test_too_much_shared_memory_is_skipped(device, tmp_path):
    mm = ot.autotune(configs=[ot.Config(BM=64, BN=64, BK=32, warps=4), TOO_MUCH_SMEM], key=["a", "b"],
                     cache_dir=str(tmp_path))(matmul_example())
    rng = np.random.default_rng(5)
    a0, b0 = rng.uniform(0.5, 2, (100, 70)).astype(np.float16), rng.uniform(0.5, 2, (70, 90)).astype(np.float16)
    c0 = rng.uniform(-1, 1, (100, 90)).astype(np.float16)
    a, b, c = (oxide.DeviceArray.from_numpy(v) for v in (a0, b0, c0))
    mm[lambda m: (ot.cdiv(100, m["BM"]), ot.cdiv(90, m["BN"]))](a, b, c)
    assert mm.best_config.kwargs["BM"] == 64
    assert "BM=256, BN=256, BK=256, warps=16: skipped: compile for " in mm.report
    assert "bytes of shared memory" in mm.report and "(use smaller tiles)" in mm.report
    got, ref = c.to_numpy().astype(np.float32), a0.astype(np.float32) @ b0.astype(np.float32)
    if "mock" in device.name:
        assert np.array_equal(got, c0.astype(np.float32)), "the fake driver's launches write nothing"
    else:
        assert np.allclose(got, ref, rtol=2e-2, atol=5e-2), np.abs(got - ref).max()


# ---- on the GPU: the tile matmul example, autotuned ----

@pytest.fixture(scope="module")
def torch(device):
    torch = pytest.importorskip("torch", reason="torch is not importable, and the autotuned matmul compares "
                                                 "with torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def test_gpu_autotuned_tile_matmul(torch, tmp_path):
    configs = [ot.Config(BM=64, BN=64, BK=32, warps=4), ot.Config(BM=128, BN=64, BK=32, warps=4),
               ot.Config(BM=64, BN=128, BK=32, warps=8), ot.Config(BM=128, BN=128, BK=32, warps=8),
               ot.Config(BM=32, BN=64, BK=64, warps=2), TOO_MUCH_SMEM]
    mm = ot.autotune(configs=configs, key=["a", "b"], cache_dir=str(tmp_path))(matmul_example())
    M, N_, K = 777, 520, 300

    def grid(meta):
        return (ot.cdiv(M, meta["BM"]), ot.cdiv(N_, meta["BN"]))

    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N_, device="cuda", dtype=torch.bfloat16)
    c = torch.full((M, N_), 12345.0, device="cuda", dtype=torch.bfloat16)
    mm[grid](a, b, c)
    torch.cuda.synchronize()
    print(mm.report)
    assert mm.stats["tuned"] == 1 and mm.best_config in configs
    assert mm.report.count(" ms (median of 10)") == 5, "every configuration but the one too large timed"
    assert "BM=256, BN=256, BK=256, warps=16: skipped: " in mm.report
    ref = a.float() @ b.float()
    assert torch.allclose(c.float(), ref, atol=5e-2, rtol=2e-2), (c.float() - ref).abs().max()
    c.fill_(-1.0)
    mm[grid](a, b, c)
    torch.cuda.synchronize()
    assert mm.stats["from_memory"] == 1 and torch.allclose(c.float(), ref, atol=5e-2, rtol=2e-2)
    # a new tuner reads the winner from the directory and launches it without timing
    mm2 = ot.autotune(configs=configs, key=["a", "b"], cache_dir=str(tmp_path))(matmul_example())
    c.fill_(-1.0)
    mm2[grid](a, b, c)
    torch.cuda.synchronize()
    assert mm2.stats["from_disk"] == 1 and mm2.best_config is configs[configs.index(mm.best_config)]
    assert torch.allclose(c.float(), ref, atol=5e-2, rtol=2e-2)


if __name__ == "__main__":
    # the second process of test_another_process_reads_the_winner
    rng = np.random.default_rng(7)
    xs, ys = oxide.DeviceArray.from_numpy(rng.uniform(0.5, 2, N).astype(np.float32)), oxide.DeviceArray.from_numpy(
        rng.uniform(-2, 2, N).astype(np.float32))
    timer = Timer(prefer=2)
    t = tuned(sys.argv[1], timer)
    t[grid](xs, ys)
    print(json.dumps({"stats": t.stats, "timer_calls": timer.calls, "best": CONFIGS.index(t.best_config)}))
