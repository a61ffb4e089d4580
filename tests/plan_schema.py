#!/usr/bin/python3
"""Keeps schemas/plan.schema.json true to what the dbform binary prints and saves.

Real plans are made by the binary from manifests and hand-written states that give every kind of
action (create, no-op, wait, adopt, update, delete, conflict, orphan, for services and VPCs) plus a manifest
warning; each `plan --format json` document and each `plan --out` file must validate against the
schema (Draft 2020-12), the two must be the same document, and no password of the state may appear
in either. The actions in the "plan" line of `apply --json` (run against `dbform sim`) must validate
as the schema's actions too, and every line of those applies (a create, then an update and a
prune) must validate against schemas/events.schema.json, which must show every kind of event the
applies made. Finally the schemas must reject documents that break their promises, so this check
cannot pass by accepting anything.

The report of `plan --refresh-only --format json`, after those applies, must validate against
schemas/refresh.schema.json (--refresh-schema).

Each saved plan shown with `dbform show PLANFILE --format terraform-json` must validate against
the plan representation of HashiCorp's JSON output format (--terraform-schema: written from its
documentation), hold one resource change per action with Terraform's actions for it, and no secret.

Usage: plan_schema.py --dbform BIN --schema FILE --events-schema FILE [--refresh-schema FILE]
                      [--terraform-schema FILE]
Needs python3-jsonschema (a Debian package).
"""
import argparse
import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from jsonschema import Draft202012Validator

PROJECT = "acme-prod"
KEY = "plan-schema-key-0123456789"

MANIFEST_NETWORK = f"""version: 1
projects:
  - id: {PROJECT}
    vpcs:
      - name: main
        cidr: 10.0.0.1/16
        region_code: us-east-1
        peerings:
          - peer_account_id: "123456789012"
            peer_region_code: us-east-1
            peer_vpc_id: vpc-0abc
          - peer_account_id: "123456789012"
            peer_region_code: us-east-1
            peer_vpc_id: vpc-0def
      - name: edge
        cidr: 10.1.0.0/16
        region_code: us-east-1
"""

MANIFEST_SERVICES = f"""version: 1
projects:
  - id: {PROJECT}
    services:
      - name: fresh
        addons: [time-series, ai]
        cpu_millis: 1000
        memory_gbs: 0.5
        environment_tag: PROD
        region_code: us-east-1
        replica_count: 2
      - name: ready
        cpu_millis: shared
        memory_gbs: shared
      - name: waiting
      - name: pending
      - name: changed
        cpu_millis: 2000
        region_code: us-east-1
      - name: resized
        cpu_millis: 4000
        memory_gbs: 16
        environment_tag: PROD
        connection_pooler: true
        vpc: edge
        read_replicas:
          - name: reporting
            nodes: 2
            cpu_millis: 1000
            memory_gbs: 4
          - name: analytics
            nodes: 1
            cpu_millis: 500
            memory_gbs: 2
            connection_pooler: true
  - id: other-project
    services:
      - name: lonely
"""

MANIFEST_APPLY = f"""version: 1
projects:
  - id: {PROJECT}
    vpcs:
      - name: main
        cidr: 10.0.0.0/16
        region_code: us-east-1
    services:
      - name: orders
        cpu_millis: 1000
"""

# The second apply: orders resized (update_sent, updated, status_changed, ready), the VPC pruned
# (delete_sent, deleted).
MANIFEST_APPLY_AGAIN = f"""version: 1
projects:
  - id: {PROJECT}
    services:
      - name: orders
        cpu_millis: 2000
        memory_gbs: 8
"""


def record(kind, name, settings, rid, status, password="", parent=None):
    plural = {"service": "services", "vpc": "vpcs", "replica_set": "replicas", "peering": "peerings"}[kind]
    address = f"{PROJECT}/{plural}/{name}"
    if parent:
        address = f"{PROJECT}/{'services' if kind == 'replica_set' else 'vpcs'}/{parent}/{address[len(PROJECT) + 1:]}"
    return {"address": address, "project_id": PROJECT, "kind": kind, "name": name,
            **({"parent": parent} if parent else {}),
            "settings": settings, "id": rid, "create_pending": rid == "", "status": status,
            "endpoint": {"host": f"{name}.example", "port": 5432} if status == "READY" else None,
            "pooler_endpoint": None, "initial_password": password,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "last_response": {}}


