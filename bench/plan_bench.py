#!/usr/bin/python3
"""Benchmark of `dbform plan` at scale.

Generates manifests of PROJECTS x SERVICES services (default 100 x 100 = 10,000, plus one VPC per
project, one file per project) and state files that record none, half or all of them as READY,
then times `dbform validate`, `dbform plan` against each state and a plan with a conflict in every
project. Beside each, the floors measured in the same run, each in a process of its own
(bench/parse_floor.cpp): yaml-cpp alone loading the manifests and nlohmann alone parsing that state.
The time floor parses every manifest file and drops it (the least work that reads every byte); the
memory floor keeps every file's nodes, as a plan holds the whole manifest.

Then a no-op `dbform apply` of everything: a simulator is filled by one apply (not timed), and
the no-op apply, which reads every key and lists every project (its refresh), is timed beside the
parse floors plus the time curl takes to make the same calls (as many at once as --parallelism).

Then the cost of the policies: the same `--no-refresh` plan of every service with and without
examples/policies/baseline.yaml (goal: at most 10% more), run side by side.

Reports the median wall and CPU time of RUNS runs, the wall time's ratio to the floors' sum, and
the peak resident memory beside the floors' summed peaks.

Usage: plan_bench.py --dbform BIN --floor PARSE_FLOOR [--projects N] [--services N] [--runs N] [--refreshed-only]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apply_bench import Simulator, launcher_beside, measured  # noqa: E402

PARALLELISM = 10  # dbform's default --parallelism, and curl's in the refresh floor


def write_manifests(directory, projects, services, changed=False, vendor_shaped=False):
    """One file per project. `vendor_shaped`: each project names its key's variable (api_key_env,
    the vendor's keys belong to one project) and each service is attached to the project's VPC with
    a pooler and a synchronous HA replica, so that the API's answers carry every field the vendor's
    document gives a plain service an example of (vpc_endpoint, connection_pooler, ha_replicas)."""
    os.makedirs(directory, exist_ok=True)
    for p in range(projects):
        pid = project_id(p, vendor_shaped)
        lines = ["version: 1", "projects:", f"  - id: {pid}"]
        if vendor_shaped:
            lines.append(f"    api_key_env: {key_env_of(p)}")
        lines += ["    vpcs:", "      - name: main", f"        cidr: 10.{p % 256}.0.0/16", "        region_code: us-east-1",
                  "    services:"]
        for s in range(services):
            cpu = 2000 if changed and s == 0 else 1000
            lines += [f"      - name: svc-{s:04d}", "        addons: [time-series]", f"        cpu_millis: {cpu}",
                      "        memory_gbs: 4", "        environment_tag: PROD", "        region_code: us-east-1",
                      "        replica_count: 1"]
            if vendor_shaped:
                lines += ["        sync_replica_count: 1", "        vpc: main", "        connection_pooler: true"]
        with open(os.path.join(directory, f"{pid}.yaml"), "w") as f:
            f.write("\n".join(lines) + "\n")


def project_id(p, vendor_shaped=False):
    """proj-000, or ten characters like the vendor's project ids (rp1pz7uyae) for vendor-sized answers."""
    return f"rp1pz7u{p:03d}" if vendor_shaped else f"proj-{p:03d}"


def key_env_of(p):
    return f"DBFORM_BENCH_KEY_{p:03d}"


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


def measure(launcher, cmd, runs, env=None, before_each=None, ok=(0, 1, 2)):
    """Median wall and CPU seconds and peak RSS (MiB) of the command, each run in a fresh process.
    An exit code outside `ok` ends the benchmark (plan exits 1 on a conflict, 2 with changes)."""
    walls, cpus, peak = [], [], 0
    for _ in range(runs):
        if before_each:
            before_each()
        code, wall, cpu, rss = measured(launcher, cmd, env)
        if code not in ok:
            raise SystemExit(f"{' '.join(cmd)} failed with exit code {code}")
        walls.append(wall)
        cpus.append(cpu)
        peak = max(peak, rss)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "rss": peak}


