#!/bin/sh
# Runs inside a matrix guest (scripts/vmtest.sh, through vm-guest.sh): takes
# the kernel suites one at a time from a queue that every guest of the same
# kernel shares, and runs each with the kernel test binary.
#
#   vm-suites.sh QUEUE OUT TEST-KERNEL
#
# QUEUE/todo holds one empty file a suite, "<rank>-<suite>", taken in name
# order: a guest takes one by renaming it to QUEUE/taken/<file>.<guest>.
# The queue is a directory of the host (a virtme-ng --rwdir, 9p without a
# cache), so a rename is the host's rename(2): of two guests that race for
# a file, exactly one gets it, and the suites spread over the guests by how
# long each takes, not by a count fixed in advance.
#
# Each suite's results go to OUT/json/<suite>.json (and, with each test's
# seconds, OUT/xml/<suite>.xml) and a line
# "<suite> <seconds> <exit>" to OUT/suites.tsv. The guest's runs share one
# pool of loaded worlds (tests/kernel/world_pool.h: EXECGATE_POOL_ID), so a
# suite after the first loads nothing a suite before it loaded; the last run
# removes the pool. Exits 1 when any suite's run exited non-zero.
set -u

[ $# -eq 3 ] || { echo "usage: vm-suites.sh QUEUE OUT TEST-KERNEL" >&2; exit 2; }
queue=$1 out=$2 bin=$3
me=$(basename "$out")
mkdir -p "$out/json" "$out/xml" "$queue/taken" || exit 1
export EXECGATE_POOL_ID="vm-$me"
rc=0
while :; do
	next=$(ls "$queue/todo" 2>/dev/null | head -n 1)
	[ -n "$next" ] || break
	# Another guest took it first: look again.
	mv "$queue/todo/$next" "$queue/taken/$next.$me" 2>/dev/null || continue
	suite=${next#*-}
	echo "vm-suites: $me: $suite" >&2
	t0=$(date +%s)
	EXECGATE_POOL_KEEP=1 "$bin" --jobs 1 --verbose --filter "$suite/*" \
		--json="$out/json/$suite.json" --xml="$out/xml/$suite.xml"
	src=$?
	echo "$suite $(($(date +%s) - t0)) $src" >>"$out/suites.tsv"
	[ "$src" -eq 0 ] || rc=1
done
# A run that selects no test: its end removes the guest's pool and probe record.
"$bin" --filter 'vm-suites-none/*' >/dev/null 2>&1
exit "$rc"
