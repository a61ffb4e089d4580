#!/usr/bin/python3
"""Keeps examples/ci/ working: the shell script against the simulator, the workflow's syntax.

The script (examples/ci/dbform-ci.sh) runs the pipeline of a manifests repository against
`dbform sim`: a plan with changes (exit 0, plan.exitcode 2, markdown and plan file saved), the apply of that plan
(JSON lines, endpoints without passwords), a plan with nothing left (exit 0), a
plan gone stale before its apply (refused, nothing created), a plan with conflicts (exit 1, no
plan file) and invalid manifests (exit 1, the comment says why).

The GitHub Actions workflow (examples/ci/github-actions.yml) cannot run here, so it is checked
as far as it can be: it is YAML with the expected triggers and jobs, every `run:` block is valid
bash, and every dbform command in it uses a subcommand and flags the binary has.

Usage: ci_example.py --dbform BIN --examples DIR
Needs python3-yaml (a Debian package).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT = "acme-prod"
KEY = "ci-example-key-0123456789"


def manifest(services, orders_region=None, key_env=None):
    """`orders_region` declares orders in a region: one it was not created in is a conflict;
    `key_env` is the project's `api_key_env`."""
    text = f"version: 1\nprojects:\n  - id: {PROJECT}\n" + (f"    api_key_env: {key_env}\n" if key_env else "") + "    services:\n"
    for s in services:
        text += f"      - name: {s}\n        cpu_millis: 1000\n"
        if s == "orders" and orders_region:
            text += f"        region_code: {orders_region}\n"
    return text


class Failures(list):
    def check(self, condition, what):
        if not condition:
            self.append(what)
        return condition


