#!/usr/bin/env bash
# .ci/run must fail when the build, the tests or the fuzzing fail, and when ctest finds no tests or
# fewer than the suite holds (under `set -e` a failure left of `&&` does not stop a script, and
# ctest that finds no tests exits 0). Runs a copy of .ci/run beside stand-ins for scripts/build.sh,
# ctest and scripts/fuzz.sh that fail or pass as told.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.ci" "$work/scripts" "$work/bin"
cp "$root/.ci/run" "$work/.ci/run"
printf '#!/bin/sh\nexit "${FAKE_BUILD:-0}"\n' >"$work/scripts/build.sh"
# The fuzz stand-in: `build` builds the targets, anything else runs them.
printf '#!/bin/sh\nif [ "$1" = build ]; then exit "${FAKE_FUZZ_BUILD:-0}"; fi\nexit "${FAKE_FUZZ:-0}"\n' \
  >"$work/scripts/fuzz.sh"
# The ctest stand-in: `-N` lists FAKE_COUNT tests (ctest's own summary line); a run exits FAKE_CTEST,
# or, given --no-tests=error and no tests, fails as ctest 3.25 does.
cat >"$work/bin/ctest" <<'CTEST'
#!/bin/sh
count=${FAKE_COUNT:-600}
for a in "$@"; do
  if [ "$a" = -N ]; then echo "Total Tests: $count"; exit 0; fi
done
if [ "$count" = 0 ]; then
  echo "No tests were found!!!"
  for a in "$@"; do [ "$a" = --no-tests=error ] && exit 8; done
  exit 0
fi
exit "${FAKE_CTEST:-0}"
CTEST
chmod +x "$work/bin/ctest"
run() { PATH="$work/bin:$PATH" "$@" bash "$work/.ci/run" >/dev/null 2>&1; }
fail=0
expect_pass() { if ! run env "$@"; then echo "FAIL: .ci/run failed with $*"; fail=1; fi; }
expect_fail() { if run env "$@"; then echo "FAIL: .ci/run passed with $*"; fail=1; fi; }
expect_pass FAKE_BUILD=0 FAKE_CTEST=0
expect_fail FAKE_BUILD=1                      # the build failed
expect_fail FAKE_CTEST=8                      # a test failed
expect_fail FAKE_FUZZ=1                       # a fuzz target found something
expect_fail FAKE_FUZZ_BUILD=1                 # the fuzz targets did not build
expect_fail FAKE_COUNT=0                      # ctest found no tests
expect_fail FAKE_COUNT=12                     # a test executable registered no tests
[ $fail = 0 ] && echo "ok: .ci/run fails when the build, a test or the fuzzing fails, or tests are missing"
exit $fail
