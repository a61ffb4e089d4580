#!/usr/bin/python3
"""Docs that cannot rot: README.md and docs/ checked against the binary they describe.

1. docs/commands.md is what `dbform __reference` generates from the command-line definition, and
   every command and every flag (as `dbform help COMMAND` lists them) appears in it, the flag
   inside its command's `## dbform COMMAND` section.
2. Every command line written in a ```sh block of README.md or docs/*.md that runs dbform names a
   command there is and only flags that command (or dbform itself) has.
3. Every example manifest (a ```yaml block whose first line, comments aside, is `version: 1`) is
   valid for `dbform validate`.

Usage: docs_test.py --dbform BIN --root DIR
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

OPTION = re.compile(r"^\s+((?:-\w,)?--[a-z][a-z0-9-]*)")
SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&"}


class Cli:
    """What `dbform help` says there is: command paths and each one's flags."""

    def __init__(self, dbform):
        self.dbform = dbform
        self.commands = {}  # "state push" -> set of flags
        self._walk([])

    def help(self, path):
        p = subprocess.run([self.dbform, "help", *path], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError(f"dbform help {' '.join(path)}: {p.stderr}")
        return p.stdout

    def _walk(self, path):
        text = self.help(path)
        flags, subcommands, section = set(), [], None
        for line in text.splitlines():
            if line.endswith(":") and not line.startswith(" "):
                section = line[:-1]
                continue
            if section == "Options" and (m := OPTION.match(line)):
                flags.update(m.group(1).split(","))
            elif section == "Subcommands" and line.startswith("  ") and line.split():
                subcommands.append(line.split()[0])
        self.commands[" ".join(path)] = flags
        for sub in subcommands:
            if sub != "help" or path:
                self._walk(path + [sub])

    def command_of(self, words):
        """The longest command path the words start with, and the words after it."""
        for n in range(len(words), -1, -1):
            if " ".join(words[:n]) in self.commands:
                return " ".join(words[:n]), words[n:]
        return "", words


def fenced_blocks(text, languages):
    """(language, first line number, lines) of each fenced block in one of `languages`."""
    blocks, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\w*)\s*$", lines[i])
        if m:
            start, language = i + 1, m.group(1)
            i += 1
            while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
                i += 1
            if language in languages:
                blocks.append((language, start + 1, lines[start:i]))
        i += 1
    return blocks


def dbform_invocations(line):
    """The argument lists of each `dbform ...` a shell line runs (also after `|`, `&&`, `$(`)."""
    line = line.split(" #")[0]
    try:
        tokens = shlex.split(line.replace("$(", " ").replace(")", " "), comments=True)
    except ValueError:
        return []
    runs, current = [], None
    for t in tokens:
        if t in SHELL_OPERATORS or t.startswith(">") or t.startswith("2>"):
            current = None
        elif t == "dbform" or t.endswith("/dbform"):
            current = []
            runs.append(current)
        elif current is not None:
            current.append(t)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    root = Path(args.root)
    cli = Cli(os.path.abspath(args.dbform))
    problems = []

    commands_md = root / "docs/commands.md"
    generated = subprocess.run([cli.dbform, "__reference"], capture_output=True, text=True, timeout=30).stdout
    if not commands_md.exists():
        problems.append("docs/commands.md is missing")
    elif commands_md.read_text() != generated:
        problems.append("docs/commands.md is not what this dbform generates: the command line changed without its "
                        "docs; run `build/dbform __reference > docs/commands.md`")
    if commands_md.exists():
        sections, current = {}, None
        for line in commands_md.read_text().splitlines():
            if m := re.match(r"^## dbform ?(.*?)\s*$", line):
                current = m.group(1).strip()
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        for command, flags in sorted(cli.commands.items()):
            if command in ("", "help", "version"):
                continue
            if command not in sections:
                problems.append(f"docs/commands.md has no `## dbform {command}` section")
                continue
            for flag in sorted(flags - {"-h", "--help"}):
                if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", sections[command]):
                    problems.append(f"docs/commands.md: `dbform {command}` does not document {flag}")

    documents = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    global_flags = cli.commands[""]
    manifests = []
    for doc in documents:
        name = doc.relative_to(root)
        for language, start, lines in fenced_blocks(doc.read_text(), {"sh", "bash", "console", "yaml"}):
            if language == "yaml":
                body = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
                if body and body[0].startswith("version: 1"):  # a whole manifest, not a fragment
                    manifests.append((f"{name}:{start}", "\n".join(lines) + "\n"))
                continue
            for offset, line in enumerate(lines):
                for words in dbform_invocations(line.lstrip("$ ")):
                    where = f"{name}:{start + offset}: dbform {' '.join(words)}"
                    positional = [w for w in words if not w.startswith("-")]
                    command, _ = cli.command_of(positional)
                    if not command and words and not words[0].startswith("-"):
                        problems.append(f"{where}: no command `{words[0]}`")
                        continue
                    for w in words:
                        flag = w.split("=")[0]
                        if w.startswith("-") and w != "-" and flag not in cli.commands[command] | global_flags:
                            problems.append(f"{where}: `dbform {command}` has no flag {flag}")

    with tempfile.TemporaryDirectory(prefix="docs-test-") as d:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d}
        for where, text in manifests:
            for var in set(re.findall(r"\$\{(\w+)\}", text)):
                env[var] = "example"
            path = Path(d) / "manifest.yaml"
            path.write_text(text)
            p = subprocess.run([os.path.abspath(args.dbform), "validate", "-f", str(path)], cwd=d, env=env,
                               capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                problems.append(f"{where}: the example manifest is not valid:\n{p.stderr}")

    if problems:
        print(f"{len(problems)} problem(s) in the documentation:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"docs: {len(cli.commands)} commands documented, {len(manifests)} example manifests valid, "
          f"every command line in {len(documents)} documents parses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
