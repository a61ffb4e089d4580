#!/usr/bin/python3
"""Crash safety at scale: `dbform apply` of many services, SIGKILLed at random moments, then finished.

Starts `dbform sim` (every service READY after T), declares COUNT services over two projects, and
runs KILLS applies into one state, each killed with SIGKILL at a random moment: while creates go
out, once a random number of the remaining ones were made; once all were made, a random delay into
the wait for READY. Then one apply runs to the end. Passes when the simulator has every service
exactly once (COUNT creates performed, not one more) and the state records each READY with its id
and a password (an adopted service's new one included), with no intent or password left pending.

Usage: kill_bench.py --dbform BIN [--count 2000] [--kills 10] [--provision 2s] [--seed N]
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apply_bench import CREATE_ROUTE, KEY_PREFIX, Simulator, seconds, write_manifest  # noqa: E402


def read_state(dbform, state, env):
    """The state as dbform reads it (its journal replayed), through `dbform state pull`."""
    out = subprocess.run([dbform, "state", "pull", "--state", state], env=env, check=True, capture_output=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--provision", default="2s")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    projects = 2
    with tempfile.TemporaryDirectory(prefix="dbform-kill-bench-") as tmp:
        sim = Simulator(args.dbform, tmp, projects, seconds(args.provision), 0)
        try:
            manifest = os.path.join(tmp, "bench.yaml")
            state = os.path.join(tmp, "state.json")
            write_manifest(manifest, projects, args.count)
            env = dict(os.environ, DBFORM_API_URL=sim.url("/public/api/v1"))
            for p in range(projects):
                env[f"DBFORM_BENCH_KEY_{p}"] = f"{KEY_PREFIX}{p}"
            cmd = [args.dbform, "apply", "-f", manifest, "--state", state, "--auto-approve"]
            killed_running = 0
            for _ in range(args.kills):
                made = sim.get("/_sim/requests").get(CREATE_ROUTE, 0)
                proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if made < args.count:
                    # While creates go out: once a random number of the remaining ones were made.
                    target = made + rng.randint(1, args.count - made)
                    while proc.poll() is None and sim.get("/_sim/requests").get(CREATE_ROUTE, 0) < target:
                        time.sleep(0.01)
                else:
                    # Everything was created: while services are waited for, recorded and finished.
                    deadline = time.time() + rng.uniform(0, 1 + seconds(args.provision))
                    while proc.poll() is None and time.time() < deadline:
                        time.sleep(0.01)
                if proc.poll() is None:
                    killed_running += 1
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            last = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if last.returncode != 0:
                raise SystemExit(f"the finishing apply failed:\n{last.stderr[-3000:]}")
            services = sim.get("/_sim/services")
            calls = sim.get("/_sim/requests")
            final = read_state(args.dbform, state, env)
        finally:
            sim.stop()
    names = [s["name"] for s in services]
    recorded = {r["name"]: r for r in final["resources"] if r["kind"] == "service"}
    problems = []
    if len(names) != args.count or len(set(names)) != args.count:
        problems.append(f"{len(names)} services exist for {len(set(names))} names, expected {args.count} once each")
    creates = calls.get(CREATE_ROUTE, 0)
    if creates != args.count:
        problems.append(f"{creates} creates were performed for {args.count} services")
    for name in sorted(set(names)):
        r = recorded.get(name)
        if not r or r["status"] != "READY" or not r["id"] or not r["initial_password"] or r.get("pending_password") \
                or r["create_pending"]:
            problems.append(f"{name}: not recorded READY with its id and a password: {json.dumps(r)[:300]}")
    adopted = calls.get("POST /projects/{project_id}/services/{service_id}/updatePassword", 0)
    print(f"dbform kill benchmark: {args.count} services, {args.kills} applies SIGKILLed at random moments "
          f"({killed_running} while running), seed {args.seed}, then one apply to the end")
    print(f"  {len(set(names))} services exist, {creates} creates performed, {adopted} adopted with a new password, "
          f"{len(recorded)} recorded")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems[:20]))
        raise SystemExit(1)
    print("  every service exists once and is recorded READY with its password")


if __name__ == "__main__":
    main()
