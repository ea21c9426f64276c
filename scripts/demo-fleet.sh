#!/usr/bin/env bash
# make demo, part 5: the fleet. One etcd member on a loopback port, two
# workers (execgated A and B, each with its own scratch cgroup, pin dir,
# state dir and socket) that watch it, and a control plane made of
# execgate-issue and etcdctl. Sandbox S runs as execution 7 on A and moves
# to B as execution 8; the control plane fences before it would issue
# capabilities for 8; a forged selection on the bus is refused.
# Every line printed comes from a real call; the summary compares it with
# what docs/fleet.md says. Removes everything it made, also on failure.
#   BUILD=build-alt scripts/demo-fleet.sh
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXECGATE="$ROOT/$BUILD/execgate"
ISSUE="$ROOT/$BUILD/execgate-issue"
DAEMON="$ROOT/$BUILD/execgated"
for b in "$EXECGATE" "$ISSUE" "$DAEMON"; do
	[ -x "$b" ] || { echo "demo-fleet: $b: not built (make BUILD=$BUILD demo)" >&2; exit 1; }
done
for t in etcd etcdctl curl jq; do
	command -v "$t" >/dev/null || { echo "demo-fleet: $t: not installed (scripts/setup-deps.sh)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo-fleet: needs root (BPF programs, cgroups)" >&2
	exit 1
fi
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || { echo "demo-fleet: no cgroup v2 mount" >&2; exit 1; }

TMP=$(mktemp -d /tmp/execgate-fleet.XXXXXX)
declare -A CGW PINW STW IDW SOCKW DPID
for w in A B; do
	CGW[$w]="$CG2/execgate-fleet-$w-$$"
	PINW[$w]=/sys/fs/bpf/execgate-fleet-$w-$$
	STW[$w]="$TMP/$w/state"
	SOCKW[$w]="$TMP/$w/api.sock"
	mkdir -p "$TMP/$w"
done
IDW[A]=aaaaaaaa-0000-4000-8000-00000000000a
IDW[B]=bbbbbbbb-0000-4000-8000-00000000000b
S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 # sandbox S
PREFIX=/execgate/v1
ETCD_PID=

DEMO=demo-fleet DEMO_W_STEP=52 DEMO_W_VALUE=30
PY=/usr/bin/python3 CG=/nonexistent PIN=/nonexistent EG=()
# shellcheck source=scripts/demo-lib.sh
. "$ROOT/scripts/demo-lib.sh"
demo_cleanup() {
	set +e
	demo_kill_actors
	for w in A B; do
		if [ -n "${DPID[$w]:-}" ]; then
			kill -TERM "${DPID[$w]}" 2>/dev/null
			wait "${DPID[$w]}" 2>/dev/null
		fi
		demo_worker_cleanup "${CGW[$w]}" "${PINW[$w]}" "${STW[$w]}"
	done
	if [ -n "$ETCD_PID" ]; then
		kill -TERM "$ETCD_PID" 2>/dev/null
		wait "$ETCD_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}

# A free loopback port: bound by the kernel, then released for etcd.
free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
CPORT=$(free_port)
PPORT=$(free_port)
ETCD="http://127.0.0.1:$CPORT"
ctl() { ETCDCTL_API=3 etcdctl --endpoints "$ETCD" "$@"; }
api() { # api W METHOD PATH [BODY]: prints "STATUS BODY"
	local w=$1 m=$2 p=$3 body=${4:-}
	local args=(-s -o "$TMP/body" -w '%{http_code}' --unix-socket "${SOCKW[$w]}" -X "$m")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
	local code
	code=$(curl "${args[@]}" "http://execgated$p")
	printf '%s %s\n' "$code" "$(tr -d '\n' <"$TMP/body")"
}
ack() { # ack W: the ack W wrote for S, or "none"
	local v
	v=$(ctl get --print-value-only "$PREFIX/acks/${IDW[$1]}/$S")
	[ -n "$v" ] && printf '%s\n' "$v" || echo none
}
ack_field() { ack "$1" | jq -r "$2" 2>/dev/null || echo none; }
# until_ack W JQ WANT: waits (10 s at most) until W's ack says WANT.
until_ack() {
	local got=
	for _ in $(seq 100); do
		got=$(ack_field "$1" "$2")
		[ "$got" = "$3" ] && break
		sleep 0.1
	done
	echo "$got"
}

say "== a control plane: an etcd member on $ETCD, a root key, a control-plane key =="
etcd --name m0 --data-dir "$TMP/etcd" \
	--listen-client-urls "$ETCD" --advertise-client-urls "$ETCD" \
	--listen-peer-urls "http://127.0.0.1:$PPORT" \
	--initial-advertise-peer-urls "http://127.0.0.1:$PPORT" \
	--initial-cluster "m0=http://127.0.0.1:$PPORT" >"$TMP/etcd.log" 2>&1 &
ETCD_PID=$!
for _ in $(seq 100); do ctl endpoint health >/dev/null 2>&1 && break; sleep 0.1; done
ctl endpoint health >/dev/null 2>&1 || { echo "demo-fleet: etcd did not start ($TMP/etcd.log)" >&2; tail -5 "$TMP/etcd.log" >&2; exit 1; }
show_cmd "$ISSUE" keygen --out "$TMP/root"
ROOTKID=$("$ISSUE" keygen --out "$TMP/root")
show_cmd "$ISSUE" keygen --out "$TMP/cp"
CPKID=$("$ISSUE" keygen --out "$TMP/cp")
ROGUEKID=$("$ISSUE" keygen --out "$TMP/rogue")
show_cmd "$ISSUE" keyset --root-key "$TMP/root/$ROOTKID.seed" --version 1 "$TMP/cp/$CPKID.pub"
KEYSET=$("$ISSUE" keyset --root-key "$TMP/root/$ROOTKID.seed" --version 1 "$TMP/cp/$CPKID.pub")
say "$ etcdctl --endpoints $ETCD put $PREFIX/keyset \"\$KEYSET\""
ctl put "$PREFIX/keyset" "$KEYSET" >/dev/null

say "== two workers, each an execgated that watches $PREFIX =="
for w in A B; do
	mkdir -p "${CGW[$w]}" "$TMP/$w/root"
	cp "$TMP/root/$ROOTKID.pub" "$TMP/$w/root/"
	cat >"$TMP/$w/execgated.conf" <<EOF
worker_id = ${IDW[$w]}
pin_dir = ${PINW[$w]}
state_dir = ${STW[$w]}
cgroup = ${CGW[$w]}
socket = ${SOCKW[$w]}
etcd_endpoints = $ETCD
etcd_prefix = $PREFIX
root_keys = $TMP/$w/root
EOF
	"$DAEMON" --config "$TMP/$w/execgated.conf" >"$TMP/$w/daemon.log" 2>&1 &
	DPID[$w]=$!
done
for w in A B; do
	for _ in $(seq 100); do [ -S "${SOCKW[$w]}" ] && break; sleep 0.1; done
	[ -S "${SOCKW[$w]}" ] || { echo "demo-fleet: execgated $w did not start:" >&2; tail -5 "$TMP/$w/daemon.log" >&2; exit 1; }
	say "worker $w: $(api "$w" GET /v1/status | cut -c1-3) on ${SOCKW[$w]}, config $TMP/$w/execgated.conf"
done
# stand-in bridges: one process per worker, in its cgroup
for w in A B; do
	sh -c "echo \$\$ > ${CGW[$w]}/cgroup.procs; exec sleep 600" &
	PIDS+=($!)
	eval "BR_$w=$!"
done

say
say "== 1. the control plane selects execution 7 of S on worker A =="
show_cmd "$ISSUE" selection --key "$TMP/cp/$CPKID.seed" --sandbox "$S" --worker "${IDW[A]}" --generation 7 --activation 1
SEL7=$("$ISSUE" selection --key "$TMP/cp/$CPKID.seed" --sandbox "$S" --worker "${IDW[A]}" --generation 7 --activation 1)
say "$ etcdctl --endpoints $ETCD put $PREFIX/workers/${IDW[A]}/selections/$S \"\$SEL7\""
ctl put "$PREFIX/workers/${IDW[A]}/selections/$S" "$SEL7" >/dev/null
check "A acks the selection before its install" "pending" "$(until_ack A .state pending)"
# shellcheck disable=SC2154 # set by eval above
BODY7='{"worker":"'${IDW[A]}'","generation":7,"activation":1,"bridge_pid":'$BR_A'}'
say "the node manager on A installs 7 (PUT /v1/sandboxes/$S):"
check "PUT of the selected execution 7 on A" "200" "$(api A PUT "/v1/sandboxes/$S" "$BODY7" | cut -d' ' -f1)"
check "A's ack" "active 7" "$(until_ack A '.state + " " + (.generation|tostring)' 'active 7')"
BODY6='{"worker":"'${IDW[A]}'","generation":7,"activation":2,"bridge_pid":'$BR_A'}'
R=$(api A PUT "/v1/sandboxes/$S" "$BODY6")
say "   a PUT of an activation nobody selected: $R"
check "PUT not matching the selection" "409 not-selected" "$(echo "$R" | cut -d' ' -f1) $(echo "$R" | cut -d' ' -f2- | jq -r .error)"

say
say "== 2. S moves to worker B as execution 8 =="
say "one signed copy per recipient, each addressed to the worker whose prefix it goes under (--for)"
for w in B A; do
	show_cmd "$ISSUE" selection --key "$TMP/cp/$CPKID.seed" --sandbox "$S" --worker "${IDW[B]}" --generation 8 --activation 1 --for "${IDW[$w]}"
	SEL8=$("$ISSUE" selection --key "$TMP/cp/$CPKID.seed" --sandbox "$S" --worker "${IDW[B]}" --generation 8 --activation 1 --for "${IDW[$w]}")
	say "$ etcdctl --endpoints $ETCD put $PREFIX/workers/${IDW[$w]}/selections/$S \"\$SEL8\""
	ctl put "$PREFIX/workers/${IDW[$w]}/selections/$S" "$SEL8" >/dev/null
done
check "A retires 7 on reading a selection of B" "retired" "$(until_ack A .state retired)"
check "A's record, over its API" "retired" "$(api A GET "/v1/sandboxes/$S" | cut -d' ' -f2- | jq -r .record.state)"
BODY8='{"worker":"'${IDW[B]}'","generation":8,"activation":1,"bridge_pid":'$BR_B'}'
check "PUT of the selected execution 8 on B" "200" "$(api B PUT "/v1/sandboxes/$S" "$BODY8" | cut -d' ' -f1)"

say
say "== 3. the fence: capabilities for 8 only once no worker can serve 7 =="
say "each worker signs its acks with its node key; the control plane holds every node.pub,"
say "collected at enrolment, as NODEKEYS/<worker-uuid>.pub:"
mkdir -p "$TMP/nodekeys"
for w in A B; do cp "${STW[$w]}/node.pub" "$TMP/nodekeys/${IDW[$w]}.pub"; done
rc=0
shown "$ISSUE" fence --etcd "$ETCD" --sandbox "$S" --generation 8 --workers "${IDW[A]},${IDW[B]}" --node-keys "$TMP/nodekeys" --timeout 10 || rc=$?
check "fence on A and B for generation 8" "exit 0" "exit $rc"
say "a fence for generation 9, which no worker has been told of, times out naming both:"
rc=0
shown "$ISSUE" fence --etcd "$ETCD" --sandbox "$S" --generation 9 --workers "${IDW[A]},${IDW[B]}" --node-keys "$TMP/nodekeys" --timeout 2 2>"$TMP/fence.err" || rc=$?
sed 's/^/   /' "$TMP/fence.err"
check "fence for generation 9 (nobody selected it)" "exit 1, 2 lagging" "exit $rc, $(grep -c lag "$TMP/fence.err") lagging"
say "an ack forged on the bus (A 'retired' for another sandbox, unsigned) does not pass:"
S9=9f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f9
ctl put "$PREFIX/acks/${IDW[A]}/$S9" '{"schema_version":3,"worker":"'"${IDW[A]}"'","sandbox":"'"$S9"'","selection":{"worker":"'"${IDW[B]}"'","generation":9,"activation":1,"revision":1},"state":"retired","generation":7,"activation":1,"epoch":1,"mode":"enforce","revision":1,"acked_at":1}' >/dev/null
rc=0
shown "$ISSUE" fence --etcd "$ETCD" --sandbox "$S9" --generation 9 --workers "${IDW[A]}" --node-keys "$TMP/nodekeys" --timeout 0 2>"$TMP/fence.err" || rc=$?
sed 's/^/   /' "$TMP/fence.err"
check "fence on a forged ack" "exit 1, signature refused" "exit $rc, $(grep -q 'ack signature refused' "$TMP/fence.err" && echo signature refused)"

say
say "== 4. a forged selection on the bus =="
FORGED=$("$ISSUE" selection --key "$TMP/rogue/$ROGUEKID.seed" --sandbox "$S" --worker "${IDW[A]}" --generation 9 --activation 1)
say "a selection of generation 9 for A, signed by a key outside the key set ($ROGUEKID):"
say "$ etcdctl --endpoints $ETCD put $PREFIX/workers/${IDW[A]}/selections/$S \"\$FORGED\""
ctl put "$PREFIX/workers/${IDW[A]}/selections/$S" "$FORGED" >/dev/null
refused=0
for _ in $(seq 100); do
	refused=$(api A GET /v1/status | cut -d' ' -f2- | jq -r '[.fleet.refused.selection[]] | add')
	[ "$refused" != 0 ] && break
	sleep 0.1
done
check "A counts the forged selection refused" "1" "$refused"
say "   A refused it as: $(api A GET /v1/status | cut -d' ' -f2- | jq -r '.fleet.refused.selection | to_entries[] | select(.value > 0) | .key')"
check "A still enforces" "retired 7" "$(ack_field A '.state + " " + (.generation|tostring)')"
grep -m1 'refused' "$TMP/A/daemon.log" | sed 's/^/   A logged: /' || true

say
demo_summary "fleet summary" "fleet steps"
