#!/bin/sh
# How scripts/check.sh stops its stages. At the stage limit
# (CHECK_STAGE_LIMIT): a stage still running is killed with every process
# it started, named in its log and the run's FAILED line, and the stages
# after it still run; a limit that is not a positive number ends the run
# with exit 2. On a Ctrl-C (SIGINT to the run's process group) or a TERM:
# every running stage, in each lane, is killed with what it started (each
# runs in a process group of its own) and the run ends with 130. Driven
# with a stand-in for make (check.sh runs $MAKE), so it takes seconds.
#   test-check-stop.sh   (from the tree's top)
set -eu
dir=$(mktemp -d /tmp/egt-check-stop.XXXXXX)
build=build-check-stop.$$
trap 'rm -rf "$dir" "$build"' EXIT INT TERM
fail() {
	echo "test-check-stop: $*" >&2
	exit 1
}
mark=egt-check-stop-$$
# Run inside make check, the outer run's lanes are in the environment.
unset CHECK_HOST CHECK_HOST2 CHECK_VM CHECK_VM2 CHECK_FINAL
# The stand-in: "hang..." sleeps (in a child, as a test runner would);
# "hang...-slow" takes 2 s to end after a TERM, as a runner that reaps its
# workers does; every other target passes at once.
cat >"$dir/make" <<SH
#!/bin/sh
for a; do
	case "\$a" in
	hang*-slow) exec sh -c "trap 'sleep 2; exit 143' TERM; sleep 60 & wait; : $mark-\$a" ;;
	hang*) exec sh -c "sleep 60; : $mark-\$a" ;;
	esac
done
exit 0
SH
chmod +x "$dir/make"

t0=$(date +%s)
rc=0
CHECK_STAGE_LIMIT=2 MAKE="$dir/make" BUILD=$build CHECK_HOST='hang after' \
	./scripts/check.sh >"$dir/out" 2>&1 || rc=$?
took=$(($(date +%s) - t0))
[ "$rc" != 0 ] || fail "a hung stage passed: $(cat "$dir/out")"
[ "$took" -lt 30 ] || fail "the hung stage was not cut at 2 s: the run took $took s"
grep -q 'still running after 2 s (CHECK_STAGE_LIMIT): killed' "$build/check/hang.log" ||
	fail "the hung stage's log does not say why: $(cat "$build/check/hang.log")"
grep -q 'FAILED stages: hang ' "$dir/out" || fail "no FAILED line naming it: $(cat "$dir/out")"
grep -q 'after: passed' "$dir/out" || fail "the next stage did not run: $(cat "$dir/out")"
! pgrep -f "$mark" >/dev/null || fail "the hung stage's child survived the kill"
echo "test-check-stop: a hung stage is killed at CHECK_STAGE_LIMIT and named"

rc=0
CHECK_STAGE_LIMIT=soon MAKE="$dir/make" BUILD=$build CHECK_HOST=after \
	./scripts/check.sh >"$dir/out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'CHECK_STAGE_LIMIT=soon: not a number of seconds above 0' "$dir/out" ||
	fail "CHECK_STAGE_LIMIT=soon: want exit 2 and the reason, got $rc: $(cat "$dir/out")"
echo "test-check-stop: a limit that is not a number is refused"

# A Ctrl-C while three lanes each run a stage: the run is its own session
# (so that the signal goes to its group alone), SIGINT not ignored as a
# terminal's foreground job has it. The main shell's lane (host) runs a
# stage that ends 2 s after the signal, and the shell runs its trap only
# then: the stages of the lanes in the background end at once, and their
# next stages must not start meanwhile (make check ran them once).
for sig in INT TERM; do
	setsid env --default-signal=INT env CHECK_STAGE_LIMIT=100 MAKE="$dir/make" BUILD=$build \
		CHECK_HOST='hang1-slow after' CHECK_HOST2='hang2 after2' CHECK_VM='hang3 after3' \
		./scripts/check.sh >"$dir/out" 2>&1 &
	run=$!
	for i in $(seq 300); do
		[ "$(pgrep -fc "$mark-hang")" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(pgrep -fc "$mark-hang")" -ge 3 ] ||
		fail "SIG$sig: the three stages did not start within 30 s: $(pgrep -af "$mark"): $(cat "$dir/out")"
	kill -s "$sig" -- "-$run"
	rc=0
	wait "$run" || rc=$?
	for i in $(seq 100); do
		pgrep -f "$mark-hang" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "$mark-hang" >/dev/null || fail "SIG$sig: stages left running: $(pgrep -af "$mark-hang")"
	[ "$rc" = 130 ] || [ "$rc" = 143 ] || fail "SIG$sig: the run ended with $rc: $(cat "$dir/out")"
	! grep -q 'after: started\|after2: started\|after3: started' "$dir/out" ||
		fail "SIG$sig: a stage started after the signal: $(cat "$dir/out")"
	echo "test-check-stop: SIG$sig stops every lane's stage and everything it started"
done
