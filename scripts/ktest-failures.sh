#!/bin/sh
# Prints the failed and crashed tests of a criterion JSON report, one block
# each, after the run's own output: the run ends with its SKIPPED lines, so
# without this the tail of a CI log does not say which test failed.
# Criterion 2.4 writes multi-line messages unescaped (not strict JSON).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 RESULTS.json" >&2; exit 2; }
[ -s "$1" ] || { echo "ktest-failures: $1: no results (the run crashed before writing them)" >&2; exit 0; }
python3 - "$1" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    doc = json.loads(f.read(), strict=False)
bad = [(s["name"], t) for s in doc.get("test_suites", []) for t in s.get("tests", [])
       if t.get("status") not in ("PASSED", "SKIPPED")]
print("test-kernel: %d failed:" % len(bad))
for suite, t in bad:
    print("  %s::%s %s" % (suite, t["name"], t.get("status")))
    for m in t.get("messages") or []:
        for line in m.splitlines():
            print("      " + line)
PY
