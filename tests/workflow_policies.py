#!/usr/bin/python3
"""The example workflow's rule files (examples/ci/github-actions.yml), run here with the real dbform.

DBFORM_POLICY_FILE is a ':'-separated list, as DBFORM_POLICY is: each team keeps its own rule file,
and a waiver naming a rule of another team's file must find that rule (with one file alone it is an
unknown waiver, a mandatory violation). The plan job's step "The policies, from the base branch" is
run as it is written, in a git clone whose base branch holds the rules: the copies come from the base
branch (a pull request's edit of a rule file is not what it is checked against), in the list's
order, and the DBFORM_POLICY it hands on, and the line of the apply job that reads it back, give
`dbform plan` both files.

Usage: workflow_policies.py --dbform BIN --examples DIR     Needs python3-yaml (a Debian package).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

RULE = """version: 1
rules:
  - id: {id}
    level: mandatory
    kind: service
    require: {{cpu_millis: {{"<=": {most}}}}}
    waivable: true
"""

MANIFEST = """version: 1
projects:
  - id: acme-prod
    services:
      - name: orders
        region_code: us-east-1
        cpu_millis: 4000
        memory_gbs: 16
        policy_waivers:
          - rule: platform-small
            reason: the January migration
            expires: 9999-12-31
          - rule: payments-small
            reason: the January migration
            expires: 9999-12-31
"""


def step(doc, job, name):
    for s in doc["jobs"][job]["steps"]:
        if s.get("name") == name:
            return s
    raise SystemExit(f"github-actions.yml: job {job} has no step {name!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--examples", required=True)
    args = ap.parse_args()
    dbform = str(Path(args.dbform).resolve())
    doc = yaml.safe_load((Path(args.examples) / "ci/github-actions.yml").read_text())
    policies = step(doc, "plan", "The policies, from the base branch")["run"]
    apply_run = step(doc, "apply", "Apply the saved plan")["run"]
    reads_back = [line for line in apply_run.splitlines() if "DBFORM_POLICY" in line and "policies" in line]
    problems = []
    if len(reads_back) != 1:
        problems.append(f"the apply job does not read back the plan's rule files in one line: {reads_back}")

    with tempfile.TemporaryDirectory(prefix="workflow-policies-") as d:
        d = Path(d)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(d), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@example.com", "DBFORM_STATE": str(d / "state.json")}

        def git(*words, cwd):
            subprocess.run(["git", "-c", "init.defaultBranch=main", *words], cwd=cwd, env=env, check=True,
                           capture_output=True)

        base = d / "base"
        (base / "policies").mkdir(parents=True)
        (base / "policies/platform.yaml").write_text(RULE.format(id="platform-small", most=1000))
        (base / "policies/payments.yaml").write_text(RULE.format(id="payments-small", most=2000))
        git("init", "--quiet", cwd=base)
        git("add", ".", cwd=base)
        git("commit", "--quiet", "-m", "rules", cwd=base)
        work = d / "work"
        git("clone", "--quiet", str(base), str(work), cwd=d)
        # The pull request's edit of a rule file: not what it is checked against.
        (work / "policies/payments.yaml").write_text("version: 1\nrules: []\n")
        (work / "manifests").mkdir()
        (work / "manifests/db.yaml").write_text(MANIFEST)

        def plan(policy):
            p = subprocess.run([dbform, "plan", "--no-refresh", "-f", "manifests"], cwd=work,
                               env=dict(env, DBFORM_POLICY=policy), capture_output=True, text=True)
            return p.returncode, p.stdout + p.stderr

        # One file alone: the waiver of the other's rule is unknown, a mandatory violation.
        rc, out = plan(str(base / "policies/platform.yaml"))
        if rc != 1 or "which no policy file defines" not in out:
            problems.append(f"with one rule file the other's waiver is not refused (exit {rc}):\n{out}")

        for base_ref in ("main", ""):  # a pull request's job, then main's
            github_env = d / f"github-env-{base_ref or 'push'}"
            github_env.write_text("")
            subprocess.run(["rm", "-rf", str(work / "dbform-out")], check=True)
            p = subprocess.run(["bash", "-eo", "pipefail", "-c", policies], cwd=work, capture_output=True, text=True,
                               env=dict(env, GITHUB_ENV=str(github_env), GITHUB_BASE_REF=base_ref,
                                        DBFORM_POLICY_FILE="policies/platform.yaml:policies/payments.yaml"))
            where = f"the policies step ({'pull request' if base_ref else 'main'})"
            if p.returncode != 0:
                problems.append(f"{where} failed: {p.stderr}")
                continue
            handed = re.findall(r"^DBFORM_POLICY=(.*)$", github_env.read_text(), re.M)
            if len(handed) != 1 or len(handed[0].split(":")) != 2:
                problems.append(f"{where} hands on {handed}, not the two files")
                continue
            if base_ref:
                copied = (work / handed[0].split(":")[1]).read_text()
                if "payments-small" not in copied:
                    problems.append(f"{where}: the second copy is not the base branch's file:\n{copied}")
                rc, out = plan(handed[0])
                if rc != 0 or "[waived] platform-small" not in out or "[waived] payments-small" not in out:
                    problems.append(f"{where}: the plan with both files does not honour both waivers (exit {rc}):\n{out}")
            # The apply job's line reads the same list back.
            if reads_back:
                p = subprocess.run(["bash", "-c", reads_back[0] + '\nprintf %s "$DBFORM_POLICY"'], cwd=work,
                                   capture_output=True, text=True, env=env)
                if p.stdout != handed[0]:
                    problems.append(f"the apply job reads back {p.stdout!r}, not {handed[0]!r}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print("examples/ci/github-actions.yml: a list of rule files reaches the plan, from the base branch, and the apply")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
