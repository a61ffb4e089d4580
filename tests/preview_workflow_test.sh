#!/usr/bin/env bash
# examples/ci/dbform-preview.sh, the script previews.yml runs, against `dbform sim`: a pull
# request's preview (a markdown comment without a password, env lines the tests source, a second
# `up` that makes no call), its close (`down`), and the nightly sweep keeping the open pull requests;
# each step's API calls counted by the simulator. Then previews.yml itself: valid YAML, every `run:`
# valid bash, and the three triggers calling the script.
# Usage: preview_workflow_test.sh DBFORM_BINARY EXAMPLES_DIR
set -euo pipefail
dbform=$(realpath "$1")
examples=$(realpath "$2")
work=$(mktemp -d)
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

"$dbform" sim --listen 127.0.0.1:0 --port-file sim.port --key preview-key-0123456789=acme \
  --queued-delay 50ms --configuring-delay 100ms --deleting-delay 50ms >sim.log 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [ -s sim.port ] && break; sleep 0.1; done
port=$(cat sim.port)
export DBFORM="$dbform" DBFORM_API_URL="http://127.0.0.1:$port" DBFORM_API_KEY=preview-key-0123456789
export DBFORM_MANIFESTS=manifests DBFORM_OUT="$work/out" DBFORM_STATE="$work/dbform.state.json"
calls() { python3 -c "import json,sys,urllib.request; c=json.load(urllib.request.urlopen('$DBFORM_API_URL/_sim/requests')); print(c.get(sys.argv[1], 0))" "$1"; }
fork='POST /projects/{project_id}/services/{service_id}/forkService'
delete='DELETE /projects/{project_id}/services/{service_id}'

mkdir manifests
cat >manifests/acme.yaml <<'YAML'
version: 1
projects:
  - id: acme
    services:
      - name: orders
        environment_tag: PROD
        deletion_protection: true
    previews:
      services: [orders]
      strategy: NOW
      ttl: 72h
      max: 5
YAML
"$dbform" apply -f manifests --auto-approve --poll-interval 100ms >/dev/null

# A pull request opened: one fork, its password rotated; the second `up` (env) makes no call.
bash "$examples/ci/dbform-preview.sh" up 7 2>up.err
check "up forked once" '[ "$(calls "$fork")" = 1 ]'
check "the comment is the preview's" 'head -1 out/preview.md | grep -qx "<!-- dbform-preview acme/pr-7 -->"'
check "the comment has the host" 'grep -q "orders-pr-7" out/preview.md'
password=$("$dbform" output acme/previews/pr-7/services/orders.password)
check "the comment holds no password" '! grep -qF "$password" out/preview.md'
check "the env file is private" '[ "$(stat -c %a out/preview.env)" = 600 ]'
url=$(set -a; . out/preview.env; echo "$DATABASE_URL_ORDERS")
check "the env file sets the preview's URL" '[ "$url" = "$("$dbform" output acme/previews/pr-7/services/orders.connection_string)" ]'
check "the env file holds the fork's own password" '[[ "$url" == *"$password"* ]] && [ "$password" != "$("$dbform" output acme/services/orders.password)" ]'
before=$(python3 -c "import json,urllib.request; print(sum(json.load(urllib.request.urlopen('$DBFORM_API_URL/_sim/requests')).values()))")
bash "$examples/ci/dbform-preview.sh" up 7 2>>up.err
after=$(python3 -c "import json,urllib.request; print(sum(json.load(urllib.request.urlopen('$DBFORM_API_URL/_sim/requests')).values()))")
check "up again made no call ($before -> $after)" '[ "$before" = "$after" ]'

# Two more pull requests; pr-7 closes; the nightly sweep keeps the open one (pr-9).
bash "$examples/ci/dbform-preview.sh" up 8 2>>up.err
bash "$examples/ci/dbform-preview.sh" up 9 2>>up.err
bash "$examples/ci/dbform-preview.sh" down 7 >down.out 2>&1
check "down deleted one service" '[ "$(calls "$delete")" = 1 ]'
bash "$examples/ci/dbform-preview.sh" sweep 9 >sweep.out 2>&1
check "the sweep deleted pr-8 only" '[ "$(calls "$delete")" = 2 ] && grep -q "deleted acme/previews/pr-8/services/orders" sweep.out'
check "pr-9 is left" '"$dbform" preview list | grep -q "acme/previews/pr-9 "'
# A refused `up` (the block's `max`: pr-9 is open and max is 1) leaves no comment to post: neither
# an empty preview.md nor the one an earlier `up` wrote in the same directory.
mkdir capped && sed 's/max: 5/max: 1/' manifests/acme.yaml >capped/acme.yaml
check "an earlier comment is there" '[ -s out/preview.md ]'
check "up beyond max fails" '! DBFORM_MANIFESTS=capped bash "$examples/ci/dbform-preview.sh" up 12 2>capped.err'
check "it says why" 'grep -q "the most its .previews:. block allows (max: 1)" capped.err'
check "no comment file is left" '[ ! -e out/preview.md ] && [ ! -e out/preview.md.part ] && [ ! -e out/preview.env ]'
check "a bad number is refused" '! bash "$examples/ci/dbform-preview.sh" up "7; rm -rf /" 2>/dev/null'