def every_action_state(with_conflict, replaced=False):
    """`replaced`: a read replica set and a peering recorded with what only a replacement changes."""
    resources = [
        record("vpc", "main", {"cidr": "10.0.0.1/16", "region_code": "us-east-1"}, "v-1", ""),
        record("service", "ready", {"cpu_millis": "shared", "memory_gbs": "shared"}, "s-ready", "READY",
               "pw-ready-7dK2q"),
        record("service", "waiting", {}, "s-waiting", "DELETED", "pw-waiting-9xQ"),
        record("service", "pending", {}, "", ""),
        record("service", "changed", {"cpu_millis": "2000",
                                      "region_code": "eu-west-1" if with_conflict else "us-east-1"},
               "s-changed", "READY", "pw-changed-Lm3"),
        record("service", "resized", {"cpu_millis": "2000", "memory_gbs": "16", "environment_tag": "DEV"},
               "s-resized", "READY", "pw-resized-Qq8"),
        record("service", "legacy", {"cpu_millis": "500"}, "s-legacy", "READY", "pw-legacy-Zz1"),
        record("vpc", "old-net", {"cidr": "10.9.0.0/16", "region_code": "eu-west-1"}, "v-old", ""),
    ]
    if replaced:
        resources += [
            record("replica_set", "reporting", {"nodes": 1, "cpu_millis": 1000, "memory_gbs": 4}, "r-1", "active",
                   parent="resized"),
            record("peering", "vpc-0abc", {"peer_account_id": "210987654321", "peer_region_code": "us-east-1",
                                           "peer_vpc_id": "vpc-0abc"}, "p-1", "active", parent="main"),
        ]
    return {"format": "dbform-state", "version": 1, "lineage": "3f1c2a7e-0000-4000-8000-000000000001",
            "serial": 12, "resources": resources,
            "refreshed": {"at": "2026-11-28T08:00:00Z", "by": "apply --refresh-only", "serial": 12}}


