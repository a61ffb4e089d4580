#!/usr/bin/env bash
# dbform in any CI system: the steps of github-actions.yml as a plain script.
#
#   dbform-ci.sh plan    validate and plan; save the plan file and a markdown summary for a
#                        pull-request comment
#   dbform-ci.sh apply   apply exactly the saved plan, then write the endpoints (no passwords)
#
# Run `plan` in merge requests and post $DBFORM_OUT/plan.md as a comment (its first line is
# `<!-- dbform-plan -->`, so a later run can find that comment and update it). On the main branch
# run `plan`, keep $DBFORM_OUT as an artifact, optionally wait for an approval, then run `apply` in
# the same checkout of the same commit: a plan whose state or manifests have moved since is
# refused, changing nothing.
#
# Environment (besides dbform's own: DBFORM_API_KEY, DBFORM_API_KEY_<PROJECT>, the variables the
# manifests' `api_key_env` name, DBFORM_API_URL, ...):
#   DBFORM             the dbform binary                                    (default: dbform)
#   DBFORM_MANIFESTS   manifest files or directories, separated by spaces   (default: manifests)
#   DBFORM_VAR_<NAME>  the value of ${NAME} in the manifests, which read no other variable
#   DBFORM_OUT         where the plan, summary and logs go                  (default: dbform-out)
#   DBFORM_POLICY      rule files every plan is checked against (docs/policies.md), read by dbform
#                      itself; in merge requests take them from the target branch, and give `apply`
#                      the same rules as `plan` (other rules make the saved plan stale)
#   DBFORM_STATE       the state: postgres://... for the team backend (recommended), or a file
#                      that the CI system keeps between runs; save it after every apply, also a
#                      failed one: it records what was created
#
# Files in $DBFORM_OUT:
#   dbform.plan     the saved plan (`plan` only writes it when there are no conflicts)
#   plan.md         the plan for a comment (at most 60,000 characters; or why planning failed)
#   plan.exitcode   dbform's --detailed-exitcode: 0 no changes, 2 changes pending, 1 conflicts or
#                   an error (read it to decide whether to run `apply`)
#   apply.jsonl     `apply --json`: one JSON object per event
#   endpoints.txt   `dbform output`: every resource's id, status and endpoints (no passwords)
#
# A later step that connects reads the secrets from the state itself, without writing them to a
# file that an artifact or a log might keep: eval "$(dbform output --format env)" sets
# DBFORM_<PROJECT>_<NAME>_CONNECTION_STRING, _HOST, _PORT, _PASSWORD, ...
#
# Exit codes: plan: 0 when it planned (nothing to do or changes pending: plan.exitcode says which),
# 1 conflicts or an error, so a CI step that fails on any non-zero status fails only then;
# apply: dbform's.
set -euo pipefail

DBFORM=${DBFORM:-dbform}
OUT=${DBFORM_OUT:-dbform-out}
read -r -a MANIFESTS <<<"${DBFORM_MANIFESTS:-manifests}"

manifest_args=()
for m in "${MANIFESTS[@]}"; do manifest_args+=(-f "$m"); done

plan() {
  mkdir -p "$OUT"
  # A plan file left from an earlier run must never be applied by mistake.
  rm -f "$OUT/dbform.plan" "$OUT/plan.md" "$OUT/plan.exitcode"

  local rc=0
  "$DBFORM" validate "${manifest_args[@]}" 2>"$OUT/plan.err" || rc=$?
  if [ "$rc" -eq 0 ]; then
    # A plan lists what exists first, with the API keys, so that drift shows; a job without a key
    # for every project (a merge request from a fork) plans from the state alone. dbform says
    # whether it has them, resolved as plan resolves them (DBFORM_API_KEY, DBFORM_API_KEY_<PROJECT>,
    # or the variable a project's `api_key_env` names), asking the API nothing.
    local refresh=()
    "$DBFORM" whoami --offline "${manifest_args[@]}" >>"$OUT/plan.err" || refresh=(--no-refresh)
    "$DBFORM" plan "${manifest_args[@]}" "${refresh[@]}" --detailed-exitcode --format markdown \
      --out "$OUT/dbform.plan" >"$OUT/plan.md" 2>>"$OUT/plan.err" || rc=$?
  fi
  cat "$OUT/plan.err" >&2
  if [ ! -s "$OUT/plan.md" ]; then
    # No plan at all (invalid manifests, unreadable state): the comment says why.
    { echo "<!-- dbform-plan -->"
      echo "### dbform plan failed"
      echo
      echo '```text'
      head -c 50000 "$OUT/plan.err"
      echo '```'
    } >"$OUT/plan.md"
  fi
  echo "$rc" >"$OUT/plan.exitcode"
  cat "$OUT/plan.md"
  case "$rc" in
    0) echo "dbform: no changes." ;;
    2) echo "dbform: changes pending; the plan is saved in $OUT/dbform.plan." ;;
    *) echo "dbform: the plan has conflicts or failed; see above." >&2 ;;
  esac
  # Changes pending is a plan that worked (as github-actions.yml treats it): dbform's 2 would turn
  # a generic CI step red on every pull request that changes something.
  if [ "$rc" -eq 2 ]; then return 0; fi
  return "$rc"
}

apply() {
  if [ ! -f "$OUT/dbform.plan" ]; then
    echo "dbform: no saved plan in $OUT/dbform.plan; run \`$0 plan\` first (it saves none when there are conflicts)" >&2
    return 1
  fi
  local rc=0
  "$DBFORM" apply "$OUT/dbform.plan" --json | tee "$OUT/apply.jsonl" || rc=$?
  # Endpoints for the next steps of the pipeline, also after a partial failure.
  "$DBFORM" output >"$OUT/endpoints.txt" || true
  return "$rc"
}

case "${1:-}" in
  plan) plan ;;
  apply) apply ;;
  *)
    echo "usage: $0 plan|apply   (see the comment at the top of this script)" >&2
    exit 1
    ;;
esac
