#!/usr/bin/python3
"""What an apply of many calls costs as the calls grow: services shaped like the vendor's (each
attached to its project's VPC, with a pooler and a synchronous HA replica: three calls after its
create; bench/plan_bench.py's vendor-shaped manifests) applied in one run against `dbform sim` with
no simulated delays, at two sizes. The cost of a service should not grow with how many others wait
beside it: the second size's seconds per service over the first's is printed beside a goal of 1.5
(a loop that looked at every waiting call at every round made it 1.9 at 3,000 against 1,000
services, 41.4 s against 7.4, and worse beyond).

Usage: python3 bench/calls_bench.py --dbform build/dbform [--counts 1000,3000] [--runs 1]
(needs bench/run_measured beside the binary: cmake --build build --target run_measured)
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apply_bench import Simulator, launcher_beside, measured  # noqa: E402
from plan_bench import key_env_of, project_id, write_manifests  # noqa: E402

PER_PROJECT = 100


def one_apply(dbform, services, tmp):
    projects = max(1, services // PER_PROJECT)
    work = tempfile.mkdtemp(dir=tmp)
    manifests = os.path.join(work, "manifests")
    os.makedirs(manifests)
    write_manifests(manifests, projects, PER_PROJECT, vendor_shaped=True)
    keys = {f"bench-key-{project_id(p, True)}": project_id(p, True) for p in range(projects)}
    sim = Simulator(dbform, work, projects, 0, 0, keys, 0.0)
    try:
        env = dict(os.environ, DBFORM_API_URL=sim.url("/public/api/v1"))
        for i, key in enumerate(keys):
            env[key_env_of(i)] = key
        started = time.monotonic()
        rc = measured(launcher_beside(dbform), [dbform, "apply", "-f", manifests, "--state",
                      os.path.join(work, "state.json"), "--auto-approve", "--parallelism", "20"], env,
                      os.path.join(work, "apply.log"))[0]
        seconds = time.monotonic() - started
    finally:
        sim.stop()
    if rc != 0:
        raise SystemExit(f"the apply of {services} services failed: see {work}/apply.log")
    shutil.rmtree(work)
    return projects * PER_PROJECT, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--counts", default="1000,3000", help="two numbers of services (multiples of 100)")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    small, large = (int(c) for c in args.counts.split(","))
    tmp = tempfile.mkdtemp(prefix="dbform-calls-bench.")
    try:
        per = {}
        for count in (small, large):
            best = min(one_apply(args.dbform, count, tmp)[1] for _ in range(args.runs))
            per[count] = best / count
            print(f"  {count} services, {3 * count} calls after their creates: {best:.1f} s ({1000 * per[count]:.2f} ms a service)")
        growth = per[large] / per[small]
        print(f"  a service's cost at {large} over at {small}: {growth:.2f} (goal <= 1.5: {'met' if growth <= 1.5 else 'NOT met'})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
