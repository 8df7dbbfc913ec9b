#!/usr/bin/env bash
# Rebuild the Rust-written modules the binding tests load (PTX with manifest), with cargo oxide.
# Needs the built cargo-oxide (rustc-plugin/target/release) and liboxide.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
export PATH="$root/rustc-plugin/target/release:$PATH"
cd "$root/examples/rust"
# one target (sm_90a), so that the files stay plain PTX (a list would write a bundle)
cargo oxide build -p vecadd --sm sm_90a --module "$here/rust_vecadd.ptx"
# map::<f32, _> with the closure `move |x| x * k + 1.0` capturing k = 3.0: the map<f32, ...> whose
# `f` is 4 bytes. rustc numbers closures in its own order, so the name comes from a first build.
cargo oxide build -p generics --sm sm_90a --module "$here/rust_generics.ptx"
closure=$(python3 "$here/regen_pick.py" "$here/rust_generics.ptx")
cargo oxide build -p generics --sm sm_90a --module "$here/rust_generics.ptx" --export "$closure=map_f32_scale"
# tile kernels written in Rust (#[tile_kernel]): tensor parameters, the compiler's block; release
# builds, as a user would ship them (bench/tile/rust_rows.py times them too)
for k in matmul softmax layernorm; do
  cargo oxide build --release -p "tile_$k" --sm sm_90a --module "$here/rust_tile_$k.ptx"
done
# the tests' fake driver (tests/gpu/mock/mock_cuda.c, by_prefix) emulates the map entries by name
python3 - "$here/rust_generics.ptx" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
m = json.loads(t[t.index("oxide.manifest.v1 ") + 18:].split("\n", 1)[0])
for k in m["kernels"]:
    if k["name"].startswith("map<f") or k["name"] == "map_f32_scale":
        print(f"regen.sh: {k['name']} is entry {k['entry']} (mock_cuda.c matches its first 12 characters)")
PY
