#!/bin/sh
# Where the socket tag's time goes, by kernel function: perf samples every
# CPU while bench-kernel runs its memory-touch probes (BENCH_ONLY=touches);
# the tag probe (EG_TOUCH=6) is the only one that calls bpf_sk_storage_get,
# so every sample with that helper on its stack belongs to creating a tag.
# Prints each function's inclusive share of those samples. Part of
# `make bench`; root (bench-kernel's scratch cgroups), asserts nothing.
# PROFILE_ROOT=htab_map_update_elem profiles the cookie tag instead (probes
# 12 to 14 are the only callers of a hash update in that run).
set -eu
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."

if ! command -v perf >/dev/null 2>&1; then
	echo "profile-tag: perf is not installed (Debian package linux-perf)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/egprofile-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# cpu-clock, not cycles: guests often have no PMU. -g: frame pointers, which
# the BPF JIT keeps, so helper frames sit under the program's.
BENCH_ONLY=touches perf record -q -a -g -e cpu-clock -F 10000 -o "$tmp/perf.data" -- \
	"$BUILD/bench-kernel" >"$tmp/bench.out" 2>&1 || {
	cat "$tmp/bench.out" >&2
	exit 1
}
# (The probes' ns under perf are inflated; bench-kernel's own run has them.)
perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null | PROFILE_ROOT=${PROFILE_ROOT:-bpf_sk_storage_get} python3 -c '
import collections, os, sys

ROOT = os.environ["PROFILE_ROOT"]
total = 0
incl = collections.Counter()
leaf = collections.Counter()
stack = []

def flush():
    global total
    if ROOT not in stack:
        return
    below = stack[:stack.index(ROOT)]  # leaf first, up to the helper
    total += 1
    for fn in set(below):
        incl[fn] += 1
    leaf[below[0] if below else ROOT] += 1

for line in sys.stdin:
    line = line.strip()
    if not line:
        flush()
        stack = []
    else:
        stack.append(line.split()[-1])
flush()
if total == 0:
    sys.exit("profile-tag: no sample under " + ROOT + " (did the tag probe run?)")
print("%d samples under %s; inclusive share of each function called below it (>= 3%%):"
      % (total, ROOT))
for fn, n in incl.most_common():
    if n * 100 < 3 * total:
        break
    print("  %5.1f%%  %s" % (100.0 * n / total, fn))
print("self time, top 8:")
for fn, n in leaf.most_common(8):
    print("  %5.1f%%  %s" % (100.0 * n / total, fn))
'
