#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every command line the docs show uses flags the programs have.

In README.md, HACKING.md, docs/*.md and docs/man/*.h2m, each command line
(a line of a code block, with its backslash continuations, or an inline code span) that
runs execgate, execgated, execgate-issue or execgate-bridge is split at the
program's name; each --flag after it, up to the next program, pipe, `;`,
`&&` or comment, must be a flag that the program (or its subcommand) lists
in its own --help, by its exact name. The flags come from the built
binaries, so a flag renamed or removed in the code fails here until the
docs follow.

usage: test_doc_flags.py BUILD_DIR
"""
import glob
import os
import re
import subprocess
import sys

PROGS = ("execgate-issue", "execgate-bridge", "execgated", "execgate")
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
ROW = re.compile(r"^  (?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)", re.M)
# A program name as a word (not part of a path such as build/execgate or
# of a longer name such as execgate.conf or execgate_info).
PROG = re.compile(r"(?<![\w/.-])(execgate-issue|execgate-bridge|execgated|execgate)(?![\w.-])")
END = re.compile(r"\||;|&&|\s#|\$\(|`")


def help_text(build, prog, cmd=None):
    args = [os.path.join(build, prog)] + ([cmd] if cmd else []) + ["--help"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return r.stdout


def flag_sets(build):
    """prog -> {None: top-level flags, cmd: flags}"""
    sets = {}
    for prog in PROGS:
        top = help_text(build, prog)
        if top is None:
            sys.exit(f"test_doc_flags: {prog} --help failed")
        sets[prog] = {None: set(ROW.findall(top))}
        cmds = set(re.findall(r"^  ([a-z][a-z-]*)(?: |$)", top, re.M))
        cmds |= set(re.findall(rf"^(?:usage:)? +{prog} ([a-z][a-z-]*)", top, re.M))
        for c in cmds:
            t = help_text(build, prog, c)
            if t is not None and t.startswith("usage:"):
                sets[prog][c] = set(ROW.findall(t))
    return sets


def segments(path):
    """(line number, text) of every command-line candidate in a doc."""
    text = open(path, encoding="utf-8").read()
    if path.endswith(".h2m"):
        # roff: \- is a minus sign
        text = text.replace("\\-", "-")
        for n, line in enumerate(text.splitlines(), 1):
            if not line.startswith(".\\\""):
                yield n, line
        return
    in_block = False
    pending, start = "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            if not pending:
                start = n
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            yield start, pending + line
            pending = ""
        else:
            for span in re.findall(r"`([^`]+)`", line):
                yield n, span


def check(sets, path, n, seg):
    problems = []
    for m in PROG.finditer(seg):
        prog = m.group(1)
        rest = seg[m.end():]
        stop = END.search(rest)
        nxt = PROG.search(rest)
        cut = min(x.start() for x in (stop, nxt) if x) if (stop or nxt) else len(rest)
        rest = rest[:cut]
        words = rest.split()
        cmd = words[0] if words and words[0] in sets[prog] else None
        flags = sets[prog][cmd]
        # "execgate admit/check --json": a flag of each command named
        alts = words[0].split("/") if words and "/" in words[0] else []
        if alts and all(a in sets[prog] for a in alts):
            cmd = words[0]
            flags = set.intersection(*(sets[prog][a] for a in alts))
        if cmd is None and len(sets[prog]) > 1:
            # a program with commands: top-level flags only, unless the
            # text names no command at all (prose like "execgate ... --json")
            if words and re.fullmatch(r"[A-Z]+|COMMAND", words[0]):
                flags = set().union(*sets[prog].values())
        for f in FLAG.findall(rest):
            if f not in flags:
                where = f"{prog} {cmd}" if cmd else prog
                problems.append(f"{path}:{n}: {where} has no --{f}: {seg.strip()[:100]}")
    return problems


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    sets = flag_sets(build)
    docs = ["README.md", "HACKING.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("docs/man/*.h2m"))
    problems, lines = [], 0
    for path in docs:
        for n, seg in segments(path):
            if PROG.search(seg) and FLAG.search(seg):
                lines += 1
                problems += check(sets, path, n, seg)
    for p in problems:
        print("  FAIL " + p)
    print(f"test_doc_flags: {lines} command lines in {len(docs)} files, {len(problems)} problems")
    if lines < 50:
        print("test_doc_flags: FAIL: fewer than 50 command lines found: the parser is broken")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
