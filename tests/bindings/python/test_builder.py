"""The IR builder, text form, verifier and compiler through Python (CPU only)."""
import re
import subprocess
import sys

import pytest

import oxide
from oxide import _ops
import kernels


def new_kernel(module, kernel="k"):
    """A new module in a fresh context, and a kernel added to it (the module keeps the context)."""
    m = oxide.Context().create_module(module)
    return m, m.add_kernel(kernel)


def test_version():
    assert oxide.version() == "0.1.0"
    assert oxide.status_name(0) == "OXIDE_OK"


def test_ops_table_matches_the_library():
    assert len(_ops.OP_NAMES) == oxide._lib.OXIDE_OP_COUNT_
    for i, name in enumerate(_ops.OP_NAMES):
        assert oxide._ffi.string(oxide._lib.oxide_op_name(i)).decode() == name


def test_generated_ops_are_up_to_date(root):
    gen = root / "tools" / "gen_python_ops.py"
    if not gen.exists():
        pytest.skip("not in a checkout")
    r = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_op_has_a_method():
    for name in _ops.OP_NAMES:
        if name in ("br", "cond_br", "switch"):
            assert hasattr(oxide.Block, name)
            continue
        m = name.replace(".", "_")
        assert hasattr(oxide.Block, m) or hasattr(oxide.Block, m + "_"), name


def test_types_are_interned():
    ctx = oxide.Context()
    assert ctx.type("f32") is ctx.type("f32")
    assert ctx.type("ptr.global").name == "ptr.global"
    assert ctx.array("f32", 256).name == "array<256 x f32>"
    assert ctx.type("f32").is_float and not ctx.type("i32").is_float
    with pytest.raises(ValueError, match="unknown type"):
        ctx.type("f31")


def test_build_print_parse_roundtrip():
    ctx = oxide.Context()
    m = kernels.vecadd(ctx)
    text = m.print()
    assert "kernel @vecadd(%a: slice<f32>, %b: slice<f32>, %out: slice<mut f32>)" in text
    m2 = ctx.parse(text)
    assert m2.print() == text


def test_compile_gives_ptx_with_manifest():
    ctx = oxide.Context()
    ptx = kernels.vecadd(ctx).compile(target="sm_90a")
    assert ".target sm_90a" in ptx and ".entry vecadd" in ptx
    man = oxide.Manifest.from_ptx(ptx)
    assert man.target == "sm_90a"
    k = man["vecadd"]
    assert [p.name for p in k.params] == ["a", "b", "out"]
    assert [p.describe() for p in k.params] == ["slice<f32>", "slice<f32>", "slice<mut f32>"]
    assert k.signature() == "vecadd(a: slice<f32>, b: slice<f32>, out: slice<mut f32>)"


def test_compile_is_deterministic_and_takes_options():
    ctx = oxide.Context()
    m = kernels.saxpy(ctx)
    p1 = m.compile(target="sm_80")
    p2 = m.compile(oxide.Options(target="sm_80"))
    assert p1 == p2 and ".target sm_80" in p1
    assert "fma" in m.llvm_ir()
    assert oxide.Options(target="sm_86").target == "sm_86"


def test_every_interface_kind_reaches_the_manifest():
    man = oxide.Manifest.from_ptx(kernels.compiled(kernels.all_kinds))
    ps = {p.name: p for p in man["kinds"].params}
    assert (ps["n"].kind, ps["n"].type) == ("scalar", "u64")
    assert (ps["xs"].kind, ps["xs"].type, ps["xs"].mutable) == ("slice", "f32", False)
    assert (ps["ys"].kind, ps["ys"].type, ps["ys"].mutable) == ("slice", "i32", True)
    assert (ps["p"].kind, ps["p"].type, ps["p"].mutable) == ("ptr", "f64", True)
    assert (ps["captures"].kind, ps["captures"].size, ps["captures"].align) == ("bytes", 16, 8)
    assert ps["desc"].kind == "tma_desc"


def test_kernel_attributes_in_manifest():
    m, k = new_kernel("attrs")
    k.set_launch_bounds(256, 2)
    k.set_cluster(2, 1, 1)
    k.set_dyn_smem(1024)
    k.block().ret()
    info = oxide.Manifest.from_ptx(m.compile(target="sm_90a"))["k"]
    assert info.launch_bounds == (256, 2) and info.cluster == (2, 1, 1) and info.dyn_smem == 1024


def test_block_params_and_loops():
    m, k = new_kernel("loop", "count")
    out = k.ptr_param("out", "i32", mut=True)
    entry = k.block()
    loop = k.block("i32", "i32")
    done = k.block("i32")
    i, acc = loop.params
    entry.br(loop, entry.i32(0), entry.i32(0))
    nxt = loop.add(i, loop.i32(1))
    acc2 = loop.add(acc, i)
    loop.cond_br(loop.icmp(nxt, loop.i32(10), pred="slt"), loop, done, (nxt, acc2), (acc2,))
    done.store(done.params[0], out, align=4)
    done.ret()
    m.verify()
    assert ".entry count" in m.compile(target="sm_90a")


