#!/usr/bin/env bash
# The LSM-tier part of `make demo`: a VSOCK connect, a listener
# replacement, and a stream whose I/O stops when its execution is replaced.
# Needs a kernel with BPF LSM (lsm=...,bpf) and vsock_loopback: scripts/demo.sh
# runs it directly there, and on other kernels inside a virtme-ng VM
# (scripts/vmtest.sh run -- scripts/demo-lsm.sh). Standalone: its own scratch
# cgroup, pin dir and state dir, removed on exit and on interrupt. Every
# result printed comes from a real execgate call or a real socket call.
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXECGATE=${EXECGATE:-$ROOT/$BUILD/execgate}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

[ -x "$EXECGATE" ] || { echo "demo-lsm: $EXECGATE: not built" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "demo-lsm: needs root" >&2; exit 1; }
modprobe vsock_loopback 2>/dev/null || true

CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
TMP=$(mktemp -d /tmp/execgate-lsmdemo.XXXXXX)
CG="$CG2/execgate-lsmdemo-$$"
PIN=/sys/fs/bpf/execgate-lsmdemo-$$
STATE="$TMP/state"
EG=(--pin-dir "$PIN" --state-dir "$STATE")
DEMO=demo-lsm DEMO_W_STEP=46 DEMO_W_VALUE=22
# shellcheck source=scripts/demo-lib.sh
. "$ROOT/scripts/demo-lib.sh"

# An actor: obeys one command per line and answers one line.
#   listen PATH | vlisten PORT           listen (Unix path / VSOCK port), echo
#   connect PATH | vconnect CID PORT     connect and keep the stream
#   send TEXT | recv                     on the kept stream
cat >"$TMP/actor.py" <<'PY'
import errno, os, socket, struct, sys, threading
cg, fin, fout = sys.argv[1:4]
if cg != "-":
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
out = open(fout, "w", buffering=1)
out.write("pid %d\n" % os.getpid())
def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))
def serve(s):
    s.listen(64)
    def echo(c):
        try:
            while True:
                d = c.recv(64)
                if not d:
                    break
                c.sendall(d)
        except OSError:
            pass
    def loop():
        while True:
            c, _ = s.accept()
            threading.Thread(target=echo, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
stream = None
with open(fin) as cmds:
    for line in cmds:
        cmd, *a = line.split()
        try:
            if cmd == "listen":
                s = socket.socket(socket.AF_UNIX)
                if os.path.exists(a[0]):
                    os.unlink(a[0])
                s.bind(a[0]); serve(s); out.write("listening\n")
            elif cmd == "vlisten":
                s = socket.socket(socket.AF_VSOCK)
                s.bind((socket.VMADDR_CID_ANY, int(a[0]))); serve(s); out.write("listening\n")
            elif cmd in ("connect", "vconnect"):
                if cmd == "connect":
                    s = socket.socket(socket.AF_UNIX); s.connect(a[0])
                else:
                    s = socket.socket(socket.AF_VSOCK); s.connect((int(a[0]), int(a[1])))
                # SO_RCVTIMEO, not settimeout(): Python would poll() first and
                # never reach recv(), where the lease is checked.
                if cmd == "connect":
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 3, 0))
                stream = s
                out.write("connected\n")
            elif cmd == "send":
                stream.send(a[0].encode()); out.write("sent\n")
            elif cmd == "recv":
                out.write("received %s\n" % stream.recv(64).decode())
        except OSError as e:
            out.write("refused %s\n" % err(e) if cmd.endswith("connect") else "failed %s\n" % err(e))
PY

actor() { demo_spawn "$TMP/actor.py" "$@"; } # actor NAME in-cgroup|outside
stop() { # quietly: no bash "Killed" job notice
	{
		kill -9 "${PID[$1]}"
		wait "${PID[$1]}"
	} 2>/dev/null || true
}

S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f8
A=aaaaaaaa-0000-4000-8000-00000000000a
PORT=$((30000 + $$ % 20000))
VMM_SOCK="$TMP/vmm.sock"

