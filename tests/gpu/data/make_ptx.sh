#!/bin/sh
# Regenerates kernels.ptx from kernels.cu and kernels.manifest.json (the manifest that oxide's
# compiler would write for these kernels: one line, placed after the PTX header comments).
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
"$NVCC" -ptx -arch=sm_90a -O3 kernels.cu -o kernels.ptx.tmp
manifest=$(python3 -c 'import json,sys; print(json.dumps(json.load(open("kernels.manifest.json")), separators=(",", ":")))')
awk -v m="// oxide.manifest.v1 $manifest" 'done == 0 && !/^\/\// { print m; done = 1 } { print }' kernels.ptx.tmp > kernels.ptx
rm kernels.ptx.tmp
