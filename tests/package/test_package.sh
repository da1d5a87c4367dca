#!/usr/bin/env bash
# The installed package as another project uses it: `cmake --install` into a scratch prefix, then examples/consumer
# built against it with find_package(attnlab) and with pkg-config, and both programs run (they check their results).
# Usage: test_package.sh <build dir> <source dir>
set -euo pipefail
build=$1
source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source/examples/consumer" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
echo "== find_package(attnlab)"
"$scratch/consumer/consumer"
pc_dir=$(dirname "$(find "$scratch/prefix" -name attnlab.pc)")
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs attnlab)
c++ -std=c++20 -O1 "$source/examples/consumer/main.cpp" $flags -o "$scratch/consumer-pkg-config"
echo "== pkg-config attnlab: $flags"
"$scratch/consumer-pkg-config"
