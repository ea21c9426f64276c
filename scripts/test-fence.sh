#!/usr/bin/env bash
# execgate-issue fence against a real etcd (docs/fleet.md, "Fence"): a
# single member on free loopback ports in a temporary directory, acks
# signed here with each worker's node key (openssl, the contract's
# signed form) and written with etcdctl. Fenced acks exit 0; a lagging
# worker exits 1 at the timeout naming it and its last ack; an ack written
# during the wait completes it; a malformed, forged, unsigned or wrongly
# signed ack never counts; a worker in audit counts only with
# --allow-audit; etcd unreachable exits 1; usage errors exit 2. No etcd:
# the test fails. No root needed.
#   BUILD=build scripts/test-fence.sh
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ISSUE="$ROOT/$BUILD/execgate-issue"
ETCD=${EXECGATE_ETCD_BIN:-/usr/bin/etcd}
ETCDCTL=${EXECGATE_ETCDCTL_BIN:-/usr/bin/etcdctl}
[ -x "$ISSUE" ] || { echo "test-fence: $ISSUE: not built (make BUILD=$BUILD)" >&2; exit 1; }
for b in "$ETCD" "$ETCDCTL"; do
	[ -x "$b" ] || { echo "test-fence: $b: missing (install etcd-server, etcd-client)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/execgate-fence.XXXXXX)
ETCD_PID=
cleanup() {
	local rc=$?
	if [ -n "$ETCD_PID" ]; then
		kill -9 "$ETCD_PID" 2>/dev/null || true
		wait "$ETCD_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT INT TERM
cd "$TMP"
# ok, fail (and the counts); the scratch directory and its trap are ours:
# the cleanup above also stops etcd.
# shellcheck source=scripts/cli-test-lib.sh
. "$ROOT/scripts/cli-test-lib.sh"
fails=0
pass=0

read -r CPORT PPORT DEAD < <(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
EP=http://127.0.0.1:$CPORT
"$ETCD" --name f --data-dir "$TMP/etcd" --listen-client-urls "$EP" --advertise-client-urls "$EP" \
	--listen-peer-urls "http://127.0.0.1:$PPORT" --initial-advertise-peer-urls "http://127.0.0.1:$PPORT" \
	--initial-cluster "f=http://127.0.0.1:$PPORT" --initial-cluster-state new \
	--log-level warn >"$TMP/etcd.log" 2>&1 &
ETCD_PID=$!
for _ in $(seq 100); do
	"$ETCDCTL" --endpoints "$EP" put /ready 1 >/dev/null 2>&1 && break
	sleep 0.1
done
"$ETCDCTL" --endpoints "$EP" put /ready 1 >/dev/null || { cat "$TMP/etcd.log" >&2; exit 1; }

# Each worker's node key: the seed signs its acks here, the .pub is what
# the control plane holds (--node-keys DIR/<worker>.pub).
mkdir -p "$TMP/nodekeys"
nodekey() {
	local kid
	kid=$("$ISSUE" keygen --out "$TMP/k-$1")
	cp "$TMP/k-$1/$kid.pub" "$TMP/nodekeys/$1.pub"
	cp "$TMP/k-$1/$kid.seed" "$TMP/seed-$1"
}
# sign WORKER PLAIN: the signed form of the unsigned ack PLAIN, signed by
# WORKER's node key: "execgate ack v1\0" || PLAIN, Ed25519, the signature
# member in place of the closing brace (docs/fleet.md, "Acks").
sign() {
	python3 - "$TMP/seed-$1" "$2" "$TMP" <<'PY'
import base64, subprocess, sys
seed = bytes.fromhex(open(sys.argv[1]).read().split()[1])
plain = sys.argv[2]
d = sys.argv[3]
open(d + "/k.der", "wb").write(bytes.fromhex("302e020100300506032b657004220420") + seed)
open(d + "/m", "wb").write(b"execgate ack v1\0" + plain.encode())
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-keyform", "DER", "-inkey", d + "/k.der",
                      "-rawin", "-in", d + "/m"], check=True, capture_output=True).stdout
assert len(sig) == 64
sys.stdout.write(plain[:-1] + ',"signature":"' + base64.urlsafe_b64encode(sig).decode().rstrip("=") + '"}')
PY
}

P=/execgate/v1
S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7
A=aaaaaaaa-0000-4000-8000-00000000000a
B=bbbbbbbb-0000-4000-8000-00000000000b
C=cccccccc-0000-4000-8000-00000000000c
for w in "$A" "$B" "$C"; do nodekey "$w"; done
NK=(--node-keys "$TMP/nodekeys")

# plain WORKER SEL_GEN STATE GEN [SANDBOX [MODE]]: the contract's one line,
# unsigned
plain() {
	local w=$1 sg=$2 st=$3 g=$4 s=${5:-$S} m=${6:-enforce} a=1 e=4
	[ "$g" = null ] && a=null e=null
	printf '{"schema_version":3,"worker":"%s","sandbox":"%s","selection":{"worker":"%s","generation":%s,"activation":1,"revision":100},"state":"%s","generation":%s,"activation":%s,"epoch":%s,"mode":"%s","revision":120,"acked_at":1767225600}' \
		"$w" "$s" "$B" "$sg" "$st" "$g" "$a" "$e" "$m"
}
# ack ...: the same, signed by WORKER's own node key
ack() { sign "$1" "$(plain "$@")"; }
put() { "$ETCDCTL" --endpoints "$EP" put "$P/acks/$1/$S" "$2" >/dev/null; }
del() { "$ETCDCTL" --endpoints "$EP" del "$P/acks/$1/$S" >/dev/null; }

# fence_rc WANT WHAT -- args...: runs fence, checks its exit code.
fence_rc() {
	local want=$1 what=$2 rc
	shift 3
	set +e
	"$ISSUE" fence "${NK[@]}" "$@" >out 2>err
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] && ok || fail "$what: exit $rc, want $want (stderr: $(cat err))"
}

