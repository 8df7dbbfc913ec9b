#!/usr/bin/env python3
"""The softmax and layernorm rows' PTX, oxide's and (where triton imports) Triton's, side by side
without a GPU: for each row and each warps count the bench tunes over, what matters for a
bandwidth-bound row kernel -- global loads and stores by width, shuffles, barriers, shared-memory
accesses, and ptxas's registers and spills (docs/tile.md, "Row kernels against Triton").

    rows_ptx.py [--out DIR] [--ptxas PATH]

Triton's kernels are bench/tile/peers_triton.py's, compiled with triton.compile for sm_90a with
the divisibility a launch on these shapes would specialise on (16-byte aligned pointers, row
lengths and strides multiples of 16). Prints one line per kernel; with --out, writes the PTX."""
import argparse
import os
import re
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import oxide_kernels  # noqa: E402
import tile_bench  # noqa: E402


def metrics(ptx, ptxas):
    count = lambda pat: len(re.findall(pat, ptx))  # noqa: E731
    kinds = lambda op: ",".join(f"{n} {k}" for k, n in sorted(  # noqa: E731
        {k: ptx.count(k + " ") + ptx.count(k + "\t") for k in set(re.findall(op + r"[.\w:]*", ptx))}.items()))
    r = subprocess.run([ptxas, "-arch=sm_90a", "-v", "-o", os.devnull, "-"], input=ptx, text=True,
                       capture_output=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    return (f"loads [{kinds('ld.global')}] stores [{kinds('st.global')}] shfl {count(r'shfl')} "
            f"bar {count(r'bar.sync|barrier.sync')} ld.shared {count(r'ld.shared')} st.shared {count(r'st.shared')} "
            f"| registers {regs.group(1) if regs else '?'}, spill stores {spill.group(1) if spill else '?'}")


def oxide_rows():
    ks = oxide_kernels.Kernels()
    for name, (kern, grid, args, consts) in ks.dry_calls(tile_bench.shape_rows()):
        if "softmax" not in name and "layernorm" not in name:
            continue
        base = getattr(kern, "kernel", kern)
        for w in oxide_kernels.ROW_WARPS:
            k = ks.ot.Kernel(base.fn, **dict(base.hints, warps=w))
            yield f"{name} oxide w{w} {consts} grid {grid}", k.compile(*args, target="sm_90a", **consts)


def triton_rows():
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as e:
        print(f"# no triton ({e}): oxide only")
        return
    sys.modules.setdefault("torch", types.ModuleType("torch"))  # the host wrappers' import only
    import peers_triton
    target = GPUTarget("cuda", 90, 32)
    backend = triton.compiler.make_backend(target)
    div16 = lambda idx: {(i,): [["tt.divisibility", 16]] for i in idx}  # noqa: E731
    sm_sig = {"x": "*fp32", "y": "*fp32", "n_cols": "i32", "s_x": "i32", "s_y": "i32", "BLOCK": "constexpr"}
    ln_sig = {"x": "*bf16", "w": "*bf16", "b": "*bf16", "y": "*bf16", "n_cols": "i32", "s_x": "i32",
              "s_y": "i32", "eps": "fp32", "BLOCK": "constexpr"}
    for name, kind, dims in tile_bench.shape_rows():
        if kind not in ("softmax", "layernorm"):
            continue
        rows, cols = dims
        fn, sig, idx = ((peers_triton.softmax_kernel, sm_sig, range(5)) if kind == "softmax"
                        else (peers_triton.layernorm_kernel, ln_sig, range(7)))
        block = triton.next_power_of_2(cols)
        for w in oxide_kernels.ROW_WARPS:
            src = triton.compiler.ASTSource(fn.fn, sig, {"BLOCK": block}, div16(idx))
            k = triton.compile(src, target=target, options=backend.parse_options({"num_warps": w}).__dict__)
            yield f"{name} triton w{w} BLOCK={block} grid {rows}", k.asm["ptx"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write each kernel's PTX into this directory")
    ap.add_argument("--ptxas", default=os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"))
    a = ap.parse_args()
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    for gen in (oxide_rows, triton_rows):
        for label, ptx in gen():
            print(f"{label}: {metrics(ptx, a.ptxas)}", flush=True)
            if a.out:
                with open(os.path.join(a.out, re.sub(r"[^\w.-]+", "_", label.split(" {")[0]) + ".ptx"), "w") as f:
                    f.write(ptx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
