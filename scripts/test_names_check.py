#!/usr/bin/python3
"""No two files of one unity unit define the same name at file scope, and no test name holds a ';'.

The product (every file of src/ but the tests and main.cpp: the library dbform_core) and each test
program compile as one unity unit (CMakeLists.txt, DBFORM_UNITY_BATCH and DBFORM_TEST_UNITY_BATCH):
their files' anonymous namespaces are one namespace. Two files defining one name either fail to compile or,
worse, compile into an overload set where a call silently reaches the other file's helper (a TLS
test once called the manifest tests' check_refused: a string literal converts to bool). So every
function, class, struct, enum and constant a file defines at column 0 must be unique within its
program (whatever namespace it is in: a name two folders both use is one rename away from an
overload set); what several files need lives once in a header.

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


RAW_STRING = re.compile(r'R"([^(\s]*)\((?:.|\n)*?\)\1"')
# A TEST_CASE's name: its string literals up to the first that is not followed by another.
TEST_NAME = re.compile(r'TEST_CASE\(((?:\s*"(?:[^"\\\n]|\\.)*")+)')


def names(path):
    found = set()
    text = RAW_STRING.sub('""', open(path, encoding="utf-8", errors="replace").read())  # a help text's lines
    for line in text.splitlines(keepends=True):
        if not line or line[0] in " \t#/}{\n" or line.startswith(SKIP):
            continue
        m = TYPE.match(line) or DEFINITION.match(line)
        if m and m.group(1) != "operator":
            found.add(m.group(1))
    return found


def main():
    root = sys.argv[1]
    programs = {"test_e2e": sorted(glob.glob(os.path.join(root, "tests/e2e/*.cpp")))}
    programs["dbform_core"] = [f for f in sorted(glob.glob(os.path.join(root, "src/*/*.cpp")))
                               if not f.endswith("_test.cpp") and not f.endswith("/cli/main.cpp")]
    for module in sorted(glob.glob(os.path.join(root, "src/*/"))):
        files = sorted(glob.glob(os.path.join(module, "*_test.cpp")))
        if files:
            programs["test_" + os.path.basename(module.rstrip("/"))] = files
    problems = []
    # CTest's lists are split at ';': catch_discover_tests registers a name holding one as two tests
    # that match nothing, and the test never runs.
    for f in sorted(set(sum(programs.values(), []))):
        for m in TEST_NAME.finditer(open(f, encoding="utf-8", errors="replace").read()):
            name = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(1)))
            if ";" in name:
                problems.append(f"{os.path.relpath(f, root)}: the test \"{name}\" has a ';' in its name, which CTest "
                                "splits in two (neither part runs it): rename it")
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
        print(f"unit names: {sum(len(f) for f in programs.values())} files in {len(programs)} unity programs, no name defined twice")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