# --- usage: 2, one line, nothing on stdout --------------------------------
base=(--etcd "$EP" --sandbox "$S" --generation 8 --workers "$A" --timeout 1)
fence_rc 2 "no --etcd" -- --sandbox "$S" --generation 8 --workers "$A" --timeout 1
fence_rc 2 "no --timeout" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$A"
fence_rc 2 "no --generation" -- --etcd "$EP" --sandbox "$S" --workers "$A" --timeout 1
fence_rc 2 "a worker that is not a UUID" -- "${base[@]:0:6}" --workers "$A,nope" --timeout 1
fence_rc 2 "a worker twice" -- "${base[@]:0:6}" --workers "$A,$A" --timeout 1
fence_rc 2 "an empty worker" -- "${base[@]:0:6}" --workers "$A," --timeout 1
fence_rc 2 "generation above 2^53-1" -- --etcd "$EP" --sandbox "$S" --generation 9007199254740992 \
	--workers "$A" --timeout 1
fence_rc 2 "timeout above a day" -- "${base[@]:0:8}" --timeout 86401
fence_rc 2 "an ftp endpoint" -- --etcd ftp://x --sandbox "$S" --generation 8 --workers "$A" --timeout 1
fence_rc 2 "a sandbox that is not a UUID" -- --etcd "$EP" --sandbox x --generation 8 --workers "$A" \
	--timeout 1
fence_rc 2 "a prefix that is not a path" -- "${base[@]}" --prefix 'no slash'
[ "$(wc -l <err)" -eq 1 ] && [ ! -s out ] && ok || fail "usage: [$(cat out)] [$(cat err)]"
# etcd's TLS and auth options (docs/fleet.md, "etcd roles"): plain http://
# only to loopback; pairs; a password file that others may read
fence_rc 2 "plain http to a host that is not loopback" -- "${base[@]:2}" \
	--etcd http://10.0.0.1:2379
grep -qx "execgate-issue: fence: --etcd: etcd endpoint 'http://10.0.0.1:2379': plain http:// to a host that is not loopback (127.0.0.0/8, \[::1\], localhost): use https:// (execgate-issue fence --help)" err &&
	ok || fail "http to 10.0.0.1: [$(cat err)]"