def measure_beside(launcher, cmd, floors, runs, env=None, before_each=None, ok=(0, 1, 2)):
    """The command measured as measure() does, and the median of its floors' summed wall time, each
    floor run right before each run of the command: the machine's speed drifts over minutes, and
    a ratio is only fair between runs made side by side."""
    floor_walls, samples = [], []
    for _ in range(runs):
        floor_walls.append(sum(measure(launcher, f, 1)["wall"] for f in floors))
        samples.append(measure(launcher, cmd, 1, env, before_each, ok))
    return {"wall": statistics.median(m["wall"] for m in samples), "cpu": statistics.median(m["cpu"] for m in samples),
            "rss": max(m["rss"] for m in samples), "floor": statistics.median(floor_walls)}


def key_variable(project_id):
    """The variable dbform reads a project's key from when the manifest names none."""
    return "DBFORM_API_KEY_" + "".join(c if c.isalnum() else "_" for c in project_id.upper())


class NoOpApply:
    """A simulator holding every declared resource, and a state recording them, made by one apply."""

    def __init__(self, args, tmp, manifests, vendor_shaped=False):
        self.manifests = manifests
        self.projects = [project_id(p, vendor_shaped) for p in range(args.projects)]
        keys = {f"bench-key-{p}": p for p in self.projects}
        os.makedirs(tmp, exist_ok=True)
        self.sim = Simulator(args.dbform, tmp, args.projects, 0, 0, keys, args.connection_delay)
        self.env = dict(os.environ, DBFORM_API_URL=self.sim.url("/public/api/v1"))
        for i, (key, project) in enumerate(keys.items()):
            self.env[key_env_of(i) if vendor_shaped else key_variable(project)] = key
        self.keys = {project: key for key, project in keys.items()}
        self.pristine = os.path.join(tmp, "applied.pristine.json")
        self.state = os.path.join(tmp, "applied.json")
        fill_log = os.path.join(tmp, "fill.log")
        if measured(args.launcher, [args.dbform, "apply", "-f", manifests, "--state", self.pristine, "--auto-approve",
                                    "--parallelism", "20"], self.env, fill_log)[0] != 0:
            raise SystemExit(f"filling the simulator failed: see {fill_log}")
        self.cmd = [args.dbform, "apply", "-f", manifests, "--state", self.state, "--auto-approve"]
        # One no-op run, not timed, counts what a no-op apply calls; it also records what the
        # refresh reads of every service, which the next no-op runs then find unchanged.
        before = self.calls()
        self.restore()
        if measured(args.launcher, self.cmd, self.env)[0] != 0:
            raise SystemExit("the first no-op apply failed")
        for suffix in ("", ".journal"):  # the state as dbform left it, a journal included
            if os.path.exists(self.state + suffix):
                shutil.copy(self.state + suffix, self.pristine + suffix)
            elif os.path.exists(self.pristine + suffix):
                os.remove(self.pristine + suffix)
        self.made = {k: v - before.get(k, 0) for k, v in self.calls().items() if v != before.get(k, 0)}
        if any(not k.startswith("GET") for k in self.made):
            raise SystemExit(f"the no-op apply changed something: {self.made}")

    def answer_bytes(self):
        """The size of one service in a list's answer, as the API sends it (no spaces)."""
        project = self.projects[0]
        request = urllib.request.Request(self.sim.url(f"/public/api/v1/projects/{project}/services"),
                                         headers={"Authorization": f"Bearer {self.keys[project]}"})
        with urllib.request.urlopen(request) as r:
            return len(json.dumps(json.load(r)[0], separators=(",", ":")))

    def calls(self):
        with urllib.request.urlopen(self.sim.url("/_sim/requests")) as r:
            return json.load(r)

    def restore(self):
        for suffix in ("", ".journal", ".backup"):
            if os.path.exists(self.state + suffix):
                os.remove(self.state + suffix)
            if suffix != ".backup" and os.path.exists(self.pristine + suffix):
                shutil.copy(self.pristine + suffix, self.state + suffix)

    def curl_config(self, path):
        """The calls the no-op apply made, for curl: each project's key check and its two lists."""
        per_project = {"GET /auth/info": "/auth/info", "GET /projects/{project_id}/services": "/projects/{p}/services",
                       "GET /projects/{project_id}/vpcs": "/projects/{p}/vpcs"}
        if set(self.made) != set(per_project) or any(n != len(self.projects) for n in self.made.values()):
            raise SystemExit(f"the no-op apply made other calls than the floor's: {self.made}")
        with open(path, "w") as f:
            for p in self.projects:
                for route in per_project.values():
                    f.write(f'url = "{self.sim.url("/public/api/v1" + route.format(p=p))}"\n'
                            f'header = "Authorization: Bearer {self.keys[p]}"\ncompressed\noutput = "/dev/null"\nnext\n')
        return ["curl", "-s", "--parallel", "--parallel-max", str(PARALLELISM), "-K", path]

    def stop(self):
        self.sim.stop()


BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "policies", "baseline.yaml")


def policies(args, manifests, state):
    """The --no-refresh plan of every service without rules and with the baseline, side by side
    (the baseline's five rules over 10,000 PROD services, each of which breaks prod-needs-protection:
    the plan lists 10,000 violations). Goal: at most 10% more."""
    plan_cmd = [args.dbform, "plan", "-f", manifests, "--state", state, "--no-refresh"]
    bare, checked = [], []
    for _ in range(args.runs):
        bare.append(measure(args.launcher, plan_cmd, 1)["wall"])
        checked.append(measure(args.launcher, plan_cmd + ["--policy", BASELINE], 1)["wall"])
    ratio = statistics.median(checked) / statistics.median(bare)
    print(f"  --no-refresh plan with examples/policies/baseline.yaml {statistics.median(checked) * 1000:.0f} ms vs "
          f"without rules {statistics.median(bare) * 1000:.0f} ms: {(ratio - 1) * 100:+.1f}% "
          f"(goal <= +10%: {'met' if ratio <= 1.10 else 'NOT met'})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--floor", required=True, help="the parse_floor program (bench/parse_floor.cpp)")
    ap.add_argument("--projects", type=int, default=100)
    ap.add_argument("--services", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connection-delay", type=float, default=0.05,
                    help="what each new connection to the simulator costs, in seconds (a TLS handshake)")
    ap.add_argument("--refreshed-only", action="store_true",
                    help="only the refreshed plans beside their --no-refresh plans (no floors, no other cases)")
    args = ap.parse_args()
    args.launcher = launcher_beside(args.dbform)
    total = args.projects * args.services
    with tempfile.TemporaryDirectory(prefix="dbform-bench-") as tmp:
        manifests = os.path.join(tmp, "manifests")
        changed = os.path.join(tmp, "changed")
        states = {"empty": os.path.join(tmp, "empty.json"), "half": os.path.join(tmp, "half.json"),
                  "all": os.path.join(tmp, "all.json")}
        if args.refreshed_only:
            return refreshed_only(args, tmp)
        generate(manifests, changed, states, args)
        files = sorted(os.path.join(manifests, f) for f in os.listdir(manifests))
        yaml_time = measure(args.launcher, [args.floor, "yaml"] + files, args.runs)
        yaml_held = measure(args.launcher, [args.floor, "yaml-held"] + files, args.runs)
        noop = NoOpApply(args, tmp, manifests)
        try:
            states["applied"] = noop.pristine
            json_floor = {k: measure(args.launcher, [args.floor, "json", path], args.runs) for k, path in states.items()}
            curl_floor = measure(args.launcher, noop.curl_config(os.path.join(tmp, "curl.cfg")), args.runs)
            # The floors once, for this summary; each case's ratio uses floors run beside it.
            print(f"dbform plan benchmark: {args.projects} projects, {total} services, {args.projects} VPCs; "
                  f"full state {os.path.getsize(states['all']) / 1e6:.1f} MB; median of {args.runs} runs")
            print(f"  floors: yaml-cpp parsing the manifests {yaml_time['wall'] * 1000:.0f} ms, holding them "
                  f"{yaml_held['rss']:.1f} MiB; nlohmann parsing the state: "
                  + ", ".join(f"{k} {v['wall'] * 1000:.0f} ms / {v['rss']:.1f} MiB" for k, v in json_floor.items())
                  + f"; curl making the no-op apply's {sum(noop.made.values())} calls {curl_floor['wall'] * 1000:.0f} ms")
            curl = noop.curl_config(os.path.join(tmp, "curl.cfg"))
            yaml_cmd = [args.floor, "yaml"] + files
            json_cmd = {k: [args.floor, "json", path] for k, path in states.items()}
            cases = [
                ("validate", [args.dbform, "validate", "-f", manifests], None, {}),
                ("plan, nothing recorded (all create)",
                 [args.dbform, "plan", "-f", manifests, "--state", states["empty"]], "empty", {}),
                ("plan, half recorded", [args.dbform, "plan", "-f", manifests, "--state", states["half"]], "half", {}),
                ("plan, all recorded (no changes)",
                 [args.dbform, "plan", "-f", manifests, "--state", states["all"]], "all", {}),
                ("plan, one conflict per project",
                 [args.dbform, "plan", "-f", changed, "--state", states["all"]], "all", {}),
                ("apply, all recorded (no-op, refreshed)", noop.cmd, "applied",
                 {"env": noop.env, "before_each": noop.restore, "ok": (0,)}),
            ]
            # dbform parses manifest files on both cores: its CPU time is set beside the floors too.
            print(f"  {'':40s} {'wall':>8} {'cpu':>8} {'floors':>8} {'x floors':>8} {'cpu x':>6} {'peak RSS':>10} "
                  f"{'floors RSS':>10}")
            for name, cmd, state, extra in cases:
                floors = [yaml_cmd] + ([json_cmd[state]] if state else []) + ([curl] if state == "applied" else [])
                m = measure_beside(args.launcher, cmd, floors, args.runs, **extra)
                floor_rss = yaml_held["rss"] + (json_floor[state]["rss"] if state else 0)
                print(f"  {name:40s} {m['wall'] * 1000:6.0f}ms {m['cpu'] * 1000:6.0f}ms {m['floor'] * 1000:6.0f}ms "
                      f"{m['wall'] / m['floor']:8.2f} {m['cpu'] / m['floor']:6.2f} {m['rss']:8.1f}MiB {floor_rss:8.1f}MiB")
            refreshed_plan(args, noop, "key variables by project id, the simulator's own answers")
            policies(args, manifests, states["all"])
        finally:
            noop.stop()
        vendor_shaped_plan(args, tmp)


