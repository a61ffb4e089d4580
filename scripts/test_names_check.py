#!/usr/bin/python3
"""No two test files of one test program define the same name at file scope.

Each test program compiles as one unity unit (CMakeLists.txt, DBFORM_TEST_UNITY_BATCH): its files'
anonymous namespaces are one namespace. Two files defining one name either fail to compile or,
worse, compile into an overload set where a call silently reaches the other file's helper (a TLS
test once called the manifest tests' check_refused: a string literal converts to bool). So every
function, class, struct, enum and constant a test file defines at column 0 must be unique within its
program; what several files need lives once in a header.

Usage: test_names_check.py SOURCE_DIR   (exit 1 naming each name and its files)
"""
import collections
import glob
import os
import re
import sys

DEFINITION = re.compile(r"(?:static\s+|inline\s+|constexpr\s+|const\s+)*[\w:<>,\*&\s]+?[\s\*&](\w+)\s*(\(|=|\{|\[)")
TYPE = re.compile(r"(?:class|struct|enum(?: class)?)\s+(\w+)")
SKIP = ("TEST_CASE", "SCENARIO", "TEMPLATE_TEST_CASE", "namespace", "using", "template", 'extern "C"')


def names(path):
    found = set()
    for line in open(path, encoding="utf-8", errors="replace"):
        if not line or line[0] in " \t#/}{\n" or line.startswith(SKIP):
            continue
        m = TYPE.match(line) or DEFINITION.match(line)
        if m and m.group(1) != "operator":
            found.add(m.group(1))
    return found


def main():
    root = sys.argv[1]
    programs = {"test_e2e": sorted(glob.glob(os.path.join(root, "tests/e2e/*.cpp")))}
    for module in sorted(glob.glob(os.path.join(root, "src/*/"))):
        files = sorted(glob.glob(os.path.join(module, "*_test.cpp")))
        if files:
            programs["test_" + os.path.basename(module.rstrip("/"))] = files
    problems = []
    for program, files in programs.items():
        where = collections.defaultdict(list)
        for f in files:
            for name in names(f):
                where[name].append(os.path.relpath(f, root))
        problems += [f"{program}: `{name}` is defined in {', '.join(fs)}: rename one, or move it to a header"
                     for name, fs in sorted(where.items()) if len(fs) > 1]
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"test names: {sum(len(f) for f in programs.values())} test files in {len(programs)} programs, no name defined twice")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
