# shellcheck shell=bash
# Sourced by scripts/demo.sh and scripts/demo-lsm.sh: cleanup on exit and
# interrupt, the summary rows, and the actors (python3 processes driven one
# line at a time over two FIFOs). Before sourcing, the demo sets DEMO (its
# name in messages), EXECGATE, PY, TMP, CG, PIN, EG (the --pin-dir and
# --state-dir arguments) and DEMO_W_STEP / DEMO_W_VALUE (summary column
# widths).
PIDS=()
ROWS=()
FAILS=0
declare -A IN OUT PID

# Kills every actor in PIDS and waits (2 s at most each) until it is gone.
# Disowned first, so that bash prints no "Killed" job notice for them (it
# printed one after the trap had returned, past any redirection).
demo_kill_actors() {
	for p in "${PIDS[@]}"; do
		disown "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
	done
}

# demo_worker_cleanup CGROUP PIN_DIR STATE_DIR: a worker of the two-worker
# and fleet demos: whatever still runs in its scratch cgroup (per-connection
# children of the stand-ins) is ours, then its programs and the cgroup go.
demo_worker_cleanup() {
	[ -f "$1/cgroup.procs" ] && xargs -r kill -9 <"$1/cgroup.procs" 2>/dev/null
	[ -e "$2" ] && "$EXECGATE" unload --pin-dir "$2" --state-dir "$3" >/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -d "$1" ] || break
		rmdir "$1" 2>/dev/null && break
		sleep 0.1
	done
}

demo_cleanup() {
	set +e
	demo_kill_actors
	[ -e "$PIN" ] && "$EXECGATE" unload "${EG[@]}" >/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
	rm -rf "$TMP"
}
trap demo_cleanup EXIT
trap 'echo "$DEMO: interrupted, cleaning up" >&2; exit 130' INT TERM

say() { printf '%s\n' "$*"; }
# show_cmd CMD...: the command as it can be pasted into a root shell, with
# the real paths and flags this run uses (shell-quoted).
show_cmd() {
	printf '$'
	printf ' %q' "$@"
	printf '\n'
}
# shown CMD...: show_cmd, then run it.
shown() {
	show_cmd "$@"
	"$@"
}
# check STEP EXPECTED GOT: one summary row, from a real result.
check() {
	local mark=PASS
	[ "$2" = "$3" ] || { mark=FAIL; FAILS=$((FAILS + 1)); }
	ROWS+=("$(printf "%-${DEMO_W_STEP}s %-${DEMO_W_VALUE}s %-${DEMO_W_VALUE}s %s" "$1" "$2" "$3" "$mark")")
	say "   -> $3   [$mark]"
}
# demo_summary TITLE WHAT: the table; exits 1 when a step failed.
demo_summary() {
	say "== $1 =="
	printf "%-${DEMO_W_STEP}s %-${DEMO_W_VALUE}s %-${DEMO_W_VALUE}s %s\n" "step" "expected" "got" "result"
	for row in "${ROWS[@]}"; do say "$row"; done
	if [ "$FAILS" -ne 0 ]; then
		say "$DEMO: $FAILS step(s) did not behave as the design says"
		exit 1
	fi
	say "all ${#ROWS[@]} $2 behaved as the design says; cleaning up"
}

# demo_spawn SCRIPT NAME in-cgroup|outside: starts SCRIPT CGROUP|- IN OUT,
# which first answers "pid N"; sets IN[NAME], OUT[NAME] (fds) and PID[NAME].
demo_spawn() {
	local n=$2 cg=-
	[ "$3" = in-cgroup ] && cg=$CG
	mkfifo "$TMP/$n.in" "$TMP/$n.out"
	"$PY" "$1" "$cg" "$TMP/$n.in" "$TMP/$n.out" &
	PIDS+=($!)
	# Same order as the actor opens them, or both sides block forever.
	exec {fd}<"$TMP/$n.out"
	OUT[$n]=$fd
	exec {fd}>"$TMP/$n.in"
	IN[$n]=$fd
	read -r _ p <&"${OUT[$n]}"
	# shellcheck disable=SC2034 # the demos read it
	PID[$n]=$p
}
ask() { # ask NAME COMMAND...: prints the actor's one-line answer
	echo "${*:2}" >&"${IN[$1]}"
	local line
	read -r line <&"${OUT[$1]}"
	echo "$line"
}
