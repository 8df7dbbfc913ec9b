"""Kernels the tests build through the Python IR builder (so the suite needs no prebuilt PTX)."""
import sys
from pathlib import Path

import oxide

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "python"))
import builder_kernel  # noqa: E402  (the example's saxpy, written once)


def vecadd(ctx, name="vecadd", elem="f32"):
    """out[i] = a[i] + b[i] for i < min(len(a), len(b), len(out))."""
    m = ctx.create_module(name)
    k = m.add_kernel(name)
    a, alen = k.slice_param("a", elem)
    b, blen = k.slice_param("b", elem)
    out, olen = k.slice_param("out", elem, mut=True)
    entry, body, done = k.block(), k.block(), k.block()
    n = entry.umin(entry.umin(alen, blen), olen)
    i = entry.global_id_x()
    entry.cond_br(entry.icmp(i, n, pred="ult"), body, done)
    x = body.load(body.offset(a, i, elem=elem), elem, align=4)
    y = body.load(body.offset(b, i, elem=elem), elem, align=4)
    body.store(body.add(x, y), body.offset(out, i, elem=elem), align=4)
    body.br(done)
    done.ret()
    return m


def saxpy(ctx):
    """y[i] = a * x[i] + y[i] (a: f32 scalar, n: u64 scalar bound): examples/python/builder_kernel.py's."""
    return builder_kernel.build_saxpy(ctx)


def empty(ctx):
    m = ctx.create_module("empty")
    k = m.add_kernel("empty")
    k.block().ret()
    return m


def all_kinds(ctx):
    """A kernel with one parameter of every interface kind (its body does nothing)."""
    m = ctx.create_module("kinds")
    k = m.add_kernel("kinds")
    k.scalar_param("n", "u64")
    k.scalar_param("s", "f32")
    k.slice_param("xs", "f32")
    k.slice_param("ys", "i32", mut=True)
    k.ptr_param("p", "f64", mut=True)
    k.bytes_param("captures", 16, 8)
    k.tma_desc_param("desc")
    k.block().ret()
    return m


def compiled(builder, target="sm_90a"):
    ctx = oxide.Context()
    return builder(ctx).compile(target=target)
