#!/usr/bin/python3
"""Docs that cannot rot: README.md, docs/ and the man pages checked against the binary they describe.

1. docs/commands.md is what `dbform __reference` generates, and every command and every flag (as
   `dbform help COMMAND` lists them) appears in it, the flag inside its command's `## dbform
   COMMAND` section.
2. The man pages the build made (--man DIR): dbform(1), dbform-COMMAND(1) for every command and
   dbform-manifest(5), each with its command's every flag and an EXAMPLES section.
3. Every command line written in a ```sh block of README.md or docs/*.md (the examples of
   docs/commands.md included) that runs dbform names a command there is and only flags that
   command (or dbform itself) has.
4. Every example manifest (a ```yaml block whose first line, comments aside, is `version: 1`; a rule
   file when it holds `rules:`, read as `--policy` reads it) is
   valid for `dbform validate`.
5. Every ```json block is JSON, and a plan document among them validates against
   schemas/plan.schema.json; every line of a ```jsonl block is an `apply --json` event that
   validates against schemas/events.schema.json.
6. docs/pipelines.md's table of `apply --json` events names every event type of
   schemas/events.schema.json, and its `summary` row every field of the summary event.
7. Statements once found untrue stay corrected, and the ones that replaced them stay (CLAIMS below:
   each says which behaviour, tested elsewhere, makes it true or false).

Usage: docs_test.py --dbform BIN --root DIR --man DIR
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from jsonschema import Draft202012Validator

FLAG = re.compile(r"`(--?[A-Za-z][\w-]*)")
SUBCOMMAND = re.compile(r"^\s+- `([\w-]+)`")
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
        flags, subcommands, section = set(), [], None
        for line in self.help(path).splitlines():
            if line and not line.startswith(" "):
                section = line  # NAME, SYNOPSIS, OPTIONS, COMMANDS, ...
            elif section == "OPTIONS" and line.lstrip().startswith("- "):
                flags.update(FLAG.findall(line.split(":")[0]))
            elif section == "COMMANDS" and (m := SUBCOMMAND.match(line)):
                subcommands.append(m.group(1))
        self.commands[" ".join(path)] = flags
        for sub in subcommands:
            self._walk(path + [sub])

    def command_of(self, words):
        """The longest command path the words start with, and the words after it."""
        for n in range(len(words), -1, -1):
            if " ".join(words[:n]) in self.commands:
                return " ".join(words[:n]), words[n:]
        return "", words


def man_text(roff):
    """A man page's words: escapes and font changes undone."""
    return re.sub(r"\\f[BIRP]", "", roff).replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def check_man_pages(cli, man, problems):
    for command, flags in sorted(cli.commands.items()):
        name = "dbform" + ("-" + command.replace(" ", "-") if command else "")
        page = man / "man1" / f"{name}.1"
        if not page.exists():
            problems.append(f"no man page {page}")
            continue
        text = man_text(page.read_text())
        for flag in sorted(flags):
            if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text):
                problems.append(f"{page.name} does not document {flag}")
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES"):
            if f".SH {section}" not in text:
                problems.append(f"{page.name} has no {section} section")
    manifest = man / "man5" / "dbform-manifest.5"
    if not manifest.exists():
        problems.append(f"no man page {manifest}")
    elif "read_replicas" not in man_text(manifest.read_text()):
        problems.append(f"{manifest.name} does not document read_replicas")


# (document, regular expression, whether it must match, why). Matched against the text with line
# breaks and runs of spaces as one space.
CLAIMS = [
    ("docs/using.md", r"import --project ID --generate FILE` lists the project[^.]* records every", False,
     "`import --project --generate` records nothing; the apply of a plan with FILE does"),
    ("docs/using.md", r"--generate FILE` .{0,600}It records nothing and takes no lock", True,
     "`import --project --generate` records nothing (tests/e2e/lifecycle_test.cpp)"),
    ("docs/pipelines.md", r"stale, and run with a database role that has only `SELECT`", False,
     "the example workflow gives pull requests and main the same state secret"),
    ("docs/pipelines.md", r"`DBFORM_PLAN_STATE_URL` \(the planner role\) and no `DBFORM_STATE_PASSPHRASE`", True,
     "examples/ci/github-actions.yml gives pull requests the planner role and no state key (tests/workflow_secrets.py)"),
    ("docs/pipelines.md", r"`dbform-ci.sh plan` exits 0 whenever it planned", True,
     "examples/ci/dbform-ci.sh maps dbform's exit 2 to 0 (tests/ci_example.py)"),
    ("docs/simulator.md", r"\(no body needed: PAUSED or READY at once, a pause", False,
     "under --postgres a console stop is PAUSING until the server has stopped"),
    ("docs/simulator.md", r"under `--postgres` PAUSING or RESUMING first", True,
     "the console's stop and start wait for the server under --postgres"),
    ("docs/simulator.md", r"under `--postgres` CONFIGURING until its server accepts connections", True,
     "the console's create waits for the server under --postgres"),
    ("docs/simulator.md", r"`enablePooler` / `disablePooler` \(service or replica set\) \| the pooler's endpoint is served", True,
     "sim --postgres serves the pooler (tests/e2e/postgres_pooler_test.cpp)"),
    ("docs/simulator.md", r"real service's last snapshot may be hours old", True,
     "the simulator forks the data as it is now for LAST_SNAPSHOT too"),
    ("docs/previews.md", r"`LAST_SNAPSHOT` forks from the source's most recent snapshot, which on the real service may be hours old", True,
     "a LAST_SNAPSHOT preview may lack recent writes; the simulator's has them"),
]


