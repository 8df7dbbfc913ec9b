#!/usr/bin/env bash
# Prepare what the H200 machine needs to run the binding tests and bench/launch.py (it has
# python3.12 with numpy, cupy and torch, but no cffi, no compiler for our extension, no network):
#   DIR/whl/  the oxide package's cp39-abi3 wheel (built here with python 3.12, carrying liboxide)
#             and cp312 wheels of cffi and pycparser from PyPI
#   DIR/bin/  test_cpp_gpu, test_cpp_graph, test_cpp_contract, the C++ vecadd example and launch_cpp (they find
#             liboxide through LD_LIBRARY_PATH=<site>/oxide on that machine)
# DIR defaults to .oxide-py-gpu (git-ignored through .git/info/exclude). Usage on the machine:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site DIR/whl/*.whl
#   export PYTHONPATH=/tmp/site LD_LIBRARY_PATH=/tmp/site/oxide
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${1:-.oxide-py-gpu}
build=${OXIDE_BUILD:-build}
py312=${PY312:-/root/.pyenv/versions/3.12.1/bin/python3}
rm -rf "$out" && mkdir -p "$out/whl" "$out/bin"
cmake --build "$build" -j2 --target oxide test_cpp_gpu test_cpp_graph test_cpp_contract cpp_example_vecadd launch_cpp >/dev/null
venv=$build/py312-venv
[ -x "$venv/bin/python" ] || "$py312" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check cffi==1.17.1 pycparser==2.22 setuptools==75.6.0 \
  wheel==0.45.1
OXIDE_LIB_DIR=$root/$build "$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation \
  --no-deps -w "$out/whl" ./bindings/python
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$out/whl" \
  cffi==1.17.1 pycparser==2.22
cp "$build/tests/bindings/test_cpp_gpu" "$build/tests/bindings/test_cpp_graph" "$build/tests/bindings/test_cpp_contract" "$build/examples/cpp/vecadd" \
  "$build/bench/launch_cpp" "$out/bin/"
strip "$out"/bin/*
du -sh "$out"/whl/* "$out"/bin/*
