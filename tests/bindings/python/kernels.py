"""Kernels the tests build through the Python IR builder (so the suite needs no prebuilt PTX)."""
import oxide


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
    """y[i] = a * x[i] + y[i] (a: f32 scalar, n: u64 scalar bound)."""
    m = ctx.create_module("saxpy")
    k = m.add_kernel("saxpy")
    a = k.scalar_param("a", "f32")
    x, _ = k.slice_param("x", "f32")
    y, _ = k.slice_param("y", "f32", mut=True)
    n = k.scalar_param("n", "u64")
    entry, body, done = k.block(), k.block(), k.block()
    i = entry.global_id_x()
    entry.cond_br(entry.icmp(i, n, pred="ult"), body, done)
    py = body.offset(y, i, elem="f32")
    xv = body.load(body.offset(x, i, elem="f32"), "f32", align=4)
    body.store(body.fma(a, xv, body.load(py, "f32", align=4)), py, align=4)
    body.br(done)
    done.ret()
    return m


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
