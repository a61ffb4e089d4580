#!/usr/bin/env bash
# The .deb as a user gets it: CPack builds it from BUILD_DIR, dpkg installs it into a scratch root
# (its own dpkg database; the libraries are the machine's, so dependencies are not re-checked), and
# the installed binary prints its version and runs the demo from the installed example. Its
# dependencies must be Debian runtime packages, and it must carry the man pages and completions.
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >/dev/null
deb=$(ls "$work"/pkg/dbform_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libyaml-cpp0.7 libcurl4 libpq5 libssl3 libstdc++6; do
  grep -q "$lib" <<<"$depends" || { echo "the package does not depend on $lib" >&2; exit 1; }
done
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root -i "$deb" >/dev/null
for f in usr/bin/dbform usr/share/man/man1/dbform.1 usr/share/man/man1/dbform-plan.1 usr/share/man/man1/dbform-state-push.1 \
         usr/share/man/man5/dbform-manifest.5 usr/share/bash-completion/completions/dbform \
         usr/share/zsh/vendor-completions/_dbform usr/share/fish/vendor_completions.d/dbform.fish \
         usr/share/dbform/schemas/manifest.schema.json usr/share/dbform/examples/quickstart.yaml; do
  [ -s "$root/$f" ] || { echo "the package does not install /$f" >&2; exit 1; }
done
cd "$work"  # no examples/ here: the demo must find the installed one
"$root/usr/bin/dbform" --version | grep -q '^dbform v'
out=$("$root/usr/bin/dbform" demo)
grep -q "Manifest: $root/usr/share/dbform/examples/quickstart.yaml" <<<"$out" ||
  { echo "$out" >&2; echo "the demo did not use the installed example" >&2; exit 1; }
grep -q "Apply complete" <<<"$out" || { echo "$out" >&2; exit 1; }
echo "installed $(basename "$deb") into a scratch root; --version and demo ran from it"