fence_rc 2 "a client certificate without its key" -- "${base[@]}" --etcd-cert "$TMP/none.pem"
grep -q 'etcd client certificate given without its key' err && ok || fail "cert: [$(cat err)]"
fence_rc 2 "a user without a password file" -- "${base[@]}" --etcd-user fence
printf 'pw\n' >"$TMP/pw" && chmod 644 "$TMP/pw"
fence_rc 1 "a password file others may read" -- "${base[@]}" --etcd-user fence \
	--etcd-password-file "$TMP/pw"
grep -qx "execgate-issue: fence: etcd password file $TMP/pw: mode 0644 lets group or others at it (chmod 600)" err &&
	ok || fail "password file mode: [$(cat err)]"
# --node-keys is required: without it an ack is whatever the store says
set +e
"$ISSUE" fence "${base[@]}" >out 2>err
rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'missing --node-keys DIR' err && [ ! -s out ] && ok ||
	fail "no --node-keys: exit $rc [$(cat err)]"
# a worker without a node key there: 1, naming the file, before any read
fence_rc 1 "no node key for the worker" -- --etcd "http://127.0.0.1:$DEAD" --sandbox "$S" \
	--generation 8 --workers "$A,dddddddd-0000-4000-8000-00000000000d" --timeout 5
grep -qx "execgate-issue: fence: worker dddddddd-0000-4000-8000-00000000000d: node key $TMP/nodekeys/dddddddd-0000-4000-8000-00000000000d.pub: .*" err &&
	[ "$(wc -l <err)" -eq 1 ] && ok || fail "no node key: [$(cat err)]"
cp "$TMP/seed-$C" "$TMP/nodekeys/dddddddd-0000-4000-8000-00000000000d.pub"
fence_rc 1 "a seed as node key" -- --etcd "http://127.0.0.1:$DEAD" --sandbox "$S" \
	--generation 8 --workers "dddddddd-0000-4000-8000-00000000000d" --timeout 5
grep -q "node key .*dddddddd-0000-4000-8000-00000000000d.pub: " err && ok || fail "a seed: [$(cat err)]"
rm "$TMP/nodekeys/dddddddd-0000-4000-8000-00000000000d.pub"

# --- fenced: retired after applying G, active at G, pending, absent -------
put "$A" "$(ack "$A" 8 retired 7)"
put "$B" "$(ack "$B" 8 active 8)"
put "$C" "$(ack "$C" 9 absent null)"
fence_rc 0 "all fenced" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$A,$B,$C" --timeout 5
[ "$(sort out)" = "$(printf 'fenced %s retired\nfenced %s active\nfenced %s absent\n' "$A" "$B" "$C" | sort)" ] &&
	ok || fail "fenced lines: [$(cat out)]"
[ ! -s err ] && ok || fail "all fenced: stderr [$(cat err)]"
put "$C" "$(ack "$C" 8 pending null)"
fence_rc 0 "pending at G" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$C" --timeout 0
# upper-case UUIDs on the command line name the same (lower-case) keys
fence_rc 0 "upper-case worker" -- --etcd "$EP" --sandbox "${S^^}" --generation 8 --workers "${A^^}" \
	--timeout 0

# --- lagging: exit 1 at the timeout, naming the worker and its last ack ---
put "$B" "$(ack "$B" 8 active 7)" # applied G's selection, still serves 7
t0=$(date +%s.%N)
fence_rc 1 "B lags" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$A,$B" --timeout 2
t1=$(date +%s.%N)
grep -q "worker $B lags: last ack state active generation 7 activation 1 selection.generation 8" err &&
	ok || fail "lagging line: [$(cat err)]"
