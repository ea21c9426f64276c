#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the JSON of execgate and execgated against docs/schema/.

  json-schema-check.py --schemas docs/schema --docs README.md docs/*.md [LOG...]

1. Every entry of every LOG (tests/kernel/json_log.h writes them: the
   output of each `execgate ... --json` a test ran, each JSON answer of
   execgated, each event line read) is classified by where it came from
   (the command; the method, path and status) and validated against that
   object's schema. Output that is not JSON, or JSON no schema allows,
   fails.
2. Every schema that describes a document was exercised by at least one
   logged document.
3. Every ```json block in the docs is preceded by a marker line
       <!-- json-example: KIND -->        (a whole document)
       <!-- json-example: KIND MEMBER --> (the value of one member of it)
       <!-- json-example: request -->     (a request body: only parsed)
   and is valid against that schema, every member path it shows (with its
   JSON type) occurs in some real document of that kind in the logs, and,
   for a whole document, some real document has exactly its top-level
   members. An example is what the binaries print, not what they once did.
   A document shown anywhere else (another code block, an inline code span
   starting `{"schema_version"`) fails: it would go unchecked.

Documents that live in etcd rather than in a program's output (STORE_KINDS:
the worker's ack) have no log here: their examples are checked against
their schema only.

Without logs only the docs are checked against the schemas (step 3 minus
the comparison with real output), for a quick run while editing.

The schemas refer to each other ("record.schema.json#/$defs/proc"); the
references are resolved here, by file name, so that any jsonschema from
Debian 12's 4.10 on validates them the same way and nothing is fetched.
"""
import argparse
import copy
import json
import os
import re
import sys

import jsonschema

# The documents; record.schema.json is an object inside them.
DOC_KINDS = [
    "verdict", "install-report", "retire-report", "forget-report", "list", "show",
    "key", "key-change", "event", "status", "signed-verdict", "error", "revoke-report",
    "node-key", "mode-switch", "audit", "live", "ready",
]

# Written to etcd by a worker, not printed: schema-checked examples only.
STORE_KINDS = ["ack"]

CLI_KIND = {
    "admit": "verdict", "check": "verdict", "install": "install-report",
    "retire": "retire-report", "forget": "forget-report", "list": "list", "show": "show",
    "keys": "key", "events": "event", "status": "status", "load": "status",
    "probe": "status", "verdict": "signed-verdict", "audit-report": "audit",
}

UUID_SEG = r"[^/]+"
API_ROUTES = [
    ("POST", r"/v1/(admit|check)", "verdict"),
    ("GET", r"/v1/sandboxes", "list"),
    ("GET", r"/v1/sandboxes/" + UUID_SEG, "show"),
    ("PUT", r"/v1/sandboxes/" + UUID_SEG, "install-report"),
    ("DELETE", r"/v1/sandboxes/" + UUID_SEG, "forget-report"),
    ("POST", r"/v1/sandboxes/" + UUID_SEG + r"/retire", "retire-report"),
    ("POST", r"/v1/sandboxes/" + UUID_SEG + r"/revoke", "revoke-report"),
    ("GET", r"/v1/node-key", "node-key"),
    ("GET", r"/v1/keys", "key"),
    ("PUT", r"/v1/keys/" + UUID_SEG, "key-change"),
    ("DELETE", r"/v1/keys/" + UUID_SEG, "key-change"),
    ("GET", r"/v1/status", "status"),
    ("PUT", r"/v1/mode", "mode-switch"),
    ("GET", r"/v1/audit", "audit"),
    ("GET", r"/v1/live", "live"),
    ("GET", r"/v1/ready", "ready"),
]


class Schemas:
    def __init__(self, directory):
        self.dir = directory
        self.raw = {}
        for name in sorted(os.listdir(directory)):
            if name.endswith(".schema.json"):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    self.raw[name] = json.load(f)
        self.validators = {}

    def _pointer(self, doc, frag):
        node = doc
        for part in [p for p in frag.lstrip("/").split("/") if p]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _inline(self, node, base, depth=0):
        if depth > 50:
            raise ValueError("$ref nesting too deep at " + base)
        if isinstance(node, list):
            return [self._inline(n, base, depth + 1) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            target_file, _, frag = ref.partition("#")
            target_file = target_file or base
            if target_file not in self.raw:
                raise ValueError("%s: $ref to unknown %s" % (base, ref))
            target = self._pointer(self.raw[target_file], frag)
            out = self._inline(target, target_file, depth + 1)
            extra = {k: v for k, v in node.items() if k != "$ref"}
            if extra:
                out = {"allOf": [out, self._inline(extra, base, depth + 1)]}
            return out
        return {k: self._inline(v, base, depth + 1) for k, v in node.items()
                if k not in ("$defs", "$id")}

    def validator(self, kind, member=None):
        key = (kind, member)
        if key not in self.validators:
            name = kind + ".schema.json"
            if name not in self.raw:
                raise KeyError("no schema docs/schema/" + name)
            schema = self._inline(copy.deepcopy(self.raw[name]), name)
            if member:
                schema = schema["properties"][member]
            schema["$schema"] = self.raw[name]["$schema"]
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            self.validators[key] = cls(schema)
        return self.validators[key]

    def errors(self, kind, doc, member=None):
        v = self.validator(kind, member)
        return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
                for e in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def jtype(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def paths(v, prefix=""):
    """Member paths with their types: {"record.bridge.tgid:integer", ...}."""
    out = {prefix + ":" + jtype(v)} if prefix else set()
    if isinstance(v, dict):
        for k, x in v.items():
            out |= paths(x, (prefix + "." if prefix else "") + k)
    elif isinstance(v, list):
        for x in v:
            out |= paths(x, prefix + "[]")
    return out


def classify_api(request, status, doc):
    m = re.match(r"^([A-Z]+) (\S+) HTTP/", request)
    if not m:
        return None, "request line %r" % request
    method, path = m.group(1), m.group(2).split("?")[0]
    kind = None
    for meth, pattern, k in API_ROUTES:
        if meth == method and re.fullmatch(pattern, path):
            kind = k
            break
    if status >= 400:
        # install and retire answer a failed stream revocation with the
        # whole report and error/reason on top; everything else is an error.
        if kind in ("install-report", "retire-report") and isinstance(doc, dict) \
                and "record" in doc:
            return kind, None
        # readiness answers 503 with its whole document and error/reason
        # on top.
        if kind == "ready" and status == 503 and isinstance(doc, dict) and "ready" in doc:
            return kind, None
        return "error", None
    if kind is None:
        return None, "no schema for %s %s" % (method, path)
    return kind, None


def read_logs(logs):
    """Yields (kind, doc, where) for each logged document; failures as
    (None, None, message)."""
    for log in logs:
        with open(log, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                where = "%s:%d" % (log, n)
                try:
                    e = json.loads(line)
                except ValueError as exc:
                    yield None, None, "%s: log entry is not JSON: %s" % (where, exc)
                    continue
                if e["src"] == "cli":
                    argv = e["argv"]
                    cmd = argv[1] if len(argv) > 1 else ""
                    kind = CLI_KIND.get(cmd)
                    where += " (execgate %s, exit %d)" % (" ".join(argv[1:]), e["rc"])
                    if kind is None:
                        yield None, None, "%s: no schema for execgate %s --json" % (where, cmd)
                        continue
                    if cmd == "keys" and "list" not in argv:
                        continue  # add/remove print text; --json shapes list only
                    # stdout and stderr share the pipe: JSON lines start with
                    # "{", stderr's with "execgate:".
                    for out_line in e["out"].splitlines():
                        if not out_line.startswith("{"):
                            continue
                        try:
                            yield kind, json.loads(out_line), where
                        except ValueError as exc:
                            yield None, None, "%s: not JSON (%s): %s" % (where, exc, out_line)
                elif e["src"] == "api":
                    where += " (%s -> %d)" % (e["request"], e["status"])
                    try:
                        doc = json.loads(e["body"])
                    except ValueError as exc:
                        yield None, None, "%s: body is not JSON: %s" % (where, exc)
                        continue
                    kind, why = classify_api(e["request"], e["status"], doc)
                    if kind is None:
                        yield None, None, "%s: %s" % (where, why)
                        continue
                    yield kind, doc, where
                elif e["src"] == "api-event":
                    where += " (GET /v1/events)"
                    try:
                        yield "event", json.loads(e["line"]), where
                    except ValueError as exc:
                        yield None, None, "%s: event line is not JSON: %s" % (where, exc)
                else:
                    yield None, None, "%s: unknown source %r" % (where, e["src"])


MARKER = re.compile(r"^\s*<!-- json-example: ([a-z-]+)(?: ([a-z_]+))? -->\s*$")


INLINE_DOC = re.compile(r'`\{"schema_version"')
# A block scripts/doc-test.py compares with what the program prints, in the
# system test's VM (`...` standing for what varies): checked there.
DOC_TEST_OUTPUT = re.compile(r"^\s*<!--\s*doc-test:\s*output\s*-->\s*$")


def doc_tested(lines, fence):
    j = fence - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    return j >= 0 and DOC_TEST_OUTPUT.match(lines[j]) is not None


def doc_examples(files):
    """Yields (file, line, kind, member, text) for each ```json block, and
    (file, line, "UNMARKED", None, text) for a document shown anywhere else:
    another code block (but a doc-test output block) or an inline code span."""
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            if lines[i].strip().startswith("```") and lines[i].strip() != "```json":
                j = i + 1
                while j < len(lines) and not lines[j].strip().startswith("```"):
                    if lines[j].lstrip().startswith('{"schema_version"') and not doc_tested(lines, i):
                        yield path, j + 1, "UNMARKED", None, lines[j]
                    j += 1
                i = j + 1
                continue
            if INLINE_DOC.search(lines[i]):
                yield path, i + 1, "UNMARKED", None, lines[i]
            if lines[i].strip() == "```json":
                start = i + 1
                j = start
                while j < len(lines) and lines[j].strip() != "```":
                    j += 1
                m = MARKER.match(lines[i - 1]) if i > 0 else None
                text = "\n".join(lines[start:j])
                yield path, i + 1, (m.group(1) if m else None), \
                    (m.group(2) if m else None), text
                i = j
            i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schemas", required=True)
    ap.add_argument("--docs", nargs="*", default=[])
    ap.add_argument("logs", nargs="*")
    a = ap.parse_args()
    schemas = Schemas(a.schemas)
    failures = []
    seen = {k: 0 for k in DOC_KINDS}
    real_paths = {k: set() for k in DOC_KINDS}
    real_tops = {k: set() for k in DOC_KINDS}
    real_members = {}  # (kind, member) -> set of path sets

    for k in DOC_KINDS + STORE_KINDS:
        schemas.validator(k)  # every schema is itself valid
    for kind, doc, where in read_logs(a.logs):
        if kind is None:
            failures.append(where)
            continue
        errs = schemas.errors(kind, doc)
        if errs:
            failures.append("%s: not a valid %s: %s\n    %s" % (
                where, kind, "; ".join(errs[:5]), json.dumps(doc)[:600]))
            continue
        seen[kind] += 1
        real_paths[kind] |= paths(doc)
        if isinstance(doc, dict):
            real_tops[kind].add(frozenset(doc))
            for member, v in doc.items():
                if isinstance(v, dict):
                    real_members.setdefault((kind, member), set()).add(frozenset(v))

    if a.logs:
        for k in DOC_KINDS:
            if not seen[k]:
                failures.append("schema %s.schema.json: no test produced a %s document"
                                % (k, k))

    nexamples = 0
    for path, line, kind, member, text in doc_examples(a.docs):
        where = "%s:%d" % (path, line)
        if kind is None:
            failures.append("%s: ```json block without a <!-- json-example: KIND --> line "
                            "before it" % where)
            continue
        if kind == "UNMARKED":
            failures.append("%s: a JSON document outside a marked ```json block (it would go "
                            "unchecked): %s" % (where, text.strip()[:100]))
            continue
        if kind == "request":
            # A request body: what a client sends, no output to compare with.
            try:
                json.loads(text)
            except ValueError as exc:
                failures.append("%s: request example is not JSON: %s" % (where, exc))
            continue
        if kind in STORE_KINDS:
            try:
                example = json.loads(text)
            except ValueError as exc:
                failures.append("%s: example is not JSON: %s" % (where, exc))
                continue
            nexamples += 1
            errs = schemas.errors(kind, example, member)
            if errs:
                failures.append("%s: example is not a valid %s: %s" % (
                    where, kind, "; ".join(errs[:5])))
            continue
        if kind not in DOC_KINDS:
            failures.append("%s: json-example %s: no such document schema" % (where, kind))
            continue
        try:
            example = json.loads(text)
        except ValueError as exc:
            failures.append("%s: example is not JSON: %s" % (where, exc))
            continue
        nexamples += 1
        errs = schemas.errors(kind, example, member)
        if errs:
            failures.append("%s: example is not a valid %s%s: %s" % (
                where, kind, " " + member if member else "", "; ".join(errs[:5])))
            continue
        if not a.logs:
            continue
        shown = paths(example, member or "")
        unknown = sorted(shown - real_paths[kind])
        if unknown:
            failures.append("%s: example shows what no real %s had: %s" % (
                where, kind, ", ".join(unknown[:8])))
        if isinstance(example, dict):
            tops = real_members.get((kind, member), set()) if member else real_tops[kind]
            if frozenset(example) not in tops:
                failures.append("%s: no real %s%s has exactly the members %s" % (
                    where, kind, " " + member if member else "", sorted(example)))

    for f in failures:
        print("json-schema-check: " + f, file=sys.stderr)
    print("json-schema-check: %d documents (%s), %d doc examples, %d failure(s)" % (
        sum(seen.values()), ", ".join("%s %d" % (k, seen[k]) for k in DOC_KINDS),
        nexamples, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
