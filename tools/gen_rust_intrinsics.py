#!/usr/bin/env python3
"""Generate the Rust device intrinsics from lib/ops.def (docs/design.md sections 3 and 7).

Writes two checked-in files:
  rustc-plugin/cuda-device/src/intrinsics.rs  host stubs: `extern "C"` functions, never inlined,
      whose bodies are opaque to the host optimiser, so each use stays a visible call in the
      bitcode that rustc emits;
  lib/rust_intrinsics.inc                      the device bodies (LLVM IR text, a C string) that
      lib/import.c links in place of the host stubs;
  lib/rust_intrinsic_targets.inc               the intrinsics that need more than sm_80, each
      with its lowest target, for the per-target check of lib/import_targets.c.
`gen_rust_intrinsics.py --check` exits 1 when either file is out of date.
"""
import sys

from oxide_tables import ROOT, emit, ops as table

RS = ROOT / "rustc-plugin/cuda-device/src/intrinsics.rs"
INC = ROOT / "lib/rust_intrinsics.inc"
TARGETS = ROOT / "lib/rust_intrinsic_targets.inc"

# Rust type -> (LLVM type, x86 asm register class for the opaque host stub)
TY = {"u32": ("i32", "reg"), "i32": ("i32", "reg"), "u64": ("i64", "reg"), "i64": ("i64", "reg"),
      "f32": ("float", "xmm_reg"), "f64": ("double", "xmm_reg"), "bool": ("i1", "reg_byte"),
      "*mut u8": ("ptr", "reg"), "*const u8": ("ptr", "reg")}


def rows():
    return {r["name"]: r for r in table()}


def rust_stub(name, params, ret, doc):
    """The host stub of one intrinsic: `extern "C"`, never inlined, its body an empty asm that
    reads the arguments and writes the result, so the host optimiser can neither see through it
    nor merge two of them. cuda-tile's stubs (tools/gen_rust_tile.py) are made the same way."""
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
    return f"/// {doc}\n#[inline(never)]\n#[no_mangle]\n{sig} {{\n{stub}\n}}\n"


class Gen:
    def __init__(self):
        self.rs, self.ir, self.names, self.sms = [], [], set(), []

    def add(self, name, params, ret, body, doc, sm=80, convergent=False):
        """params: [(rust_name, rust_type)], ret: rust type or None, body: LLVM IR lines using %a0.."""
        assert name not in self.names, name
        self.names.add(name)
        what = doc.split("`")[1] if doc.count("`") >= 2 else name
        self.sms.append((name, sm, what + (" at cluster scope" if "at cluster scope" in doc else "")))
        self.rs.append(rust_stub(name, params, ret, f"{doc} (sm_{sm}+)"))
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
    hopper(g, ops)
    # ---- debug and memory ----
    g.add("__oxide_vprintf", [("fmt", "*const u8"), ("args", "*const u8")], "i32",
          ["%r = call i32 @vprintf(ptr %a0, ptr %a1)", "ret i32 %r"], "`printf`: CUDA's vprintf(format, packed arguments)")
    g.add("__oxide_trap", [], None, ["call void @llvm.trap()", "unreachable"], "`trap`: abort the kernel")
    g.add("__oxide_dyn_smem", [], "*mut u8",
          ["%r = addrspacecast ptr addrspace(3) @__oxide_dyn_smem_base to ptr", "ret ptr %r"], "`dyn_smem`: base of the dynamic shared memory")
    g.add("__oxide_kernel_tag", [("desc", "*const u8")], None, ["ret void"],
          "marks a `#[kernel]` entry and points at its descriptor; removed by the importer")
    return g