grep -q "worker $A" err && fail "A is fenced but named: [$(cat err)]" || ok
[ "$(wc -l <err)" -eq 1 ] && ok || fail "B lags: stderr is not one line per lagging worker: [$(cat err)]"
grep -qx "fenced $A retired" out && ok || fail "A not printed fenced: [$(cat out)]"
python3 -c "import sys; d=$t1-$t0; sys.exit(0 if 1.9 <= d <= 6 else 1)" && ok ||
	fail "B lags: took $(python3 -c "print($t1-$t0)") s for --timeout 2"
del "$B"
fence_rc 1 "no ack" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" --timeout 1
grep -qx "execgate-issue: fence: worker $B lags: no ack" err && ok || fail "no ack: [$(cat err)]"
put "$B" "$(ack "$B" 7 retired 7)" # retired, but never saw G's selection
fence_rc 1 "selection below G" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" --timeout 0
grep -q "lags: last ack state retired" err && ok || fail "selection below G: [$(cat err)]"

# --- an ack written during the wait completes it --------------------------
put "$B" "$(ack "$B" 8 active 7)"
set +e
"$ISSUE" fence "${NK[@]}" --etcd "$EP" --sandbox "$S" --generation 8 --workers "$A,$B" --timeout 20 >out 2>err &
fp=$!
set -e
sleep 1
put "$B" "$(ack "$B" 8 retired 7)"
t0=$(date +%s)
set +e
wait $fp
rc=$?
set -e
[ $rc -eq 0 ] && [ $(($(date +%s) - t0)) -le 5 ] && ok || fail "ack during the wait: exit $rc [$(cat err)]"
grep -qx "fenced $B retired" out && ok || fail "ack during the wait: [$(cat out)]"

# --- a malformed ack never counts as fenced --------------------------------
# each signed by B's own key, so that the reader (not the signature) refuses
good=$(ack "$B" 8 retired 7)
gp=$(plain "$B" 8 retired 7)
bad_acks=(
	"$(sign "$B" "$(plain "$A" 8 retired 7)")"   # names another worker
	"$(ack "$B" 8 retired 7 "$C")"               # names another sandbox
	"$(sign "$B" "${gp/\"schema_version\":3/\"schema_version\":2}")"
	"$(sign "$B" "${gp/\"state\":\"retired\"/\"state\":\"gone\"}")"
	"$(sign "$B" "${gp/\"state\":\"retired\"/\"state\":\"active\",\"x\":1}")"
	"$(sign "$B" "${gp/\"generation\":8/\"generation\":\"8\"}")"
	"$(sign "$B" "${gp/\"generation\":8/\"generation\":-8}")"
	"$(sign "$B" "${gp/\"mode\":\"enforce\"/\"mode\":\"inherit\"}")"
	"$(ack "$B" 8 retired null)"                 # retired without a record
	"$(ack "$B" 8 active null)"
	"${good%\}}"                                 # truncated
	"${good},{}"
	"$(sign "$B" "{\"a\":1}")"
	"$(sign "$B" "${gp/$B/${B^^}}")"              # not the lowercase form
)
# schema_ok TEXT: docs/schema/ack.schema.json accepts TEXT (the schema and
# the reader in user/fleet/ack.c agree on what an ack is)
schema_ok() {
	python3 - "$ROOT" "$1" <<'PY'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("jsc", sys.argv[1] + "/scripts/json-schema-check.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
try:
    doc = json.loads(sys.argv[2])
except ValueError:
    sys.exit(1)
sys.exit(1 if m.Schemas(sys.argv[1] + "/docs/schema").errors("ack", doc) else 0)
PY
}
schema_ok "$good" && ok || fail "the schema refuses a good ack"
i=0
for v in "${bad_acks[@]}"; do
	i=$((i + 1))
	# 1 and 2 are well-formed acks of another worker or sandbox
	if [ $i -gt 2 ]; then
		schema_ok "$v" && fail "the schema accepts malformed ack $i: $v" || ok
	fi
	put "$B" "$v"
	fence_rc 1 "malformed ack $i" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" --timeout 0
	grep -q "worker $B lags" err && ok || fail "malformed ack $i: [$(cat err)]"
	[ ! -s out ] && ok || fail "malformed ack $i counted: [$(cat out)]"
done
put "$B" "$good"
fence_rc 0 "the same ack well-formed" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" \
	--timeout 0

# --- forged, unsigned, wrongly signed: lagging, named why ------------------
# an etcd writer without B's node key: B's old execution still serves
forged=(
	"unsigned|$(plain "$B" 8 retired 7)"
	"bad-signature|$(plain "$B" 8 retired 7 | sed 's/}$//'),\"signature\":\"$(printf 'A%.0s' $(seq 86))\"}"
	"bad-signature|$(sign "$A" "$(plain "$B" 8 retired 7)")" # A's key, B's ack
	"bad-signature|$(sign "$B" "$(plain "$B" 7 active 7)" | sed 's/"generation":7,"activation":1,"revision"/"generation":8,"activation":1,"revision"/')"
	"bad-signature-text|$(ack "$B" 8 retired 7 | sed 's/.."}$/+A"}/')"
	"unsigned|$(plain "$B" 8 retired 7 | sed 's/"mode":"enforce",//; s/"schema_version":3/"schema_version":2/')"
)
for f in "${forged[@]}"; do
	why=${f%%|*}
	put "$B" "${f#*|}"
	fence_rc 1 "forged ack ($why)" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" \
		--timeout 0
	grep -qx "execgate-issue: fence: worker $B lags: ack signature refused (mod_revision [0-9]*): $why (node key [0-9a-f]\{16\})" err &&
		[ "$(wc -l <err)" -eq 1 ] && ok || fail "forged ack ($why): [$(cat err)]"
	[ ! -s out ] && ok || fail "forged ack ($why) counted: [$(cat out)]"
