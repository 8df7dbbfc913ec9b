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
# map::<f32, _> with the closure `move |x| x * k + 1.0` capturing k = 3.0 (4 bytes) is closure#2.
cargo oxide build -p generics --sm sm_90a --module "$here/rust_generics.ptx" --export "map<f32, generics::main::{closure#2}>=map_f32_scale"
# tile kernels written in Rust (#[tile_kernel]): tensor parameters, the compiler's block; release
# builds, as a user would ship them (bench/tile/rust_rows.py times them too)
for k in matmul softmax layernorm; do
  cargo oxide build --release -p "tile_$k" --sm sm_90a --module "$here/rust_tile_$k.ptx"
done