def check_claims(root, problems):
    for doc, pattern, must, why in CLAIMS:
        text = re.sub(r"\s+", " ", (root / doc).read_text())
        if bool(re.search(pattern, text)) != must:
            problems.append(f"{doc}: {'lacks' if must else 'still says'} /{pattern}/: {why}")


def check_event_table(root, problems):
    schema = json.loads((root / "schemas/events.schema.json").read_text())
    rows = {}
    for line in (root / "docs/pipelines.md").read_text().splitlines():
        cells = line.split("|")
        if len(cells) > 3 and line.startswith("| `"):
            for name in re.findall(r"`([a-z_]+)`", cells[1]):
                rows[name] = cells[2]
    for event in schema["properties"]["type"]["enum"]:
        if event not in rows:
            problems.append(f"docs/pipelines.md: the `apply --json` event table has no row for `{event}`")
    fields = [f for f in schema["$defs"]["summary"]["properties"] if f not in ("type", "time")]
    for field in fields:
        if f"`{field}`" not in rows.get("summary", ""):
            problems.append(f"docs/pipelines.md: the `summary` event's row does not name `{field}`")


def check_json_examples(root, documents, problems):
    plan = Draft202012Validator(json.loads((root / "schemas/plan.schema.json").read_text()))
    events = Draft202012Validator(json.loads((root / "schemas/events.schema.json").read_text()))
    checked = 0
    for doc in documents:
        name = doc.relative_to(root)
        for language, start, lines in fenced_blocks(doc.read_text(), {"json", "jsonl"}):
            texts = [("\n".join(lines), start)] if language == "json" else [(l, start + i) for i, l in enumerate(lines) if l.strip()]
            for text, line in texts:
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as e:
                    problems.append(f"{name}:{line}: the {language} example is not JSON: {e}")
                    continue
                schema = events if language == "jsonl" else plan if value.get("format") == "dbform-plan" else None
                if schema is None:
                    continue
                checked += 1
                for e in list(schema.iter_errors(value))[:3]:
                    problems.append(f"{name}:{line}: the example does not validate: "
                                    f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
    return checked


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
    runs, current, previous = [], None, ""
    for t in tokens:
        flag_value = previous.startswith("--") and "=" not in previous  # `--dbform build/dbform`
        previous = t
        if t in SHELL_OPERATORS or t.startswith(">") or t.startswith("2>"):
            current = None
        elif not flag_value and (t == "dbform" or (t.endswith("/dbform") and "://" not in t)):
            current = []
            runs.append(current)
        elif current is not None:
            current.append(t)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dbform", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--man", required=True)
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
            if command == "":
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
                        if w == "--":  # what follows is another program's (`dbform connect ADDRESS -- ARGS`)
                            break
                        flag = w.split("=")[0]
                        if w.startswith("-") and w != "-" and flag not in cli.commands[command] | global_flags:
                            problems.append(f"{where}: `dbform {command}` has no flag {flag}")

    check_man_pages(cli, Path(args.man), problems)
    check_event_table(root, problems)
    check_claims(root, problems)
    json_examples = check_json_examples(root, documents, problems)

    with tempfile.TemporaryDirectory(prefix="docs-test-") as d:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d}
        for where, text in manifests:
            for var in set(re.findall(r"\$\{(\w+)\}", text)):
                env["DBFORM_VAR_" + var] = "example"  # what a manifest's ${NAME} reads
            path = Path(d) / "manifest.yaml"
            path.write_text(text)
            command = [os.path.abspath(args.dbform), "validate", "-f", str(path)]
            # A rule file (`rules:` at the top, docs/policies.md): read as --policy reads it.
            if re.search(r"^rules:", text, re.M):
                command = [os.path.abspath(args.dbform), "policy", "check", "--policy", str(path),
                           "--state", str(Path(d) / "no-state.json")]
            p = subprocess.run(command, cwd=d, env=env, capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                problems.append(f"{where}: the example manifest is not valid:\n{p.stderr}")

    if problems:
        print(f"{len(problems)} problem(s) in the documentation:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"docs: {len(cli.commands)} commands documented in docs/commands.md and their man pages, "
          f"{len(manifests)} example manifests valid, {json_examples} JSON examples valid, "
          f"every command line in {len(documents)} documents parses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