class Checker:
    def __init__(self, dbform, schema_path, events_schema_path):
        self.dbform = str(Path(dbform).resolve())
        self.schema = json.loads(Path(schema_path).read_text())
        Draft202012Validator.check_schema(self.schema)
        self.validator = Draft202012Validator(self.schema)
        events_schema = json.loads(Path(events_schema_path).read_text())
        Draft202012Validator.check_schema(events_schema)
        self.events = Draft202012Validator(events_schema)
        self.seen_events = set()
        self.failures = []
        self.seen_actions = set()
        self.refresh = None
        self.terraform = None
        self.seen_terraform = set()

    def fail(self, what):
        self.failures.append(what)

    def run(self, cwd, *args, env=None, ok=(0, 1, 2)):
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
        full_env.update(env or {})
        p = subprocess.run([self.dbform, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120)
        if p.returncode not in ok:
            self.fail(f"dbform {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
        return p

    def validate(self, doc, what):
        errors = sorted(self.validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            self.fail(f"{what}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        for a in doc.get("actions", []):
            self.seen_actions.add((a.get("kind"), a.get("action")))

    def no_secrets(self, text, state, what):
        for r in state["resources"] if state else []:
            if r["initial_password"] and r["initial_password"] in text:
                self.fail(f"{what}: holds the password of {r['address']}")
        if KEY in text:
            self.fail(f"{what}: holds the API key")

    def plan_case(self, name, state, expect_saved, prune=False):
        with tempfile.TemporaryDirectory(prefix=f"plan-schema-{name}-") as d:
            d = Path(d)
            (d / "manifests").mkdir()
            (d / "manifests/10-network.yaml").write_text(MANIFEST_NETWORK)
            (d / "manifests/20-services.yaml").write_text(MANIFEST_SERVICES)
            if state is not None:
                (d / "dbform.state.json").write_text(json.dumps(state))
            p = self.run(d, "plan", "--no-refresh", "-f", "manifests", "--format", "json", "--out", "saved.plan",
                         *(["--prune", "--max-deletes", "20"] if prune else []))
            try:
                doc = json.loads(p.stdout)
            except json.JSONDecodeError as e:
                self.fail(f"{name}: stdout is not one JSON document ({e})")
                return
            self.validate(doc, f"{name}: plan --format json")
            self.no_secrets(p.stdout + p.stderr, state, f"{name}: plan --format json")
            if not any(d_["severity"] == "warning" for d_ in doc["diagnostics"]):
                self.fail(f"{name}: the CIDR warning is missing from diagnostics")
            saved = d / "saved.plan"
            if saved.exists() != expect_saved:
                self.fail(f"{name}: plan file {'missing' if expect_saved else 'written despite conflicts'}")
            if saved.exists():
                file_doc = json.loads(saved.read_text())
                self.validate(file_doc, f"{name}: plan --out file")
                self.no_secrets(saved.read_text(), state, f"{name}: plan --out file")
                if file_doc != doc:
                    self.fail(f"{name}: the saved plan differs from the printed JSON document")
                if self.terraform:
                    self.terraform_case(name, d, file_doc, state)

    def terraform_case(self, name, d, doc, state):
        p = self.run(d, "show", "saved.plan", "--format", "terraform-json", ok=(0,))
        try:
            tf = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            self.fail(f"{name}: show --format terraform-json is not one JSON document ({e})")
            return
        for e in sorted(self.terraform.iter_errors(tf), key=lambda e: list(e.absolute_path))[:5]:
            self.fail(f"{name}: terraform-json: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        self.no_secrets(p.stdout, state, f"{name}: terraform-json")
        expected = {"create": ["create"], "adopt": ["create"], "update": ["update"], "delete": ["delete"],
                    "replace": ["delete", "create"], "forget": ["forget"]}
        changes = tf.get("resource_changes", [])
        if len(changes) != len(doc["actions"]):
            self.fail(f"{name}: terraform-json: {len(changes)} resource changes for {len(doc['actions'])} actions")
        for a, rc in zip(doc["actions"], changes):
            want = expected.get(a["action"], ["no-op"])
            got = rc.get("change", {}).get("actions")
            if got != want:
                self.fail(f"{name}: terraform-json: {a['address']} ({a['action']}) has actions {got}, not {want}")
            if rc.get("type") != "dbform_" + a["kind"]:
                self.fail(f"{name}: terraform-json: {a['address']} has type {rc.get('type')}")
            if a["action"] == "create" and a["kind"] == "service" and \
                    rc["change"].get("after_unknown", {}).get("password") is not True:
                self.fail(f"{name}: terraform-json: a created service's password is not unknown until apply")
            self.seen_terraform.add(tuple(got or []))

    def empty_case(self):
        with tempfile.TemporaryDirectory(prefix="plan-schema-empty-") as d:
            Path(d, "dbform.yaml").write_text("version: 1\nprojects: []\n")
            p = self.run(Path(d), "plan", "--no-refresh", "--format", "json")
            self.validate(json.loads(p.stdout), "empty manifest")

    def apply_json_case(self):
        """The "plan" line of apply --json carries the same actions as the document."""
        with tempfile.TemporaryDirectory(prefix="plan-schema-apply-") as d:
            d = Path(d)
            sim = subprocess.Popen([self.dbform, "sim", "--listen", "127.0.0.1:0", "--port-file", str(d / "port"),
                                    "--key", f"{KEY}={PROJECT}", "--queued-delay", "50ms",
                                    "--configuring-delay", "50ms"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 30
                while not (d / "port").exists() or not (d / "port").read_text().strip():
                    if time.monotonic() > deadline or sim.poll() is not None:
                        self.fail("dbform sim did not start")
                        return
                    time.sleep(0.05)
                url = f"http://127.0.0.1:{(d / 'port').read_text().strip()}/public/api/v1"
                (d / "dbform.yaml").write_text(MANIFEST_APPLY)
                env = {"DBFORM_API_URL": url, "DBFORM_API_KEY": KEY}
                p = self.run(d, "apply", "--json", "--auto-approve", "--poll-interval", "100ms", env=env, ok=(0,))
                lines = [json.loads(line) for line in p.stdout.splitlines()]
                (d / "dbform.yaml").write_text(MANIFEST_APPLY_AGAIN)
                again = self.run(d, "apply", "--json", "--auto-approve", "--prune", "--poll-interval", "100ms",
                                 env=env, ok=(0,))
                for n, line in enumerate(lines + [json.loads(line) for line in again.stdout.splitlines()]):
                    self.seen_events.add(line.get("type"))
                    for e in list(self.events.iter_errors(line))[:3]:
                        self.fail(f"apply --json line {n + 1} ({line.get('type')}): "
                                  f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
                self.events_refused(lines)
                self.refresh_case(d, env)
                plan = [line for line in lines if line.get("type") == "plan"]
                if len(plan) != 1:
                    self.fail(f"apply --json: expected one plan line, got {len(plan)}")
                    return
                wrapper = copy.deepcopy(self.schema)
                wrapper.update({"type": "array", "items": {"$ref": "#/$defs/action"}})
                for key in ("required", "properties", "additionalProperties"):
                    wrapper.pop(key, None)
                for e in list(Draft202012Validator(wrapper).iter_errors(plan[0]["actions"]))[:5]:
                    self.fail(f"apply --json plan line: {'/'.join(map(str, e.absolute_path))}: {e.message}")
                state = json.loads((d / "dbform.state.json").read_text())
                self.no_secrets(p.stdout + p.stderr, state, "apply --json")
            finally:
                sim.send_signal(signal.SIGTERM)
                try:
                    sim.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    sim.kill()

    def refresh_case(self, d, env):
        """plan --refresh-only's document, against schemas/refresh.schema.json, with a change made
        outside dbform (the simulator's console) so that its changes are not empty."""
        if not self.refresh:
            return
        state = json.loads((d / "dbform.state.json").read_text()) if (d / "dbform.state.json").exists() else None
        services = [r for r in (state or {}).get("resources", []) if r["kind"] == "service" and r["id"]]
        if not services:
            self.fail("plan --refresh-only: the applies recorded no service to change outside dbform")
            return
        root = env["DBFORM_API_URL"].split("/public/")[0]
        console = urllib.request.Request(f"{root}/_sim/services/{services[0]['id']}/resize",
                                         data=b'{"cpu_millis": 4000, "memory_gbs": 16}', method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(console, timeout=10).read()
        p = self.run(d, "plan", "--refresh-only", "--format", "json", env=env, ok=(0,))
        try:
            doc = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            self.fail(f"plan --refresh-only: stdout is not one JSON document ({e})")
            return
        if not doc.get("changes"):
            self.fail("plan --refresh-only: a change made in the console is not reported")
        for e in list(self.refresh.iter_errors(doc))[:5]:
            self.fail(f"plan --refresh-only: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        self.no_secrets(p.stdout, state, "plan --refresh-only")
        broken = copy.deepcopy(doc)
        broken["summary"]["has_changes"] = "yes"
        if self.refresh.is_valid(broken):
            self.fail("refresh.schema.json accepts a summary whose has_changes is not a boolean")

    def events_refused(self, good_lines):
        """Event lines that break the events schema's promises must be invalid."""
        by_type = {line["type"]: line for line in good_lines}
        cases = {
            "an unknown type": dict(by_type["created"], type="made"),
            "an event without its time": {k: v for k, v in by_type["created"].items() if k != "time"},
            "a created event without its id": {k: v for k, v in by_type["created"].items() if k != "id"},
            "a ready event without elapsed_ms": {k: v for k, v in by_type["ready"].items() if k != "elapsed_ms"},
            "a password in an event": dict(by_type["created"], initial_password="x"),
            "a summary without its exit code": {k: v for k, v in by_type["summary"].items() if k != "exit_code"},
        }
        for what, line in cases.items():
            if self.events.is_valid(line):
                self.fail(f"the events schema accepts {what}")

    def schema_refuses(self, good):
        """Documents that break the schema's promises must be invalid."""
        def broken(change):
            doc = copy.deepcopy(good)
            change(doc)
            return doc

        def first(doc, action):
            return next(a for a in doc["actions"] if a["action"] == action)

        cases = {
            "an unknown action": lambda d: d["actions"][0].update(action="destroy"),
            "a password among the settings": lambda d: first(d, "create")["after"].update(initial_password="x"),
            "an update without changes": lambda d: first(d, "update").update(changes=[]),
            "a call that is not one of the API's": lambda d: first(d, "update")["calls"][0].update(call="delete"),
            "a read replica set without its service": lambda d: next(
                a for a in d["actions"] if a["kind"] == "replica_set").pop("parent"),
            "a service with a parent": lambda d: first(d, "update").update(parent="main"),
            "a change without its drift flag": lambda d: first(d, "update")["changes"][0].pop("drift"),
            "an orphan without a reason": lambda d: first(d, "orphan").pop("reason"),
            "a plan without its prune setting": lambda d: d.pop("prune"),
            "a create with recorded settings": lambda d: first(d, "create").update(before={}),
            "a newer format version": lambda d: d.update(format_version=2),
            "a missing summary": lambda d: d.pop("summary"),
            "a negative count": lambda d: d["summary"].update(create=-1),
            "a short digest": lambda d: d["manifests"].update(digest="abc"),
            "an unknown top-level field": lambda d: d.update(extra=True),
        }
        for what, change in cases.items():
            if self.validator.is_valid(broken(change)):
                self.fail(f"the schema accepts {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--events-schema", required=True)
    ap.add_argument("--refresh-schema", help="schemas/refresh.schema.json: plan --refresh-only's document")
    ap.add_argument("--terraform-schema", help="HashiCorp's plan JSON format: show --format terraform-json")
    args = ap.parse_args()
    c = Checker(args.dbform, args.schema, args.events_schema)
    if args.terraform_schema:
        terraform_schema = json.loads(Path(args.terraform_schema).read_text())
        Draft202012Validator.check_schema(terraform_schema)
        c.terraform = Draft202012Validator(terraform_schema)
        # The schema is no rubber stamp: a field HashiCorp does not document, or an action Terraform
        # has not, is refused.
        sample = {"format_version": "1.2", "resource_changes": [
            {"address": "a.b", "mode": "managed", "type": "a", "name": "b",
             "change": {"actions": ["create"], "before": None, "after": {}}}]}
        if not c.terraform.is_valid(sample):
            c.fail("the terraform schema refuses a minimal plan")
        for broken in ({"extra": 1}, {"actions": ["adopt"]}):
            bad = copy.deepcopy(sample)
            bad["resource_changes"][0]["change"].update(broken)
            if c.terraform.is_valid(bad):
                c.fail(f"the terraform schema accepts a change with {broken}")
    if args.refresh_schema:
        refresh_schema = json.loads(Path(args.refresh_schema).read_text())
        Draft202012Validator.check_schema(refresh_schema)
        c.refresh = Draft202012Validator(refresh_schema)

    c.plan_case("no-state", None, expect_saved=True)
    c.plan_case("every-action", every_action_state(with_conflict=True), expect_saved=False)
    c.plan_case("no-conflict", every_action_state(with_conflict=False), expect_saved=True)
    c.plan_case("prune", every_action_state(with_conflict=False, replaced=True), expect_saved=True, prune=True)
    c.empty_case()
    c.apply_json_case()

    expected = {(k, a) for k in ("service", "vpc") for a in ("create", "no-op", "orphan", "delete")} | {
        ("service", a) for a in ("wait", "adopt", "update", "conflict")} | {
        (k, a) for k in ("replica_set", "peering") for a in ("create", "replace")}
    events = {"plan", "preflight_passed", "create_sent", "created", "update_sent", "updated", "delete_sent",
              "deleted", "ready", "summary"}
    if missing := events - c.seen_events:
        c.fail(f"the test applies never printed these events: {sorted(missing)}")
    if missing := expected - c.seen_actions:
        c.fail(f"the test plans never produced these (kind, action) pairs: {sorted(missing)}")
    if c.terraform and (missing := {("create",), ("no-op",), ("update",), ("delete",), ("delete", "create")} -
                        c.seen_terraform):
        c.fail(f"the terraform-json plans never held these actions: {sorted(missing)}")

    with tempfile.TemporaryDirectory(prefix="plan-schema-refuse-") as d:
        d = Path(d)
        (d / "manifests").mkdir()
        (d / "manifests/a.yaml").write_text(MANIFEST_NETWORK)
        (d / "manifests/b.yaml").write_text(MANIFEST_SERVICES)
        (d / "dbform.state.json").write_text(json.dumps(every_action_state(with_conflict=True)))
        c.schema_refuses(json.loads(c.run(d, "plan", "--no-refresh", "-f", "manifests", "--format", "json").stdout))

    if c.failures:
        print(f"{len(c.failures)} problem(s):")
        for f in c.failures:
            print("  " + f)
        return 1
    print(f"plan documents agree with {args.schema} ({len(c.seen_actions)} kinds of action seen)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
