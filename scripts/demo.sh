#!/usr/bin/env bash
# make demo: kernel enforcement of the worked example on the local kernel.
#   sandbox S runs as execution 7 on worker A; it is restored as execution 8.
# Real processes in a scratch cgroup, a scratch pin dir and state dir; every
# verdict printed is the output of a real execgate call or a real connect().
# Ends with a summary table and removes everything, also when interrupted.
# Every execgate command is shown as it can be pasted (real paths and flags).
#   BUILD=build-alt scripts/demo.sh
#   DEMO_VM=0 scripts/demo.sh   # skip the LSM steps in a VM (one line says so)
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXECGATE="$ROOT/$BUILD/execgate"
ISSUE="$ROOT/$BUILD/execgate-issue"

if [ -x "$ROOT/scripts/demo-capability.sh" ]; then
	echo "######## part 1: capabilities in userspace ########"
	BUILD=$BUILD "$ROOT/scripts/demo-capability.sh"
	echo
fi
echo "######## part 2: kernel enforcement (cgroup connect_unix) ########"
for b in "$EXECGATE" "$ISSUE"; do
	[ -x "$b" ] || { echo "demo: $b: not built (make BUILD=$BUILD)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: the kernel part needs root (BPF programs, cgroups)" >&2
	exit 1
fi

CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || { echo "demo: no cgroup v2 mount" >&2; exit 1; }
TMP=$(mktemp -d /tmp/execgate-kdemo.XXXXXX)
CG="$CG2/execgate-demo-$$"
PIN=/sys/fs/bpf/execgate-demo-$$
STATE="$TMP/state"
EG=(--pin-dir "$PIN" --state-dir "$STATE")
# Debian's interpreter (setup-deps installs it), not a shim earlier in PATH:
# step 11 copies the real binary.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
DEMO=demo DEMO_W_STEP=44 DEMO_W_VALUE=35
# shellcheck source=scripts/demo-lib.sh
. "$ROOT/scripts/demo-lib.sh"

S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 # sandbox S
A=aaaaaaaa-0000-4000-8000-00000000000a # worker A (this host)
B=bbbbbbbb-0000-4000-8000-00000000000b # worker B

# --- the actors: small python3 processes that make real socket calls -------
cat >"$TMP/agent.py" <<'PY'
# agent CGROUP|- IN_FIFO OUT_FIFO: joins the cgroup, then obeys one command
# per line: "listen PATH" | "connect PATH [PORT]" | "exec BINARY".
import errno, os, socket, sys, threading
cg, fin, fout = sys.argv[1:4]
if cg != "-":
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
# After an exec the FIFOs arrive as inherited fds ("fd:N"): reopening them
# would leave the demo's reader without a writer for a moment (EOF).
def fifo(spec, mode):
    if spec.startswith("fd:"):
        return os.fdopen(int(spec[3:]), mode, buffering=1)
    return open(spec, mode, buffering=1)
out = fifo(fout, "w")
out.write("pid %d\n" % os.getpid())
def serve(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path); s.listen(64)
    def loop():
        while True:
            c, _ = s.accept()
            c.sendall(b"BRIDGE OK\n"); c.close()
    threading.Thread(target=loop, daemon=True).start()
with fifo(fin, "r") as cmds:
    for line in cmds:
        cmd, *args = line.split()
        if cmd == "listen":
            serve(args[0]); out.write("listening\n")
        elif cmd == "connect":
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(args[0])
                if len(args) > 1:
                    s.sendall(("CONNECT %s\n" % args[1]).encode())
                reply = s.recv(64).decode().strip()
                out.write("connected (%s)\n" % reply)
            except OSError as e:
                out.write("refused %s\n" % errno.errorcode.get(e.errno, e.errno))
            s.close()
        elif cmd == "exec":
            # A copied interpreter finds its library through PYTHONHOME.
            env = dict(os.environ, PYTHONHOME=sys.prefix)
            os.set_inheritable(cmds.fileno(), True)
            os.set_inheritable(out.fileno(), True)
            os.execve(args[0], [args[0], sys.argv[0], "-", "fd:%d" % cmds.fileno(),
                                "fd:%d" % out.fileno()], env)
PY
cat >"$TMP/firecracker_vsock.py" <<'PY'
# Stands in for Firecracker's host-side VSOCK Unix socket:
# host-initiated connections write "CONNECT <port>\n" and read "OK <port>\n".
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(64)
while True:
    c, _ = s.accept()
    line = c.recv(64).decode().split()
    if len(line) == 2 and line[0] == "CONNECT":
        c.sendall(("OK %s\n" % line[1]).encode())
    c.close()
PY

# The LSM-tier steps in a Debian 6.12 VM (virtme-ng).
vm_step() {
	BUILD=$BUILD "$ROOT/scripts/vmtest.sh" run --kernel debian-6.12 -- \
		env BUILD="$BUILD" "$ROOT/scripts/demo-lsm.sh"
}
agent() { demo_spawn "$TMP/agent.py" "$@"; } # agent NAME in-cgroup|outside
verdict() { awk '{print $1}' <<<"$1"; }
# The whole verdict line of admit: "allow", "refresh-route: <reason>", "deny: <reason>".
admit_verdict() { head -n1 <<<"$1"; }

FC7="$TMP/fc-7.vsock"
FC8="$TMP/fc-8.vsock"
BRIDGE_SOCK="$TMP/bridge.sock"

say "== load: the cgroup tier on a scratch cgroup ($CG) =="
mkdir "$CG"
show_cmd "$EXECGATE" load --cgroup "$CG" "${EG[@]}"
"$EXECGATE" load --cgroup "$CG" "${EG[@]}" | grep -E '^tier|^  (held|NOT)'
say

say "== worker A runs execution 7 =="
"$PY" "$TMP/firecracker_vsock.py" "$FC7" &
PIDS+=($!)
FCPID=$!
agent bridge7 in-cgroup
agent intruder in-cgroup
agent manager in-cgroup
ask bridge7 listen "$BRIDGE_SOCK" >/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$FC7" ] && break; sleep 0.1; done
say "firecracker (VSOCK socket $FC7): pid $FCPID; bridge 7: pid ${PID[bridge7]}"
shown "$EXECGATE" install --sandbox $S --worker $A --generation 7 --activation 1 \
	--bridge-pid "${PID[bridge7]}" --vmm-pid "$FCPID" \
	--bridge-socket "$BRIDGE_SOCK" --vmm-socket "$FC7" "${EG[@]}"

say
say "1. execution 7's bridge connects to its VMM socket (CONNECT 52)"
r=$(ask bridge7 connect "$FC7" 52)
check "bridge 7 -> VMM socket of 7" "connected" "$(verdict "$r")"
say "2. any other process is refused by the kernel"
r=$(ask intruder connect "$FC7" 52)
check "other process -> VMM socket of 7" "refused EPERM" "$r"

say
say "3. a capability for execution 8 (worker B) reaches worker A"
show_cmd "$ISSUE" keygen --out "$TMP/cp"
"$ISSUE" keygen --out "$TMP/cp" >"$TMP/kid"
KID=$(cat "$TMP/kid")
shown "$EXECGATE" keys add "$TMP/cp/$KID.pub" "${EG[@]}"
show_cmd "$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox $S --worker $B --generation 8 \
	--activation 1 --scope file.read
CAP8=$("$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox $S --worker $B --generation 8 \
	--activation 1 --scope file.read)
show_cmd "$EXECGATE" admit --pid "${PID[manager]}" "$CAP8" "${EG[@]}"
r=$("$EXECGATE" admit --pid "${PID[manager]}" "$CAP8" "${EG[@]}" || true)
check "admit capability for 8 on A" "refresh-route: worker-mismatch" "$(admit_verdict "$r")"
say "   ($r: nothing is forwarded, no grant is installed)"
say "4. the manager connects to the bridge without a grant"
r=$(ask manager connect "$BRIDGE_SOCK")
check "manager without grant -> bridge socket" "refused EPERM" "$r"

say
say "5. a capability for execution 7 is admitted: grant for the manager"
show_cmd "$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox $S --worker $A --generation 7 \
	--activation 1 --scope file.read
CAP7=$("$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox $S --worker $A --generation 7 \
	--activation 1 --scope file.read)
show_cmd "$EXECGATE" admit --pid "${PID[manager]}" "$CAP7" "${EG[@]}"
r=$("$EXECGATE" admit --pid "${PID[manager]}" "$CAP7" "${EG[@]}" || true)
check "admit capability for 7 on A" "allow" "$r"
r=$(ask manager connect "$BRIDGE_SOCK")
check "manager with grant -> bridge socket" "connected" "$(verdict "$r")"

say
say "== execution 8 is installed on worker A (restore) =="
"$PY" "$TMP/firecracker_vsock.py" "$FC8" &
PIDS+=($!)
FC8PID=$!
agent bridge8 in-cgroup
ask bridge8 listen "$TMP/bridge-8.sock" >/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$FC8" ] && break; sleep 0.1; done
shown "$EXECGATE" install --sandbox $S --worker $A --generation 8 --activation 1 \
	--bridge-pid "${PID[bridge8]}" --vmm-pid "$FC8PID" --bridge-socket "$BRIDGE_SOCK" \
	--vmm-socket "$FC7" --vmm-socket "$FC8" "${EG[@]}"
say "6. execution 7's grant, before its expiry"
r=$(ask manager connect "$BRIDGE_SOCK")
check "manager with 7's grant -> bridge socket" "refused EPERM" "$r"
say "7. execution 7's bridge"
r=$(ask bridge7 connect "$FC7" 52)
check "bridge 7 -> VMM socket" "refused EPERM" "$r"
say "8. execution 8's bridge"
r=$(ask bridge8 connect "$FC8" 52)
check "bridge 8 -> VMM socket of 8" "connected" "$(verdict "$r")"
say "9. a delayed install of 7 cannot roll the worker back"
rc=0
shown "$EXECGATE" install --sandbox $S --worker $A --generation 7 --activation 1 \
	--bridge-pid "${PID[bridge7]}" --vmm-pid "$FCPID" "${EG[@]}" 2>"$TMP/stale" || rc=$?
say "   $(cat "$TMP/stale")"
check "install generation 7 after 8" "exit 6" "exit $rc"
say "10. a capability for 7 now asks for a route refresh"
show_cmd "$EXECGATE" admit --pid "${PID[manager]}" "$CAP7" "${EG[@]}"
r=$("$EXECGATE" admit --pid "${PID[manager]}" "$CAP7" "${EG[@]}" || true)
check "admit capability for 7 after 8" "refresh-route: generation-retired" "$(admit_verdict "$r")"

say
say "== a reused identity: same pid, another binary =="
cp "$(readlink -f "$PY")" "$TMP/python3-other"
say "11. bridge 8 (pid ${PID[bridge8]}) exec()s a copy of python3 (another inode), same pid"
echo "exec $TMP/python3-other" >&"${IN[bridge8]}"
read -r _ p <&"${OUT[bridge8]}"
say "   pid after exec: $p"
r=$(ask bridge8 connect "$FC8" 52)
check "bridge 8's pid, another executable" "refused EPERM" "$r"

# ==== LSM tier steps: VSOCK connect, listener replacement,
# ==== stream leases. They run here when `execgate status` shows the lsm
# ==== tier loaded; otherwise one line says it is not offered.
if "$EXECGATE" status --json "${EG[@]}" | grep -q '"name":"lsm","offered":true,"loaded":true'; then
	say
	say "######## part 3: the LSM tier (VSOCK, listener identity, stream leases) ########"
	rc=0
	BUILD=$BUILD "$ROOT/scripts/demo-lsm.sh" || rc=$?
	check "LSM tier steps (scripts/demo-lsm.sh)" "exit 0" "exit $rc"
else
	say
	if [ "${DEMO_VM:-1}" = 0 ]; then
		say "LSM tier: not offered by this kernel ($(uname -r)); DEMO_VM=0: its steps in a virtme-ng VM are skipped"
	elif [ -n "${DEMO_VM_STEP:-}" ] || command -v vng >/dev/null; then
		say "LSM tier: not offered by this kernel ($(uname -r)); running its steps in a virtme-ng VM (Debian 6.12, lsm=...,bpf)"
		rc=0
		# qemu reopens its stdout: a regular file there would be
		# truncated, losing everything printed so far. A
		# pipe keeps it. (DEMO_VM_STEP: a stand-in, for the test of this.)
		${DEMO_VM_STEP:-vm_step} | cat || rc=$?
		check "LSM tier steps, in a Debian 6.12 VM" "exit 0" "exit $rc"
	else
		say "LSM tier: not offered by this kernel ($(uname -r)), and no virtme-ng to run its steps in a VM (scripts/setup-vm-deps.sh installs it)"
	fi
fi
# ==== end of LSM tier steps

say
say "== what the kernel saw =="
show_cmd "$EXECGATE" status "${EG[@]}"
"$EXECGATE" status "${EG[@]}" | sed -n '/^counters:/,/^maps:/p' | grep -v -E ' 0$|^maps:'
say "denial events, the ones pending (each with its wall-clock time):"
show_cmd "$EXECGATE" events --drain "${EG[@]}"
"$EXECGATE" events --drain "${EG[@]}" | head -20 | sed 's/^/   /'
show_cmd "$EXECGATE" list "${EG[@]}"
"$EXECGATE" list "${EG[@]}" | sed 's/^/   /'

say
say "######## part 4: two workers, end to end (its own summary) ########"; BUILD=$BUILD "$ROOT/scripts/demo-two-workers.sh" || FAILS=$((FAILS + 1))
say
say "######## part 5: the fleet: etcd, two execgated, a move, a fence (its own summary) ########"; BUILD=$BUILD "$ROOT/scripts/demo-fleet.sh" || FAILS=$((FAILS + 1))
say
demo_summary summary steps