def vendor_shaped_plan(args, tmp):
    """The real multi-project case: the vendor's keys belong to one project, so each project names its
    own (api_key_env), and the answers are as large as the vendor's examples."""
    manifests = os.path.join(tmp, "vendor-shaped")
    write_manifests(manifests, args.projects, args.services, vendor_shaped=True)
    noop = NoOpApply(args, os.path.join(tmp, "vendor-sim"), manifests, vendor_shaped=True)
    try:
        refreshed_plan(args, noop, f"api_key_env per project, answers of {noop.answer_bytes()} bytes a service")
    finally:
        noop.stop()


def refreshed_only(args, tmp):
    """--refreshed-only: the two refreshed plans alone, each beside its --no-refresh plan."""
    manifests = os.path.join(tmp, "manifests")
    write_manifests(manifests, args.projects, args.services)
    print(f"dbform refreshed plans: {args.projects} projects, {args.projects * args.services} services; "
          f"median of {args.runs} runs")
    noop = NoOpApply(args, tmp, manifests)
    try:
        refreshed_plan(args, noop, "key variables by project id, the simulator's own answers")
    finally:
        noop.stop()
    vendor_shaped_plan(args, tmp)


def refreshed_plan(args, noop, what):
    """A pull request's plan, which always refreshes: refreshing (read-only, lock-free) beside the same plan
    from the state alone, run side by side; goal: at most 1.5x."""
    plan_cmd = [args.dbform, "plan", "-f", noop.manifests, "--state", noop.state]
    offline, refreshed = [], []
    for _ in range(args.runs):
        noop.restore()
        offline.append(measure(args.launcher, plan_cmd + ["--no-refresh"], 1, noop.env)["wall"])
        before = noop.calls()
        refreshed.append(measure(args.launcher, plan_cmd, 1, noop.env)["wall"])
        calls = sum(v - before.get(k, 0) for k, v in noop.calls().items())
    ratio = statistics.median(refreshed) / statistics.median(offline)
    print(f"  refreshed plan ({what}) {statistics.median(refreshed) * 1000:.0f} ms ({calls} calls, new connections "
          f"{args.connection_delay * 1000:.0f} ms) vs --no-refresh {statistics.median(offline) * 1000:.0f} ms: "
          f"{ratio:.2f}x (goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
