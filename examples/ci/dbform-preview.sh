#!/usr/bin/env bash
# A database per pull request (dbform previews, docs/previews.md) in any CI system: the steps of
# previews.yml as a plain script.
#
#   dbform-preview.sh up NUMBER      make (or report) preview pr-NUMBER: the markdown comment and the
#                                    connection strings for the tests
#   dbform-preview.sh down NUMBER    the pull request closed: delete preview pr-NUMBER
#   dbform-preview.sh sweep NUMBER...  nightly: delete expired previews and those of every pull
#                                    request not listed (list the open ones)
#
# Environment (besides dbform's own: DBFORM_API_KEY, DBFORM_API_KEY_<PROJECT>, DBFORM_API_URL, ...):
#   DBFORM             the dbform binary                                    (default: dbform)
#   DBFORM_MANIFESTS   manifest files or directories, separated by spaces   (default: manifests)
#   DBFORM_VAR_<NAME>  the value of ${NAME} in the manifests, which read no other variable
#   DBFORM_OUT         where the comment and the env file go                (default: dbform-out)
#   DBFORM_STATE       the state the services were applied to (postgres://... for the team backend)
#
# Files in $DBFORM_OUT after an `up` that reported (after one refused before it made anything,
# e.g. by the block's `max`, neither: there is nothing to post, and the exit status is dbform's):
#   preview.md     the pull request's comment: services, hosts, expiry, the commands to connect,
#                  the migrations applied and the schema diff; never a password (its first line is
#                  `<!-- dbform-preview PROJECT/pr-N -->`). Failed migrations still leave it (which
#                  file, which line, PostgreSQL's message), with no preview.env, and the job fails.
#   preview.env    DATABASE_URL_<SERVICE>='postgres://...' lines for `set -a; . preview.env`:
#                  they hold the passwords, so keep the file out of artifacts and logs (mode 0600)
set -euo pipefail

DBFORM=${DBFORM:-dbform}
read -r -a MANIFESTS <<<"${DBFORM_MANIFESTS:-manifests}"
OUT=${DBFORM_OUT:-dbform-out}
files=()
for m in "${MANIFESTS[@]}"; do files+=(-f "$m"); done

number() {
  [[ "${1:-}" =~ ^[0-9]+$ ]] || { echo "expected a pull request's number, not '${1:-}'" >&2; exit 2; }
  echo "pr-$1"
}

case "${1:-}" in
  up)
    name=$(number "${2:-}")
    mkdir -p "$OUT"
    # No comment unless there is a report: a refused `up` (the `max` cap, a service not READY)
    # leaves no file behind, not an empty one or an earlier run's, for a later step to post.
    rm -f "$OUT/preview.md" "$OUT/preview.env" "$OUT/preview.md.part"
    # The first `up` forks and waits; the second reports the same preview and makes no call. With
    # `migrations:` in the block, each push applies the new files to the forks, and the comment
    # shows them and the schema diff.
    status=0
    "$DBFORM" preview up "$name" "${files[@]}" --format markdown > "$OUT/preview.md.part" || status=$?
    if [ -s "$OUT/preview.md.part" ]; then mv "$OUT/preview.md.part" "$OUT/preview.md"; else rm -f "$OUT/preview.md.part"; fi
    [ "$status" = 0 ] || exit "$status"
    (umask 077; "$DBFORM" preview up "$name" "${files[@]}" --format env > "$OUT/preview.env") ||
      { rc=$?; rm -f "$OUT/preview.env"; exit "$rc"; }
    ;;
  down)
    name=$(number "${2:-}")
    "$DBFORM" preview down "$name" "${files[@]}"
    ;;
  sweep)
    shift
    keep=()
    for n in "$@"; do keep+=(--keep "$(number "$n")"); done
    "$DBFORM" preview sweep "${files[@]}" "${keep[@]}"
    ;;
  *)
    echo "usage: dbform-preview.sh up NUMBER | down NUMBER | sweep [OPEN_NUMBER...]" >&2
    exit 2
    ;;
esac