say "== LSM tier on $(uname -r) (active LSMs: $(cat /sys/kernel/security/lsm)) =="
mkdir "$CG"
show_cmd "$EXECGATE" load --cgroup "$CG" --require lsm "${EG[@]}"
"$EXECGATE" load --cgroup "$CG" --require lsm "${EG[@]}" | grep -E '^tier|^    lsm/'

actor vmm outside
actor bridge7 in-cgroup
actor bridge8 in-cgroup
actor intruder in-cgroup
actor impostor outside
ask vmm vlisten "$PORT" >/dev/null
ask vmm listen "$VMM_SOCK" >/dev/null
say "VMM stand-in: pid ${PID[vmm]}, VSOCK port $PORT and $VMM_SOCK; bridge 7: pid ${PID[bridge7]}"
show_cmd "$EXECGATE" install --sandbox $S --worker $A --generation 7 --activation 1 \
	--bridge-pid "${PID[bridge7]}" --vmm-pid "${PID[vmm]}" --vmm-socket "$VMM_SOCK" \
	--vsock "1:$PORT" "${EG[@]}"
"$EXECGATE" install --sandbox $S --worker $A --generation 7 --activation 1 \
	--bridge-pid "${PID[bridge7]}" --vmm-pid "${PID[vmm]}" --vmm-socket "$VMM_SOCK" \
	--vsock "1:$PORT" "${EG[@]}" >/dev/null

say
say "L1. execution 7's bridge connects to the VMM's VSOCK port (CID 1, vsock_loopback)"
check "bridge 7 -> vsock 1:$PORT" "connected" "$(ask bridge7 vconnect 1 "$PORT")"
say "L2. any other process is refused by lsm/socket_connect"
check "other process -> vsock 1:$PORT" "refused EPERM" "$(ask intruder vconnect 1 "$PORT")"

say
say "L3. a stream of execution 7 carries I/O ..."
ask bridge7 connect "$VMM_SOCK" >/dev/null
ask bridge7 send ping >/dev/null
check "bridge 7 stream, echo" "received ping" "$(ask bridge7 recv)"
say "    ... execution 8 is installed (epoch moves) ..."
show_cmd "$EXECGATE" install --sandbox $S --worker $A --generation 8 --activation 1 \
	--bridge-pid "${PID[bridge8]}" --vmm-pid "${PID[vmm]}" --vmm-socket "$VMM_SOCK" \
	--vsock "1:$PORT" "${EG[@]}"
"$EXECGATE" install --sandbox $S --worker $A --generation 8 --activation 1 \
	--bridge-pid "${PID[bridge8]}" --vmm-pid "${PID[vmm]}" --vmm-socket "$VMM_SOCK" \
	--vsock "1:$PORT" "${EG[@]}" >/dev/null
say "    ... and the same stream stops, both directions (lsm/socket_sendmsg, recvmsg)"
check "bridge 7 send after 8 is installed" "failed EPIPE" "$(ask bridge7 send ping)"
check "bridge 7 recv after 8 is installed" "failed EPIPE" "$(ask bridge7 recv)"
check "bridge 8 -> VMM socket" "connected" "$(ask bridge8 connect "$VMM_SOCK")"

say
say "L4. the VMM dies and another process binds the same path"
stop vmm
ask impostor listen "$VMM_SOCK" >/dev/null
say "    impostor pid ${PID[impostor]} listens on $VMM_SOCK"
check "bridge 8 -> replaced listener" "refused EPERM" "$(ask bridge8 connect "$VMM_SOCK")"

say
say "== what the kernel counted =="
show_cmd "$EXECGATE" status "${EG[@]}"
"$EXECGATE" status "${EG[@]}" | sed -n '/^counters:/,/^maps:/p' | grep -v -E ' 0$|^maps:'
say
demo_summary "LSM tier summary" "LSM-tier steps"
