#!/usr/bin/env bash
# What the build costs, so that a change that makes it slower shows: the CPU time of the dbform binary from a clean build directory,
# ccache off, beside its floor measured in the same run: one translation unit that includes every
# third-party header the code uses, compiled with the same compiler and flags. The goal is a
# binary that costs at most 6 times that floor.
#
# Usage: bash bench/build_bench.sh [BUILD_DIR]   (default: a temporary directory; -j2)
#        DBFORM_BENCH_CMAKE_ARGS=-DDBFORM_UNITY_BATCH=10 bash bench/build_bench.sh   (other cmake options)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d /tmp/dbform-build-bench.XXXXXX)}
export CCACHE_DISABLE=1

cpu_of() {  # runs "$@", prints its user + system CPU seconds and wall seconds of it and its children
  /usr/bin/time -f "%U %S %e" -o "$dir/.time" "$@" >/dev/null
  awk '{ printf "%.1f %.1f\n", $1 + $2, $3 }' "$dir/.time"
}

rm -rf "$dir" && mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF ${DBFORM_BENCH_CMAKE_ARGS:-} >/dev/null
read -r binary_cpu binary_wall < <(cpu_of cmake --build "$dir" -j2 --target dbform)

# The floor: the same compiler and flags as the binary's sources, on every third-party header.
cat >"$dir/all_headers.cpp" <<'CPP'
#include <CLI/CLI.hpp>
#include <curl/curl.h>
#include <httplib.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>
#include <zlib.h>
CPP
flags=$(python3 -c '
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if " -o CMakeFiles/dbform.dir/" not in entry["command"] or not entry["file"].endswith((".cpp", ".cxx")):
        continue
    words, kept = shlex.split(entry["command"].split(" -o ")[0]), []
    while words:
        w = words.pop(0)
        if w == "-include":
            words.pop(0)  # the target precompiled header: the floor parses the headers itself
        elif w != "-Winvalid-pch":
            kept.append(w)
    print(shlex.join(kept))
    break
' "$dir/compile_commands.json")
# The floor is a few seconds, so the machine's moods move it by a quarter from one run to the next:
# the median of three compiles, taken after the binary's build.
floors=()
for _ in 1 2 3; do
  read -r f _ < <(cpu_of sh -c "$flags -c $dir/all_headers.cpp -o $dir/all_headers.o")
  floors+=("$f")
done
floor_cpu=$(printf '%s\n' "${floors[@]}" | sort -n | sed -n 2p)

ratio=$(awk -v b="$binary_cpu" -v f="$floor_cpu" 'BEGIN { printf "%.1f", b / f }')
echo "dbform build benchmark (ccache off, -j2, $(nproc) cores)"
echo "  the binary from a clean build directory: ${binary_cpu} CPU-s (${binary_wall} s wall)"
echo "  floor, one TU of every third-party header: ${floor_cpu} CPU-s (median of ${floors[*]})"
echo "  binary / floor = ${ratio} (goal <= 6)"
