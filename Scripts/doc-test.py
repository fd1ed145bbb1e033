#!/usr/bin/env python3
"""Runs every command the README and Documentation/ show, and compares every output they show (issue 43).

Each code block of README.md and Documentation/*.md (fenced or indented) is accounted for, or the run fails:

- a block whose lines start with `$ ` is a terminal session: each command runs, and what follows it up to the
  next `$ ` is compared with what it printed (stdout and stderr together);
- a block of commands (its first line starts with a program: arrival, swift, Scripts/, sqlite3, curl, ...) runs
  line by line (a line ending in `\\` continues), and each command must exit 0;
- a ```json block of records ({"v":1,...} lines) is ingested with --strict (every line must be stored); any other
  ```json block must parse;
- anything else says what it is in an HTML comment right before it, which the rendered page does not show:

    <!-- doc-test
    setup: arrival simulate --out before --activities 2000 --seed 11 --quiet
    output of: arrival diff before after
    compare: lines in order
    -->

  Keys: `setup:` (a command run first, repeatable), `output of:` (the block is this command's output), `exit:`
  (its expected status, default 0), `compare:` (`exact`, the default; `first lines`: the block is the start of
  the output; `lines in order`: the block's lines appear in the output in this order, rows cut for the page),
  `stream:` (what `output of` compares: `stdout`, the default, `stderr` or `both`), `filter:` (only the output's
  lines this regular expression finds), `then:` (a command run after the block that must exit 0, repeatable),
  `script` (the block is one shell script, run whole), `run` (run the block's commands even though they do not look like commands), `serve` (the block's command is
  a collector: started, asked /readyz, stopped with SIGTERM; it must exit 0), `synopsis` (each line
  `arrival SUB [--flag ...]`: every flag must be one `arrival SUB --help` lists), `skip: REASON` (a command this
  run cannot make: printed with its reason), `text: WHAT` (not a command: a diagram, a tree, a config file).

In the page's expected output, `…` stands for any text within a line, and a line of only `…` for any lines.
Commands run in a scratch copy of the repository (one a page, in the page's order), with `arrival` the built
binary, `swift run arrival` that same binary, `uploads/2026-11-21/` a copy of SampleData/, and the paths a page
names outside it (`/tmp/…`, `/var/lib/arrival/…`, `/etc/arrival/…`) moved into the scratch copy; output is
compared with the scratch copy's path written back as the page's.

    Scripts/doc-test.py [--arrival PATH] [--list] [--self-test] [--given 'COMMAND=FILE']... [FILE.md ...]

`--given` supplies a command's output that CI already has (the release build's log): then only the blocks showing
that command's output are checked, against the file. Without it, a block whose note says `given:` (where its output
is compared instead) is listed as skipped with that reason.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("arrival", "swift", "Scripts/", "bash", "sqlite3", "curl", "tar", "python3", "cd", "export", "git", "dir=",
            "sudo", "apt-get", "psql", "ARRIVAL_", "tail", "gunzip")
TIMEOUT = 600


@dataclass
class Block:
    path: str
    line: int
    lang: str
    lines: list
    notes: dict = field(default_factory=dict)
    setups: list = field(default_factory=list)
    thens: list = field(default_factory=list)
    replaces: list = field(default_factory=list)

    @property
    def where(self):
        return f"{self.path}:{self.line}" if self.line else self.path


def parse_note(text):
    notes, setups, thens, replaces = {}, [], [], []
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        key, _, value = raw.partition(":")
        key, value = key.strip(), value.strip()
        if key == "setup":
            setups.append(value)
        elif key == "then":
            thens.append(value)
        elif key == "replace":
            old, _, new = value.partition(" -> ")
            replaces.append((old, new))
        else:
            notes[key] = value
    return notes, setups, thens, replaces


def blocks_of(path):
    """The code blocks of one Markdown file, each with the doc-test note right before it (if any)."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    found, i, note, in_note, note_text = [], 0, None, False, []
    prev_blank = True
    while i < len(lines):
        line = lines[i]
        if in_note:
            if "-->" in line:
                note_text.append(line.split("-->")[0])
                note = parse_note("\n".join(note_text))
                in_note = False
            else:
                note_text.append(line)
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith("<!-- doc-test"):
            rest = stripped[len("<!-- doc-test"):].lstrip(":").strip()
            if rest.endswith("-->"):
                note = parse_note(rest[:-3])
            else:
                in_note, note_text = True, [rest]
            i += 1
            continue
        fence = re.match(r"^( *)```(\w*)\s*$", line)
        if fence:
            indent = len(fence.group(1))
            j = i + 1
            while j < len(lines) and not re.match(r"^ *```\s*$", lines[j]):
                j += 1
            body = [l[indent:] if l[:indent].strip() == "" else l for l in lines[i + 1:j]]
            found.append(make_block(path, i + 2, fence.group(2), body, note))
            note, i, prev_blank = None, j + 1, False
            continue
        # An indented block: four spaces after a blank line, not a list item's continuation.
        if line.startswith("    ") and stripped and prev_blank and not in_list(lines, i):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            found.append(make_block(path, i + 1, "", [l[4:] for l in lines[i:j]], note))
            note, i, prev_blank = None, j, False
            continue
        if stripped:
            note = note if stripped.startswith("<!--") else None
        prev_blank = not stripped
        i += 1
    return found


