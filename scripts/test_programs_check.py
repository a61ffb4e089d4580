#!/usr/bin/python3
"""Every test program runs every test it holds, under CTest, each exactly once by its whole name.

The programs are those the source tree makes (CMakeLists.txt): test_MODULE for each folder src/MODULE/
holding a *_test.cpp, and test_e2e for tests/e2e/. For each, the names Catch2 lists
(`PROGRAM --list-test-names-only`) must be the names CTest registered for it
(`ctest --show-only=json-v1`, the tests whose command is that program): a program that registers no
test (a failed discovery, a TEST_CASE macro gone wrong) or fewer, and a name with a ';' (which
catch_discover_tests splits into two tests that match nothing), fail here, by name. Nothing needs
editing when a test is added.

Usage: test_programs_check.py BUILD_DIR SOURCE_DIR   (exit 1 naming each problem)
"""
import collections
import glob
import json
import os
import subprocess
import sys


def expected_programs(root):
    programs = ["test_e2e"] if glob.glob(os.path.join(root, "tests/e2e/*_test.cpp")) else []
    for module in sorted(glob.glob(os.path.join(root, "src/*/"))):
        if glob.glob(os.path.join(module, "*_test.cpp")):
            programs.append("test_" + os.path.basename(module.rstrip("/")))
    return programs


def main():
    build, root = sys.argv[1], sys.argv[2]
    shown = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
    if shown.returncode != 0:
        print(f"ctest --show-only=json-v1 failed: {shown.stderr.strip()}", file=sys.stderr)
        return 1
    registered = collections.defaultdict(list)  # program -> the names CTest runs it with
    paths = {}
    for test in json.loads(shown.stdout).get("tests", []):
        command = test.get("command") or []
        if command:
            program = os.path.basename(command[0])
            registered[program].append(test["name"])
            paths[program] = command[0]
    problems, total = [], 0
    for program in expected_programs(root):
        if not registered[program]:
            problems.append(f"{program}: CTest runs none of its tests (did it build, and does it register any?)")
            continue
        listed = subprocess.run([paths[program], "--list-test-names-only"], capture_output=True, text=True)
        names = [line for line in listed.stdout.splitlines() if line.strip()]
        if listed.returncode < 0 or not names:
            problems.append(f"{program} --list-test-names-only lists no test (exit {listed.returncode})")
            continue
        total += len(names)
        for name in names:
            if ";" in name:
                problems.append(f"{program}: the test \"{name}\" has a ';' in its name: CTest splits it in two, and "
                                "neither part runs it. Rename it")
        counted = collections.Counter(registered[program])
        missing = [n for n in names if n not in counted]
        extra = [n for n in counted if n not in names]
        twice = [n for n, k in counted.items() if k > 1 and n in names]
        if missing and not any(";" in n for n in missing):
            problems.append(f"{program}: {len(missing)} of its {len(names)} tests are not registered with CTest, e.g. "
                            f"\"{missing[0]}\"")
        if extra and not any(";" in n for n in names):
            problems.append(f"{program}: CTest runs {len(extra)} name(s) it does not hold, e.g. \"{extra[0]}\"")
        if twice:
            problems.append(f"{program}: CTest runs \"{twice[0]}\" more than once")
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"test programs: {len(expected_programs(root))}, every one of their {total} tests registered once with CTest")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
