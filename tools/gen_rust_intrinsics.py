#!/usr/bin/env python3
"""Generate the Rust device intrinsics from lib/ops.def (DESIGN.md sections 3 and 7).

Writes two checked-in files:
  rustc-plugin/cuda-device/src/intrinsics.rs  host stubs: `extern "C"` functions, never inlined,
      whose bodies are opaque to the host optimiser, so each use stays a visible call in the
      bitcode that rustc emits;
  lib/rust_intrinsics.inc                      the device bodies (LLVM IR text, a C string) that
      lib/import.c links in place of the host stubs.
`gen_rust_intrinsics.py --check` exits 1 when either file is out of date.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r'^OP\((\w+),\s*"([^"]*)",\s*"([^"]*)",\s*"([^"]*)",\s*([^,]+),\s*(\d+),\s*(\w+),\s*"((?:[^"\\]|\\.)*)"\)')
RS = ROOT / "rustc-plugin/cuda-device/src/intrinsics.rs"
INC = ROOT / "lib/rust_intrinsics.inc"

# Rust type -> (LLVM type, x86 asm register class for the opaque host stub)
TY = {"u32": ("i32", "reg"), "i32": ("i32", "reg"), "u64": ("i64", "reg"), "i64": ("i64", "reg"),
      "f32": ("float", "xmm_reg"), "f64": ("double", "xmm_reg"), "bool": ("i1", "reg_byte"),
      "*mut u8": ("ptr", "reg"), "*const u8": ("ptr", "reg")}


def rows():
    out = []
    for line in (ROOT / "lib/ops.def").read_text().splitlines():
        m = ROW.match(line)
        if m:
            out.append(dict(id=m[1], name=m[2], operands=m[3], result=m[4], sm=int(m[6]), lower=m[7], tmpl=m[8]))
    return {r["name"]: r for r in out}


class Gen:
    def __init__(self):
        self.rs, self.ir, self.names = [], [], set()

    def add(self, name, params, ret, body, doc, sm=80, convergent=False):
        """params: [(rust_name, rust_type)], ret: rust type or None, body: LLVM IR lines using %a0.."""
        assert name not in self.names, name
        self.names.add(name)
        args = ", ".join(f"{p}: {t}" for p, t in params)
        ins = "".join(f", in({TY[t][1]}) {p}" + (" as u8" if t == "bool" else "") for p, t in params)
        # the name in the template keeps the host optimiser from merging identical stubs
        uses = name + " " + " ".join("{%d}" % i for i in range(len(params) + (1 if ret else 0)))
        if ret:
            reg = TY[ret][1]
            if ret == "bool":
                stub = (f"    let r: u8;\n    unsafe {{ core::arch::asm!(\"/* {uses} */\", out({reg}) r{ins}, options(nostack)) }}\n"
                        f"    r != 0")
            else:
                stub = (f"    let r: {ret};\n    unsafe {{ core::arch::asm!(\"/* {uses} */\", out({reg}) r{ins}, options(nostack)) }}\n    r")
            sig = f"pub extern \"C\" fn {name}({args}) -> {ret}"
        else:
            stub = f"    unsafe {{ core::arch::asm!(\"/* {uses} */\"{ins}, options(nostack)) }}"
            sig = f"pub extern \"C\" fn {name}({args})"
        self.rs.append(f"/// {doc} (sm_{sm}+)\n#[inline(never)]\n#[no_mangle]\n{sig} {{\n{stub}\n}}\n")
        lret = TY[ret][0] if ret else "void"
        largs = ", ".join(f"{TY[t][0]}{' zeroext' if t == 'bool' else ''} %a{i}" for i, (_, t) in enumerate(params))
        zret = " zeroext" if ret == "bool" else ""
        conv = " convergent" if convergent else ""
        if convergent:  # the call sites inside too (inline asm calls carry their own attributes)
            body = [b + " convergent" if "asm sideeffect" in b else b for b in body]
        self.ir.append(f"define{zret} {lret} @{name}({largs}) alwaysinline{conv} {{\n" + "\n".join("  " + b for b in body) + "\n}")


def asm_call(ret, tmpl, cons, args):
    t = tmpl.replace("$", "$")
    argl = ", ".join(args)
    if ret == "void":
        return f'call void asm sideeffect "{t}", "{cons}"({argl})'
    return f'call {ret} asm sideeffect "{t}", "{cons}"({argl})'


def generate():
    ops = rows()
    g = Gen()
    # ---- special registers: every id row that reads an sreg ----
    for r in ops.values():
        if r["lower"] == "L_INTR" and r["tmpl"].startswith("llvm.nvvm.read.ptx.sreg."):
            nm = "__oxide_" + r["name"].replace(".", "_")
            g.add(nm, [], "u32", [f"%r = call i32 @{r['tmpl']}()", "ret i32 %r"], f"`{r['name']}` special register", r["sm"])
    # ---- barriers and fences ----
    b = ops["barrier"]
    # barrier.sync 0 through the NVVM intrinsic (convergent). Not the .aligned form (bar.sync):
    # the host optimiser may have duplicated the call into divergent branches
    g.add("__oxide_barrier", [], None, ["call void @llvm.nvvm.barrier.cta.sync.all(i32 0)", "ret void"],
          "`barrier` 0 (bar.sync 0): every thread of the block waits", convergent=True)
    bc = ops["barrier.count"]
    g.add("__oxide_barrier_named", [("id", "u32"), ("count", "u32")], None,
          [asm_call("void", "barrier.sync $0, $1;", "r,r,~{memory}", ["i32 %a0", "i32 %a1"]), "ret void"],
          "`barrier.count`: named barrier id with a thread count", convergent=True)
    fence = ops["fence"]
    for sc_rs, sc_ptx in (("cta", "cta"), ("cluster", "cluster"), ("gpu", "gpu"), ("sys", "sys")):
        for o_rs, o_ptx in (("sc", "sc"), ("acq_rel", "acq_rel")):
            t = fence["tmpl"].replace("$O", o_ptx).replace("$S", sc_ptx)
            g.add(f"__oxide_fence_{o_rs}_{sc_rs}", [], None, [asm_call("void", t, "~{memory}", []), "ret void"],
                  f"`fence` {o_ptx} at {sc_ptx} scope", 90 if sc_rs == "cluster" else 80)
    for n in ("cluster.sync", "cluster.arrive", "cluster.wait"):
        r = ops[n]
        g.add("__oxide_" + n.replace(".", "_"), [], None, [asm_call("void", r["tmpl"], "~{memory}", []), "ret void"],
              f"`{n}`", r["sm"], convergent=True)
    # ---- warp ----
    for n in ("shfl.idx", "shfl.up", "shfl.down", "shfl.xor"):
        r = ops[n]
        c = "0" if n == "shfl.up" else "31"
        for rt, lt, suf in (("u32", "i32", "i32"), ("f32", "float", "f32")):
            g.add(f"__oxide_{n.replace('.', '_')}_{rt}", [("mask", "u32"), ("v", rt), ("lane", "u32")], rt,
                  [f"%r = call {lt} @{r['tmpl']}.{suf}(i32 %a0, {lt} %a1, i32 %a2, i32 {c})", f"ret {lt} %r"],
                  f"`{n}` of a {rt} across the warp", r["sm"], convergent=True)
    for n, rt in (("vote.all", "bool"), ("vote.any", "bool"), ("vote.ballot", "u32")):
        r = ops[n]
        lt = "i1" if rt == "bool" else "i32"
        g.add("__oxide_" + n.replace(".", "_"), [("mask", "u32"), ("pred", "bool")], rt,
              [f"%r = call {lt} @{r['tmpl']}(i32 %a0, i1 %a1)", f"ret {lt} %r"], f"`{n}`", r["sm"], convergent=True)
    r = ops["match.any"]
    g.add("__oxide_match_any_u32", [("mask", "u32"), ("v", "u32")], "u32",
          [f"%r = call i32 @{r['tmpl']}.i32(i32 %a0, i32 %a1)", "ret i32 %r"], "`match.any` of a u32", r["sm"], convergent=True)
    r = ops["activemask"]
    g.add("__oxide_activemask", [], "u32", ["%r = " + asm_call("i32", r["tmpl"], "=r", []), "ret i32 %r"], "`activemask`", convergent=True)
    for n in ("redux.add", "redux.min", "redux.max", "redux.umin", "redux.umax", "redux.and", "redux.or", "redux.xor"):
        r = ops[n]
        t = r["tmpl"].replace("$I", "$2")
        g.add("__oxide_" + n.replace(".", "_"), [("mask", "u32"), ("v", "u32")], "u32",
              ["%r = " + asm_call("i32", t, "=r,r,r", ["i32 %a1", "i32 %a0"]), "ret i32 %r"], f"`{n}` (sm_80+)", 80, convergent=True)
    # ---- cluster: distributed shared memory ----
    r = ops["cluster.map_shared"]
    g.add("__oxide_cluster_map_shared", [("p", "*mut u8"), ("rank", "u32")], "*mut u8",
          [f"%r = call ptr @{r['tmpl']}(ptr %a0, i32 %a1)", "ret ptr %r"], "`cluster.map_shared`: the same shared variable in block `rank` of the cluster", r["sm"])
    # ---- math: fast approximations (PTX); exact math comes from the Rust float methods ----
    for n in ("sin.approx", "cos.approx", "exp2.approx", "log2.approx", "rsqrt.approx", "rcp.approx", "tanh.approx"):
        r = ops[n]
        g.add("__oxide_" + n.replace(".", "_") + "_f32", [("x", "f32")], "f32",
              ["%r = " + asm_call("float", r["tmpl"], "=f,f", ["float %a0"]), "ret float %r"], f"`{n}` of an f32",
              75 if n == "tanh.approx" else 80)
    for n, rt, lt in (("rsqrt", "f32", "float"), ("rsqrt", "f64", "double")):
        r = ops[n]
        fn = r["tmpl"] + ("f" if rt == "f32" else "")
        g.add(f"__oxide_rsqrt_{rt}", [("x", rt)], rt, [f"%r = call {lt} @{fn}({lt} %a0)", f"ret {lt} %r"], f"`rsqrt` of an {rt} (libdevice)")
    # ---- atomics with a scope (LLVM atomicrmw/cmpxchg with the scope as syncscope) ----
    scopes = (("cta", "block"), ("cluster", "cluster"), ("gpu", "device"), ("sys", ""))
    kinds = [("u32", "i32"), ("i32", "i32"), ("u64", "i64"), ("i64", "i64"), ("f32", "float"), ("f64", "double")]
    rmw = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "exch": "xchg", "min": None, "max": None}
    for sc, ss in scopes:
        sync = f' syncscope("{ss}")' if ss else ""
        for rt, lt in kinds:
            isf = rt.startswith("f")
            for op in ("add", "sub", "and", "or", "xor", "exch", "min", "max"):
                if isf and op not in ("add", "exch"):
                    continue
                llop = rmw[op] or (("umin" if rt.startswith("u") else "min") if op == "min" else ("umax" if rt.startswith("u") else "max"))
                if isf and op == "add":
                    llop = "fadd"
                g.add(f"__oxide_atomic_{op}_{rt}_{sc}", [("p", "*mut u8"), ("v", rt)], rt,
                      [f"%r = atomicrmw {llop} ptr %a0, {lt} %a1{sync} monotonic", f"ret {lt} %r"],
                      f"`atomic.{op}` of an {rt} at {sc} scope, relaxed", 90 if sc == "cluster" else 80)
            if not isf:
                g.add(f"__oxide_atomic_cas_{rt}_{sc}", [("p", "*mut u8"), ("cmp", rt), ("new", rt)], rt,
                      [f"%p = cmpxchg ptr %a0, {lt} %a1, {lt} %a2{sync} monotonic monotonic", f"%r = extractvalue {{ {lt}, i1 }} %p, 0", f"ret {lt} %r"],
                      f"`atomic.cas` of an {rt} at {sc} scope, relaxed", 90 if sc == "cluster" else 80)
            g.add(f"__oxide_atomic_load_{rt}_{sc}", [("p", "*mut u8")], rt,
                  [f"%r = load atomic {lt}, ptr %a0{sync} monotonic, align {4 if lt in ('i32', 'float') else 8}", f"ret {lt} %r"],
                  f"`atomic.load` of an {rt} at {sc} scope, relaxed", 90 if sc == "cluster" else 80)
            g.add(f"__oxide_atomic_store_{rt}_{sc}", [("p", "*mut u8"), ("v", rt)], None,
                  [f"store atomic {lt} %a1, ptr %a0{sync} monotonic, align {4 if lt in ('i32', 'float') else 8}", "ret void"],
                  f"`atomic.store` of an {rt} at {sc} scope, relaxed", 90 if sc == "cluster" else 80)
    # ---- debug and memory ----
    g.add("__oxide_vprintf", [("fmt", "*const u8"), ("args", "*const u8")], "i32",
          ["%r = call i32 @vprintf(ptr %a0, ptr %a1)", "ret i32 %r"], "`printf`: CUDA's vprintf(format, packed arguments)")
    g.add("__oxide_trap", [], None, ["call void @llvm.trap()", "unreachable"], "`trap`: abort the kernel")
    g.add("__oxide_dyn_smem", [], "*mut u8",
          ["%r = addrspacecast ptr addrspace(3) @__oxide_dyn_smem_base to ptr", "ret ptr %r"], "`dyn_smem`: base of the dynamic shared memory")
    g.add("__oxide_kernel_tag", [("desc", "*const u8")], None, ["ret void"],
          "marks a `#[kernel]` entry and points at its descriptor; removed by the importer")
    return g


def outputs(g):
    rs = ("// @generated by tools/gen_rust_intrinsics.py from lib/ops.def -- do not edit.\n"
          "//! Device intrinsics. On the host these are opaque stubs that are never inlined, so every use\n"
          "//! stays a visible call in rustc's bitcode; liboxide's importer replaces each one with its\n"
          "//! device body (lib/rust_intrinsics.inc). Calling them on the host is meaningless.\n"
          "#![allow(clippy::missing_safety_doc, unused_variables, asm_sub_register)]\n\n" + "\n".join(g.rs))
    ir = ("declare void @llvm.trap()\ndeclare i32 @vprintf(ptr, ptr)\ndeclare float @__nv_rsqrtf(float)\ndeclare double @__nv_rsqrt(double)\n"
          "@__oxide_dyn_smem_base = external addrspace(3) global [0 x i8], align 16\n\n" + "\n\n".join(g.ir) + "\n")
    inc = ("/* @generated by tools/gen_rust_intrinsics.py from lib/ops.def -- do not edit.\n"
           " * Device bodies of the Rust intrinsic stubs (rustc-plugin/cuda-device/src/intrinsics.rs). */\n"
           "static const char oxide__rust_intrinsics_ir[] =\n")
    for line in ir.splitlines():
        inc += '    "' + line.replace("\\", "\\\\").replace('"', '\\"') + '\\n"\n'
    inc += "    ;\n"
    return {RS: rs, INC: inc}


def main():
    outs = outputs(generate())
    if "--check" in sys.argv:
        bad = [str(p.relative_to(ROOT)) for p, t in outs.items() if not p.exists() or p.read_text() != t]
        if bad:
            print("out of date (run tools/gen_rust_intrinsics.py):", " ".join(bad))
            return 1
        return 0
    for p, t in outs.items():
        p.write_text(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
