#!/usr/bin/python3
"""Where each secret goes in the example workflows (examples/ci/*.yml).

A pull request's jobs run code its author controls (and, from a fork, a stranger's), so:

- no secret is set for a whole workflow or a whole pull-request job: a step gets a secret only
  when it runs dbform or a script of the base branch (checked out in base/), never the pull
  request's code (pr/);
- the pull request's plan job gets no state key (DBFORM_STATE_PASSPHRASE, DBFORM_STATE_KEY_FILE)
  and reads the state with the SELECT-only role (DBFORM_PLAN_STATE_URL), never the role that can
  read the secrets table and write (DBFORM_STATE_URL); without an API key (a fork) it plans with
  --no-refresh;
- a job that keeps the state as an artifact seals its passwords: it has the state key and refuses
  to run without it, and an upload that runs after a failure (`always()`) requires the key in its
  own condition, so no uploaded state holds a clear password;
- the preview jobs run the base branch's definition: their dbform steps run base/'s script.

Usage: workflow_secrets.py FILE.yml...   (exit 1, naming each broken rule, when one is broken)
Needs python3-yaml (a Debian package).
"""
import re
import sys

import yaml

SECRET = re.compile(r"\$\{\{[^}]*\bsecrets\.([A-Za-z0-9_]+)")
STATE_KEYS = {"DBFORM_STATE_PASSPHRASE", "DBFORM_STATE_KEY_FILE"}


def secrets_in(value):
    return set(SECRET.findall(yaml.safe_dump(value) if not isinstance(value, str) else value))


def triggers(doc):
    # PyYAML reads the key `on` as True.
    on = doc.get("on", doc.get(True))
    if isinstance(on, str):
        return {on}
    return set(on or [])


def runs_on_pull_requests(job):
    condition = str(job.get("if", ""))
    excluded = re.search(r"github\.event_name\s*!=\s*'pull_request'", condition)
    only_other = re.search(r"github\.event_name\s*==\s*'(?!pull_request)[a-z_]+'", condition)
    return not excluded and not only_other


def check(path):
    problems = []
    doc = yaml.safe_load(open(path))
    name = path.split("/")[-1]
    if secrets_in(doc.get("env", {})):
        problems.append(f"{name}: the workflow's env sets secrets {sorted(secrets_in(doc['env']))} for every job")
    pull_requests = "pull_request" in triggers(doc) or "pull_request_target" in triggers(doc)
    for job_name, job in doc.get("jobs", {}).items():
        where = f"{name}: job {job_name}"
        steps = job.get("steps", [])
        job_secrets = secrets_in(job.get("env", {}))
        step_secrets = set().union(*(secrets_in(s.get("env", {})) for s in steps)) if steps else set()
        on_prs = pull_requests and runs_on_pull_requests(job)
        if on_prs and job_secrets:
            problems.append(f"{where}: runs on pull requests and sets secrets {sorted(job_secrets)} for the whole job")
        if on_prs:
            for step in steps:
                got = secrets_in(step.get("env", {}))
                if not got:
                    continue
                text = str(step.get("run", ""))
                label = f"{where}, step {step.get('name', '?')!r}"
                if "run" not in step:
                    problems.append(f"{label}: gives {sorted(got)} to an action, not to dbform")
                elif step.get("working-directory", "").startswith("pr") or re.search(r"(^|[\s/\"'])pr/", text):
                    problems.append(f"{label}: gives {sorted(got)} to a step that runs the pull request's code")
                elif not re.search(r"(^|\s)(dbform\s|bash base/)", text):
                    problems.append(f"{label}: gives {sorted(got)} to a step that runs neither dbform nor base/'s script")
        plans = any(re.search(r"\bdbform plan\b", str(s.get("run", ""))) for s in steps)
        if on_prs and plans:
            all_secrets = job_secrets | step_secrets
            if all_secrets & STATE_KEYS:
                problems.append(f"{where}: the pull request's plan gets the state key {sorted(all_secrets & STATE_KEYS)}")
            if "DBFORM_STATE_URL" in all_secrets:
                problems.append(f"{where}: the pull request's plan gets DBFORM_STATE_URL (the role that reads secrets); "
                                "give it DBFORM_PLAN_STATE_URL, the SELECT-only role without the secrets table")
            if "DBFORM_PLAN_STATE_URL" not in all_secrets:
                problems.append(f"{where}: the pull request's plan does not read the state with DBFORM_PLAN_STATE_URL")
            plan_steps = [str(s.get("run", "")) for s in steps if re.search(r"\bdbform plan\b", str(s.get("run", "")))]
            if not any("--no-refresh" in text and "DBFORM_API_KEY" in text for text in plan_steps):
                problems.append(f"{where}: a plan without an API key (a fork's pull request) does not fall back to --no-refresh")
        for i, step in enumerate(steps):
            uploads_state = "upload-artifact" in str(step.get("uses", "")) and ".state.json" in str(step.get("with", {}).get("path", ""))
            if not uploads_state:
                continue
            keyed = (job_secrets | step_secrets) & STATE_KEYS
            refuses = any(re.search(r"DBFORM_STATE_(PASSPHRASE|KEY_FILE)", str(s.get("run", ""))) and "exit 1" in str(s.get("run", ""))
                          for s in steps[:i])
            # A refusal stops the steps after it, but not one that runs `always()` (or on failure):
            # that upload must itself require the key.
            condition = str(step.get("if", ""))
            runs_anyway = re.search(r"\b(always|failure|cancelled)\(\)", condition)
            requires_key = re.search(r"env\.DBFORM_STATE_(PASSPHRASE|KEY_FILE)\s*!=\s*''", condition)
            if not keyed:
                problems.append(f"{where}: uploads the state without the state key: its passwords would be in clear")
            elif not refuses:
                problems.append(f"{where}: uploads the state but no step before it refuses to run without the state key")
            elif runs_anyway and not requires_key:
                problems.append(f"{where}: step {step.get('name', '?')!r} uploads the state even after the refusal "
                                f"without the state key (`if: {condition}`): its condition must require the key")
    return problems


def main():
    problems = []
    for path in sys.argv[1:]:
        problems += check(path)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"workflow secrets: {len(sys.argv) - 1} workflow(s) checked, every secret where it belongs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
