#!/usr/bin/env bash
# Installs dbform's build dependencies (when run as root on Debian 12) and builds it into ./build:
# everything (the tests too), or only the targets named (`bash scripts/build.sh dbform`: the binary,
# its man page and completions). Used by the README's quick start and by CI (.ci/run), so both
# always build the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config ccache
  libyaml-cpp-dev libcurl4-openssl-dev nlohmann-json3-dev libspdlog-dev catch2 libcli11-dev
  libcpp-httplib-dev libssl-dev libpq-dev
  libpg-query-dev  # PostgreSQL's parser as a library: preview migrations are parsed before they run
  postgresql  # the server binaries for the tests' throwaway cluster (tests/pg/start.sh)
  python3 python3-jsonschema python3-yaml
  curl  # tests/e2e/wording_test.cpp pauses a service outside dbform with curl, as a person would
  strace  # the kill test of whole rewrites (tests/e2e/rewrite_kill_test.cpp) kills at chosen system calls
  dpkg-dev file  # cpack -G DEB: dpkg-shlibdeps finds the package's dependencies, file its binaries
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "Missing Debian packages: ${missing[*]}" >&2
    echo "Run this script as root (or: sudo apt-get install ${missing[*]})." >&2
    exit 1
  fi
  echo "Installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j2 --target "$@"
else
  cmake --build build -j2
fi
