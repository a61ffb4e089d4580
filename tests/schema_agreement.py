#!/usr/bin/python3
"""Keeps schemas/manifest.schema.json and `dbform validate` in agreement (and, with --policy,
schemas/policy.schema.json and dbform's reader of rule files: `dbform policy check --policy FILE`
against no state, which reads the file and checks nothing else).

For every manifest of the corpus (valid/ and invalid/) and every example, the JSON Schema's verdict
(Draft 2020-12) and the exit code of `dbform validate -f FILE` (0 valid, 1 invalid) must agree, and
must match where the file sits: examples and valid/ are valid, invalid/ is invalid. An invalid file
whose first line is `# expect: LINE:COL FIELD` must also get an error at FILE:LINE:COL naming FIELD.

YAML is read the way dbform reads it: the YAML 1.2 core schema (`yes` and `on` are text, `0x1F` an
integer), duplicate keys refused. PyYAML implements YAML 1.1, so its resolvers are replaced here.

Usage: schema_agreement.py --dbform BIN --schema FILE --corpus DIR --examples DIR [--policy]
Needs python3-jsonschema and python3-yaml (Debian packages).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match


class CoreSchemaLoader(yaml.SafeLoader):
    """A SafeLoader that types plain scalars by the YAML 1.2 core schema, as dbform does."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _construct_core_int(loader, node):
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)


def _construct_core_float(loader, node):
    text = loader.construct_scalar(node)
    body = text.lstrip("+-")
    if body.lower() == ".inf":
        return -math.inf if text.startswith("-") else math.inf
    if body.lower() == ".nan":
        return math.nan
    return float(text)


CoreSchemaLoader.yaml_implicit_resolvers = {}
CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)\Z"), ["~", "n", "N", ""])
CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)\Z"), list("tTfF"))
CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z"), list("-+0123456789"))
CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"),
    list("-+0123456789."))
CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
CoreSchemaLoader.add_constructor("tag:yaml.org,2002:float", _construct_core_float)


def schema_verdict(validator, path):
    """(is_valid, reason): a file that is not YAML is invalid for the schema too."""
    try:
        with open(path, encoding="utf-8") as f:
            document = yaml.load(f, Loader=CoreSchemaLoader)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        return False, f"not readable as one YAML document: {e}".replace("\n", " ")
    error = best_match(validator.iter_errors(document))
    if error is None:
        return True, ""
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return False, f"{where}: {error.message}"


POLICY = False  # --policy: the files are rule files
NO_STATE = os.path.join(tempfile.gettempdir(), f"dbform-schema-agreement-{os.getpid()}-none.json")


def dbform_verdict(dbform, path):
    """(is_valid or None when dbform failed in another way, its output)."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("DBFORM_POLICY", None)
    command = [dbform, "validate", "-f", str(path)]
    if POLICY:
        command = [dbform, "policy", "check", "--policy", str(path), "--state", NO_STATE]
    try:
        run = subprocess.run(command, capture_output=True, text=True,
                             timeout=60, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    output = run.stdout + run.stderr
    if run.returncode in (0, 1):
        return run.returncode == 0, output
    return None, f"exit code {run.returncode}: {output}"


def expected_error(path):
    """(`FILE:LINE:COL:`, FIELD) declared by an invalid file's first line, or None."""
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    m = re.match(r"# expect: (\d+:\d+) ?(\S*)", first)
    if not m:
        return None
    return f"{os.path.normpath(path)}:{m.group(1)}:", m.group(2)


def check_file(validator, dbform, path, label, want_valid):
    """Returns the problems found with one file (empty when it passes)."""
    schema_ok, schema_reason = schema_verdict(validator, path)
    dbform_ok, output = dbform_verdict(dbform, path)
    problems = []
    if dbform_ok is None:
        problems.append(f"dbform validate did not give 0 or 1: {output.strip()}")
    if schema_ok != want_valid:
        problems.append(f"schema says {'valid' if schema_ok else 'invalid'}, expected "
                        f"{'valid' if want_valid else 'invalid'} {schema_reason}".rstrip())
    if dbform_ok is not None and dbform_ok != want_valid:
        problems.append(f"dbform says {'valid' if dbform_ok else 'invalid'}, expected "
                        f"{'valid' if want_valid else 'invalid'}: {output.strip()}")
    expect = None if want_valid else expected_error(path)
    if expect and dbform_ok is False:
        place, field = expect
        if place not in output or field not in output:
            problems.append(f"dbform's error should name {place} and `{field}`: {output.strip()}")
    verdict = f"schema: {'valid' if schema_ok else 'invalid'}, dbform: " + \
        ("error" if dbform_ok is None else "valid" if dbform_ok else "invalid")
    print(f"{'ok  ' if not problems else 'FAIL'} {label} ({verdict})")
    for p in problems:
        print("       " + p.replace("\n", "\n       "))
    return problems


def manifests_in(directory):
    return sorted(p for p in Path(directory).iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dbform", required=True, help="the dbform binary")
    parser.add_argument("--schema", required=True, help="schemas/manifest.schema.json")
    parser.add_argument("--corpus", required=True, help="tests/manifests, holding valid/ and invalid/")
    parser.add_argument("--examples", required=True, help="examples/, every *.yaml of which is valid")
    parser.add_argument("--policy", action="store_true", help="the schema and files are of rule files")
    args = parser.parse_args()
    global POLICY
    POLICY = args.policy

    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        Draft202012Validator.check_schema(schema)
    except Exception as e:  # jsonschema.SchemaError, with the offending part of the schema
        print(f"FAIL {args.schema} is not a valid Draft 2020-12 schema: {e}")
        print("0 passed, 1 failed")
        return 1
    validator = Draft202012Validator(schema)

    cases = [(p, f"valid/{p.name}", True) for p in manifests_in(Path(args.corpus) / "valid")]
    cases += [(p, f"invalid/{p.name}", False) for p in manifests_in(Path(args.corpus) / "invalid")]
    cases += [(p, f"examples/{p.name}", True) for p in manifests_in(args.examples)]
    if not cases:
        print("no manifests found: check --corpus and --examples")
        print("0 passed, 1 failed")
        return 1

    failed = sum(1 for path, label, want in cases if check_file(validator, args.dbform, path, label, want))
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
