#!/usr/bin/python3
"""Benchmark of `dbform apply` at scale, against `dbform sim`.

For each count of services (default 500, 2,000 and 5,000, spread over PROJECTS projects) a fresh
simulator provisions every service in T (QUEUED for T/2, CONFIGURING for T/2) and answers each call
after LATENCY; `dbform apply` creates them all into an empty state and waits until every one is
READY. Reported, as the median of RUNS runs:

  wall, wall / T        beside the goal and the physical limit, measured in the same run: T plus
                        the time curl takes to send the same creates to a fresh simulator (as
                        many at once as --parallelism, on kept-alive connections): the last
                        service cannot be READY before then
  calls by kind         from the simulator's request counts; reads per service (lists and GETs,
                        not key checks)
  saves                 state writes (the final serial: each journal append or whole write is one)
  state bytes           bytes the process wrote, from its I/O accounting (wchar), less what it
                        printed: the state store's writes; and their ratio to the final state's size
  cpu                   user + system time of dbform
  peak RSS              of dbform

Usage: apply_bench.py --dbform BIN [--counts 500,2000,5000] [--provision 5s] [--latency 0ms]
                      [--projects 2] [--connection-delay 0ms] [--runs 3] [--parallelism 10]
                      [--pg-state postgres://...]

The goals (issues 24 and 35): 2,000 services in 2 projects with 50 ms per new connection, wall <=
1.3 T and wall(2000) / wall(500) <= 1.25 (--counts 500,2000 --connection-delay 50ms); 2,000
services in 200 projects, wall <= 1.35 T and <= 0.3 reads per service (--counts 2000 --projects 200);
the same apply with the state in PostgreSQL at most 1.1x the state file's (--pg-state URL, a database
such as tests/pg/start.sh's throwaway server: `bash tests/pg/start.sh /tmp/pg && cat /tmp/pg/url`).
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
import urllib.request

KEY_PREFIX = "bench-key-"
CREATE_ROUTE = "POST /projects/{project_id}/services"  # as the simulator counts it


def seconds(text):
    text = text.strip()
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    return float(text)


def write_manifest(path, projects, count):
    lines = ["version: 1", "projects:"]
    for p in range(projects):
        pid = f"proj-{p}"
        lines += [f"  - id: {pid}", f"    api_key_env: DBFORM_BENCH_KEY_{p}", "    services:"]
        for s in range(p, count, projects):
            lines += [f"      - name: svc-{s:05d}", "        cpu_millis: 1000", "        memory_gbs: 4",
                      "        region_code: us-east-1"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Simulator:
    """`dbform sim` on a free port. `keys` maps each API key to its project (default: bench-key-P for
    proj-P, P < projects)."""

    def __init__(self, dbform, tmp, projects, provision, latency, keys=None, connection_delay=0.0):
        self.port_file = os.path.join(tmp, "sim.port")
        half = f"{int(provision * 500)}ms"
        cmd = [dbform, "sim", "--listen", "127.0.0.1:0", "--port-file", self.port_file,
               "--queued-delay", half, "--configuring-delay", half, "--latency", f"{int(latency * 1000)}ms",
               "--connection-delay", f"{int(connection_delay * 1000)}ms"]
        for key, project in (keys or {f"{KEY_PREFIX}{p}": f"proj-{p}" for p in range(projects)}).items():
            cmd += ["--key", f"{key}={project}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(self.port_file):
            if time.time() > deadline or self.proc.poll() is not None:
                raise SystemExit("dbform sim did not start")
            time.sleep(0.02)
        with open(self.port_file) as f:
            self.port = int(f.read())

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path):
        with urllib.request.urlopen(self.url(path)) as r:
            return json.load(r)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()


def launcher_beside(dbform):
    """bench/run_measured, built beside dbform (cmake --build build --target run_measured)."""
    path = os.path.join(os.path.dirname(os.path.abspath(dbform)), "bench", "run_measured")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"{path} is missing: cmake --build build --target run_measured")
    return path


def measured(launcher, cmd, env=None, output=os.devnull):
    """Runs the command through bench/run_measured (so that its peak RSS is its own), its output to
    the file `output`. Returns its exit code, wall seconds, CPU seconds and peak RSS in MiB."""
    fields = subprocess.run([launcher, output] + cmd, env=env, check=True, capture_output=True,
                            text=True).stdout.split()
    return int(fields[0]), float(fields[1]), float(fields[2]), int(fields[3]) / 1024.0


def io_written():
    """Bytes this process and its waited-for children wrote (the kernel adds a child's counters to its
    parent's when the child is reaped)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def one_run(args, count, provision, latency, pg_url=None):
    with tempfile.TemporaryDirectory(prefix="dbform-apply-bench-") as tmp:
        sim = Simulator(args.dbform, tmp, args.projects, provision, latency,
                        connection_delay=seconds(args.connection_delay))
        try:
            manifest = os.path.join(tmp, "bench.yaml")
            state = os.path.join(tmp, "state.json")
            write_manifest(manifest, args.projects, count)
            state_args = ["--state", state]
            if pg_url:  # a workspace of its own in the database, so that each run starts empty
                state_args = ["--state", pg_url, "--workspace", "bench-" + os.path.basename(tmp).replace("_", "-")]
            env = dict(os.environ, DBFORM_API_URL=sim.url("/public/api/v1"))
            for p in range(args.projects):
                env[f"DBFORM_BENCH_KEY_{p}"] = f"{KEY_PREFIX}{p}"
            cmd = [args.dbform, "apply", "-f", manifest] + state_args + ["--auto-approve", "--json",
                   "--parallelism", str(args.parallelism)]
            output = os.path.join(tmp, "output")
            written_before = io_written()
            code, wall, cpu, peak = measured(args.launcher, cmd, env, output)
            if code != 0:
                with open(output) as f:
                    raise SystemExit(f"apply of {count} failed:\n{f.read()[-2000:]}")
            # What it printed is not the state store's.
            written = io_written() - written_before - os.path.getsize(output)
            calls = sim.get("/_sim/requests")
            if pg_url:
                pulled = subprocess.run([args.dbform, "state", "pull"] + state_args, env=env, check=True,
                                        capture_output=True, text=True).stdout
                with open(state, "w") as f:
                    f.write(pulled)
            with open(state) as f:
                final = json.load(f)
            services = [r for r in final["resources"] if r["kind"] == "service" and r["status"] == "READY"]
            if len(services) != count:
                raise SystemExit(f"apply of {count}: only {len(services)} READY in the state")
            return {
                "wall": wall,
                "calls": calls,
                "saves": final["serial"],
                "written": written,
                "final": os.path.getsize(state),
                "cpu": cpu,
                "peak": peak,
            }
        finally:
            sim.stop()


def curl_limit(args, count, provision, latency):
    """T plus the wall time curl takes to send `count` creates (the manifest's, to the same
    projects) to a fresh simulator like the measured run's, --parallelism at once."""
    with tempfile.TemporaryDirectory(prefix="dbform-apply-limit-") as tmp:
        sim = Simulator(args.dbform, tmp, args.projects, provision, latency,
                        connection_delay=seconds(args.connection_delay))
        try:
            config = os.path.join(tmp, "creates.curl")
            with open(config, "w") as f:
                for s in range(count):
                    p = s % args.projects
                    body = json.dumps({"name": f"svc-{s:05d}", "cpu_millis": "1000", "memory_gbs": "4",
                                       "region_code": "us-east-1"})
                    f.write(f'url = "{sim.url(f"/public/api/v1/projects/proj-{p}/services")}"\n'
                            f'header = "Authorization: Bearer {KEY_PREFIX}{p}"\n'
                            'header = "Content-Type: application/json"\n'
                            f"data = {json.dumps(body)}\n"
                            'output = "/dev/null"\n' + ("next\n" if s + 1 < count else ""))
            start = time.monotonic()
            subprocess.run(["curl", "-s", "--fail", "--parallel", "--parallel-max", str(args.parallelism), "-K", config],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.monotonic() - start
            made = sim.get("/_sim/requests").get(CREATE_ROUTE, 0)
            if made != count:
                raise SystemExit(f"curl made {made} creates of {count}")
            return provision + wall
        finally:
            sim.stop()


def measure(args, count, provision, latency):
    runs = [one_run(args, count, provision, latency) for _ in range(args.runs)]
    med = lambda key: statistics.median(r[key] for r in runs)
    calls = runs[len(runs) // 2]["calls"]
    reads = sum(v for k, v in calls.items() if k.startswith("GET") and "auth" not in k)
    limit = statistics.median(curl_limit(args, count, provision, latency) for _ in range(args.runs))
    pg = None
    if args.pg_state:
        pg = statistics.median(one_run(args, count, provision, latency, args.pg_state)["wall"] for _ in range(args.runs))
    return {"wall": med("wall"), "pg": pg, "limit": limit, "saves": med("saves"), "written": med("written"), "final": med("final"),
            "cpu": med("cpu"), "peak": max(r["peak"] for r in runs), "calls": calls, "reads": reads}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--counts", default="500,2000,5000")
    ap.add_argument("--provision", default="5s", help="T: QUEUED for T/2, then CONFIGURING for T/2")
    ap.add_argument("--latency", default="0ms", help="added to every API answer")
    ap.add_argument("--projects", type=int, default=2)
    ap.add_argument("--connection-delay", default="0ms",
                    help="what each new connection costs the simulator before its first answer (a TLS handshake)")
    ap.add_argument("--parallelism", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pg-state", metavar="URL",
                    help="also apply each count with the state in this PostgreSQL database (a fresh workspace "
                         "each run), and print its wall beside the file's (goal <= 1.1x)")
    args = ap.parse_args()
    args.launcher = launcher_beside(args.dbform)
    provision, latency = seconds(args.provision), seconds(args.latency)
    many = args.projects >= 100
    goal = (1.35 if many else 1.3) * provision
    print(f"dbform apply benchmark: T = {provision:g} s, API latency {latency * 1000:g} ms, new connections "
          f"{args.connection_delay}, {args.projects} projects, --parallelism {args.parallelism}; median of {args.runs} runs")
    print(f"  {'services':>8} {'wall':>7} {'wall/T':>6} {'goal':>7} {'limit':>7} {'x limit':>7} {'creates':>7} {'reads':>6} "
          f"{'reads/svc':>9} {'saves':>6} {'state bytes':>12} {'x final':>7} {'cpu':>6} {'peak RSS':>9}")
    walls = {}
    for count in (int(c) for c in args.counts.split(",")):
        m = measure(args, count, provision, latency)
        walls[count] = m["wall"]
        creates = m["calls"].get(CREATE_ROUTE, 0)
        print(f"  {count:>8} {m['wall']:6.2f}s {m['wall'] / provision:6.2f} {goal:6.2f}s {m['limit']:6.2f}s "
              f"{m['wall'] / m['limit']:7.2f} {creates:>7} {m['reads']:>6} {m['reads'] / count:9.3f} {m['saves']:>6.0f} "
              f"{m['written'] / 1e6:10.2f}MB {m['written'] / m['final']:7.1f} {m['cpu']:5.2f}s {m['peak']:7.1f}MiB")
        print(f"           calls: {json.dumps(m['calls'], sort_keys=True)}")
        print(f"           limit: T + curl's {m['limit'] - provision:.2f} s for the creates = {m['limit'] / provision:.2f} T")
        if many:
            print(f"           reads per service {m['reads'] / count:.3f} (goal <= 0.3)")
        if m["pg"] is not None:
            print(f"           state in PostgreSQL: {m['pg']:.2f} s = {m['pg'] / m['wall']:.2f}x the state file's (goal <= 1.1x)")
    if 500 in walls and 2000 in walls:
        print(f"  wall(2000) / wall(500) = {walls[2000] / walls[500]:.2f} (target <= 1.25)")


if __name__ == "__main__":
    main()
