"""The Python tile front end (oxide.tile): the IR each construct generates (parsed and verified by
liboxide, and its structure: loops, block parameters, splats, merges), constexpr specialisation,
the module cache, errors at the user's file:line, and interpreter runs against NumPy (skipped,
with the reason, where oxide.interpret is not in this build)."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import oxide
import oxide.tile as ot

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples" / "python"))

BF16 = ot.TensorSpec(ot.bfloat16, 2)
F32 = ot.TensorSpec(ot.float32, 2)
F32_1 = ot.TensorSpec(ot.float32, 1)


def line_of(marker):
    """The line of this file holding `# <marker>`."""
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return i
    raise AssertionError(marker)


def blocks(ir):
    """{label: (params text, [instruction lines])}."""
    out, cur = {}, None
    for line in ir.splitlines():
        m = re.match(r"^(\^\w+)(?:\((.*)\))?:$", line)
        if m:
            cur = m.group(1)
            out[cur] = (m.group(2) or "", [])
        elif cur and line.startswith("  "):
            out[cur][1].append(line.strip())
    return out


def reparse(ir):
    """liboxide parses and verifies the text (specialize already did; this is independent)."""
    ctx = oxide.Context()
    m = ctx.parse(ir)
    m.verify()
    return m.print()


@ot.kernel(warps=4)
def matmul(a, b, c, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[1], BK):
        acc = ot.dot(ot.load(a, (pm * BM, k), (BM, BK)), ot.load(b, (k, pn * BN), (BK, BN)), acc)
    ot.store(c, (pm * BM, pn * BN), acc.to(ot.bfloat16))


def test_loop_carries_the_accumulator_in_a_block_parameter():
    ir = matmul.ir(BF16, BF16, BF16, BM=64, BN=32, BK=16)
    reparse(ir)
    assert "tile_kernel @matmul(%a: tensor<2 x bf16>, %b: tensor<2 x bf16>, %c: tensor<mut 2 x bf16>) " \
           "hints(warps=4) {" in ir
    bs = blocks(ir)
    loops = [b for b, (params, _) in bs.items() if "%acc" in params]
    assert len(loops) == 1, ir
    header = loops[0]
    params, body = bs[header]
    assert re.fullmatch(r"%k\.\d+: i32, %acc\.\d+: tile<64x32 x f32>", params), params
    assert any(re.match(r"%\S+ = icmp %k\.\d+, %\S+ \{pred=slt\} : i1", s) for s in body)
    assert body[-1].startswith("cond_br ")
    # the body branches back with the next index and the new accumulator
    back = [b for b, (_, ins) in bs.items() if ins and ins[-1].startswith(f"br {header}(")]
    assert len(back) == 2  # the entry (initial values) and the body
    body_ins = bs[[b for b in back if b != "^b0"][0]][1]
    assert any(" = tile.dot " in s and ": tile<64x32 x f32>" in s for s in body_ins)
    assert any(re.match(r"%i\.\d+ = add %k\.\d+, %c\.\d+ : i32", s) for s in body_ins)
    assert "const {value=16} : i32" in ir  # BK folded into the step
    assert "tile.load %a, " in ir and ": tile<64x16 x bf16>" in ir and ": tile<16x32 x bf16>" in ir
    assert re.search(r"tile.cast %acc\.\d+ : tile<64x32 x bf16>", ir)  # the loop's result, after it


@ot.kernel
def scale(x, y, s, BLOCK: ot.constexpr):
    o = ot.program_id(0) * BLOCK
    t = ot.load(x, (o,), (BLOCK,))
    ot.store(y, (o,), t * s + 1.5)


def test_scalars_with_tiles_are_splatted_and_constants_are_full_tiles():
    ir = scale.ir(F32_1, F32_1, 2.0, BLOCK=256)
    reparse(ir)
    assert re.search(r"tile.splat %s : tile<256 x f32>", ir), ir
    assert "tile.full {value=1.5} : tile<256 x f32>" in ir
    assert "%s: f32" in ir
    # an int scalar with an f32 tile is converted first, then splatted
    ir = scale.ir(F32_1, F32_1, 3, BLOCK=256)
    assert "%s: i32" in ir and re.search(r"sitofp %s : f32", ir) and "tile.splat" in ir


@ot.kernel
def branch(x, y, n, BLOCK: ot.constexpr):
    t = ot.load(x, (0,), (BLOCK,))
    if n > 4:
        t = t * 2.0
        extra = 1
    else:
        t = ot.exp(t)
        extra = 2
    if BLOCK > 1000:  # compile-time: only the taken side exists
        t = t - 100.0
    ot.store(y, (0,), t + extra)


def test_runtime_if_merges_values_in_a_block_parameter():
    ir = branch.ir(F32_1, F32_1, 7, BLOCK=128)
    reparse(ir)
    bs = blocks(ir)
    merge = [b for b, (params, _) in bs.items() if "%t" in params]
    assert len(merge) == 1
    assert re.fullmatch(r"%t\.\d+: tile<128 x f32>, %extra\.\d+: i32", bs[merge[0]][0])
    assert re.search(r"icmp %n, %c\.\d+ \{pred=sgt\} : i1", ir) and "cond_br" in ir
    preds = [b for b, (_, ins) in bs.items() if ins and ins[-1].startswith(f"br {merge[0]}(")]
    assert len(preds) == 2
    assert "{value=-100.0}" not in ir and "{value=100.0}" not in ir  # the static if folded away
    assert "sitofp" in ir  # t + extra: the merged i32 converted for the f32 tile


@ot.kernel
def many_ops(x, q, h, out, s):
    i = ot.arange(64)
    t = ot.load(x, (0, 0), (16, 64))
    u = ot.where(t > 0.0, ot.sqrt(ot.abs(t)), -t)
    v = ot.maximum(ot.exp2(u), ot.minimum(ot.log(u + 1.0), ot.tanh(u)))
    w = ot.broadcast_to(ot.expand_dims(ot.sum(v, 0), 0), (16, 64)) + ot.rsqrt(v + 1.0)
    r = ot.reshape(w.T, (32, 32))
    m = ot.max(r, axis=1) + ot.min(r, axis=1)
    ot.store(q, (0,), ot.full((64,), s, ot.float32).to(ot.float8_e4m3))
    ot.atomic_add(h, (0,), ot.where(i < ot.num_programs(0), 1, 0))
    ot.print("m", m)
    ot.store(out, (0, 0), ot.permute(r, (1, 0)) * ot.sum(m))


def test_the_rest_of_the_surface_generates_ir_that_verifies():
    ir = many_ops.ir(F32, ot.TensorSpec(ot.float8_e4m3, 1), ot.TensorSpec(ot.int32, 1), F32, 0.5)
    reparse(ir)
    for frag in ("tile.arange : tile<64 x i32>", "fcmp", "select", "sqrt", "fabs", "neg", "exp2", "fmax", "fmin",
                 "log", "tanh", "tile.reduce", "{imm=0, kind=sum}", "kind=max", "kind=min", "tile.expand_dims",
                 "tile.broadcast", "rsqrt", "tile.permute", "{perm=[1,0]}", "tile.reshape", ": tile<32x32 x f32>",
                 ": tile<64 x f8e4m3>", "tile.atomic_add %h", "tile.num_programs {imm=0}", "tile.print",
                 '{str="m"}', "tile.splat %s"):
        assert frag in ir, (frag, ir)
    # ot.sum of a whole tile is a scalar, splatted to multiply a tile
    assert re.search(r"tile.reduce %\S+ \{imm=0, kind=sum\} : f32", ir)


@ot.kernel
def clamp(x, y, n, m):
    hi = min(x.shape[0], n, 64, 100)
    lo = max(m, 0, n)
    ot.store(y, (0,), ot.load(x, (lo,), (16,)) + hi)


def test_min_and_max_of_several_runtime_values():
    ir = clamp.ir(F32_1, F32_1, 5, 6)
    reparse(ir)
    # two runtime values and one folded constant (min(64, 100)): two smin; max(m, n, 0): two smax
    assert len(re.findall(r"= smin ", ir)) == 2 and len(re.findall(r"= smax ", ir)) == 2, ir
    assert "{value=64}" in ir and "{value=100}" not in ir


def test_constexpr_specialisation_and_the_in_memory_cache():
    k = ot.kernel(scale.fn)
    k.ir(F32_1, F32_1, 2.0, BLOCK=256)
    k.ir(F32_1, F32_1, 3.5, BLOCK=256)  # another value, the same signature
    assert k.stats["specialized"] == 1
    ir512 = k.ir(F32_1, F32_1, 2.0, BLOCK=512)
    assert k.stats["specialized"] == 2 and "tile<512 x f32>" in ir512
    k.ir(F32_1, F32_1, 2, BLOCK=512)  # an int scalar is another signature
    k.ir(ot.TensorSpec(ot.bfloat16, 1), F32_1, 2.0, BLOCK=512)  # and so is another element type
    assert k.stats["specialized"] == 4
    assert "const {value=512} : i32" in ir512  # the constexpr folded into the offsets


def test_the_module_cache_through_python(tmp_path):
    text = ("module @m\n\nkernel @k(%x: slice<mut f32>) {\n^0:\n  %0 = const {value=0} : i64\n"
            "  %p = offset %x, %0 {elem=f32} : ptr.global\n  %v = const {value=2} : f32\n"
            "  store %v, %p {align=4, volatile=0}\n  ret\n}\n")
    ptx1, hit1 = oxide.Context().parse(text).compile_cached(cache_dir=str(tmp_path), target="sm_90a")
    ptx2, hit2 = oxide.Context().parse(text).compile_cached(cache_dir=str(tmp_path), target="sm_90a")
    _, hit3 = oxide.Context().parse(text).compile_cached(cache_dir=str(tmp_path), target="sm_80")
    assert (hit1, hit2, hit3) == (False, True, False)
    assert ptx1 == ptx2 and ".entry k" in ptx1
    assert len(list(tmp_path.glob("*.ptx"))) == 2


def test_kernel_compile_goes_through_the_cache(tmp_path):
    k = ot.kernel(cache_dir=str(tmp_path))(scale.fn)
    try:
        k.compile(F32_1, F32_1, 2.0, BLOCK=256)
    except oxide.UnsupportedError as e:
        pytest.skip(f"tile kernels are not lowered to PTX in this build: {e}")
    k2 = ot.kernel(cache_dir=str(tmp_path))(scale.fn)
    k2.compile(F32_1, F32_1, 2.0, BLOCK=256)
    k2.compile(F32_1, F32_1, 2.0, BLOCK=256)
    assert (k.stats["compiled"], k2.stats["compiled"], k2.stats["cache_hits"]) == (1, 0, 1)
    k2.compile(F32_1, F32_1, 2.0, BLOCK=512)
    assert k2.stats["compiled"] == 1


# ---- errors name the user's file and line ----

def err_while(x):
    i = 0
    while i < 3:  # ERR-while
        i += 1


def err_shape(x, y):
    a = ot.load(x, (0,), (16,))
    b = ot.load(x, (0,), (32,))
    ot.store(y, (0,), a + b)  # ERR-shape


def err_unassigned(x, y):
    ot.store(y, (0,), t)  # ERR-unassigned
    t = ot.load(x, (0,), (16,))


def err_runtime_shape(x, y, n):
    t = ot.load(x, (0,), (n,))  # ERR-runtime-shape
    ot.store(y, (0,), t)


def err_verifier(x, y):
    a = ot.load(x, (0, 0), (32, 32))
    acc = ot.dot(a, a)  # ERR-verifier
    ot.store(y, (0, 0), acc)


def err_one_branch(x, y, n):
    if n > 0:
        t = ot.load(x, (0,), (16,))
    ot.store(y, (0,), t)  # ERR-one-branch


def err_after_loop(x, y, n):
    for i in range(0, n, 16):
        t = ot.load(x, (i,), (16,))
    ot.store(y, (0,), t)  # ERR-after-loop


def err_loop_type(x, y, n):
    acc = 0.0
    for i in range(0, n, 16):  # ERR-loop-type
        acc = acc + ot.load(x, (i,), (16,))
    ot.store(y, (0,), acc)


def err_fp8_target(a, c):
    t = ot.load(a, (0, 0), (32, 32))
    ot.store(c, (0, 0), ot.dot(t, t))  # ERR-fp8-target


def err_pow2(x, y):
    t = ot.load(x, (0,), (48,))  # ERR-pow2
    ot.store(y, (0,), t)


@pytest.mark.parametrize("fn, args, marker, message", [
    (err_while, (F32_1,), "ERR-while", "'while' loops are not supported"),
    (err_shape, (F32_1, F32_1), "ERR-shape", "shapes [16] and [32] do not match"),
    (err_unassigned, (F32_1, F32_1), "ERR-unassigned", "'t' is used before it is assigned"),
    (err_runtime_shape, (F32_1, F32_1, 5), "ERR-runtime-shape", "must be a compile-time integer"),
    (err_verifier, (F32, F32), "ERR-verifier", "tile.dot multiplies bf16 x bf16"),
    (err_one_branch, (F32_1, F32_1, 1), "ERR-one-branch", "'t' is assigned on only one side of the if"),
    (err_after_loop, (F32_1, F32_1, 1), "ERR-after-loop", "'t' is assigned only inside the loop"),
    (err_loop_type, (F32_1, F32_1, 1), "ERR-loop-type", "'acc' is tile<16 x f32> here but f32"),
    (err_pow2, (F32_1, F32_1), "ERR-pow2", "every dim must be a power of two"),
])
def test_errors_point_at_the_python_line(fn, args, marker, message):
    k = ot.kernel(fn)
    with pytest.raises(ot.CompileError) as e:
        k.ir(*args)
    assert e.value.filename == __file__
    assert e.value.lineno == line_of(marker), str(e.value)
    assert message in str(e.value), str(e.value)
    assert f"# {marker}" in str(e.value)  # the source line is quoted


def test_verifier_errors_for_the_target_point_at_the_python_line():
    k = ot.kernel(target="sm_80")(err_fp8_target)
    with pytest.raises(ot.CompileError) as e:
        k.ir(ot.TensorSpec(ot.float8_e4m3, 2), F32)
    assert e.value.lineno == line_of("ERR-fp8-target")
    assert "fp8 tile.dot needs sm_89 or newer; the target is sm_80" in str(e.value)
    assert e.value.ir_error.startswith("verify: tile_kernel @err_fp8_target")
    ot.kernel(target="sm_90a")(err_fp8_target).ir(ot.TensorSpec(ot.float8_e4m3, 2), F32)


def test_misuse_outside_the_compiler():
    with pytest.raises(RuntimeError, match="compiled, not run"):
        ot.load(None, (0,), (16,))
    with pytest.raises(TypeError, match="launch it with scale\\[grid\\]"):
        scale(1, 2, 3, 4)
    with pytest.raises(TypeError, match="argument x is a str"):
        scale.ir("x", F32_1, 1.0, BLOCK=16)
    with pytest.raises(TypeError, match="unknown option 'threads'"):
        ot.kernel(threads=128)(scale.fn)
    assert ot.cdiv(10, 4) == 3


# ---- the interpreter against NumPy (random, ragged shapes) ----

interp = pytest.mark.skipif(not hasattr(oxide, "interpret"),
                            reason="oxide.interpret (the tile interpreter) is not in this build")


@interp
def test_interpret_matmul():
    pytest.importorskip("ml_dtypes")
    import tile_matmul
    tile_matmul.interp(np)


@interp
def test_interpret_softmax():
    import tile_softmax
    tile_softmax.interp(np)


@interp
def test_interpret_layernorm():
    pytest.importorskip("ml_dtypes")
    import tile_layernorm
    tile_layernorm.interp(np)


@interp
def test_interpret_column_sum():
    import tile_column_sum
    tile_column_sum.interp(np)


# ---- a launch (the fake driver in CI, a GPU elsewhere): the block comes from the manifest ----


@ot.kernel(warps=2)
def add_rows(x, y, z, B: ot.constexpr):
    o = ot.program_id(0) * B
    ot.store(z, (o,), ot.load(x, (o,), (B,)) + ot.load(y, (o,), (B,)))


def test_launch_takes_the_compilers_block(device):
    a, b, c = (oxide.DeviceArray.zeros(100, device=device) for _ in range(3))
    add_rows[(ot.cdiv(100, 64),)](a, b, c, B=64)
    device.synchronize()
    info = add_rows.specialize(a, b, c, B=64)
    assert "hints(warps=2)" in info.module.print()


class _Cai:
    """A device array as the CUDA array interface describes it (shape, typestr, data, strides)."""

    def __init__(self, shape, itemsize, base, strides=None):
        self.shape = shape
        self.__cuda_array_interface__ = {"shape": shape, "typestr": f"<f{itemsize}", "data": (base, False),
                                         "strides": strides, "version": 3}


def test_tma_ready_is_the_runtimes_rule():
    from oxide.tile._kernel import _tma_ready
    assert _tma_ready(_Cai((64, 128), 2, 0x10000))                                # C-contiguous bf16
    assert not _tma_ready(_Cai((64, 128), 2, 0x10002))                            # an offset view
    assert not _tma_ready(_Cai((64, 100), 2, 0x10000))                            # a 200-byte pitch
    assert _tma_ready(_Cai((64, 100), 2, 0x10000, strides=(256, 2)))             # padded to 256 bytes
    assert not _tma_ready(_Cai((64, 128), 2, 0x10000, strides=(2, 128)))         # column-major
    assert not _tma_ready(_Cai((0, 128), 2, 0x10000))                             # empty
    assert not _tma_ready(np.zeros((4, 8), np.float32))                           # host memory


def test_one_tile_variant_compiles_half(tmp_path):
    """A matmul whose operand loads copy through TMA on sm_90a: built twice by default, once
    when the caller names the variant (the launch path does, from its tensors)."""
    mod = matmul.specialize(BF16, BF16, BF16, BM=128, BN=128, BK=64).module
    try:
        both = mod.compile(target="sm_90a")
    except oxide.UnsupportedError as e:
        pytest.skip(f"tile kernels are not lowered to PTX in this build: {e}")
    entries = lambda ptx: re.findall(r"\.entry (\w+)\(", ptx)  # noqa: E731
    assert entries(both) == ["matmul", "matmul__tma"]
    plain, tma = mod.compile(target="sm_90a", tile_variants="plain"), mod.compile(target="sm_90a", tile_variants="tma")
    manifest = lambda ptx: ptx.split("// oxide.manifest.v1 ")[1].splitlines()[0]  # noqa: E731
    assert entries(plain) == ["matmul"] and "cp.async.bulk.tensor" not in plain and "tma" not in manifest(plain)
    assert entries(tma) == ["matmul"] and "cp.async.bulk.tensor" in tma
    assert '"tma_only":true' in manifest(tma) and '"tma_entry"' not in manifest(tma)
    keys = {mod.cache_key(target="sm_90a", tile_variants=v) for v in ("all", "plain", "tma")}
    assert len(keys) == 3
    with pytest.raises(ValueError, match="'all', 'plain' or 'tma'"):
        oxide.Options(tile_variants="both")