def in_list(lines, i):
    """Whether the indented line i continues a list item (then it is the item's text, not code)."""
    k = i - 1
    while k >= 0:
        line = lines[k]
        if not line.strip():
            k -= 1
            continue
        if re.match(r"^\s*([-*+]|\d+\.)\s", line):
            return True
        if not line.startswith(" "):
            return False
        k -= 1
    return False


def make_block(path, line, lang, body, note):
    notes, setups, thens, replaces = note if note else ({}, [], [], [])
    for old, new in replaces:  # what the page names that only exists elsewhere (a collector's address)
        body = [line.replace(old, new) for line in body]
    return Block(str(path), line, lang, body, notes, setups, thens)


def kind_of(block):
    n = block.notes
    for key in ("skip", "text", "output of", "serve", "synopsis", "postgres", "compiled in"):
        if key in n:
            return key
    if any(l.startswith("$ ") for l in block.lines):
        return "session"
    if block.lang == "json":
        records = [l for l in block.lines if l.strip()]
        return "records" if records and all(l.startswith('{"v":1') for l in records) else "json"
    if "run" in n or "script" in n:
        return "run"
    first = next((l for l in block.lines if l.strip() and not l.startswith("#")), "")
    if block.lang in ("", "sh", "bash", "console") and first.startswith(PROGRAMS):
        return "run"
    return "unaccounted"


class Sandbox:
    """A scratch copy of the repository for one page, with the page's outside paths moved into it."""

    def __init__(self, work, arrival, page):
        self.dir = Path(work) / re.sub(r"[^A-Za-z0-9]+", "_", page)
        copy_repository(self.dir)
        shutil.copytree(ROOT / "SampleData", self.dir / "uploads" / "2026-11-21")
        for outside in ("tmp", "var/lib/arrival", "etc/arrival"):
            (self.dir / "outside" / outside).mkdir(parents=True, exist_ok=True)
        (self.dir / "outside/etc/arrival/tokens").write_text(
            "device d3v1c3-t0k3n-0123456789abcdef\nsender s3nd3r-t0k3n-0123456789abcdef\n"
            "read r3ad-t0k3n-0123456789abcdef\n")
        shims = self.dir / "outside" / "bin"
        shims.mkdir()
        (shims / "arrival").symlink_to(arrival)
        (shims / "swift").write_text(
            "#!/usr/bin/env bash\n"
            "# `swift run arrival ARGS` is the built arrival; any other swift command is CI's own step.\n"
            'if [ "${1:-}" = run ] && [ "${2:-}" = arrival ]; then shift 2; exec arrival "$@"; fi\n'
            'echo "doc-test: swift $* is not run here (CI runs the build and the tests itself)" >&2; exit 97\n')
        (shims / "swift").chmod(0o755)
        self.env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}", NO_COLOR="1", TZ="UTC",
                        ARRIVAL_SENDER_TOKEN="s3nd3r-t0k3n-0123456789abcdef")
        self.env.pop("ARRIVAL_DB", None)
        # A setup that starts a process in the background appends its pid here; the run stops them all at its end.
        self.env["DOC_TEST_PIDS"] = str(self.dir / "outside" / "pids")
        self.cwd = self.dir

    def inward(self, command):
        """The command with the page's outside paths moved into the scratch copy."""
        for outside in ("/tmp/", "/var/lib/arrival/", "/etc/arrival/"):
            command = re.sub(r"(?<![\w.])" + re.escape(outside), f"{self.dir}/outside{outside}", command)
        return command

    def outward(self, text):
        """Output with the scratch copy's paths written as the page writes them."""
        text = text.replace(f"{self.dir}/outside/", "/")
        return text.replace(f"{self.dir}/", "").replace(str(self.dir), ".")

    def run(self, command, stream="both", timeout=TIMEOUT):
        """The command's status and output: stdout and stderr as they interleave, or one of them."""
        errors = {"both": subprocess.STDOUT, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}[stream]
        result = subprocess.run(["bash", "-c", self.inward(command)], cwd=self.cwd, env=self.env, timeout=timeout,
                                stdout=subprocess.DEVNULL if stream == "stderr" else subprocess.PIPE, stderr=errors,
                                stdin=subprocess.DEVNULL)
        output = result.stderr if stream == "stderr" else result.stdout
        return result.returncode, self.outward(output.decode("utf-8", "replace"))


