#!/bin/bash
# make check and make check-quick: every test stage, in lanes that run
# side by side, then a table of each stage's time.
#
#   check.sh [--quick]
#
# The machine has two cores. Each TCG guest keeps about one busy (it runs
# one test process at a time): the "vm" lane runs the kernel matrix (its
# kernels boot side by side, 6.12 in two guests that share its suites), the
# "vm2" lane the .deb under systemd and the docs' blocks beside it. After
# the matrix, the system test ran alone on one core while the other had
# nothing left to do (docs/bench/2026-12-06-vm-lane.md). The host stages run in two lanes, "host" and "host2", one
# stage after another in each: the host kernel suite in one and the daemon
# suite in the other, as both mostly wait on the processes they start, and
# stages that share one host resource run in the same lane. Every stage runs
# even when an earlier one failed, so that one run shows every failure; the
# exit status is 1 when any stage failed. Then the "final" stages, which
# read what several lanes left: CHECK_FINAL, and the VM guarantee matrix
# (vmtest-judge), whose host column is test-kernel's results.
#
# Each stage is `make <target>` with its output in $BUILD/check/<stage>.log,
# shown (its last 300 lines) when it fails. --quick: check-quick, the inner
# loop (unit, sanitizer unit, the docs' markers, host kernel and half of the
# daemon suite beside its other half; no VM, no soak).
#
# Environment: MAKE, BUILD; CHECK_HOST, CHECK_HOST2, CHECK_VM, CHECK_VM2, CHECK_FINAL
# name the stages (the Makefile passes them: scripts/make/*.mk add theirs to
# CHECK_EXTRA). CHECK_STAGE_LIMIT: the seconds a stage may run (default
# 3600, above the VM boot limit of scripts/vmtest.sh; a stage hung in the
# host lane then ends the run within about 75 minutes, under CI's 90).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
out=$root/$BUILD/check
quick=0
[ "${1:-}" = --quick ] && quick=1
stage_limit=${CHECK_STAGE_LIMIT:-3600}
case $stage_limit in
'' | *[!0-9]* | 0)
	echo "check: CHECK_STAGE_LIMIT=$stage_limit: not a number of seconds above 0" >&2
	exit 2
	;;
esac

rm -rf "$out"
mkdir -p "$out"
t_start=$(date +%s)

