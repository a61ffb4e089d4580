#!/usr/bin/env bash
# The layering STYLE.md item 9 asks for, counted: the command line (src/cli) parses flags, opens the
# store, calls an operation of src/ops and renders its outcome, so it takes no lock, writes no
# state and includes nothing below ops (the engine, the API client, the HTTP transport, the
# concrete state stores, the differ); and no product source file is over 600 lines. Prints each
# count (with what it found) and exits 1 when any is not zero. Run by ctest ("structure: ...").
set -uo pipefail
cd "$(dirname "$0")/.."

cli_sources=$(find src/cli -name '*.cpp' -o -name '*.h' -o -name '*.in' | sort)
failed=0

# count NAME PATTERN: the lines of src/cli matching the extended regex PATTERN.
count() {
  local name=$1 pattern=$2 found
  # shellcheck disable=SC2086
  found=$(grep -nE "$pattern" $cli_sources | grep -vE '^[^:]+:[0-9]+:\s*//')
  local n=0
  [ -n "$found" ] && n=$(printf '%s\n' "$found" | wc -l)
  echo "$name: $n"
  [ -n "$found" ] && printf '%s\n' "$found" | sed 's/^/  /'
  [ "$n" -eq 0 ] || failed=1
}

count "cli lock calls" '(\block_state|(->|\.)lock)\s*\('
count "cli state writes" '(->|\.)(write|write_changes|compact)\s*\(|\brecord_refresh\s*\('
count "cli includes below ops" '#include "(engine|api|http)/|#include "state/(file_store|pg_store|memory_store)\.h"|#include "plan/differ\.h"'

# Product sources: everything under src/ but the unit tests and their fixtures.
long=$(find src \( -name '*.cpp' -o -name '*.h' \) ! -name '*_test.cpp' ! -name 'test_support.h' -print0 |
         xargs -0 wc -l | awk '$2 != "total" && $1 > 600 {print "  " $2 " (" $1 " lines)"}')
n=0
[ -n "$long" ] && n=$(printf '%s\n' "$long" | wc -l)
echo "product source files over 600 lines: $n"
[ -n "$long" ] && printf '%s\n' "$long"
[ "$n" -eq 0 ] || failed=1

exit $failed