# The workflow: YAML, bash, and its jobs calling the script as tested above.
python3 - "$examples/ci/previews.yml" <<'PY' || fail=1
import re, subprocess, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
on = doc.get("on", doc.get(True))
problems = []
if set(on) != {"pull_request", "schedule", "workflow_dispatch"}: problems.append(f"triggers: {on}")
if set(on["pull_request"]["types"]) != {"opened", "reopened", "synchronize", "closed"}: problems.append("pull_request types")
runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in doc["jobs"].items()}
for name, job in doc["jobs"].items():
    for step in job["steps"]:
        if "run" in step:
            script = re.sub(r"\$\{\{[^}]*\}\}", "x", step["run"])
            p = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
            if p.returncode: problems.append(f"{name}: not bash: {p.stderr}")
for job, call in (("preview", "dbform-preview.sh up"), ("cleanup", "dbform-preview.sh down"), ("sweep", "dbform-preview.sh sweep")):
    if call not in runs.get(job, ""): problems.append(f"job {job} does not run `{call}`")
# The pull request's code never meets the key or the state: secrets only in the env of the steps
# that run dbform (the base branch's script), none at the workflow's or a job's level.
secret = re.compile(r"secrets\.(DBFORM_API_KEY|DBFORM_STATE_URL)")
if secret.search(str(doc.get("env", {}))): problems.append("the workflow's env holds a dbform secret")
for name, job in doc["jobs"].items():
    if secret.search(str(job.get("env", {}))): problems.append(f"job {name}'s env holds a dbform secret")
    for step in job["steps"]:
        if secret.search(str(step.get("env", {}))) and "bash base/.github/scripts/dbform-preview.sh" not in step.get("run", ""):
            problems.append(f"{name}: step `{step.get('name')}` gets a dbform secret but does not run the base branch's script")
        if "dbform-preview.sh" in step.get("run", "") and "base/.github/scripts/dbform-preview.sh" not in step["run"]:
            problems.append(f"{name}: step `{step.get('name')}` runs a script that is not the base branch's")
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout")]
    if not any(s.get("with", {}).get("path") == "base" for s in checkouts): problems.append(f"{name}: no checkout in base/")
    if any(s.get("with", {}).get("persist-credentials") is not False for s in checkouts):
        problems.append(f"{name}: a checkout leaves the token in .git/config")
    if name != "sweep" and not any(s.get("with", {}).get("path") == "base" and
                                   "pull_request.base.ref" in str(s["with"].get("ref", "")) for s in checkouts):
        problems.append(f"{name}: base/ is not the base ref")
steps = doc["jobs"]["preview"]["steps"]
if doc["env"].get("DBFORM_MANIFESTS") != "base/manifests": problems.append("the manifests are not the base branch's")
tests = [s for s in steps if "./scripts/test.sh" in s.get("run", "")]
if len(tests) != 1 or tests[0].get("working-directory") != "pr": problems.append("the tests do not run in pr/")
cleanup = [s for s in steps if s.get("if") == "always()" and 'rm -rf "$RUNNER_TEMP/dbform-out"' in s.get("run", "")]
if not cleanup: problems.append("no `if: always()` step removes the env file")
up = [s for s in steps if "dbform-preview.sh up" in s.get("run", "")]
if not up or "::add-mask::" not in up[0]["run"] or '"$RUNNER_TEMP/dbform-out"' not in up[0]["run"]:
    problems.append("the up step does not keep its output in $RUNNER_TEMP and mask the URLs")
else:
    open("up-step.sh", "w").write(re.sub(r"\$\{\{ github\.event\.number \}\}", "11", up[0]["run"]))
for p in problems: print("FAIL: previews.yml: " + p)
sys.exit(1 if problems else 0)
PY
# The workflow's up step itself, from base/ as in the workflow: each URL and password masked.
mkdir -p base/.github/scripts runner-temp && cp -r manifests base/ && cp "$examples/ci/dbform-preview.sh" base/.github/scripts/
DBFORM_MANIFESTS=base/manifests RUNNER_TEMP="$work/runner-temp" bash -eo pipefail up-step.sh >up-step.out 2>>up.err || { echo "FAIL: the up step"; fail=1; }
url=$("$dbform" output acme/previews/pr-11/services/orders.connection_string)
password=$("$dbform" output acme/previews/pr-11/services/orders.password)
check "the up step masks the URL" 'grep -qxF "::add-mask::$url" up-step.out'
check "the up step masks the password" 'grep -qxF "::add-mask::$password" up-step.out'
check "the up step prints nothing else" '[ "$(wc -l <up-step.out)" = 2 ]'
check "the env file is in RUNNER_TEMP" '[ -s runner-temp/dbform-out/preview.env ]'

[ $fail = 0 ] && echo "ok: the preview workflow's commands work against the simulator"
exit $fail
