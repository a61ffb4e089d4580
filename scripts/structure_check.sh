#!/usr/bin/env bash
# The layering, counted, so the core stays testable without the CLI: the command line (src/cli)
# parses flags, opens the store, calls an operation of src/ops and renders its outcome, so it takes
# no lock, writes no state and includes nothing below ops (the engine, the read side, the API
# client, the HTTP transport, the concrete state stores, the differ), not even through the headers
# of ops, which name what they only pass along (the API client) and take the run's vocabulary from
# plan/; no folder of src/ includes a folder above its layer; and no product source file is over
# 600 lines. Prints each count (with what it found) and exits 1 when any is not zero. Run by ctest
# ("structure: ...").
set -uo pipefail
cd "$(dirname "$0")/.."

cli_sources=$(find src/cli -name '*.cpp' -o -name '*.h' -o -name '*.in' | sort)
failed=0

# report NAME FOUND: prints how many lines FOUND holds, and each of them; any fails the check.
report() {
  local name=$1 found=$2 n=0
  [ -n "$found" ] && n=$(printf '%s\n' "$found" | wc -l)
  echo "$name: $n"
  [ -n "$found" ] && printf '%s\n' "$found" | sed 's/^/  /'
  [ "$n" -eq 0 ] || failed=1
}

# count NAME PATTERN: the lines of src/cli matching the extended regex PATTERN.
count() {
  # shellcheck disable=SC2086
  report "$1" "$(grep -nE "$2" $cli_sources | grep -vE '^[^:]+:[0-9]+:\s*//')"
}

count "cli lock calls" '(\block_state|(->|\.)lock)\s*\('
count "cli state writes" '(->|\.)(write|write_changes|compact)\s*\(|\brecord_refresh\s*\('
count "cli includes below ops" '#include "(engine|read|api|http)/|#include "state/(file_store|pg_store|memory_store)\.h"|#include "plan/differ\.h"'
# The state's document format is the stores' business: the command line shows a record through ops.
count "cli includes of the state codec" '#include "state/codec\.h"'

# What a header of ops includes, every file of the command line that includes it includes too: the
# product headers of ops (test_support.h is the unit tests' own) include nothing the command line
# may not.
ops_headers=$(find src/ops -name '*.h' ! -name 'test_support.h' | sort)
# shellcheck disable=SC2086
report "ops headers' includes below ops (passed through to cli)" \
  "$(grep -nE '#include "(engine|read|api|http)/' $ops_headers | grep -vE '^[^:]+:[0-9]+:\s*//')"

# The layers of src/ (CMakeLists.txt's DBFORM_LAYERS): the product is one library, so nothing but
# this check keeps a layer from including one above it. Each folder's product files may include
# the folders it lists here (and its own), nothing else.
declare -A may_include=(
  [util]=""
  [manifest]="util"
  [state]="manifest util"
  [http]="util"
  [sql]="util"
  [api]="http util"
  [plan]="state api manifest sql http util"
  [policy]="plan state api manifest sql http util"
  [read]="plan state api manifest sql http util"
  [engine]="read plan state api manifest sql http util"
  [ops]="engine read policy plan state api manifest sql http util"
  [sim]="api http util"
  [cli]="ops sim engine read policy plan state api manifest sql http util"
)
upward=""
for dir in src/*/; do
  layer=$(basename "$dir")
  if [ -z "${may_include[$layer]+set}" ]; then
    upward+="src/$layer/ is not a layer of this check: add it to may_include"$'\n'
    continue
  fi
  allowed=" $layer ${may_include[$layer]} "
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    target=$(printf '%s' "$hit" | sed -E 's/^[^:]+:[0-9]+:#include "([a-z_]+)\/.*/\1/')
    [[ "$allowed" == *" $target "* ]] || upward+="$hit"$'\n'
  done < <(find "$dir" \( -name '*.cpp' -o -name '*.h' \) ! -name '*_test.cpp' ! -name 'test_support.h' -print0 |
             xargs -0 grep -nE '^#include "[a-z_]+/' /dev/null)
done
report "includes of a layer above (or beside) the file's own" "${upward%$'\n'}"

# Product sources: everything under src/ but the unit tests and their fixtures.
long=$(find src \( -name '*.cpp' -o -name '*.h' \) ! -name '*_test.cpp' ! -name 'test_support.h' -print0 |
         xargs -0 wc -l | awk '$2 != "total" && $1 > 600 {print $2 " (" $1 " lines)"}')
report "product source files over 600 lines" "$long"

exit $failed
