#!/usr/bin/env bash
# Stops the cluster tests/pg/start.sh OUT started and removes its directory. Safe to run twice.
set -euo pipefail

out=${1:?usage: stop.sh OUTPUT_DIR}
[ -f "$out/cluster" ] || exit 0
dir= pg_ctl=
# shellcheck source=/dev/null
. "$out/cluster"
case "$(basename "$dir")" in
  dbform-pg-*) ;;
  *) echo "stop.sh: $out/cluster names $dir, which start.sh did not create; not touching it" >&2; exit 1 ;;
esac

as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi
if [ -f "$dir/data/postmaster.pid" ]; then
  # Immediate: the tests are over and nothing in this cluster is worth a checkpoint.
  "${as_owner[@]}" "$pg_ctl" -D "$dir/data" -m immediate -w -s stop || true
fi
rm -rf "$dir"
rm -f "$out/url" "$out/ca.pem" "$out/cluster"
