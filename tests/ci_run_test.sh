#!/usr/bin/env bash
# .ci/run must fail when the build, the tests or the fuzzing fail, when ctest finds no tests, and
# when a test program registers none of its tests, or fewer, or one split at a ';' (under `set -e` a
# failure left of `&&` does not stop a script, and ctest that finds no tests exits 0). Runs a copy of
# .ci/run beside stand-ins for scripts/build.sh, ctest, scripts/fuzz.sh and two test programs that
# fail or pass as told.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.ci" "$work/scripts" "$work/bin"
cp "$root/.ci/run" "$work/.ci/run"
cp "$root/scripts/test_programs_check.py" "$work/scripts/"
# A source tree of two test programs (test_util, test_e2e) and their stand-ins in build/, which list
# the names in names/PROGRAM (FAKE_NAMES: another directory of such lists).
mkdir -p "$work/src/util" "$work/tests/e2e" "$work/build/tests" "$work/names" "$work/semicolon"
touch "$work/src/util/a_test.cpp" "$work/tests/e2e/b_test.cpp"
for program in build/test_util build/tests/test_e2e; do
  printf '#!/bin/sh\n[ "$1" = --list-test-names-only ] && cat "${FAKE_NAMES:-%s}/%s"\nexit 0\n' \
    "$work/names" "$(basename "$program")" >"$work/$program"
  chmod +x "$work/$program"
done
printf 'util: one\nutil: two\n' >"$work/names/test_util"
printf 'e2e: three\n' >"$work/names/test_e2e"
printf 'util: one\nutil: two; and more\n' >"$work/semicolon/test_util"
cp "$work/names/test_e2e" "$work/semicolon/"
# What `ctest --show-only=json-v1` says: each test's name and command (FAKE_JSON picks the file).
registered() {  # NAME=PROGRAM...
  local tests=() entry
  for entry in "$@"; do tests+=("{\"name\": \"${entry%%=*}\", \"command\": [\"$work/${entry#*=}\", \"${entry%%=*}\"]}"); done
  local IFS=,
  printf '{"kind": "ctestInfo", "tests": [%s, {"name": "docs", "command": ["/usr/bin/python3", "x.py"]}]}\n' "${tests[*]}"
}
registered "util: one=build/test_util" "util: two=build/test_util" "e2e: three=build/tests/test_e2e" >"$work/good.json"
registered "util: one=build/test_util" "util: two=build/test_util" >"$work/no_e2e.json"
registered "util: one=build/test_util" "e2e: three=build/tests/test_e2e" >"$work/one_missing.json"
registered "util: one=build/test_util" "util: two=build/test_util" " and more=build/test_util" \
  "e2e: three=build/tests/test_e2e" >"$work/split.json"
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
  if [ "$a" = --show-only=json-v1 ]; then cat "${FAKE_JSON:?}"; exit 0; fi
done
if [ "$count" = 0 ]; then
  echo "No tests were found!!!"
  for a in "$@"; do [ "$a" = --no-tests=error ] && exit 8; done
  exit 0
fi
exit "${FAKE_CTEST:-0}"
CTEST
chmod +x "$work/bin/ctest"
run() { PATH="$work/bin:$PATH" FAKE_JSON="$work/good.json" "$@" bash "$work/.ci/run" >/dev/null 2>&1; }
fail=0
expect_pass() { if ! run env "$@"; then echo "FAIL: .ci/run failed with $*"; fail=1; fi; }
expect_fail() { if run env "$@"; then echo "FAIL: .ci/run passed with $*"; fail=1; fi; }
expect_pass FAKE_BUILD=0 FAKE_CTEST=0
expect_fail FAKE_BUILD=1                      # the build failed
expect_fail FAKE_CTEST=8                      # a test failed
expect_fail FAKE_FUZZ=1                       # a fuzz target found something
expect_fail FAKE_FUZZ_BUILD=1                 # the fuzz targets did not build
expect_fail FAKE_COUNT=0                      # ctest found no tests
expect_fail FAKE_JSON="$work/no_e2e.json"     # a test program registered no tests
expect_fail FAKE_JSON="$work/one_missing.json"  # a test program registered fewer than it holds
expect_fail FAKE_JSON="$work/split.json" FAKE_NAMES="$work/semicolon"  # a ';' split a name in two
expect_pass FAKE_COUNT=12                     # fewer tests than before is no failure by itself
[ $fail = 0 ] && echo "ok: .ci/run fails when the build, a test or the fuzzing fails, or tests are missing"
exit $fail
