#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Docs that run: the command blocks of README.md and docs/operators.md.

Every fenced block of a checked file carries a marker on the line before
its fence (blank lines between are allowed):

  <!-- doc-test: run -->          run every command; each must exit 0, or the
                                  status a `# exit N` comment on its line shows
  <!-- doc-test: output -->       lines starting with `$ ` or `# ` (a prompt) are
                                  commands; the lines after one, up to the next
                                  prompt, are its output (stdout and stderr),
                                  compared line by line. `...` on a line of its
                                  own stands for any number of lines (none
                                  too); `...` inside a line for any text there.
                                  Each command must exit 0, or the status of
                                  its `# exit N` comment
  <!-- doc-test: skip REASON -->  not run; REASON is printed in the test log

```json blocks are exempt: they carry `<!-- json-example: KIND -->` and
scripts/json-schema-check.py checks them. A block without a marker, or with
a marker this script does not know, fails `check` and `run`: new docs cannot
escape the test.

The blocks of one file run in order in one bash session (one process, its
variables, functions and background jobs kept from block to block), so that
a runbook's steps build on each other, as root, in the file's working
directory (--workdir). A failure names the file, the line and the block.

  doc-test.py check FILE...         every block marked, every marker known
                                    (host, no root: make doc-test-check)
  doc-test.py run [--vm] [--workdir DIR] FILE...
                                    run the blocks; README.md and
                                    docs/operators.md only inside the system
                                    test's VM (--vm: systemd as PID 1, host
                                    name execgate-systest): their commands
                                    load execgate at the cgroup root
  doc-test.py selftest              the runner against tests/doctest/, whose
                                    blocks must pass or fail as they say

Fixtures (--vm only): the state a block needs that the VM lacks and no
reader needs a block for; each is printed with its reason before the file.
"""
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(\S+)\s*(.*?)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*doc-test\b")
JSON_MARKER = re.compile(r"^\s*<!--\s*json-example:")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
EXPECT_EXIT = re.compile(r"#\s*exit\s+(\d+)\b")
PROMPT = re.compile(r"^[$#] ")
BLOCK_TIMEOUT = 300  # s per block: a load under TCG takes tens of seconds
LOG_LINES = 60  # lines of a block's output shown in the log

# The files whose commands act on the machine (load at the cgroup root,
# systemctl, apt): run only inside the system test's VM.
MACHINE_DOCS = ("README.md", "docs/operators.md")

# name -> (reason, shell). Applied before a file's first block, in order.
FIXTURE_SH = {
    "fresh-node": (
        "each file starts on a node as a reader's would be: no execgate package, nothing "
        "loaded, no sandbox cgroup, no keys (the system test before it left its own)",
        "systemctl disable --now execgated >/dev/null 2>&1 || true\n"
        "if command -v execgate >/dev/null; then execgate unload >/dev/null 2>&1 || true; fi\n"
        "dpkg --purge execgate libexecgate1 >/dev/null 2>&1 || true\n"
        "rmdir /sys/fs/cgroup/sandboxes 2>/dev/null || true\n"
        "rm -rf ~/cp-keys /var/lib/execgate /etc/execgate\n"
        "! command -v execgate >/dev/null\n"),
    "source-tree": (
        "the reader works in the source tree after `make deb` (a block marked skip, run on the "
        "host): the packages the system test built are in build/deb/ of the working directory",
        "mkdir -p build/deb && cp \"$DOC_TEST_DEBS\"/*.deb build/deb/ && ls build/deb/execgate_*.deb\n"),
    "installed": (
        "operators.md's build-and-install line (`make && sudo make install`) is skipped in the "
        "VM, which has no compiler: the package gives the same files",
        "apt-get install -y -q ./build/deb/execgate_*.deb ./build/deb/libexecgate1_*.deb "
        ">/dev/null 2>&1 && command -v execgate\n"),
}
FIXTURES = {
    "README.md": ["fresh-node", "source-tree"],
    "docs/operators.md": ["fresh-node", "source-tree", "installed"],
}


class Block:
    def __init__(self, path, fence_line, lang, kind, arg, lines, marker_line):
        self.path = path
        self.line = fence_line  # 1-based line of the opening fence
        self.lang = lang
        self.kind = kind  # run, output, skip, json, or None (unmarked)
        self.arg = arg
        self.lines = lines  # the block's text, fence indentation removed
        self.marker_line = marker_line

    def where(self):
        return "%s:%d" % (self.path, self.line)


def parse(path, text):
    """The fenced blocks of a markdown file, with the marker before each."""
    lines = text.split("\n")
    blocks, errors = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if ANY_MARKER.match(lines[i]) and not MARKER.match(lines[i]):
                errors.append("%s:%d: malformed doc-test marker: %s" % (path, i + 1, lines[i].strip()))
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence)) and
                                      lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i >= len(lines):
            errors.append("%s:%d: fence never closed" % (path, start + 1))
            break
        i += 1
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        kind, arg, mline = None, "", None
        prev = lines[j] if j >= 0 else ""
        mm = MARKER.match(prev)
        if mm:
            # "json" is no marker's kind: only json-example marks those.
            kind, arg, mline = mm.group(1), mm.group(2), j + 1
            kind = kind if kind != "json" else "doc-test json"
        elif lang == "json" or JSON_MARKER.match(prev):
            kind = "json"
        blocks.append(Block(path, start + 1, lang, kind, arg, body, mline))
    return blocks, errors


def check_blocks(blocks):
    errors = []
    for b in blocks:
        if b.kind is None:
            errors.append("%s: %s block without a doc-test marker (<!-- doc-test: run|output|skip "
                          "REASON --> on the line before the fence)" % (b.where(), b.lang or "bare"))
        elif b.kind not in ("run", "output", "skip", "json"):
            errors.append("%s: unknown doc-test marker '%s' (line %d)" % (b.where(), b.kind, b.marker_line))
        elif b.kind == "skip" and not b.arg:
            errors.append("%s: doc-test: skip without a reason (line %d)" % (b.where(), b.marker_line))
        elif b.kind in ("run", "output") and b.arg:
            errors.append("%s: doc-test: %s takes no argument, got '%s'" % (b.where(), b.kind, b.arg))
        elif b.kind == "output" and not any(PROMPT.match(l) for l in b.lines):
            errors.append("%s: doc-test: output block with no `$ ` or `# ` command line" % b.where())
        elif b.kind in ("run", "output"):
            script = "\n".join(commands_of(b)[0] if b.kind == "output" else b.lines)
            p = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
            if p.returncode:
                errors.append("%s: the block is not valid bash: %s" % (b.where(), p.stderr.strip()))
    return errors


