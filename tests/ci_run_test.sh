#!/usr/bin/env bash
# .ci/run must fail when the build or the tests fail, whatever the fuzz step says afterwards
# (under `set -e` a failure left of `&&` does not stop a script). Runs a copy of .ci/run beside
# stand-ins for scripts/build.sh, ctest and scripts/fuzz.sh that fail or pass as told.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.ci" "$work/scripts" "$work/bin"
cp "$root/.ci/run" "$work/.ci/run"
printf '#!/bin/sh\nexit "${FAKE_BUILD:-0}"\n' >"$work/scripts/build.sh"
printf '#!/bin/sh\nexit 0\n' >"$work/scripts/fuzz.sh"
printf '#!/bin/sh\nexit "${FAKE_CTEST:-0}"\n' >"$work/bin/ctest"
chmod +x "$work/bin/ctest"
run() { PATH="$work/bin:$PATH" "$@" bash "$work/.ci/run" >/dev/null 2>&1; }
fail=0
if ! run env FAKE_BUILD=0 FAKE_CTEST=0; then echo "FAIL: .ci/run failed with a passing build and tests"; fail=1; fi
if run env FAKE_BUILD=1 FAKE_CTEST=0; then echo "FAIL: .ci/run passed although the build failed"; fail=1; fi
if run env FAKE_BUILD=0 FAKE_CTEST=8; then echo "FAIL: .ci/run passed although a test failed"; fail=1; fi
[ $fail = 0 ] && echo "ok: .ci/run fails when the build or a test fails"
exit $fail
