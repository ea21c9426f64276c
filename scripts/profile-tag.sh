#!/bin/sh
# Where the allowed connect_unix path's time goes, by kernel function: perf
# samples every CPU while bench-kernel runs, and the samples that belong to
# one part of the path are split by function. Part of `make bench`; root
# (bench-kernel's scratch cgroups), asserts nothing.
#
#   scripts/profile-tag.sh          the socket tag: bench-kernel's memory-touch
#       probes (BENCH_ONLY=touches), where the tag probe (EG_TOUCH=6) is the
#       only caller of bpf_sk_storage_get, so every sample with that helper
#       on its stack belongs to creating a tag. Prints each function's
#       inclusive share. PROFILE_ROOT=htab_map_update_elem profiles the
#       cookie tag instead (probes 12 to 14 are the only callers of a hash
#       update in that run).
#   scripts/profile-tag.sh checks   the checks before the tag: the real
#       program's allowed connects alone (BENCH_ONLY=allowed), samples in
#       eg_connect_unix that are not under bpf_sk_storage_get. Prints what
#       the program called (or its own JIT code: the inlined scan, key
#       loads and compares) and the self time by function.
#
# cpu-clock, not cycles: guests often have no PMU, and the hrtimer that
# samples cannot interrupt code that runs with interrupts off, so a locked
# copy's time lands on the unlock that re-enables them
# (__bpf_spin_unlock_irqrestore), with the softirqs that were waiting.
set -eu
BUILD=${BUILD:-build}
MODE=${1:-tag}
cd "$(dirname "$0")/.."

case $MODE in
tag) ONLY=touches ;;
checks) ONLY=allowed ;;
*)
	echo "usage: scripts/profile-tag.sh [tag|checks]" >&2
	exit 2
	;;
esac
if ! command -v perf >/dev/null 2>&1; then
	echo "profile-tag: perf is not installed (Debian package linux-perf)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/egprofile-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# -g: frame pointers, which the BPF JIT keeps, so helper frames sit under
# the program's. The checks run alone need more connects for a sample count
# of the same order as the tag's.
connects=20000
[ "$MODE" = checks ] && connects=200000
BENCH_ONLY=$ONLY BENCH_CONNECTS=${BENCH_CONNECTS:-$connects} perf record -q -a -g -e cpu-clock \
	-F 10000 -o "$tmp/perf.data" -- "$BUILD/bench-kernel" >"$tmp/bench.out" 2>&1 || {
	cat "$tmp/bench.out" >&2
	exit 1
}
# (The ns under perf are inflated; bench-kernel's own run has them.)
perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null |
	MODE=$MODE PROFILE_ROOT=${PROFILE_ROOT:-bpf_sk_storage_get} python3 -c '
import collections, os, sys

MODE = os.environ["MODE"]
ROOT = os.environ["PROFILE_ROOT"]
PROG = "_eg_connect_unix"  # the JIT symbol: bpf_prog_<tag>_eg_connect_unix
total = 0
incl = collections.Counter()
leaf = collections.Counter()
callee = collections.Counter()
stack = []

def below_root():
    """The frames below the part profiled, leaf first; None: not in it."""
    if MODE == "tag":
        return stack[:stack.index(ROOT)] if ROOT in stack else None
    at = [i for i, fn in enumerate(stack) if fn.endswith(PROG)]
    if not at or "bpf_sk_storage_get" in stack:
        return None
    return stack[:at[0]]

def flush():
    global total
    below = below_root()
    if below is None:
        return
    total += 1
    for fn in set(below):
        incl[fn] += 1
    leaf[below[0] if below else "(the program itself)"] += 1
    callee[below[-1] if below else "(the program itself)"] += 1

for line in sys.stdin:
    line = line.strip()
    if not line:
        flush()
        stack = []
    else:
        stack.append(line.split()[-1])
flush()
if total == 0:
    sys.exit("profile-tag: no sample in the part profiled (" + MODE + ")")
if MODE == "tag":
    print("%d samples under %s; inclusive share of each function called below it (>= 3%%):"
          % (total, ROOT))
    for fn, n in incl.most_common():
        if n * 100 < 3 * total:
            break
        print("  %5.1f%%  %s" % (100.0 * n / total, fn))
else:
    print("%d samples in eg_connect_unix outside the tag; what the program spent them in "
          "(>= 1%%):" % total)
    for fn, n in callee.most_common():
        if n * 100 < total:
            break
        print("  %5.1f%%  %s" % (100.0 * n / total, fn))
print("self time, top 8:")
for fn, n in leaf.most_common(8):
    print("  %5.1f%%  %s" % (100.0 * n / total, fn))
'
[ "$MODE" = checks ] && sed 's/^/bench-kernel under perf: /' "$tmp/bench.out"
exit 0