# stage LANE TARGET: runs make TARGET, records "LANE TARGET SECONDS RESULT".
stage() {
	local lane=$1 target=$2 t0 rc jobs
	[ -e "$out/.stopping" ] && return 130 # interrupted: stop_all, below
	t0=$(date +%s)
	echo "check: [$lane] $target: started at $(date -u +%H:%M:%S)"
	# The build uses every core; each test stage runs its suite serially.
	jobs=-j1
	[ "$target" = check-build ] && jobs=-j"$(nproc)"
	# The CPU the stage's processes used (user + system, of every process
	# waited for): the lanes share two cores, so this, not the wall clock,
	# says which stage makes the others wait. `times` runs in the subshell
	# that waited for make (in a pipe it would fork and see no children).
	# A stage that runs past CHECK_STAGE_LIMIT is hung (Criterion 2.4.1's
	# runner can deadlock on a case that timed out): killed with all it
	# started, so that the run ends with its table, not at CI's limit.
	# timeout(1) puts the stage in a process group of its own, which a
	# Ctrl-C or a TERM to the run's group does not reach: the group is
	# recorded, and this subshell (or stop_all, below) passes them on.
	# It marks the run as stopping first: the main shell runs its own
	# trap only once its foreground stage has ended, and a lane in the
	# background whose stage the signal ended would otherwise start its
	# next stage before stop_all says to stop.
	(
		timeout --kill-after=30 "$stage_limit" \
			$MAKE --no-print-directory "$jobs" BUILD="$BUILD" "$target" >"$out/$target.log" 2>&1 </dev/null &
		tpid=$!
		echo "$tpid" >"$out/$target.pgid"
		trap 'touch "$out/.stopping"; kill -TERM -- "-$tpid" "$tpid" 2>/dev/null' INT TERM HUP
		# wait returns early when a signal's trap ran: wait for the end
		while :; do
			wait "$tpid"
			rc=$?
			kill -0 "$tpid" 2>/dev/null || break
		done
		echo "$rc" >"$out/$target.rc"
		rm -f "$out/$target.pgid"
		times >"$out/$target.times"
	)
	rc=$(cat "$out/$target.rc")
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "check: [$lane] $target: still running after ${stage_limit} s (CHECK_STAGE_LIMIT): killed" \
			>>"$out/$target.log"
	fi
	local cpu
	cpu=$(awk 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
		NR == 2 { printf "%d", sec($1) + sec($2) + 0.5 }' "$out/$target.times")
	local s=$(($(date +%s) - t0))
	if [ "$rc" -eq 0 ]; then
		echo "check: [$lane] $target: passed in $s s ($cpu s of CPU)"
		echo "$lane $target $s passed $cpu" >>"$out/times"
	else
		{
			echo "check: [$lane] $target: FAILED (exit $rc) in $s s; the last 300 lines of $out/$target.log:"
			tail -n 300 "$out/$target.log" | sed "s/^/  $target| /"
			echo "check: [$lane] $target: end of its log"
		} >&2
		echo "$lane $target $s FAILED $cpu" >>"$out/times"
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
	# The daemon suite in two halves (scripts/make/daemon.mk), one in
	# each lane: alone it was the long pole of the inner loop.
	host=(test-unit test-unit-san doc-test-check test-kernel test-daemon-half2)
	host2=(test-daemon-half1)
	vm=()
	vm2=()
	final=()
else
	read -r -a host <<<"${CHECK_HOST:?CHECK_HOST: run through make check}"
	read -r -a host2 <<<"${CHECK_HOST2:-}"
	read -r -a vm <<<"${CHECK_VM:-}"
	read -r -a vm2 <<<"${CHECK_VM2:-}"
	read -r -a final <<<"${CHECK_FINAL:-}"
fi

# A Ctrl-C, or a TERM or HUP to the run: every stage still running is
# killed with its process group (see stage()), no stage starts after it,
# and the run ends with 130. The lanes that run in the background ignore
# SIGINT (as every asynchronous command of a script does), so this shell
# passes it on.
stop_all() {
	local f
	touch "$out/.stopping"
	for f in "$out"/*.pgid; do
		[ -f "$f" ] && kill -TERM -- "-$(cat "$f")" "$(cat "$f")" 2>/dev/null
	done
	wait
	echo "check: interrupted" >&2
	exit 130
}
trap stop_all INT TERM HUP

# Everything either lane runs is built first, once, with both cores: a lane
# never builds while the other one measures or times out.
bad=0
stage build check-build || bad=1
if [ "$bad" -eq 0 ]; then
	# The guarantee matrix has a host column (test-kernel's results): it
	# is judged once both lanes are done, not when the VMs happen to end.
	EXECGATE_VM_JUDGE=later lane vm "${vm[@]}" &
	vm_pid=$!
	lane vm2 "${vm2[@]}" &
	vm2_pid=$!
	lane host2 "${host2[@]}" &
	host2_pid=$!
	lane host "${host[@]}" || bad=1
	wait "$host2_pid" || bad=1
	wait "$vm_pid" || bad=1
	wait "$vm2_pid" || bad=1
	lane final "${final[@]}" || bad=1
	if [[ " ${vm[*]} " == *" vmtest "* ]]; then
		stage final vmtest-judge || bad=1
	fi
fi

total=$(($(date +%s) - t_start))
echo
echo "check: time per stage ($([ "$quick" -eq 1 ] && echo check-quick || echo check), lanes side by side)"
printf '  %-6s %-22s %8s %8s  %s\n' lane stage seconds cpu-s result
while read -r l t s r c; do
	printf '  %-6s %-22s %8s %8s  %s\n' "$l" "$t" "$s" "$c" "$r"
done <"$out/times"
for l in build host host2 vm vm2 final; do
	s=$(awk -v l="$l" '$1 == l { s += $3; c += $5 } END { print s + 0, c + 0 }' "$out/times")
	printf '  %-6s %-22s %8s %8s\n' "$l" "(lane total)" "${s% *}" "${s#* }"
done
printf '  %-29s %8s  (%d cores)\n' "CPU, all told" "$(awk '{ c += $5 } END { print c + 0 }' "$out/times")" "$(nproc)"
printf '  %-29s %8s  %s\n' "wall clock, all told" "$total" "$([ "$bad" -eq 0 ] && echo passed || echo FAILED)"
echo
echo "check: cases per kernel (vmtest) and per host suite:"
if [ -f "$out/vmtest-judge.log" ]; then
	grep -E '^(debian-[0-9.]+ \(|vmtest: [0-9]+ passed|  console\| |  (FAIL|SKIPPED) )' \
		"$out/vmtest-judge.log" | sed 's/^/  /'
fi
# The host's own counts, from each Criterion suite's last line.
for t in test-kernel test-daemon test-daemon-half1 test-daemon-half2 test-unit test-unit-san \
	test-fleet test-fleet-san; do
	[ -f "$out/$t.log" ] || continue
	syn=$(grep -a 'Synthesis:' "$out/$t.log" | tail -n1 | sed 's/.*Synthesis: //')
	[ -n "$syn" ] && printf '  %-17s %s\n' "$t" "$syn"
done
# Last, so that a log cut to its tail (CI shows the end) still names them.
failed=$(awk '$4 == "FAILED" { printf "%s%s", sep, $2; sep = " " }' "$out/times")
[ -n "$failed" ] && echo "check: FAILED stages: $failed (their logs: $out/<stage>.log)"
exit "$bad"