def commands_of(block):
    """An output block's commands: ([command text], [(index of its first line
    in the block, command text, the output lines shown after it)])."""
    cmds = []
    i = 0
    lines = block.lines
    while i < len(lines):
        if not PROMPT.match(lines[i]):
            i += 1
            continue
        first = i
        cmd = [lines[i][2:]]
        # A command goes on over the next lines until bash reads it whole
        # (a `\\`, a `|` at the end, an open quote).
        while i + 1 < len(lines) and not PROMPT.match(lines[i + 1]) and not complete("\n".join(cmd)):
            i += 1
            cmd.append(lines[i])
        i += 1
        out = []
        while i < len(lines) and not PROMPT.match(lines[i]):
            out.append(lines[i])
            i += 1
        cmds.append((first, "\n".join(cmd), out))
    return [c[1] for c in cmds], cmds


def complete(cmd):
    # bash -n takes a last line's `\` before the end of input as complete
    if cmd.rstrip().endswith("\\"):
        return False
    p = subprocess.run(["bash", "-n"], input=cmd + "\n", text=True, capture_output=True)
    return p.returncode == 0


def expected_exits(lines):
    """{line of a command's start (1-based in the block): status} from `# exit N`."""
    want = {}
    for n, l in enumerate(lines):
        m = EXPECT_EXIT.search(l)
        if not m:
            continue
        s = n
        while s > 0 and lines[s - 1].rstrip().endswith("\\"):
            s -= 1
        want[s + 1] = int(m.group(1))
    return want


def line_matches(want, got):
    parts = [re.escape(p) for p in want.split("...")]
    return re.fullmatch(".*".join(parts), got) is not None


def output_matches(want, got):
    """want: lines with `...`; got: lines. True when every line matches."""
    want = [w.rstrip() for w in want]
    got = [g.rstrip() for g in got]
    while want and not want[-1]:
        want.pop()
    while got and not got[-1]:
        got.pop()
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(want):
            r = j == len(got)
        elif want[i].strip() == "...":
            r = m(i + 1, j) or (j < len(got) and m(i, j + 1))
        else:
            r = j < len(got) and line_matches(want[i], got[j]) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return m(0, 0)