def copy_repository(target):
    """The repository's tracked files (or, outside git, everything but the build folders)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if listed.returncode == 0 and listed.stdout:
        for name in listed.stdout.decode().split("\0"):
            source = ROOT / name
            if name and source.is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
    else:
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(".build", ".git", "ci-artifacts"))


def commands_of(lines):
    """The commands of a block: a line ending in a backslash continues; comments and blank lines are dropped."""
    commands, current = [], ""
    for line in lines:
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        commands.append(re.sub(r"\s+", " ", current).strip())
        current = ""
    if current:
        commands.append(current.strip())
    return commands


def line_matches(expected, actual):
    if "…" not in expected:
        return expected == actual
    pattern = ".*?".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, actual) is not None


def compare(expected, actual, mode):
    """Whether the page's lines (expected) agree with the output (actual) under the mode; a reason when not."""
    expected = [l.rstrip() for l in expected]
    while expected and not expected[-1]:
        expected.pop()
    actual = [l.rstrip() for l in actual.rstrip("\n").split("\n")] if actual.strip() else []
    if mode == "lines in order":
        position = 0
        for line in expected:
            if line == "…":
                continue
            while position < len(actual) and not line_matches(line, actual[position]):
                position += 1
            if position == len(actual):
                return f"the page's line is not in the output (in this order): {line!r}"
            position += 1
        return None
    if mode == "first lines":
        actual = actual[:len(expected)]
    return match_lines(expected, actual)


def match_lines(expected, actual):
    if not expected:
        return None if not actual else f"the output has more lines than the page, from {actual[0]!r}"
    if expected[0] == "…":
        for skip in range(len(actual) + 1):
            if match_lines(expected[1:], actual[skip:]) is None:
                return None
        return f"no lines after '…' match {expected[1]!r}" if len(expected) > 1 else None
    if not actual:
        return f"the output ends before the page's line {expected[0]!r}"
    if not line_matches(expected[0], actual[0]):
        return f"the page shows {expected[0]!r}, the command printed {actual[0]!r}"
    return match_lines(expected[1:], actual[1:])


