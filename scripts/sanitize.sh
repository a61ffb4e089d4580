#!/usr/bin/env bash
# Builds dbform twice more, with AddressSanitizer + UndefinedBehaviorSanitizer and with
# ThreadSanitizer (the apply engine, the simulator and the HTTP transport are multi-threaded), and
# runs every test under each: the unit tests, the end-to-end tests (which run the sanitized dbform
# binary against the sanitized simulator), the PostgreSQL conformance suite and the schema checks.
# Any sanitizer report fails the run.
#
#   bash scripts/sanitize.sh            # both, into build-asan/ and build-tsan/
#   bash scripts/sanitize.sh asan       # one of them
#   bash scripts/sanitize.sh tsan -R e2e   # extra arguments go to ctest
#
# Dependencies are those of scripts/build.sh (run it once first as root on a fresh machine).
set -euo pipefail
cd "$(dirname "$0")/.."

which_ones=(asan tsan)
if [ $# -gt 0 ] && { [ "$1" = asan ] || [ "$1" = tsan ]; }; then
  which_ones=("$1")
  shift
fi

# A report ends the process with a non-zero status, so the test that ran it fails.
export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"

run() {
  local name=$1 flags=$2
  shift 2
  local dir="build-$name"
  echo "== $name: building into $dir"
  # -g1 (line tables only) and -O1: readable reports at a fraction of a full debug build's compile time.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer -O1 -g1" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$dir" -j2
  echo "== $name: testing"
  ctest --test-dir "$dir" --output-on-failure -j2 "$@"
}

for which in "${which_ones[@]}"; do
  case "$which" in
    asan) run asan "-fsanitize=address,undefined -fno-sanitize-recover=undefined" "$@" ;;
    tsan) run tsan "-fsanitize=thread" "$@" ;;
  esac
done
echo "== sanitizers clean: ${which_ones[*]}"
