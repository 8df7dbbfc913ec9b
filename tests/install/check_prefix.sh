#!/usr/bin/env bash
# What an installed prefix promises beyond the consumers' builds (scripts/test's install step):
# bin/oxide finds the prefix's liboxide through RUNPATH $ORIGIN/../lib, also after the prefix is
# moved (no LD_LIBRARY_PATH, no build tree), and a load-and-launch program links
# liboxide_runtime alone through pkg-config oxide_runtime and CMake's oxide::oxide_runtime.
#
# usage: check_prefix.sh PREFIX WORKDIR   (WORKDIR: scratch space, emptied first)
set -euo pipefail
prefix=$(cd "${1:?usage: check_prefix.sh PREFIX WORKDIR}" && pwd)
work=${2:?usage: check_prefix.sh PREFIX WORKDIR}
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd)
fail() { echo "check_prefix: $*" >&2; exit 1; }

runpath=$(readelf -d "$prefix/bin/oxide" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = '$ORIGIN/../lib' ] || fail "bin/oxide has RUNPATH '$runpath', want \$ORIGIN/../lib"
cp -a "$prefix" "$work/moved"
out=$(env -u LD_LIBRARY_PATH "$work/moved/bin/oxide" -V) || fail "the moved bin/oxide does not run"
case $out in "oxide "*) ;; *) fail "the moved bin/oxide -V printed '$out'" ;; esac
lib=$(env -u LD_LIBRARY_PATH ldd "$work/moved/bin/oxide" | awk '$1 == "liboxide.so.0" {print $3}')
[ "$lib" = "$work/moved/bin/../lib/liboxide.so.0" ] || fail "the moved bin/oxide loads liboxide from '$lib'"
echo "check_prefix: bin/oxide runs from a moved prefix with its own liboxide ($out)"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc "$src/consumer_runtime.c" $(pkg-config --cflags --libs oxide_runtime) -Wl,-rpath,"$prefix/lib" \
  -o "$work/consumer-runtime-pc"
needed=$(readelf -d "$work/consumer-runtime-pc" | sed -n 's/.*(NEEDED).*\[\(liboxide.*\)\]/\1/p')
[ "$needed" = liboxide_runtime.so.0 ] || fail "pkg-config oxide_runtime linked '$needed', want liboxide_runtime.so.0 alone"
"$work/consumer-runtime-pc"
cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" --target consumer_runtime >/dev/null
needed=$(readelf -d "$work/cmake/consumer_runtime" | sed -n 's/.*(NEEDED).*\[\(liboxide.*\)\]/\1/p')
[ "$needed" = liboxide_runtime.so.0 ] || fail "oxide::oxide_runtime linked '$needed', want liboxide_runtime.so.0 alone"
"$work/cmake/consumer_runtime"
