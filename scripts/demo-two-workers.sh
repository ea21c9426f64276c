#!/usr/bin/env bash
# make demo, part 4: the seed's worked example end to end, on two workers.
#   sandbox S runs as execution 7 on worker A; it is restored as execution 8
#   on worker B. The front end's route cache still points at A.
# Two workers on this kernel (two scratch cgroups, pin dirs and state dirs,
# each with its own node key), execgate-bridge on each, stand-in Firecracker
# VSOCK sockets with a guest-agent stand-in behind them, and a front end with
# a route cache (execgate-demo, user/demo/). Every line printed comes from a
# real call; the summary compares it with what the design says. Removes
# everything it made, also on failure or Ctrl-C.
#   BUILD=build-alt scripts/demo-two-workers.sh
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXECGATE="$ROOT/$BUILD/execgate"
ISSUE="$ROOT/$BUILD/execgate-issue"
BRIDGE="$ROOT/$BUILD/execgate-bridge"
ACTOR="$ROOT/$BUILD/execgate-demo"
for b in "$EXECGATE" "$ISSUE" "$BRIDGE" "$ACTOR"; do
	[ -x "$b" ] || { echo "demo-two-workers: $b: not built (make BUILD=$BUILD demo)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo-two-workers: needs root (BPF programs, cgroups, ns_last_pid)" >&2
	exit 1
fi
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || { echo "demo-two-workers: no cgroup v2 mount" >&2; exit 1; }

TMP=$(mktemp -d /tmp/execgate-2w.XXXXXX)
declare -A CGW PINW STW IDW
for w in A B; do
	CGW[$w]="$CG2/execgate-2w-$w-$$"
	PINW[$w]=/sys/fs/bpf/execgate-2w-$w-$$
	STW[$w]="$TMP/$w/state"
	mkdir -p "$TMP/$w"
done
IDW[A]=aaaaaaaa-0000-4000-8000-00000000000a
IDW[B]=bbbbbbbb-0000-4000-8000-00000000000b
S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 # sandbox S
EA=(--pin-dir "${PINW[A]}" --state-dir "${STW[A]}")
EB=(--pin-dir "${PINW[B]}" --state-dir "${STW[B]}")

# demo-lib.sh: say, show_cmd, shown, check, demo_summary, PIDS, demo_kill_actors (its cleanup
# is replaced below: two workers here).
DEMO=demo-two-workers DEMO_W_STEP=50 DEMO_W_VALUE=44
PY=/usr/bin/python3 CG=/nonexistent PIN=/nonexistent EG=()
# shellcheck source=scripts/demo-lib.sh
. "$ROOT/scripts/demo-lib.sh"
demo_cleanup() {
	set +e
	demo_kill_actors
	for w in A B; do
		demo_worker_cleanup "${CGW[$w]}" "${PINW[$w]}" "${STW[$w]}"
	done
	rm -rf "$TMP"
}

# wait_socket PATH [TENTHS [LOG]]: waits up to TENTHS/10 s (5 s) for a
# listener; on failure, prints LOG's last lines (why it never bound).
wait_socket() {
	for _ in $(seq "${2:-50}"); do [ -S "$1" ] && return 0; sleep 0.1; done
	echo "demo-two-workers: $1 did not appear" >&2
	[ -n "${3:-}" ] && tail -n 5 "$3" | sed 's/^/demo-two-workers:   /' >&2
	return 1
}
# bridge W VMM_SOCKET [as-pid PID]: starts execgate-bridge for S on worker W,
# in W's cgroup; its log goes to $TMP/W/bridge.log. Sets BPID.
bridge() {
	local w=$1 vmm=$2 args
	args=(--sandbox "$S" --listen "$TMP/$w/bridge.sock" --vmm-socket "$vmm" --vsock-port 52
		--pin-dir "${PINW[$w]}" --state-dir "${STW[$w]}")
	rm -f "$TMP/$w/bridge.sock"
	if [ "${3:-}" = as-pid ]; then
		show_cmd "$ACTOR" as-pid "$4" --cgroup "${CGW[$w]}" -- "$BRIDGE" "${args[@]}"
		"$ACTOR" as-pid "$4" --cgroup "${CGW[$w]}" -- "$BRIDGE" "${args[@]}" \
			>"$TMP/$w/as-pid.out" 2>>"$TMP/$w/bridge.log" &
		PIDS+=("$!")
		# as-pid may wait up to 5 s for a pid another fork holds for a moment
		wait_socket "$TMP/$w/bridge.sock" 100 "$TMP/$w/bridge.log"
		BPID=$4
		say "   as-pid: $(head -n1 "$TMP/$w/as-pid.out")"
	else
		show_cmd "$BRIDGE" "${args[@]}"
		(
			echo "$BASHPID" >"${CGW[$w]}/cgroup.procs"
			exec "$BRIDGE" "${args[@]}"
		) 2>>"$TMP/$w/bridge.log" &
		BPID=$!
		PIDS+=("$BPID")
		wait_socket "$TMP/$w/bridge.sock" 50 "$TMP/$w/bridge.log"
	fi
}
firecracker() { # firecracker W NAME: the stand-in on $TMP/W/NAME.vsock. Sets FPID.
	"$ACTOR" firecracker --socket "$TMP/$1/$2.vsock" --name "$2" --log "$TMP/$2.log" &
	FPID=$!
	PIDS+=("$FPID")
	wait_socket "$TMP/$1/$2.vsock"
}
cap() { # cap WORKER GEN ACT SCOPE
	"$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox "$S" --worker "${IDW[$1]}" --generation "$2" \
		--activation "$3" --scope "$4" --ttl 120
}
# manager W TOKEN REQUEST [flags]: a sandbox manager on worker W (execgate-demo
# manager): its output, indented; the whole output in $TMP/manager.out.
manager() {
	local w=$1 tok=$2 req=$3
	shift 3
	"$ACTOR" manager --pin-dir "${PINW[$w]}" --state-dir "${STW[$w]}" --cgroup "${CGW[$w]}" \
		--sandbox "$S" --bridge-socket "$TMP/$w/bridge.sock" --token "$tok" --request "$req" \
		--scope file.read,exec "$@" >"$TMP/manager.out" 2>&1 || true
	grep -v '^signed_verdict' "$TMP/manager.out" | sed 's/^/   manager: /'
}
mgr() { sed -n "s/^$1 //p" "$TMP/manager.out" | head -n1; } # mgr KEY: one field
short_connect() { mgr connect | cut -d: -f1; }             # "refused EPERM", "verified"
kernel_line() { sed -n 's/^kernel: //p' "$TMP/manager.out"; }
events() { # events W: the denial events pending on worker W, drained
	"$EXECGATE" events --drain --pin-dir "${PINW[$1]}" --state-dir "${STW[$1]}" |
		sed "s/^/   events $1: /"
}
log_count() { grep -c -- "$2" "$1" || true; }

say "== set-up: two workers on this kernel, each with its own cgroup, pins, state and node key =="
show_cmd "$ISSUE" keygen --out "$TMP/cp"
KID=$("$ISSUE" keygen --out "$TMP/cp")
for w in A B; do
	mkdir "${CGW[$w]}"
	E=(--pin-dir "${PINW[$w]}" --state-dir "${STW[$w]}")
	show_cmd "$EXECGATE" load --cgroup "${CGW[$w]}" --require cgroup "${E[@]}"
	"$EXECGATE" load --cgroup "${CGW[$w]}" --require cgroup "${E[@]}" >"$TMP/$w/load.out"
	grep -E '^tier' "$TMP/$w/load.out" | sed "s/^/   worker $w: /"
	show_cmd "$EXECGATE" node-key init --worker-id "${IDW[$w]}" "${E[@]}"
	say "   worker $w node key: $("$EXECGATE" node-key init --worker-id "${IDW[$w]}" "${E[@]}" 2>&1 | paste -sd " ")"
	"$EXECGATE" keys add "$TMP/cp/$KID.pub" "${E[@]}" >/dev/null
done
say "   control-plane key $KID added to both workers"
# With BPF LSM loaded too, the kernel checks listeners (unix_stream_connect)
# and refuses steps 6 and 7 one hop earlier than the cgroup tier does.
LSM=0
grep -q '^tier lsm: loaded' "$TMP/B/load.out" && LSM=1

say
say "== worker A runs execution 7 of sandbox S =="
firecracker A exec-7
FC7=$FPID
bridge A "$TMP/A/exec-7.vsock"
BA=$BPID
shown "$EXECGATE" install --sandbox "$S" --worker "${IDW[A]}" --generation 7 --activation 1 \
	--bridge-pid "$BA" --vmm-pid "$FC7" --bridge-socket "$TMP/A/bridge.sock" \
	--vmm-socket "$TMP/A/exec-7.vsock" "${EA[@]}" | sed 's/^/   /'
say "a terminal on execution 7 (capability for 7, admitted on A, through A's bridge):"
CAP7=$(cap A 7 1 file.read,exec,terminal)
"$ACTOR" manager --pin-dir "${PINW[A]}" --state-dir "${STW[A]}" --cgroup "${CGW[A]}" \
	--sandbox "$S" --bridge-socket "$TMP/A/bridge.sock" --token "$CAP7" --request "open terminal" \
	--scope terminal --terminal >"$TMP/terminal.out" 2>&1 &
TERM_PID=$!
PIDS+=("$TERM_PID")
for _ in $(seq 50); do grep -q '^reply' "$TMP/terminal.out" && break; sleep 0.1; done
sed 's/^/   terminal: /' "$TMP/terminal.out"

say
say "== S is restored as execution 8 on worker B; worker A has not heard of it yet =="
firecracker B exec-8
FC8=$FPID
bridge B "$TMP/B/exec-8.vsock"
BB=$BPID
shown "$EXECGATE" install --sandbox "$S" --worker "${IDW[B]}" --generation 8 --activation 1 \
	--bridge-pid "$BB" --vmm-pid "$FC8" --bridge-socket "$TMP/B/bridge.sock" \
	--vmm-socket "$TMP/B/exec-8.vsock" "${EB[@]}" | sed 's/^/   /'

say
say "== steps 1-3: the front end (execgate-demo frontend: route cache, signed verdicts) =="
FE=("$ACTOR" frontend --sandbox "$S" --issue-bin "$ISSUE" --issuer-key "$TMP/cp/$KID.seed"
	--stale-generation 7 --generation 8)
for w in A B; do
	l=${w,,}
	FE+=("--$l-id" "${IDW[$w]}" "--$l-pin" "${PINW[$w]}" "--$l-state" "${STW[$w]}"
		"--$l-cgroup" "${CGW[$w]}" "--$l-bridge" "$TMP/$w/bridge.sock")
done
show_cmd "${FE[@]}"
before7=$(log_count "$TMP/exec-7.log" "agent: request")
rc=0
"${FE[@]}" >"$TMP/frontend.out" 2>&1 || rc=$?
grep -v '^= ' "$TMP/frontend.out"
res() { sed -n "s/^= $1 //p" "$TMP/frontend.out" | head -n1; }
after7=$(log_count "$TMP/exec-7.log" "agent: request")
say "   requests that reached execution 7's guest agent during steps 1-3: $((after7 - before7))"
events A
say "   execution 8's stand-in Firecracker and guest agent (its log):"
sed 's/^/      /' "$TMP/exec-8.log"
assigned=$(sed -n 's/.*connection 1: CONNECT 52 -> OK \([0-9]*\)$/\1/p' "$TMP/exec-8.log")
check "front end exits" "exit 0" "exit $rc"
check "1. capability for 8 at worker A: verdict" "refresh-route: worker-mismatch" "$(res step1.verdict)"
check "1. ... connect by the manager" "none" "$(res step1.connect)"
check "1. ... requests forwarded to execution 7" "0" "$((after7 - before7))"
check "1. ... signed verdict" "valid worker A refresh-route" "$(res step1.signed)"
check "1. a manager ignoring it: kernel A" "refused EPERM | deny-no-grant +1" "$(res step1.kernel)"
check "2. signed refresh: route cache" "repaired" "$(res step2.outcome)"
check "2. ... entry after the CAS" "worker B, generation 8, activation 1 (version 2)" "$(res step2.entry)"
check "2. ... authentication expiry" "kept" "$(res step2.expiry)"
check "2. ... hybrid VSOCK: CONNECT 52, OK <assigned>" "assigned, not 52" \
	"$([ -n "$assigned" ] && [ "$assigned" != 52 ] && echo "assigned, not 52" || echo "OK '$assigned'")"
check "2. ... retry on worker B" "allow | exec-8: read /etc/hostname" "$(res step2.retry)"
check "3. late rejection (signed by A, valid)" "valid worker A refresh-route" "$(res step3.signed)"
check "3. ... route cache" "lost-race" "$(res step3.outcome)"
check "3. ... entry" "worker B, generation 8, activation 1 (version 2)" "$(res step3.entry)"
check "3. ... op 1's verdict replayed" "ignored-replayed" "$(res step3.replayed)"
check "3. ... one signature bit flipped" "ignored-bad-signature" "$(res step3.forged)"
check "3. ... op 2 retried on the fresh entry" "allow | exec-8: exec ls /" "$(res step3.retry)"

say
say "4. worker A learns that 7 was replaced: the control plane retires it there"
RETIRE_MS=$(date +%s%3N)
show_cmd "$EXECGATE" retire --sandbox "$S" "${EA[@]}"
RETIRE_OUT=$("$EXECGATE" retire --sandbox "$S" "${EA[@]}")
say "${RETIRE_OUT//$'\n'/$'\n'   }" | sed '1s/^/   /'
show_cmd "$EXECGATE" check "$CAP7" "${EA[@]}"
v=$("$EXECGATE" check "$CAP7" "${EA[@]}" | head -n1 || true)
check "4. capability for 7 at worker A (7 retired)" "refresh-route: generation-retired" "$v"
show_cmd "$EXECGATE" check "$CAP7" "${EB[@]}"
v=$("$EXECGATE" check "$CAP7" "${EB[@]}" | head -n1 || true)
check "4. capability for 7 at worker B (runs 8)" "refresh-route: generation-retired" "$v"
say "   a manager holding 7's grant from before connects to A's bridge socket anyway:"
manager A "$CAP7" "read /etc/hostname" --force-connect
check "4. ... kernel A" "refused EPERM | deny-retired +1" "$(short_connect) | $(kernel_line)"
events A

say
say "5. the terminal on execution 7 is revoked"
for _ in $(seq 50); do grep -q '^terminal: stopped' "$TMP/terminal.out" && break; sleep 0.1; done
line=$(grep '^terminal: stopped' "$TMP/terminal.out" || echo "terminal: still running")
say "   $line"
stop_ms=$(sed -n 's/.* at unix ms \([0-9]*\)$/\1/p' <<<"$line")
[ -n "$stop_ms" ] && say "   I/O stopped $((stop_ms - RETIRE_MS)) ms after the retire command started"
{ grep 'revoked' "$TMP/A/bridge.log" || true; } | sed 's/^/   bridge A: /'
check "5. terminal on 7: I/O" "stopped" "$(sed -n 's/^terminal: \(stopped\).*/\1/p' <<<"$line")"
check "5. ... within 1 s of the retire" "yes" \
	"$([ -n "$stop_ms" ] && [ $((stop_ms - RETIRE_MS)) -lt 1000 ] && echo yes || echo no)"
# Who cut it: retire's own report (once install/retire cut Unix streams
# themselves) and/or the bridge's lease check (its "revoked" log line).
if grep -qi 'stream' <<<"$RETIRE_OUT"; then
	say "   retire's report on streams: $(grep -oi '[^;]*stream[^;]*' <<<"$RETIRE_OUT" | head -n1 | sed 's/^ *//')"
else
	say "   (this build's retire reports no stream cut of its own, and no cgroup-tier hook sees"
	say "   I/O on an established Unix stream; the LSM tier's stream lease fails it with EPIPE)"
fi
grep -q 'revoked' "$TMP/A/bridge.log" && say "   bridge A's 100 ms lease check revoked the stream (its log line above)"
kill "$TERM_PID" 2>/dev/null || true

say
say "6. worker B's bridge (pid $BB) dies; a new process gets its pid (ns_last_pid) and listens"
kill "$BB"
wait "$BB" 2>/dev/null || true
bridge B "$TMP/B/exec-8.vsock" as-pid "$BB"
rec=$("$EXECGATE" show --sandbox "$S" --json "${EB[@]}" | grep -o '"bridge":{[^}]*}' || true)
say "   record on B: $rec"
say "   pid $BB now: start $(awk '{print $22}' "/proc/$BB/stat") ticks after boot, exe $(readlink "/proc/$BB/exe")"
CAP8=$(cap B 8 1 file.read,exec)
say "   a manager admitted for 8 on B verifies the bridge socket's listener:"
manager B "$CAP8" "read /etc/hostname"
check "6. manager -> stale bridge (verified)" "refused EPERM" "$(short_connect)"
say "   a manager that skips the check reaches the stale bridge, which connects to the VMM socket:"
manager B "$CAP8" "read /etc/hostname" --unverified
sleep 0.2
{ grep "refused" "$TMP/B/bridge.log" || true; } | sed 's/^/   bridge B: /'
if [ "$LSM" = 1 ]; then
	say "   (LSM tier: unix_stream_connect refused the stale bridge's listener in the kernel)"
	check "6. ... unverified connect to the stale bridge: kernel B" "refused EPERM, deny-listener +1" \
		"$(short_connect), $(kernel_line | grep -o 'deny-listener +[0-9]*' || true)"
else
	say "   (the bridge connects to the VMM socket for every client it accepts: also for the"
	say "   verified manager above, which had closed already)"
	check "6. ... stale bridge -> VMM socket: kernel B" "refused by the kernel, deny-not-bridge +1" \
		"$(grep -q 'refused by the kernel' "$TMP/B/bridge.log" && echo "refused by the kernel"), $(kernel_line | grep -o 'deny-not-bridge +[0-9]*' || true)"
fi
events B
kill "$BB" 2>/dev/null || true
sleep 0.2
say "   the sandbox manager starts a new bridge and installs it (activation 2: epoch kept)"
bridge B "$TMP/B/exec-8.vsock"
BB2=$BPID
shown "$EXECGATE" install --sandbox "$S" --worker "${IDW[B]}" --generation 8 --activation 2 \
	--bridge-pid "$BB2" --vmm-pid "$FC8" --bridge-socket "$TMP/B/bridge.sock" \
	--vmm-socket "$TMP/B/exec-8.vsock" "${EB[@]}" | sed 's/^/   /'
CAP82=$(cap B 8 2 file.read,exec)
manager B "$CAP82" "read /etc/hostname"
check "6. ... the new bridge (activation 2)" "exec-8: read /etc/hostname" "$(mgr reply)"

say
say "7. an impostor binds execution 8's VMM socket path on worker B"
show_cmd "$ACTOR" impostor --socket "$TMP/B/exec-8.vsock" --log "$TMP/impostor.log"
"$ACTOR" impostor --socket "$TMP/B/exec-8.vsock" --log "$TMP/impostor.log" &
PIDS+=("$!")
for _ in $(seq 50); do grep -q 'bound' "$TMP/impostor.log" 2>/dev/null && break; sleep 0.1; done
manager B "$CAP82" "read /etc/hostname"
sleep 0.3
last=$(grep "refused" "$TMP/B/bridge.log" | tail -n1 || true)
say "   bridge B: $last"
sed 's/^/   /' "$TMP/impostor.log"
if [ "$LSM" = 1 ]; then
	check "7. bridge B -> impostor: kernel B (LSM listener check)" "refused by the kernel, deny-listener +1" \
		"$(grep -o 'refused by the kernel' <<<"$last" || true), $(kernel_line | grep -o 'deny-listener +[0-9]*' || true)"
else
	check "7. bridge B -> impostor: peer verification" "refused: another process" \
		"$(grep -o 'refused' <<<"$last" | head -n1 || true): $(grep -o 'another process' <<<"$last" || true)"
fi
check "7. ... bytes that reached the impostor" "0" \
	"$(sed -n 's/.*received \([0-9]*\) bytes/\1/p' "$TMP/impostor.log" | awk '{s += $0} END {print s + 0}')"
check "7. ... what came back to the manager" "nothing (the bridge closed it)" \
	"$(if mgr reply | grep -q '^none'; then echo "nothing (the bridge closed it)"; else mgr reply; fi)"
if [ "$LSM" = 0 ]; then
	say "   (cgroup tier: the kernel let the registered bridge connect ($(kernel_line)); the"
	say "   listener check in the kernel is the LSM tier's unix_stream_connect, here it is userspace)"
fi

say
say "== what the kernels saw =="
for w in A B; do
	say "worker $w:"
	"$EXECGATE" status --pin-dir "${PINW[$w]}" --state-dir "${STW[$w]}" |
		sed -n '/^counters:/,/^maps:/p' | grep -v -E ' 0$|^maps:' | sed 's/^/   /'
done

say
demo_summary "summary: the worked example on two workers" steps