def hopper(g, ops):
    """Tier-2 rows (ops.def's tail) for cuda_device::hopper: mbarrier, TMA, wgmma, setmaxnreg.
    Pointers arrive generic and are turned into shared-window addresses here; the PTX is written
    out (asm) because the Rust API passes accumulators through memory, which SROA then promotes
    to registers once these bodies are inlined."""
    smem = ["%s0 = addrspacecast ptr %a0 to ptr addrspace(3)", "%u0 = ptrtoint ptr addrspace(3) %s0 to i32"]

    def sh(i):  # the shared-window address of pointer argument i
        return [f"%s{i} = addrspacecast ptr %a{i} to ptr addrspace(3)", f"%u{i} = ptrtoint ptr addrspace(3) %s{i} to i32"]

    def doc(n, what):
        return f"`{n}`: {what}"

    g.add("__oxide_smem_addr", [("p", "*mut u8")], "u32", smem + ["ret i32 %u0"],
          "the shared-window address (cvta.to.shared) of a pointer to shared memory")
    r = ops["mbarrier.init"]
    g.add("__oxide_mbarrier_init", [("bar", "*mut u8"), ("count", "u32")], None,
          smem + [asm_call("void", "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", ["i32 %u0", "i32 %a1"]), "ret void"],
          doc(r["name"], "a shared u64 barrier expecting `count` arrivals a phase"), r["sm"])
    r = ops["mbarrier.arrive"]
    g.add("__oxide_mbarrier_arrive", [("bar", "*mut u8")], "u64",
          smem + ["%r = " + asm_call("i64", "mbarrier.arrive.shared::cta.b64 $0, [$1];", "=l,r,~{memory}", ["i32 %u0"]), "ret i64 %r"],
          doc(r["name"], "one arrival (release, CTA scope); returns the phase state"), r["sm"])
    r = ops["mbarrier.arrive.expect_tx"]
    g.add("__oxide_mbarrier_arrive_expect_tx", [("bar", "*mut u8"), ("tx", "u32")], "u64",
          smem + ["%r = " + asm_call("i64", "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;", "=l,r,r,~{memory}",
                                     ["i32 %u0", "i32 %a1"]), "ret i64 %r"],
          doc(r["name"], "one arrival that also expects `tx` bytes of asynchronous copies"), r["sm"])
    r = ops["mbarrier.expect_tx"]
    g.add("__oxide_mbarrier_expect_tx", [("bar", "*mut u8"), ("tx", "u32")], None,
          smem + [asm_call("void", "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "r,r,~{memory}",
                           ["i32 %u0", "i32 %a1"]), "ret void"],
          doc(r["name"], "expect `tx` more bytes in the current phase"), r["sm"])
    r = ops["mbarrier.try_wait.parity"]
    g.add("__oxide_mbarrier_try_wait_parity", [("bar", "*mut u8"), ("parity", "u32")], "bool",
          smem + ["%w = " + asm_call("i32", "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                                     "=r,r,r,~{memory}", ["i32 %u0", "i32 %a1"]), "%r = icmp ne i32 %w, 0", "ret i1 %r"],
          doc(r["name"], "true once the phase of this parity has completed (acquire, CTA scope)"), r["sm"])
    r = ops["mbarrier.inval"]
    g.add("__oxide_mbarrier_inval", [("bar", "*mut u8")], None,
          smem + [asm_call("void", "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", ["i32 %u0"]), "ret void"],
          doc(r["name"], "invalidate a barrier before its memory is reused"), r["sm"])
    for n, t in (("fence.proxy.async", "fence.proxy.async.shared::cta;"), ("fence.mbarrier_init", "fence.mbarrier_init.release.cluster;")):
        r = ops[n]
        g.add("__oxide_" + n.replace(".", "_"), [], None, [asm_call("void", t, "~{memory}", []), "ret void"],
              doc(n, "order generic-proxy shared-memory writes before async-proxy reads" if n == "fence.proxy.async"
                  else "make barrier initialisation visible to the async proxy and the cluster"), r["sm"])
    r = ops["elect.sync"]
    g.add("__oxide_elect_sync", [], "bool",
          ["%w = " + asm_call("i32", "{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 $0, 1, 0, p; }", "=r", []),
           "%r = icmp ne i32 %w, 0", "ret i1 %r"],
          doc("elect.sync", "true in exactly one lane of the full warp"), r["sm"], convergent=True)
    for n, counts in (("setmaxnreg.inc", (160, 168, 184, 200, 216, 232, 240)), ("setmaxnreg.dec", (24, 32, 40, 56, 64, 80, 96))):
        r = ops[n]
        for c in counts:
            g.add(f"__oxide_{n.replace('.', '_')}_{c}", [], None,
                  [asm_call("void", f"{n}.sync.aligned.u32 {c};", "~{memory}", []), "ret void"],
                  doc(n, f"this warpgroup's register count to {c}"), 901, convergent=True)
    r = ops["tma.load"]
    for d in (2, 3):
        cs = [("c%d" % i, "i32") for i in range(d)]
        crd = ", ".join("$%d" % (2 + i) for i in range(d))
        g.add(f"__oxide_tma_load_{d}d", [("dst", "*mut u8"), ("desc", "*const u8")] + cs + [("bar", "*mut u8")], None,
              sh(0) + sh(2 + d) + [asm_call("void", f"cp.async.bulk.tensor.{d}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {{{crd}}}], [${2 + d}];",
                                            "r,l," + "r," * d + "r,~{memory}",
                                            ["i32 %u0", "ptr %a1"] + [f"i32 %a{2 + i}" for i in range(d)] + [f"i32 %u{2 + d}"]), "ret void"],
              doc(r["name"], f"{d}D tile of the tensor `desc` at the coordinates into shared `dst`, completing on mbarrier `bar`"), r["sm"])
    r = ops["tma.store"]
    for d in (2, 3):
        cs = [("c%d" % i, "i32") for i in range(d)]
        crd = ", ".join("$%d" % (2 + i) for i in range(d))
        g.add(f"__oxide_tma_store_{d}d", [("desc", "*const u8"), ("src", "*mut u8")] + cs, None,
              sh(1) + [asm_call("void", f"cp.async.bulk.tensor.{d}d.global.shared::cta.tile.bulk_group [$0, {{{crd}}}], [$1];",
                                "l,r," + ",".join("r" * d) + ",~{memory}", ["ptr %a0", "i32 %u1"] + [f"i32 %a{2 + i}" for i in range(d)]), "ret void"],
              doc(r["name"], f"{d}D tile from shared `src` to the tensor `desc` (a bulk group)"), r["sm"])
    for n, t in (("cp.async.bulk.commit_group", "cp.async.bulk.commit_group;"), ("cp.async.bulk.wait_group", "cp.async.bulk.wait_group 0;"),
                 ("cp.async.bulk.wait_group.read", "cp.async.bulk.wait_group.read 0;")):
        r = ops[n]
        nm = "__oxide_" + n.replace("cp.async.", "").replace(".", "_") + ("" if n.endswith("commit_group") else "_0")
        g.add(nm, [], None, [asm_call("void", t, "~{memory}", []), "ret void"], doc(n, t), r["sm"])
    r = ops["tma.prefetch_desc"]
    g.add("__oxide_tma_prefetch_desc", [("desc", "*const u8")], None,
          [asm_call("void", "prefetch.tensormap [$0];", "l,~{memory}", ["ptr %a0"]), "ret void"], doc(r["name"], "prefetch a descriptor"), r["sm"])
    g.add("__oxide_cvt_bf16x2_f32", [("lo", "f32"), ("hi", "f32")], "u32",
          ["%r = " + asm_call("i32", "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f", ["float %a1", "float %a0"]), "ret i32 %r"],
          "`cvt.rn.bf16x2.f32`: two f32 to two bf16 (round to nearest even), `lo` in the low half", 80)
    for n in ("wgmma.fence", "wgmma.commit_group"):
        r = ops[n]
        g.add("__oxide_" + n.replace(".", "_"), [], None, [asm_call("void", n + ".sync.aligned;", "~{memory}", []), "ret void"],
              doc(n, "warpgroup-wide"), 901, convergent=True)
    # accumulators travel through memory (acc points to N/2 f32s): every wgmma and the waits read
    # and write them all, so the register values are tied to the asynchronous operations
    for nn in (64, 128, 256):
        k = nn // 2
        loads = [f"%p{i} = getelementptr inbounds float, ptr %a0, i32 {i}\n  %v{i} = load float, ptr %p{i}, align 4" for i in range(k)]
        loads = [l for x in loads for l in x.split("\n  ")]
        stores = [f"%o{i} = extractvalue {{{', '.join(['float'] * k)}}} %s, {i}" for i in range(k)] + \
                 [f"store float %o{i}, ptr %p{i}, align 4" for i in range(k)]
        st = "{" + ", ".join(["float"] * k) + "}"
        outs = ",".join(["=f"] * k)
        ties = "".join(f",{i}" for i in range(k))
        regs = ", ".join(f"${i}" for i in range(k))
        vals = [f"float %v{i}" for i in range(k)]
        for w in (0, 1, 2):
            g.add(f"__oxide_wgmma_wait_{w}_acc{k}", [("acc", "*mut u8")], None,
                  loads + [f"%s = call {st} asm sideeffect \"wgmma.wait_group.sync.aligned {w};\", \"{outs}{ties},~{{memory}}\"({', '.join(vals)})"] + stores + ["ret void"],
                  f"`wgmma.wait_group {w}` with {k} accumulators tied to it", 901, convergent=True)
        for tb in (0, 1):
            r = ops["wgmma.mma_async.bf16"]
            t = r["tmpl"].replace("$N", str(nn))
            text = (f"{{ .reg .pred p; setp.ne.b32 p, ${k + 2}, 0; {t} {{{regs}}}, ${k}, ${k + 1}, p, 1, 1, 0, {tb}; }}")
            g.add(f"__oxide_wgmma_m64n{nn}k16_f32_bf16{'_tb' if tb else ''}", [("acc", "*mut u8"), ("da", "u64"), ("db", "u64"), ("scale_d", "u32")], None,
                  loads + [f"%s = call {st} asm sideeffect \"{text}\", \"{outs},l,l,r{ties},~{{memory}}\"(i64 %a1, i64 %a2, i32 %a3, {', '.join(vals)})"] + stores + ["ret void"],
                  f"`wgmma.mma_async` m64n{nn}k16, f32 += bf16 x bf16, A and B from shared-memory descriptors"
                  + (", B transposed (MN-major)" if tb else ""), 901, convergent=True)


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
    tg = ("/* @generated by tools/gen_rust_intrinsics.py from lib/ops.def -- do not edit.\n"
          " * The Rust intrinsics that need more than sm_80: each one's lowest target (SM x 10; 901: the\n"
          " * arch-specific sm_90a only) and the operation it is, for lib/import_targets.c. */\n"
          "static const struct {\n    const char *name;\n    unsigned min_sm;\n    const char *what;\n"
          "} oxide__rust_intrinsic_targets[] = {\n")
    for name, sm, what in sorted(g.sms):
        if sm > 80:
            tg += f'    {{"{name}", {sm}, "{what}"}},\n'
    tg += "};\n"
    return {RS: rs, INC: inc, TARGETS: tg}


def targets():
    return outputs(generate())


def main():
    return 1 if emit(targets(), "--check" in sys.argv, "lib/ops.def") else 0


if __name__ == "__main__":
    sys.exit(main())