done
# the genuine one still passes: the refusals above were the signature's
put "$B" "$good"
fence_rc 0 "B's own signed ack" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" --timeout 0

# --- audit: never fenced unless --allow-audit, and then said ---------------
put "$B" "$(ack "$B" 8 retired 7 "$S" audit)"
fence_rc 1 "B retired in audit" -- --etcd "$EP" --sandbox "$S" --generation 8 --workers "$B" --timeout 0
grep -qx "execgate-issue: fence: worker $B lags: in audit mode (--allow-audit accepts it): last ack state retired generation 7 activation 1 selection.generation 8 mode audit sandbox $S revision 120 acked_at 1767225600" err &&
	ok || fail "audit without --allow-audit: [$(cat err)]"
[ ! -s out ] && ok || fail "audit counted without --allow-audit: [$(cat out)]"
fence_rc 0 "B retired in audit, --allow-audit" -- --etcd "$EP" --sandbox "$S" --generation 8 \
	--workers "$B" --timeout 0 --allow-audit
[ "$(cat out)" = "fenced $B retired audit" ] && ok || fail "--allow-audit: [$(cat out)]"
# audit and lagging on the record too: not the audit line
put "$B" "$(ack "$B" 8 active 7 "$S" audit)"
fence_rc 1 "B active 7 in audit, --allow-audit" -- --etcd "$EP" --sandbox "$S" --generation 8 \
	--workers "$B" --timeout 0 --allow-audit
grep -q "lags: last ack state active generation 7 activation 1 selection.generation 8 mode audit" err &&
	ok || fail "audit and lagging: [$(cat err)]"
put "$B" "$good"

# --- etcd unreachable for the whole timeout: 1 with the reason ------------
t0=$(date +%s)
fence_rc 1 "unreachable" -- --etcd "http://127.0.0.1:$DEAD" --sandbox "$S" --generation 8 \
	--workers "$A" --timeout 2
grep -q "etcd unreachable for the whole timeout" err && ok || fail "unreachable: [$(cat err)]"
[ $(($(date +%s) - t0)) -le 6 ] && ok || fail "unreachable: took $(($(date +%s) - t0)) s"
# a dead endpoint first: the next one serves
fence_rc 0 "failover" -- --etcd "http://127.0.0.1:$DEAD,$EP" --sandbox "$S" --generation 8 \
	--workers "$A" --timeout 2

echo "test-fence: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