class Runner:
    def __init__(self, arrival, work, given):
        self.arrival, self.work, self.given = arrival, work, given
        self.counts = {"ran": 0, "compared": 0, "skipped": 0, "text": 0, "failed": 0}
        self.sandboxes = {}
        self.help = {}
        self.database = None

    def sandbox(self, page):
        if page not in self.sandboxes:
            self.sandboxes[page] = Sandbox(self.work, self.arrival, page)
        return self.sandboxes[page]

    def report(self, block, ok, what, detail=None):
        status = "ok  " if ok else "FAIL"
        print(f"{status}  {block.where}: {what}")
        if detail:
            for line in detail.rstrip("\n").split("\n")[-25:]:
                print(f"        {line}")
        if not ok:
            self.counts["failed"] += 1

    def check(self, block):
        kind = kind_of(block)
        box = self.sandbox(block.path) if kind not in ("skip", "text", "unaccounted", "json", "compiled in") else None
        if box:
            box.env["DOC_TEST_PORT"] = str(free_port())  # for a setup that starts a collector
            box.cwd = box.dir / block.notes.get("in", ".")
            box.cwd.mkdir(parents=True, exist_ok=True)
        for setup in block.setups:
            status, output = box.run(setup)
            if status != 0:
                return self.report(block, False, f"setup `{setup}` exited {status}", output)
        getattr(self, "check_" + kind.replace(" ", "_"))(block, box)

    def check_skip(self, block, _):
        self.counts["skipped"] += 1
        print(f"skip  {block.where}: {block.notes['skip']}")

    def check_text(self, block, _):
        self.counts["text"] += 1

    def check_unaccounted(self, block, _):
        self.report(block, False, "a code block doc-test cannot place: run it (its first line a command), or say "
                    "what it is in a '<!-- doc-test ... -->' note (output of, text, skip)",
                    "\n".join(block.lines[:3]))

    def check_json(self, block, _):
        try:
            json.loads("\n".join(block.lines))
        except ValueError as error:
            return self.report(block, False, f"the JSON does not parse: {error}")
        self.counts["compared"] += 1
        self.report(block, True, "JSON parses")

    def check_records(self, block, box):
        example = box.dir / "outside" / "tmp" / f"records-{block.line}.jsonl"
        example.write_text("\n".join(l for l in block.lines if l.strip()) + "\n")
        status, output = box.run(f"arrival ingest --strict --quiet --db /tmp/records-{block.line}.sqlite "
                                 f"/tmp/records-{block.line}.jsonl")
        self.counts["compared"] += 1
        self.report(block, status == 0, f"{len(block.lines)} records ingest with --strict", output if status else None)

    def postgres(self):
        """A database of its own on the PostgreSQL test server (ARRIVAL_TEST_POSTGRES_URL), made once a run."""
        if self.database is None:
            server = os.environ.get("ARRIVAL_TEST_POSTGRES_URL")
            if not server:
                return None
            name = f"arrival_doc_test_{os.getpid()}"
            made = subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}", server],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if made.returncode != 0:
                raise RuntimeError(f"cannot make a database on the PostgreSQL test server: {made.stdout}")
            self.database = (server, server.rsplit("/", 1)[0] + "/" + name, name)
        return self.database[1]

    def drop_postgres(self):
        if self.database:
            server, _, name = self.database
            subprocess.run(["psql", "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", server],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def check_postgres(self, block, box):
        """A block for a PostgreSQL server (`db.internal` in its URLs): run against a database of the test server,
        SQL through psql; without a server it is skipped, or fails when ARRIVAL_REQUIRE_POSTGRES=1."""
        url = self.postgres()
        if url is None:
            if os.environ.get("ARRIVAL_REQUIRE_POSTGRES") == "1":
                return self.report(block, False, "needs a PostgreSQL server, and ARRIVAL_TEST_POSTGRES_URL is not set")
            self.counts["skipped"] += 1
            print(f"skip  {block.where}: needs a PostgreSQL server (set ARRIVAL_TEST_POSTGRES_URL)")
            return
        if block.lang == "sql":
            commands = [f"psql -v ON_ERROR_STOP=1 -qc {shlex.quote(' '.join(block.lines))} '{url}'"]
        else:
            commands = commands_of(block.lines)
        for shown in commands:
            command = re.sub(r"postgres(ql)?://[^\s\"']*db\.internal[^\s\"']*", url, shown)
            status, output = box.run(command)
            self.counts["ran"] += 1
            self.report(block, status == 0, f"`{shorten(shown)}` exits 0 on the PostgreSQL test server" if status == 0
                        else f"`{shorten(shown)}` exited {status} on the PostgreSQL test server", output if status else None)

    def check_run(self, block, box):
        want = int(block.notes.get("exit", "0"))
        commands = ["\n".join(block.lines)] if "script" in block.notes else commands_of(block.lines)
        for index, command in enumerate(commands):
            status, output = box.run(command)
            self.counts["ran"] += 1
            expected = want if index == len(commands) - 1 else 0
            self.report(block, status == expected, f"`{shorten(command)}` exits {status}" if status == expected else
                        f"`{shorten(command)}` exited {status}, the page expects {expected}",
                        output if status != expected else None)
        self.then(block, box)

    def then(self, block, box):
        for check in block.thens:
            status, output = box.run(check)
            self.counts["compared"] += 1
            self.report(block, status == 0, f"then `{shorten(check)}` holds" if status == 0 else
                        f"then `{shorten(check)}` exited {status}", output if status else None)

    def check_session(self, block, box):
        steps, current = [], None
        continued = False
        for line in block.lines:
            if continued:
                current[0] = current[0][:-1].rstrip() + " " + line.strip()
            elif line.startswith("$ "):
                current = [line[2:].rstrip(), []]
                steps.append(current)
            elif current is not None:
                current[1].append(line)
            continued = current is not None and not current[1] and current[0].endswith("\\")
        last_status = 0
        for command, expected in steps:
            if command.strip() == "echo $?":
                actual = f"{last_status}\n"
            else:
                last_status, actual = box.run(command)
                self.counts["ran"] += 1
            problem = compare(expected, actual, block.notes.get("compare", "exact"))
            self.counts["compared"] += 1
            self.report(block, problem is None, f"`{shorten(command)}` prints what the page shows"
                        if problem is None else f"`{shorten(command)}`: {problem}", actual if problem else None)

    def check_output_of(self, block, box):
        command = block.notes["output of"]
        if command in self.given:
            # The log of a run in this checkout: its paths written as the page writes them, from the checkout's root.
            actual = Path(self.given[command]).read_text(encoding="utf-8", errors="replace")
            status, actual = 0, actual.replace(f"{ROOT}/", "")
        elif "given" in block.notes:
            self.counts["skipped"] += 1
            print(f"skip  {block.where}: the output of `{command}` is compared {block.notes['given']}")
            return
        else:
            status, actual = box.run(command, block.notes.get("stream", "stdout"))
            self.counts["ran"] += 1
        if "filter" in block.notes:
            actual = "".join(l + "\n" for l in actual.split("\n") if re.search(block.notes["filter"], l))
        want = int(block.notes.get("exit", "0"))
        problem = compare(block.lines, actual, block.notes.get("compare", "exact"))
        if status != want:
            problem = f"exited {status}, the page expects {want}" + (f"; {problem}" if problem else "")
        self.counts["compared"] += 1
        self.report(block, problem is None, f"output of `{shorten(command)}` is what the page shows"
                    if problem is None else f"output of `{shorten(command)}`: {problem}", actual if problem else None)
        self.then(block, box)

    def check_serve(self, block, box):
        command = commands_of(block.lines)[0]
        port = free_port()
        command = re.sub(r"--port \d+", f"--port {port}", command)
        process = subprocess.Popen(["bash", "-c", "exec " + box.inward(command)], cwd=box.dir, env=box.env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        ready, deadline = False, time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None and not ready:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
                    ready = answer.status == 200
            except OSError:
                time.sleep(0.2)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            output = process.communicate(timeout=120)[0].decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0].decode("utf-8", "replace")
        self.counts["ran"] += 1
        ok = ready and process.returncode == 0
        self.report(block, ok, f"`{shorten(command)}` answers /readyz and stops on SIGTERM with 0" if ok else
                    f"`{shorten(command)}`: ready {ready}, exit {process.returncode}", None if ok else output)

    def check_compiled_in(self, block, _):
        """Swift a page shows that a test compiles: its tokens must appear in that test, in order, contiguous."""
        test = ROOT / block.notes["compiled in"]
        shown = swift_tokens("\n".join(block.lines))
        self.counts["compared"] += 1
        ok = test.is_file() and shown and contains(swift_tokens(test.read_text(encoding="utf-8")), shown)
        self.report(block, ok, f"the Swift is the code {block.notes['compiled in']} compiles and runs" if ok else
                    f"the Swift is not, token for token, in {block.notes['compiled in']} (the test that compiles it)")

    def check_inline(self, page):
        """The commands a page's prose names in `code` spans: every flag must be one the command's --help lists."""
        text = re.sub(r"```.*?```", "", Path(page).read_text(encoding="utf-8"), flags=re.S)
        spans = [re.sub(r"\s+", " ", span) for span in re.findall(r"`(arrival [a-z][^`]*)`", text)]
        spans = [span for span in spans if "--" in span]
        if not spans:
            return
        box, bad = self.sandbox(page), []
        for span in spans:
            bad += self.unknown_flags(span, box)
        self.counts["compared"] += 1
        where = Block(page, 0, "", [])
        self.report(where, not bad, f"the {len(spans)} commands its prose names use only flags their --help lists"
                    if not bad else "its prose names flags the commands do not have: " + ", ".join(dict.fromkeys(bad)))

    def unknown_flags(self, line, box, shown=None):
        """The flags of one `arrival SUB ...` line that `arrival SUB --help` does not list."""
        words = line.split()
        if len(words) < 2 or words[0] != "arrival" or not re.fullmatch(r"[a-z-]+", words[1]):
            return []
        names = [words[1]]
        if len(words) > 2 and re.fullmatch(r"[a-z]+(\|[a-z]+)*", words[2]):
            names = [f"{words[1]} {name}" for name in words[2].split("|")]
        flags = re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line.split("  (")[0])
        bad = []
        for name in names:
            if name not in self.help:
                self.help[name] = box.run(f"arrival {name} --help", "stdout")[1]
            if shown is not None:
                shown.setdefault(name, set()).update(flags)
            bad += [f"arrival {name} {flag}" for flag in flags if not re.search(
                r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", self.help[name])]
        return bad

    def check_synopsis(self, block, box):
        """Every flag a synopsis line shows is one the command's --help lists; with `synopsis: complete`, every
        flag --help lists is shown too."""
        lines = []
        for line in block.lines:
            if line.startswith((" ", "\t")) and lines:
                lines[-1] += " " + line.strip()
            elif line.strip():
                lines.append(line.strip())
        shown, bad = {}, []
        for line in lines:
            bad += self.unknown_flags(line, box, shown)
        if block.notes.get("synopsis") == "complete":
            for name, flags in shown.items():
                listed = set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", self.help[name], re.M))
                bad += [f"arrival {name}: {flag} not shown" for flag in sorted(listed - flags - {"--help", "--version"})]
        self.counts["compared"] += 1
        self.report(block, not bad, "every flag of the synopsis is one `arrival SUB --help` lists" if not bad else
                    "the synopsis and --help disagree: " + ", ".join(dict.fromkeys(bad)))


def stop_background(pids):
    if not pids.exists():
        return
    for pid in pids.read_text().split():
        try:
            os.kill(int(pid), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            continue
        for _ in range(100):
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)


def swift_tokens(text):
    """Swift source as tokens, comments and import lines left out: formatting does not change them."""
    text = re.sub(r"^\s*import .*$", "", text, flags=re.M)
    tokens = re.findall(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|\d[\d_.]*|\S', text)
    return [token for token in tokens if not token.startswith("//")]


def contains(haystack, needle):
    first = needle[0] if needle else None
    return any(haystack[i:i + len(needle)] == needle for i, token in enumerate(haystack) if token == first)


def shorten(command):
    return command if len(command) <= 90 else command[:87] + "..."


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


SELF_TEST_PAGE = """# A page of every kind

Prose may name `arrival lost --limit 3` and `arrival report --no-such-flag`.

<!-- doc-test: compare: first lines -->

    $ arrival --version
    …

    $ arrival simulate --out fleet --activities 3 --seed 1 --no-such-flag
    …
    $ echo $?
    2

<!-- doc-test
output of: arrival --version
-->
```
0.0.0-not-a-version
```

<!-- doc-test: synopsis -->
```
arrival report [--db FILE] [--no-such-flag]
```

```json
{"v":1,"kind":"render","activity_id":"a","seq":1,"rendered_at":"not a time"}
```

    arrival ingest no/such/path

```
an unaccounted block
```

<!-- doc-test: skip: a reason -->

    arrival serve

<!-- doc-test
setup: arrival simulate --out fleet --activities 3 --seed 1
then: test -d fleet/no-such-folder
-->

    arrival ingest fleet --db fleet.sqlite
"""
# (where, what must be said) for each block of SELF_TEST_PAGE: what a correct doc-test says of it.
SELF_TEST_EXPECTED = [
    ("FAIL", "its prose names flags the commands do not have: arrival report --no-such-flag"),
    ("ok  ", "`arrival --version` prints"),
    ("ok  ", "`arrival simulate --out fleet"),
    ("ok  ", "`echo $?` prints"),
    ("FAIL", "output of `arrival --version`: the page shows '0.0.0-not-a-version'"),
    ("FAIL", "arrival report --no-such-flag"),
    ("FAIL", "records ingest with --strict"),
    ("FAIL", "`arrival ingest no/such/path` exited 1"),
    ("FAIL", "a code block doc-test cannot place"),
    ("skip", "a reason"),
    ("ok  ", "`arrival ingest fleet --db fleet.sqlite` exits 0"),
    ("FAIL", "then `test -d fleet/no-such-folder` exited 1"),
]


def self_test(arrival):
    """doc-test on a page made to hold one block of each kind, right and wrong: it must say ok to the right ones
    and FAIL to each wrong one, or it is not a check."""
    with tempfile.TemporaryDirectory(prefix="arrival-doc-test-self.") as work:
        page = Path(work) / "page.md"
        page.write_text(SELF_TEST_PAGE)
        run = subprocess.run([sys.executable, __file__, "--arrival", str(arrival), str(page)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    said = [line for line in run.stdout.splitlines() if line[:4] in ("ok  ", "FAIL", "skip")]
    problems = [f"expected {status.strip()} with {text!r}" for status, text in SELF_TEST_EXPECTED
                if not any(line.startswith(status) and text in line for line in said)]
    if len(said) != len(SELF_TEST_EXPECTED):
        problems.append(f"{len(said)} verdicts, expected {len(SELF_TEST_EXPECTED)}")
    if run.returncode != 1:
        problems.append(f"exit {run.returncode} with failing blocks, expected 1")
    for problem in problems:
        print(f"doc-test self-test: {problem}")
    if problems:
        print(run.stdout)
        return 1
    print(f"doc-test self-test: {len(SELF_TEST_EXPECTED)} verdicts as expected (the wrong blocks failed)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--self-test", action="store_true",
                        help="check doc-test itself on a page of right and wrong blocks")
    parser.add_argument("--arrival", default=".build/debug/arrival")
    parser.add_argument("--list", action="store_true", help="print each block and how it is checked; run nothing")
    parser.add_argument("--given", action="append", default=[], metavar="COMMAND=FILE")
    parser.add_argument("pages", nargs="*")
    args = parser.parse_args()
    pages = args.pages or ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "Documentation").glob("*.md"))
    os.chdir(ROOT)
    if args.self_test:
        return self_test(Path(args.arrival).resolve())
    blocks = [block for page in pages for block in blocks_of(page)]
    given = dict(item.split("=", 1) for item in args.given)
    if given:  # only the blocks whose output is given
        blocks = [block for block in blocks if block.notes.get("output of") in given]
        missing = set(given) - {block.notes.get("output of") for block in blocks}
        if missing:
            print(f"doc-test: no page shows the output of {', '.join(sorted(missing))}", file=sys.stderr)
            return 1
    if args.list:
        for block in blocks:
            print(f"{kind_of(block):12} {block.where}: {(block.lines or [''])[0][:80]}")
        return 0
    arrival = Path(args.arrival).resolve()
    if not arrival.is_file():
        print(f"doc-test: no arrival at {args.arrival} (build it first: swift build)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="arrival-doc-test.") as work:
        runner = Runner(arrival, work, given)
        for page in ([] if given else pages):
            runner.check_inline(page)
        for block in blocks:
            try:
                runner.check(block)
            except subprocess.TimeoutExpired as error:
                runner.report(block, False, f"`{shorten(str(error.cmd))}` ran past {TIMEOUT} s")
        for box in runner.sandboxes.values():
            stop_background(Path(box.env["DOC_TEST_PIDS"]))
        runner.drop_postgres()
    c = runner.counts
    print(f"doc-test: {len(blocks)} blocks in {len(pages)} pages: {c['ran']} commands run, {c['compared']} outputs "
          f"and examples compared, {c['skipped']} skipped with their reason, {c['text']} not commands; "
          f"{c['failed']} failed")
    return 1 if c["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
