#!/usr/bin/env bash
# What a preview's schema work costs against `dbform sim --postgres` (docs/previews.md): `preview up`
# of a new preview with N migration files (fork, password, the files), `up` again with N more files
# (no API call: the migrations alone), and `preview diff` over a source of T tables (each with 5
# columns, a primary key, an index and a check), the fork changed by the files. Prints seconds.
# Usage: bash bench/preview_schema_bench.sh DBFORM [FILES=20] [TABLES=200]
set -euo pipefail
dbform=$(realpath "$1"); files=${2:-20}; tables=${3:-200}
work=$(mktemp -d /tmp/dbform-schema-bench.XXXXXX); chmod 755 "$work"
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
"$dbform" sim --postgres --postgres-dir "$work/pg" --listen 127.0.0.1:0 --port-file sim.port \
  --key bench-key-0123456789=acme --queued-delay 0s --configuring-delay 0s >sim.log 2>&1 &
sim_pid=$!
for _ in $(seq 600); do [ -s sim.port ] && break; sleep 0.1; done
export DBFORM_API_URL="http://127.0.0.1:$(cat sim.port)" DBFORM_API_KEY=bench-key-0123456789
cat >dbform.yaml <<'YAML'
version: 1
projects:
  - id: acme
    services:
      - name: orders
    previews:
      services: [orders]
      strategy: NOW
      ttl: 72h
      max: 5
      migrations: db
YAML
"$dbform" apply --auto-approve --poll-interval 20ms >/dev/null
source=$("$dbform" output acme/services/orders.connection_string)
{
  for t in $(seq "$tables"); do
    echo "CREATE TABLE t$t (id bigint PRIMARY KEY, name text NOT NULL DEFAULT '', qty integer CHECK (qty >= 0), note varchar(200), at timestamptz DEFAULT now());"
    echo "CREATE INDEX t${t}_name ON t$t (name);"
  done
} | psql -q "$source" >/dev/null
mkdir db
migration() {  # file N: a new table, a column, an index, some rows
  printf 'CREATE TABLE m%d (id bigint PRIMARY KEY, v text);\nALTER TABLE t%d ADD COLUMN extra%d integer;\nCREATE INDEX m%d_v ON m%d (v);\nINSERT INTO m%d SELECT g, g::text FROM generate_series(1, 100) g;\n' \
    "$1" "$(( ($1 - 1) % tables + 1 ))" "$1" "$1" "$1" "$1" >"db/$(printf '%04d' "$1")_m$1.sql"
}
for n in $(seq "$files"); do migration "$n"; done
timed() { local start end; start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N); echo "$end - $start" | bc; }
echo "preview up (new preview, $files files): $(timed "$dbform" preview up pr-1 --poll-interval 20ms) s"
for n in $(seq $((files + 1)) $((2 * files))); do migration "$n"; done
echo "preview up (existing preview, $files new files, no API call): $(timed "$dbform" preview up pr-1) s"
echo "preview up (existing preview, nothing new): $(timed "$dbform" preview up pr-1) s"
echo "preview diff ($tables tables in the source, $((2 * files)) files applied): $(timed "$dbform" preview diff pr-1) s"
echo "preview up --format markdown (nothing new: ledger read and diff): $(timed "$dbform" preview up pr-1 --format markdown) s"
