#!/bin/sh
# find_package(ktune) from an install tree: installs the build into a scratch
# prefix, builds examples/launcher against it as a separate CMake project and
# runs it (selection only where there is no GPU; launches and checks where
# there is one).
#   tests/package_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1; src=$2
prefix=$(mktemp -d /tmp/ktune_package_XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/install" > "$prefix/install.log"
test -f "$prefix/install/include/ktune/launcher.h"
cmake -S "$src/examples/launcher" -B "$prefix/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix/install" > "$prefix/configure.log" || { cat "$prefix/configure.log"; exit 1; }
cmake --build "$prefix/consumer" > "$prefix/build.log" 2>&1 || { cat "$prefix/build.log"; exit 1; }
out=$("$prefix/consumer/launcher_example" "$prefix/install/share/ktune/templates/vector_add/vector_add.yaml" \
      "$src/examples/data/vector_add_h100.json" 1048576)
echo "$out"
echo "$out" | grep -q "choice: NVIDIA H100 80GB HBM3 (sm_90), problem size total 67108864: .*\[exact device: "
echo "$out" | grep -q "choice: NVIDIA A100-SXM4-80GB (sm_80), .*\[most portable: "
echo "package test: find_package(ktune) and ktune::runtime work from $prefix/install"