def start_sim(dbform, workdir):
    port_file = workdir / "sim.port"
    sim = subprocess.Popen([dbform, "sim", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                            "--key", f"{KEY}={PROJECT}", "--queued-delay", "50ms", "--configuring-delay", "100ms"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text().strip():
        if time.monotonic() > deadline or sim.poll() is not None:
            sim.kill()
            raise RuntimeError("dbform sim did not start")
        time.sleep(0.05)
    return sim, f"http://127.0.0.1:{port_file.read_text().strip()}/public/api/v1"


def check_script(dbform, script, fails):
    p = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    fails.check(p.returncode == 0, f"bash -n {script}: {p.stderr}")

    with tempfile.TemporaryDirectory(prefix="ci-example-") as d:
        d = Path(d)
        sim, url = start_sim(dbform, d)
        try:
            repo = d / "repo"
            (repo / "manifests").mkdir(parents=True)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(d), "DBFORM": dbform,
                   "DBFORM_API_URL": url, "DBFORM_API_KEY": KEY, "DBFORM_STATE": str(d / "team-state.json"),
                   "DBFORM_MANIFESTS": "manifests"}
            out = repo / "dbform-out"
            # As the example workflow does: only the apply gets the state key, which seals every
            # password it records; the plans (a pull request's) get none and need none.
            keyed = dict(env, DBFORM_STATE_PASSPHRASE="ci-example-passphrase")

            def run(step):
                return subprocess.run(["bash", str(script), step], cwd=repo, env=keyed if step == "apply" else env,
                                      capture_output=True, text=True, timeout=120)

            def password_of(address):
                p = subprocess.run([dbform, "output", f"{address}.password"], env=keyed, capture_output=True, text=True)
                fails.check(p.returncode == 0 and p.stdout.strip(), f"output {address}.password with the key: {p.stderr}")
                return p.stdout.strip() or "(none)"

            def state():
                return json.loads((d / "team-state.json").read_text())

            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing"]))
            p = run("plan")
            # Changes pending is a plan that worked: exit 0 (a generic CI step stays green), and
            # plan.exitcode holds dbform's 2 for the step that decides whether to apply.
            fails.check(p.returncode == 0, f"plan with changes: exit {p.returncode}\n{p.stderr}")
            md = (out / "plan.md").read_text()
            fails.check(md.startswith("<!-- dbform-plan -->\n### dbform plan: 2 to create"), f"plan.md:\n{md[:300]}")
            fails.check((out / "plan.exitcode").read_text().strip() == "2", "plan.exitcode is not 2")
            fails.check((out / "dbform.plan").exists(), "no saved plan")

            p = run("apply")
            fails.check(p.returncode == 0, f"apply: exit {p.returncode}\n{p.stderr}")
            events = [json.loads(line) for line in (out / "apply.jsonl").read_text().splitlines()]
            fails.check(events and events[0]["type"] == "plan" and events[-1]["type"] == "summary"
                        and events[-1]["ready"] == 2, f"apply.jsonl: {events[:1]} ... {events[-1:]}")
            endpoints = (out / "endpoints.txt").read_text()
            state_text = (d / "team-state.json").read_text()
            for r in state()["resources"]:
                fails.check(r["address"] in endpoints and r["endpoint"]["host"] in endpoints, f"endpoints.txt lacks {r['address']}:\n{endpoints}")
                password = password_of(r["address"])
                for text, what in ((endpoints, "endpoints.txt"), (p.stdout + p.stderr, "apply output"),
                                   (md, "plan.md"), (state_text, "the state file (to be kept as an artifact)")):
                    fails.check(password not in text, f"{what} holds the password of {r['address']}")

            p = run("plan")
            fails.check(p.returncode == 0, f"plan with nothing to do: exit {p.returncode}\n{p.stderr}")
            fails.check("### dbform plan: no changes" in (out / "plan.md").read_text(), "no 'no changes' heading")
            # A merge request from a fork has no key: it plans from the state alone.
            keyless = {k: v for k, v in env.items() if k != "DBFORM_API_KEY"}
            p = subprocess.run(["bash", str(script), "plan"], cwd=repo, env=keyless, capture_output=True, text=True,
                               timeout=120)
            md = (out / "plan.md").read_text()
            fails.check(p.returncode == 0 and "### dbform plan: no changes" in md and "From the state alone" in md,
                        f"plan without a key: exit {p.returncode}\n{p.stderr}\n{md[:600]}")
            # The key only in the variable the project's `api_key_env` names (as examples/multi-project.yaml
            # recommends): the script asks dbform whether it has a key for every project (whoami
            # --offline), not the shell for DBFORM_API_KEY*, so main's plan still refreshes.
            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing"], key_env="DBFORM_PROD_DB_KEY"))
            p = subprocess.run(["bash", str(script), "plan"], cwd=repo, env=dict(keyless, DBFORM_PROD_DB_KEY=KEY),
                               capture_output=True, text=True, timeout=120)
            md = (out / "plan.md").read_text()
            fails.check(p.returncode == 0 and "### dbform plan: no changes" in md and "From the state alone" not in md,
                        f"plan with the key in api_key_env's variable did not refresh: exit {p.returncode}\n{p.stderr}\n{md[:600]}")
            fails.check("a key from DBFORM_PROD_DB_KEY" in p.stderr, f"the plan's log does not say which key: {p.stderr}")
            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing"]))

            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing", "search"]))
            fails.check(run("plan").returncode == 0 and (out / "plan.exitcode").read_text().strip() == "2",
                        "plan of search: not exit 0 with plan.exitcode 2")
            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing", "search", "reports"]))
            before = (d / "team-state.json").read_text()
            p = run("apply")
            fails.check(p.returncode == 1 and "stale" in p.stderr, f"stale plan applied: exit {p.returncode}\n{p.stderr}")
            fails.check((d / "team-state.json").read_text() == before, "a refused plan changed the state")

            (repo / "manifests/db.yaml").write_text(manifest(["orders", "billing"], orders_region="eu-west-1"))
            p = run("plan")
            fails.check(p.returncode == 1, f"plan with a conflict: exit {p.returncode}")
            fails.check("1 conflict, nothing can be applied" in (out / "plan.md").read_text(), "no conflict heading")
            fails.check(not (out / "dbform.plan").exists(), "a plan with conflicts was saved")
            fails.check(run("apply").returncode == 1, "apply without a saved plan did not fail")

            (repo / "manifests/db.yaml").write_text(manifest(["orders"]).replace("cpu_millis", "cpu_milis"))
            p = run("plan")
            md = (out / "plan.md").read_text()
            fails.check(p.returncode == 1, f"plan of invalid manifests: exit {p.returncode}")
            fails.check("### dbform plan failed" in md and "did you mean `cpu_millis`" in md, f"plan.md:\n{md}")
        finally:
            sim.send_signal(signal.SIGTERM)
            try:
                sim.wait(timeout=10)
            except subprocess.TimeoutExpired:
                sim.kill()


def dbform_commands(script):
    """Each `dbform SUBCOMMAND --flag ...` in a run block, as (subcommand, [flags])."""
    text = script.replace("\\\n", " ")
    for m in re.finditer(r"(?:^|&&|\|\||;)[ \t]*dbform\s+([a-z]+)([^\n|;&>]*)", text, re.M):
        yield m.group(1), re.findall(r"(?<!\S)(--?[a-z][a-z-]*)", m.group(2))


def check_workflow(dbform, workflow, fails):
    doc = yaml.safe_load(workflow.read_text())
    on = doc.get("on", doc.get(True))  # PyYAML reads the key `on` as true
    fails.check(set(on) >= {"pull_request", "push"}, f"triggers: {on}")
    fails.check(on["push"]["branches"] == ["main"], "apply is not on main")
    jobs = doc["jobs"]
    fails.check(set(jobs) == {"plan", "apply", "refresh"}, f"jobs: {list(jobs)}")
    fails.check("schedule" in on, "no schedule: nothing keeps the state current for plans without a key")
    fails.check("apply --refresh-only" in yaml.safe_dump(jobs["refresh"]), "the refresh job does not apply --refresh-only")
    fails.check(jobs["apply"]["needs"] == "plan", "apply does not need plan")
    helps = {}
    for job_name, job in jobs.items():
        for step in job["steps"]:
            if "run" not in step:
                continue
            script = re.sub(r"\$\{\{[^}]*\}\}", "x", step["run"])
            p = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
            fails.check(p.returncode == 0, f"{job_name} / {step.get('name')}: not valid bash: {p.stderr}")
            for sub, flags in dbform_commands(step["run"]):
                if sub not in helps:
                    helps[sub] = subprocess.run([dbform, sub, "--help"], capture_output=True, text=True).stdout
                fails.check(helps[sub], f"{job_name}: `dbform {sub}` is not a dbform command")
                for flag in flags:
                    fails.check(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[sub]),
                                f"{job_name}: `dbform {sub}` has no flag {flag}")
    fails.check(len(helps) >= 4, f"found only these dbform commands in the workflow: {sorted(helps)}")
    # Whether the plan refreshes is dbform's answer (keys may come from a project's api_key_env), not
    # the shell's look at DBFORM_API_KEY.
    plan_run = next((step["run"] for step in jobs["plan"]["steps"] if step.get("name") == "Plan"), "")
    fails.check("dbform whoami --offline" in plan_run and "--no-refresh" in plan_run, "the Plan step does not ask `dbform whoami --offline` whether to refresh")
    fails.check("DBFORM_API_KEY:-" not in plan_run, "the Plan step decides on refresh from DBFORM_API_KEY alone")
    # dbform is built once per run, in the plan job (the apply job installs that package) or in the
    # nightly refresh, which runs alone.
    builds = [(name, step) for name, job in jobs.items() for step in job["steps"] if "scripts/build.sh" in step.get("run", "")]
    fails.check(sorted(name for name, _ in builds) == ["plan", "refresh"], f"dbform is built in: {[name for name, _ in builds]}")
    fails.check(all("cpack -G DEB" in step["run"] for name, step in builds if name == "plan"), "the plan job does not package dbform")
    uploads = [step for step in jobs["plan"]["steps"] if step.get("with", {}).get("name") == "dbform-deb"]
    downloads = [step for step in jobs["apply"]["steps"] if step.get("with", {}).get("name") == "dbform-deb"]
    fails.check(uploads and "upload-artifact" in uploads[0]["uses"], "the plan job does not upload the package")
    fails.check(downloads and "download-artifact" in downloads[0]["uses"], "the apply job does not download the package")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--examples", required=True)
    args = ap.parse_args()
    dbform = str(Path(args.dbform).resolve())
    ci = Path(args.examples).resolve() / "ci"
    fails = Failures()
    check_script(dbform, ci / "dbform-ci.sh", fails)
    check_workflow(dbform, ci / "github-actions.yml", fails)
    if fails:
        print(f"{len(fails)} problem(s):")
        for f in fails:
            print("  " + f)
        return 1
    print("examples/ci: the script plans and applies against the simulator; the workflow is consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