class Session:
    """One bash process for one file: blocks are sourced into it in turn."""

    # The ERR trap: an expected failure is noted and the block goes on; any
    # other ends the block (return from `source`) and names its line.
    TRAP = ("trap '__dt_s=$?; if [ -n \"$__dt_in\" ]; then "
            "case \"$__dt_expect\" in *\" $LINENO:$__dt_s \"*) __dt_seen=\"$__dt_seen $LINENO:$__dt_s\" ;; "
            "*) __dt_line=$LINENO; __dt_st=$__dt_s; __dt_in=; return $__dt_s ;; esac; fi' ERR\n")

    def __init__(self, workdir, tmp):
        self.tmp = tmp
        self.n = 0
        env = dict(os.environ)
        # A systemd service has no login environment: the docs' `~` is
        # the user's home, as in a reader's shell.
        env["HOME"] = pwd.getpwuid(os.getuid()).pw_dir
        self.p = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=workdir, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.send(self.TRAP)

    def send(self, s):
        self.p.stdin.write(s)
        self.p.stdin.flush()

    def run(self, script, expect):
        """Sources script. Returns (failure, seen, output): failure is None, or
        (line in the script, exit status) of the first command that failed
        unexpected, or (0, message) when the block never ended; seen, the
        (line, status) of the expected failures that happened."""
        self.n += 1
        f = os.path.join(self.tmp, "block-%d.sh" % self.n)
        out = os.path.join(self.tmp, "block-%d.out" % self.n)
        with open(f, "w") as fh:
            # The last `:` keeps an expected failure on the last line from
            # being the source's status, which the trap would see again.
            fh.write(script + "\n:\n")
        exp = " " + " ".join("%d:%d" % kv for kv in expect.items()) + " "
        self.send("__dt_in=1; __dt_line=0; __dt_st=0; __dt_seen=; __dt_expect='%s'; "
                  "source %s </dev/null >%s 2>&1; __dt_in=; "
                  "echo \"__DT_DONE $__dt_line $__dt_st$__dt_seen\"\n" % (exp, f, out))
        end = time.time() + BLOCK_TIMEOUT
        line = ""
        while not line.startswith("__DT_DONE"):
            r, _, _ = select.select([self.p.stdout], [], [], max(0, end - time.time()))
            if not r:
                return (0, "timed out after %d s" % BLOCK_TIMEOUT), [], read(out)
            line = self.p.stdout.readline()
            if not line:
                return (0, "the session's shell exited"), [], read(out)
        f = line.split()
        bad_line, st = int(f[1]), int(f[2])
        seen = [tuple(int(x) for x in w.split(":")) for w in f[3:]]
        return ((bad_line, st) if bad_line else None), seen, read(out)

    def close(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def show(out):
    lines = out.rstrip("\n").split("\n") if out.strip() else []
    for l in lines[:LOG_LINES]:
        print("    | " + l)
    if len(lines) > LOG_LINES:
        print("    | ... (%d more lines)" % (len(lines) - LOG_LINES))


def run_file(path, text, workdir, fixtures):
    """Runs a file's blocks; returns the list of failure messages."""
    blocks, errors = parse(path, text)
    errors += check_blocks(blocks)
    if errors:
        return errors
    tmp = tempfile.mkdtemp(prefix="doc-test-")
    s = Session(workdir, tmp)
    fails = []
    try:
        for name in fixtures:
            reason, sh = FIXTURE_SH[name]
            print("%s: fixture %s: %s" % (path, name, reason))
            failed, _, out = s.run(sh, {})
            if failed:
                show(out)
                fails.append("%s: fixture %s failed: %s" % (path, name, failed))
                return fails
        for b in blocks:
            t = time.time()
            if b.kind == "json":
                continue
            if b.kind == "skip":
                print("%s: skip: %s" % (b.where(), b.arg))
                continue
            if b.kind == "run":
                print("%s: run (%d lines)" % (b.where(), len(b.lines)))
                failed, seen, out = s.run("\n".join(b.lines), expected_exits(b.lines))
                show(out)
                msg = run_failure(b, failed, seen)
            else:
                print("%s: output" % b.where())
                msg = output_failure(b, s)
            print("%s: %s (%.1f s)" % (b.where(), "FAIL" if msg else "ok", time.time() - t))
            if msg:
                fails.append(msg)
                break  # later blocks build on this one
    finally:
        s.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return fails


def block_name(b):
    return "%s: %s block (fence at line %d)" % (b.path, b.kind, b.line)


def run_failure(b, failed, seen):
    want = expected_exits(b.lines)
    if failed and failed[0] == 0:
        return "%s: %s" % (block_name(b), failed[1])
    if failed:
        ln, st = failed
        return "%s:%d: %s: `%s` exited %d (wanted %d)" % (
            b.path, b.line + ln, block_name(b), b.lines[ln - 1].strip(), st, want.get(ln, 0))
    for ln, code in sorted(want.items()):
        if (ln, code) not in seen:
            return "%s:%d: %s: `%s` did not exit %d" % (
                b.path, b.line + ln, block_name(b), b.lines[ln - 1].strip(), code)
    return None


def output_failure(b, s):
    _, cmds = commands_of(b)
    for first, cmd, want in cmds:
        lines = cmd.split("\n")
        expect = {1: v for k, v in expected_exits(lines).items() if k == 1}
        failed, seen, out = s.run(cmd, expect)
        print("    " + b.lines[first][0] + " " + cmd.replace("\n", "\n    > "))
        show(out)
        where = "%s:%d: %s" % (b.path, b.line + 1 + first, block_name(b))
        if failed and failed[0] == 0:
            return "%s: `%s`: %s" % (where, lines[0], failed[1])
        if failed:
            return "%s: `%s` exited %d (wanted %d)" % (where, lines[0], failed[1], expect.get(1, 0))
        if expect and (1, expect[1]) not in seen:
            return "%s: `%s` did not exit %d" % (where, lines[0], expect[1])
        got = out.rstrip("\n").split("\n") if out.strip() else []
        if not output_matches(want, got):
            return "%s: `%s` printed other output than the doc shows:\n%s" % (where, lines[0], diff(want, got))
    return None


def diff(want, got):
    import difflib
    return "\n".join("    " + l for l in difflib.unified_diff(
        [w.rstrip() for w in want], [g.rstrip() for g in got], "the doc", "the program", lineterm=""))


def in_system_test_vm():
    try:
        with open("/proc/1/comm") as f:
            pid1 = f.read().strip()
        with open("/etc/hostname") as f:
            host = f.read().strip()
    except OSError:
        return False
    return pid1 == "systemd" and host == "execgate-systest" and os.path.exists("/usr/local/sbin/execgate-systest")


def cmd_check(files):
    bad = 0
    for path in files:
        blocks, errors = parse(path, open(path).read())
        errors += check_blocks(blocks)
        counts = {}
        for b in blocks:
            counts[b.kind] = counts.get(b.kind, 0) + 1
        print("doc-test: %s: %s" % (path, ", ".join("%d %s" % (counts[k], k or "unmarked")
                                                     for k in sorted(counts, key=str))))
        for e in errors:
            print("doc-test: FAIL: " + e)
        bad += len(errors)
    return 1 if bad else 0


def cmd_run(args):
    vm, workdir, files = False, os.getcwd(), []
    it = iter(args)
    for a in it:
        if a == "--vm":
            vm = True
        elif a == "--workdir":
            workdir = next(it)
        else:
            files.append(a)
    fails = []
    t0 = time.time()
    for path in files:
        name = os.path.relpath(path, os.environ.get("DOC_TEST_ROOT", os.getcwd()))
        if name in MACHINE_DOCS and not (vm and in_system_test_vm()):
            fails.append("%s: runs only in the system test's VM (scripts/system-test.sh): its commands "
                         "load execgate at the cgroup root" % name)
            continue
        t = time.time()
        if vm:
            os.makedirs(workdir, exist_ok=True)
        fails += run_file(name, open(path).read(), workdir, FIXTURES.get(name, []) if vm else [])
        print("doc-test: %s: %.0f s" % (name, time.time() - t))
    print("doc-test: %d file(s), %.0f s, %d failure(s)" % (len(files), time.time() - t0, len(fails)))
    for f in fails:
        print("doc-test: FAIL: " + f)
    return 1 if fails else 0


def cmd_selftest():
    """Each file in tests/doctest/ says in its first line what run must report."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "doctest")
    bad = 0
    for name in sorted(os.listdir(here)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(here, name)
        text = open(path).read()
        m = re.match(r"<!-- expect: (pass|fail) ?(.*?) -->", text)
        if not m:
            print("doc-test selftest: %s: no <!-- expect: pass|fail TEXT --> first line" % name)
            bad += 1
            continue
        rel = "tests/doctest/" + name
        blocks, errors = parse(rel, text)
        errors += check_blocks(blocks)
        if not errors:
            errors = run_file(rel, text, here, [])
        got = "fail" if errors else "pass"
        ok = got == m.group(1) and (got == "pass" or m.group(2) in "\n".join(errors))
        print("doc-test selftest: %s: %s, expected %s%s: %s" % (
            name, got, m.group(1), " with '%s'" % m.group(2) if m.group(2) else "", "ok" if ok else "FAIL"))
        if not ok:
            for e in errors:
                print("    " + e)
            bad += 1
    return 1 if bad else 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "run", "selftest"):
        sys.stderr.write(__doc__)
        return 2
    if sys.argv[1] == "check":
        return cmd_check(sys.argv[2:])
    if sys.argv[1] == "run":
        return cmd_run(sys.argv[2:])
    return cmd_selftest()


if __name__ == "__main__":
    sys.exit(main())
