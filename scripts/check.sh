#!/bin/bash
# make check and make check-quick: every test stage, in two lanes that run
# side by side, then a table of each stage's time.
#
#   check.sh [--quick] [STAGE...]
#
# The machine has two cores and the VM stages each keep about one busy
# (TCG runs the guest's one test process on one vCPU): the "vm" lane runs
# them (the kernel matrix, whose two kernels boot side by side, then the
# .deb under systemd), while the "host" lane runs everything else on the
# host kernel, one stage after another, as the host stages share host state
# (scratch cgroups under one root, the bpf_stats switch, loopback ports).
# Every stage runs even when an earlier one failed, so that one run shows
# every failure; the exit status is 1 when any stage failed.
#
# Each stage is `make <target>` with its output in $BUILD/check/<stage>.log,
# shown (its last 300 lines) when it fails. --quick: check-quick, the inner
# loop (unit, sanitizer unit, host kernel, daemon; no VM, no soak).
#
# Environment: MAKE, BUILD; CHECK_HOST and CHECK_VM name the stages (the
# Makefile passes them: scripts/make/*.mk add theirs to CHECK_EXTRA).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
out=$root/$BUILD/check
quick=0
[ "${1:-}" = --quick ] && quick=1

rm -rf "$out"
mkdir -p "$out"
t_start=$(date +%s)

# stage LANE TARGET: runs make TARGET, records "LANE TARGET SECONDS RESULT".
stage() {
	local lane=$1 target=$2 t0 rc
	t0=$(date +%s)
	echo "check: [$lane] $target: started at $(date -u +%H:%M:%S)"
	$MAKE --no-print-directory BUILD="$BUILD" "$target" >"$out/$target.log" 2>&1 </dev/null
	rc=$?
	local s=$(($(date +%s) - t0))
	if [ "$rc" -eq 0 ]; then
		echo "check: [$lane] $target: passed in $s s"
		echo "$lane $target $s passed" >>"$out/times"
	else
		{
			echo "check: [$lane] $target: FAILED (exit $rc) in $s s; the last 300 lines of $out/$target.log:"
			tail -n 300 "$out/$target.log" | sed "s/^/  $target| /"
			echo "check: [$lane] $target: end of its log"
		} >&2
		echo "$lane $target $s FAILED" >>"$out/times"
	fi
	return "$rc"
}

# lane NAME STAGE...: the stages one after another; fails if any failed.
lane() {
	local name=$1 bad=0 t
	shift
	for t in "$@"; do
		stage "$name" "$t" || bad=1
	done
	return "$bad"
}

if [ "$quick" -eq 1 ]; then
	host=(test-unit test-unit-san test-kernel test-daemon)
	vm=()
else
	read -r -a host <<<"${CHECK_HOST:?CHECK_HOST: run through make check}"
	read -r -a vm <<<"${CHECK_VM:-}"
fi

# Everything either lane runs is built first, once, with both cores: a lane
# never builds while the other one measures or times out.
bad=0
stage build check-build || bad=1
if [ "$bad" -eq 0 ]; then
	lane vm "${vm[@]}" &
	vm_pid=$!
	lane host "${host[@]}" || bad=1
	wait "$vm_pid" || bad=1
fi

total=$(($(date +%s) - t_start))
echo
echo "check: time per stage ($([ "$quick" -eq 1 ] && echo check-quick || echo check), lanes side by side)"
printf '  %-6s %-22s %8s  %s\n' lane stage seconds result
while read -r l t s r; do
	printf '  %-6s %-22s %8s  %s\n' "$l" "$t" "$s" "$r"
done <"$out/times"
for l in build host vm; do
	s=$(awk -v l="$l" '$1 == l { s += $3 } END { print s + 0 }' "$out/times")
	printf '  %-6s %-22s %8s\n' "$l" "(lane total)" "$s"
done
printf '  %-29s %8s  %s\n' "wall clock, all told" "$total" "$([ "$bad" -eq 0 ] && echo passed || echo FAILED)"
if [ -f "$out/vmtest.log" ]; then
	echo
	echo "check: cases per kernel (vmtest):"
	grep -E '^(debian-[0-9.]+ \(|vmtest: [0-9]+ passed)' "$out/vmtest.log" | sed 's/^/  /'
fi
if [ -f "$BUILD/test-kernel-host.json" ] && grep -q test-kernel "$out/times"; then
	python3 - "$BUILD/test-kernel-host.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="replace"), strict=False)
print(f"  host ({d.get('passed', 0)} passed, {d.get('failed', 0)} failed, "
      f"{d.get('errored', 0)} errored, {d.get('skipped', 0)} skipped)")
PY
fi
exit "$bad"
