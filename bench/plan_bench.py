#!/usr/bin/python3
"""Benchmark of `dbform plan` at scale.

Generates manifests of PROJECTS x SERVICES services (default 100 x 100 = 10,000, plus one VPC per
project) and state files that record none, half or all of them as READY, then times `dbform
validate`, `dbform plan` against each state, a plan with a conflict in every project, and a no-op
`dbform apply` of everything recorded. Beside each, the floors measured in the same run: yaml-cpp
alone loading the manifests and nlohmann alone parsing that state (bench/parse_floor.cpp), each in a
process of its own. Reports the median wall time of RUNS runs, its ratio to the floors' sum, and
the peak resident memory beside the floors' summed peaks.

Usage: plan_bench.py --dbform BIN --floor PARSE_FLOOR [--projects N] [--services N] [--runs N]
"""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time


def write_manifests(directory, projects, services, changed=False):
    os.makedirs(directory, exist_ok=True)
    for p in range(projects):
        lines = ["version: 1", "projects:", f"  - id: proj-{p:03d}", "    vpcs:",
                 "      - name: main", f"        cidr: 10.{p % 256}.0.0/16", "        region_code: us-east-1",
                 "    services:"]
        for s in range(services):
            cpu = 2000 if changed and s == 0 else 1000
            lines += [f"      - name: svc-{s:04d}", "        addons: [time-series]", f"        cpu_millis: {cpu}",
                      "        memory_gbs: 4", "        environment_tag: PROD", "        region_code: us-east-1",
                      "        replica_count: 1"]
        with open(os.path.join(directory, f"proj-{p:03d}.yaml"), "w") as f:
            f.write("\n".join(lines) + "\n")


def write_state(path, projects, services, recorded_share=1.0):
    resources = []
    for p in range(projects):
        pid = f"proj-{p:03d}"
        resources.append({"address": f"{pid}/vpcs/main", "project_id": pid, "kind": "vpc", "name": "main",
                          "settings": {"cidr": f"10.{p % 256}.0.0/16", "region_code": "us-east-1"},
                          "id": f"vpc{p}", "create_pending": False, "status": ""})
        for s in range(int(services * recorded_share)):
            sid = f"s{p:03d}{s:04d}x"
            resources.append({
                "address": f"{pid}/services/svc-{s:04d}", "project_id": pid, "kind": "service",
                "name": f"svc-{s:04d}",
                "settings": {"addons": ["time-series"], "cpu_millis": "1000", "memory_gbs": "4",
                             "environment_tag": "PROD", "region_code": "us-east-1", "replica_count": 1},
                "id": sid, "create_pending": False, "status": "READY",
                "endpoint": {"host": f"{sid}.{pid}.tsdb.example.com", "port": 30000 + s},
                "pooler_endpoint": {"host": f"{sid}-pooler.{pid}.tsdb.example.com", "port": 30000 + s},
                "initial_password": "x" * 24, "created_at": "2026-11-22T00:00:00Z",
                "updated_at": "2026-11-22T00:00:00Z",
                "last_response": {"service_id": sid, "project_id": pid, "name": f"svc-{s:04d}", "status": "READY",
                                  "region_code": "us-east-1", "service_type": "TIMESCALEDB",
                                  "resources": [{"id": "r1", "spec": {"cpu_millis": 1000, "memory_gbs": 4}}]}})
    with open(path, "w") as f:
        json.dump({"format": "dbform-state", "version": 1, "lineage": "00000000-0000-4000-8000-000000000000",
                   "serial": 1, "resources": resources}, f)


def generate(manifests, changed, states, args):
    write_manifests(manifests, args.projects, args.services)
    write_manifests(changed, args.projects, args.services, changed=True)
    write_state(states["empty"], args.projects, args.services, 0.0)
    write_state(states["half"], args.projects, args.services, 0.5)
    write_state(states["all"], args.projects, args.services, 1.0)


def measure(cmd, runs, env=None):
    """Median wall seconds and peak RSS (MiB) of the command, each run in a fresh process."""
    times, peak = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
        times.append(time.perf_counter() - start)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1, 2):
            raise SystemExit(f"{' '.join(cmd)} failed with exit code {code}")
        peak = max(peak, usage.ru_maxrss)
    return statistics.median(times), peak / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--floor", required=True, help="the parse_floor program (bench/parse_floor.cpp)")
    ap.add_argument("--projects", type=int, default=100)
    ap.add_argument("--services", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    total = args.projects * args.services
    with tempfile.TemporaryDirectory(prefix="dbform-bench-") as tmp:
        manifests = os.path.join(tmp, "manifests")
        changed = os.path.join(tmp, "changed")
        states = {"empty": os.path.join(tmp, "empty.json"), "half": os.path.join(tmp, "half.json"),
                  "all": os.path.join(tmp, "all.json")}
        # Generated in a process of its own: a child's peak RSS starts from what its parent held
        # when it was forked, so this process stays small.
        generator = multiprocessing.Process(target=generate, args=(manifests, changed, states, args))
        generator.start()
        generator.join()
        files = sorted(os.path.join(manifests, f) for f in os.listdir(manifests))
        yaml_floor = measure([args.floor, "yaml"] + files, args.runs)
        json_floor = {k: measure([args.floor, "json", path], args.runs) for k, path in states.items()}
        print(f"dbform plan benchmark: {args.projects} projects, {total} services, {args.projects} VPCs; "
              f"full state {os.path.getsize(states['all']) / 1e6:.1f} MB; median of {args.runs} runs")
        print(f"  floors: yaml-cpp loading the manifests {yaml_floor[0] * 1000:.0f} ms / {yaml_floor[1]:.1f} MiB; "
              + ", ".join(f"nlohmann parsing the {k} state {v[0] * 1000:.0f} ms / {v[1]:.1f} MiB"
                          for k, v in json_floor.items()))
        # A no-op apply calls nothing (no project has anything to create), so no API is needed.
        env = dict(os.environ, DBFORM_API_URL="http://127.0.0.1:9/unused", DBFORM_API_KEY="unused")
        cases = [
            ("validate", [args.dbform, "validate", "-f", manifests], None, None),
            ("plan, nothing recorded (all create)", [args.dbform, "plan", "-f", manifests, "--state", states["empty"]],
             "empty", None),
            ("plan, half recorded", [args.dbform, "plan", "-f", manifests, "--state", states["half"]], "half", None),
            ("plan, all recorded (no changes)", [args.dbform, "plan", "-f", manifests, "--state", states["all"]],
             "all", None),
            ("plan, one conflict per project", [args.dbform, "plan", "-f", changed, "--state", states["all"]], "all",
             None),
            ("apply, all recorded (no-op)", [args.dbform, "apply", "-f", manifests, "--state", states["all"],
                                             "--auto-approve"], "all", env),
        ]
        print(f"  {'':40s} {'wall':>8} {'x floors':>8} {'peak RSS':>10} {'floors RSS':>10}")
        for name, cmd, state, run_env in cases:
            wall, rss = measure(cmd, args.runs, run_env)
            floor_time = yaml_floor[0] + (json_floor[state][0] if state else 0)
            floor_rss = yaml_floor[1] + (json_floor[state][1] if state else 0)
            print(f"  {name:40s} {wall * 1000:6.0f}ms {wall / floor_time:8.2f} {rss:8.1f}MiB {floor_rss:8.1f}MiB")


if __name__ == "__main__":
    main()