def test_device_function_and_call():
    ctx = oxide.Context()
    m = ctx.create_module("calls")
    f = m.add_function("twice", "f32")
    x = f.param("x", "f32")
    b = f.block()
    b.ret(b.add(x, x))
    k = m.add_kernel("k")
    p = k.ptr_param("p", "f32", mut=True)
    e = k.block()
    v = e.call(e.load(p, "f32", align=4), type="f32", sym="twice")
    e.store(v, p, align=4)
    e.ret()
    assert "call" in m.print()
    m.compile(target="sm_90a")


def test_switch_and_atomics_and_shuffles():
    m, k = new_kernel("misc")
    p = k.ptr_param("p", "i32", mut=True)
    e, a, d = k.block(), k.block(), k.block()
    lane = e.laneid()
    e.switch(lane, d, {0: a})
    a.atomic_add(p, a.i32(1), scope="gpu", order="relaxed")
    v = a.shfl_xor(a.i32(5), a.i32(1))
    a.atomic_max(p, v, scope="cta")
    a.br(d)
    d.barrier()
    d.ret()
    ptx = m.compile(target="sm_90a")
    assert "atom" in ptx and "shfl" in ptx
    with pytest.raises(ValueError, match="unknown scope"):
        a2 = k.block()
        a2.atomic_add(p, a2.i32(1), scope="planet")


def test_globals_and_constants():
    ctx = oxide.Context()
    m = ctx.create_module("g")
    m.add_global("tile", ctx.array("f32", 256), "shared", align=16)
    m.add_global("lut", ctx.array("i32", 4), "constant", align=4, init=bytes(range(16)))
    k = m.add_kernel("k")
    out = k.ptr_param("out", "f32", mut=True)
    e = k.block()
    t = e.global_addr("ptr.shared", sym="tile")
    e.store(e.const("f32", 1.5), t, align=4)
    e.store(e.load(t, "f32", align=4), out, align=4)
    e.ret()
    text = m.print()
    assert "@tile" in text and "@lut" in text
    ptx = m.compile(target="sm_90a")
    assert ".shared" in ptx and ".const" in ptx


def test_type_mismatch_raises_with_status_and_message():
    m, k = new_kernel("bad")
    e = k.block()
    with pytest.raises(oxide.TypeMismatchError) as ei:
        e.add(e.i32(1), e.f32(1.0))
    err = ei.value
    assert err.status_name == "OXIDE_ERROR_TYPE_MISMATCH"
    assert err.status == 2
    assert "add" in err.message
    assert str(err).startswith("OXIDE_ERROR_TYPE_MISMATCH: ")
    assert isinstance(err, oxide.OxideError) and isinstance(err, TypeError)


def test_state_error_after_terminator():
    m, k = new_kernel("st")
    e = k.block()
    e.ret()
    with pytest.raises(oxide.StateError):
        e.ret()


def test_verify_error_names_the_problem():
    m, k = new_kernel("v")
    k.block()  # entry block without terminator
    with pytest.raises(oxide.VerifyError) as ei:
        m.verify()
    assert ei.value.message
    with pytest.raises(oxide.VerifyError):
        m.compile(target="sm_90a")


def test_sm_check_for_cluster_ops():
    m, k = new_kernel("c")
    e = k.block()
    e.cluster_sync()
    e.ret()
    with pytest.raises(oxide.OxideError) as ei:
        m.compile(target="sm_80")
    assert "cluster.sync" in ei.value.message or "sm_90" in ei.value.message
    m.compile(target="sm_90a")


def test_parse_error_has_position():
    ctx = oxide.Context()
    with pytest.raises(oxide.ParseError) as ei:
        ctx.parse("module @x\nkernel @k( {\n")
    assert re.search(r"\d+:\d+", ei.value.message)


def test_bad_target_is_invalid_argument():
    with pytest.raises(oxide.InvalidArgumentError) as ei:
        oxide.Options(target="sm_12")
    assert "sm_90a" in ei.value.message


def test_duplicate_kernel_name():
    ctx = oxide.Context()
    m = ctx.create_module("d")
    m.add_kernel("k")
    with pytest.raises(oxide.StateError):
        m.add_kernel("k")


def test_context_manager_and_destroyed_module():
    with oxide.Context() as ctx:
        m = ctx.create_module("x")
    with pytest.raises(ValueError, match="destroyed"):
        m.add_kernel("k")


def test_const_float_for_int_type_is_rejected():
    ctx = oxide.Context()
    m = ctx.create_module("c")
    e = m.add_kernel("k").block()
    with pytest.raises(TypeError):
        e.const("i32", 1.5)
    assert e.const("f32", 2).type.name == "f32"
