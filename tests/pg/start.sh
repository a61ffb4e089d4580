#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests: initdb in a new temporary directory, listening
# only on 127.0.0.1 on a free port, password authentication, TLS with a self-signed certificate for
# 127.0.0.1 and localhost, no fsync (nothing here must survive).
# Writes the connection URL to OUT/url (mode 0600), the server's certificate to OUT/ca.pem (what
# `sslrootcert` names for sslmode=verify-full) and what stop.sh needs to OUT/cluster.
# Run as root (CI), the cluster belongs to the `postgres` user: initdb and postgres refuse root.
#
# Usage: tests/pg/start.sh OUT        then: tests/pg/stop.sh OUT
# PG_BINDIR overrides where initdb and pg_ctl are looked for.
set -euo pipefail

out=${1:?usage: start.sh OUTPUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A cluster left behind by an interrupted run would keep its port and directory forever.
[ -f "$out/cluster" ] && bash "$here/stop.sh" "$out"

bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then bindir=$d; break; fi
  done
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null; then bindir=$(dirname "$(command -v initdb)"); fi
if [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then
  echo "start.sh: PostgreSQL server binaries (initdb, pg_ctl) not found." >&2
  echo "Install them (apt-get install postgresql) or set PG_BINDIR." >&2
  exit 1
fi

as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi

dir=$(mktemp -d -t dbform-pg-XXXXXXXX)
password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$password" > "$dir/pwfile")
if [ ${#as_owner[@]} -gt 0 ]; then chown -R postgres: "$dir"; fi
printf 'dir=%q\npg_ctl=%q\n' "$dir" "$bindir/pg_ctl" > "$out/cluster"

if ! "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U dbform --pwfile="$dir/pwfile" -A scram-sha-256 \
    -E UTF8 --locale=C --no-sync > "$dir/initdb.log" 2>&1; then
  cat "$dir/initdb.log" >&2
  echo "start.sh: initdb failed" >&2
  exit 1
fi
rm -f "$dir/pwfile"

# TLS: a P-256 key and a certificate valid for two days, its own issuer. The server reads the key
# only when it is its owner's alone (0600).
if ! (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/O=dbform tests/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$dir/server.key" -out "$dir/server.crt") > "$dir/openssl.log" 2>&1; then
  cat "$dir/openssl.log" >&2
  echo "start.sh: openssl could not make the server's certificate" >&2
  exit 1
fi
if [ ${#as_owner[@]} -gt 0 ]; then chown postgres: "$dir/server.key" "$dir/server.crt"; fi
cp "$dir/server.crt" "$out/ca.pem"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The free port may be taken between asking and binding: try a few.
started=
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key" \
      start; then
    started=yes
    break
  fi
  grep -q "could not bind" "$dir/server.log" 2>/dev/null || break
done
if [ -z "$started" ]; then
  cat "$dir/server.log" >&2 || true
  echo "start.sh: the PostgreSQL server did not start" >&2
  exit 1
fi

(umask 077 && printf 'postgres://dbform:%s@127.0.0.1:%s/postgres\n' "$password" "$port" > "$out/url")
echo "$("$bindir/postgres" --version) on 127.0.0.1:$port (TLS: $out/ca.pem), data in $dir"
