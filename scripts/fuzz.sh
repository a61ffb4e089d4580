#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) into build-fuzz/ and runs each
# for SECONDS (default 30) from its seeds: fuzz/corpus/TARGET/, plus for the manifest loader every
# manifest of the tests and examples. Two targets run at a time (each on a core of its own, for
# its whole SECONDS). A crash, a leak, a timeout or an out-of-memory fails the run and leaves the
# input in build-fuzz/findings/; fix it and keep the input in fuzz/regressions/TARGET/, whose
# inputs every run replays first. Prints the executions of each target.
#
#   bash scripts/fuzz.sh                  # every target, 30 s each
#   bash scripts/fuzz.sh state 600        # one target, 10 minutes
#   bash scripts/fuzz.sh build            # only build every target (CI builds them beside the tests)
#
# Installs clang and its fuzzer runtime when run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(manifest state plan_file api_response durations terraform_state)
which=${1:-all}
seconds=${2:-30}
build_only=0
if [ "$which" = build ]; then build_only=1; elif [ "$which" != all ]; then targets=("$which"); fi

missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "Missing Debian packages: ${missing[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# -O1 -g1: readable reports, and a quicker build than -O2 (CI builds it cold).
CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DDBFORM_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"

[ "$build_only" = 1 ] && exit 0

mkdir -p build-fuzz/findings
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

# Runs one target; its summary line (or its failure) goes to build-fuzz/TARGET.result.
fuzz_one() {
  local t=$1 work="build-fuzz/corpus/$1" log="build-fuzz/$1.log"
  mkdir -p "$work"
  local seeds=("fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && seeds+=("fuzz/regressions/$t")
  if [ "$t" = manifest ]; then seeds+=(tests/manifests/valid tests/manifests/invalid examples); fi
  if ! "build-fuzz/fuzz/fuzz_$t" "$work" "${seeds[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" >"$log" 2>&1; then
    return 1
  fi
  echo "   $(grep -m1 'stat::number_of_executed_units:' "$log" | awk '{print $2}') executions," \
       "$(grep -m1 'stat::new_units_added:' "$log" | awk '{print $2}') new inputs, no finding" >"build-fuzz/$t.result"
}

declare -A pid_of  # target -> pid
failed=()
for t in "${targets[@]}"; do
  # At most two at a time: wait for one to end before starting a third.
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
  echo "== $t: fuzzing for ${seconds}s"
  fuzz_one "$t" &
  pid_of[$t]=$!
done
for t in "${targets[@]}"; do
  if wait "${pid_of[$t]}"; then
    echo "== $t:"; cat "build-fuzz/$t.result"
  else
    tail -40 "build-fuzz/$t.log" >&2
    echo "== $t: FAILED; the input is in build-fuzz/findings/" >&2
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then echo "== fuzzing FAILED: ${failed[*]}" >&2; exit 1; fi
echo "== fuzzing clean: ${targets[*]}"
