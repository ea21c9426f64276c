# SPDX-License-Identifier: Apache-2.0
"""The system test, inside the VM (scripts/system-test.sh boots it: Debian 12,
systemd as PID 1, the 6.12 kernel with BPF LSM). As an operator would: install
the .deb, set the worker id, `systemctl enable --now execgated`; then, through
the HTTP API only, the worked example on every tier (a Unix bridge and a
grant, VSOCK over vsock_loopback, TCP ServicePort with the gateway in a
network namespace, a replacement that cuts streams on every tier), each
guarantee GET /v1/status claims checked by a real connect; then restart,
kill -9, a package upgrade and stop, while intruders keep trying to connect
and every attempt must be refused.

  python3 guest.py DIR     DIR holds deb1/ and deb2/ (the upgrade)

Prints "ok - ..." / "FAIL - ..." lines and a guarantee table; exits 0 only
when every check passed and every claimed guarantee was checked."""
import glob
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = sys.argv[1]
CONF = "/etc/execgate/execgated.conf"
PINS = "/sys/fs/bpf/execgate"
RUN = "/run/systest"
S = "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7"  # sandbox S of the worked example
T = "7e57a000-0000-4000-8000-000000000007"  # sandbox T: pid reuse, listener, fail closed
GW_NS, GUEST_ADDR, OTHER_ADDR = "gw", "10.0.8.2", "10.0.8.3"  # OTHER_ADDR: never registered
VSOCK_P7, VSOCK_P8, VSOCK_PT = 5207, 5208, 5209
TCP_PORT, TCP_OTHER = 8080, 9090

sys.path.insert(0, HERE)
from actor import UnixHTTP  # noqa: E402

results = []  # (check, ok, detail)
guarantee_checks = {}  # guarantee -> [check names]
actors = []
t0 = time.time()


def say(msg):
    print("[%6.1fs] %s" % (time.time() - t0, msg), flush=True)


def check(name, ok, detail="", backs=()):
    results.append((name, bool(ok), detail))
    for g in backs:
        guarantee_checks.setdefault(g, []).append(name)
    say("%s - %s%s" % ("ok" if ok else "FAIL", name, "" if ok else ": " + str(detail)))
    return ok


def sh(cmd, want=0, quiet=False):
    """Runs a shell command as an operator would; returns (rc, output)."""
    if not quiet:
        say("$ " + cmd)
    p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if want is not None and p.returncode != want:
        say("  exit %d (wanted %d): %s" % (p.returncode, want, p.stdout.strip()[-2000:]))
    return p.returncode, p.stdout


def api(method, path, body=None):
    code, text = UnixHTTP.request(method, path, body)
    try:
        return code, json.loads(text)
    except ValueError:
        return code, text


class Actor:
    def __init__(self, name, netns=None, pid=None):
        cmd = [sys.executable, os.path.join(HERE, "actor.py")]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        if pid:
            # Pid reuse: the next process gets ns_last_pid + 1.
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.name = name
        self.pid = self.call("pid")["pid"]
        actors.append(self)

    def call(self, *cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("actor %s died" % self.name)
        return json.loads(line)

    def kill(self):
        self.p.kill()
        self.p.wait()


def allowed(r):
    return "slot" in r


def denied(r):
    return r.get("errno") in ("EPERM", "EACCES")


def cut(r):
    return r.get("eof") or r.get("errno") in ("EPIPE", "ECONNRESET", "ECONNABORTED")


def cap(gen, scope, port=None):
    cmd = "execgate-issue cap --key /root/cp/%s.seed --sandbox {sb} --worker %s --generation %d " \
          "--activation 1 --scope %s" % (KID, WORKER, gen, scope)
    if port:
        cmd += " --port %s" % port
    return cmd


def token(sandbox, gen, scope, port=None):
    rc, out = sh(cap(gen, scope, port).format(sb=sandbox), quiet=True)
    if rc:
        raise RuntimeError("execgate-issue cap: " + out)
    return out.strip()


def install(sandbox, gen, act, bridge, vmm, bridge_socks, vmm_socks, vsock, tcp=True):
    body = {"worker": WORKER, "generation": gen, "activation": act, "bridge_pid": bridge.pid,
            "vmm_pid": vmm.pid, "bridge_sockets": bridge_socks, "vmm_sockets": vmm_socks,
            "vsock": [{"cid": 1, "port": p} for p in vsock]}
    if tcp:
        body["ports"] = ["%d/tcp" % TCP_PORT]
        body["service_addrs"] = [GUEST_ADDR]
    return api("PUT", "/v1/sandboxes/" + sandbox, body)


def status():
    st, body = api("GET", "/v1/status")
    if st != 200:
        raise RuntimeError("GET /v1/status: %d %s" % (st, body))
    return body


def links(st):
    return {"%s:%s" % (t["name"], p["hook"]): (p.get("link_id"), p.get("prog_id"))
            for t in st["tiers"] for p in t.get("programs", [])}


def main_pid():
    return sh("systemctl show -p MainPID --value execgated", quiet=True)[1].strip()


def wait_active(old_pid=None, secs=300):
    end = time.time() + secs
    while time.time() < end:
        pid = main_pid()
        rc, _ = sh("systemctl is-active --quiet execgated", want=None, quiet=True)
        if rc == 0 and pid not in ("", "0", old_pid) and os.path.exists("/run/execgate/api.sock"):
            return pid
        time.sleep(0.5)
    return None


# --- the operator's steps ------------------------------------------------------
def operator_install():
    global WORKER, KID
    sh("modprobe vsock_loopback")
    deb1 = sorted(glob.glob(DIR + "/deb1/execgate_*.deb") + glob.glob(DIR + "/deb1/libexecgate1_*.deb"))
    rc, out = sh("dpkg -i " + " ".join(deb1))
    check("dpkg -i the package", rc == 0, out[-500:])
    rc, out = sh("getent group execgate execgate-admin")
    check("the package created the groups its config names (sysusers.d)",
          rc == 0 and out.count("\n") == 2, out)
    rc, out = sh("dpkg-query -W -f='${Conffiles}' execgate")
    check("/etc/execgate/execgated.conf is a conffile", CONF in out, out)
    rc, out = sh("systemctl is-enabled execgated", want=None)
    check("the unit is installed, not enabled before a worker id is set",
          out.strip() == "disabled", out)
    rc, out = sh("execgated --check-config", want=2)
    check("the shipped config refuses to start without worker_id (exit 2, says how)",
          rc == 2 and "worker_id: not set" in out and CONF in out and "uuid" in out, out)
    WORKER = open("/proc/sys/kernel/random/uuid").read().strip()
    sh("echo 'worker_id = %s' >> %s" % (WORKER, CONF))
    rc, out = sh("execgated --check-config")
    check("execgated --check-config with the worker id", rc == 0, out)
    rc, out = sh("systemctl enable --now execgated")
    check("systemctl enable --now execgated", rc == 0 and wait_active(), out)
    # Control plane: a signing key, registered through the API.
    rc, out = sh("execgate-issue keygen --out /root/cp")
    KID = out.strip().splitlines()[-1]
    st, body = raw_put_key(KID, open("/root/cp/%s.pub" % KID).read())
    check("PUT /v1/keys/{kid}", st == 201, body)


def raw_put_key(kid, pub):
    import http.client
    import socket

    class Conn(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect("/run/execgate/api.sock")

    c = Conn("localhost")
    c.request("PUT", "/v1/keys/" + kid, body=pub)
    r = c.getresponse()
    return r.status, r.read().decode()


# --- the worked example ----------------------------------------------------------
def worked_example():
    os.makedirs(RUN, exist_ok=True)
    st = status()
    global CLAIMED, LINKS0
    CLAIMED = [g["name"] for g in st["guarantees"] if g["held"]]
    say("GET /v1/status: tiers loaded %s; guarantees held: %s" % (
        [t["name"] for t in st["tiers"] if t.get("loaded")], " ".join(CLAIMED)))
    check("GET /v1/status: the full tier on 6.12 (cgroup, lsm, tcp loaded)",
          all(any(t["name"] == n and t.get("loaded") for t in st["tiers"]) for n in ("cgroup", "lsm", "tcp")),
          [(t["name"], t.get("loaded"), t.get("why_not")) for t in st["tiers"]])
    LINKS0 = links(st)

    # The gateway's network namespace: the guest address on its loopback.
    sh("ip netns add %s && ip -n %s link set lo up && ip -n %s addr add %s/32 dev lo && "
       "ip -n %s addr add %s/32 dev lo" % (GW_NS, GW_NS, GW_NS, GUEST_ADDR, GW_NS, OTHER_ADDR))

    A = {}
    A["vmm7"] = Actor("vmm7")
    A["bridge7"] = Actor("bridge7")
    A["agent"] = Actor("agent")
    A["intruder"] = Actor("intruder")
    A["guest"] = Actor("guest", netns=GW_NS)
    A["gateway"] = Actor("gateway", netns=GW_NS)
    A["intruder_ns"] = Actor("intruder-ns", netns=GW_NS)
    A["vmm7"].call("listen_unix", RUN + "/vmm7.sock")
    A["vmm7"].call("listen_vsock", VSOCK_P7)
    A["bridge7"].call("listen_unix", RUN + "/bridge.sock")
    A["guest"].call("listen_tcp", GUEST_ADDR, TCP_PORT)
    A["guest"].call("listen_tcp", GUEST_ADDR, TCP_OTHER)
    A["guest"].call("listen_tcp", OTHER_ADDR, TCP_PORT)
    A["intruder"].call("listen_unix", RUN + "/unregistered.sock")
    os.symlink(RUN + "/bridge.sock", RUN + "/bridge-link.sock")

    st_, r = install(S, 7, 1, A["bridge7"], A["vmm7"], [RUN + "/bridge.sock"],
                     [RUN + "/vmm7.sock"], [VSOCK_P7])
    check("PUT /v1/sandboxes/S generation 7 (unix, vsock, tcp ServicePort)",
          st_ == 200 and r.get("outcome") == "new", r)
    tcp_api = st_ == 200
    if st_ == 400 and "service_addrs" in str(r):
        say("the API refuses service_addrs: the TCP tier cannot be configured through it")
        st_, r = install(S, 7, 1, A["bridge7"], A["vmm7"], [RUN + "/bridge.sock"],
                         [RUN + "/vmm7.sock"], [VSOCK_P7], tcp=False)
        check("PUT /v1/sandboxes/S generation 7 without the TCP tier", st_ == 200, r)

    # Unix VMM socket and VSOCK: the bridge only.
    r = A["bridge7"].call("connect_unix", RUN + "/vmm7.sock")
    check("bridge 7 -> its VMM socket: allowed", allowed(r), r,
          backs=["unix-vmm-socket-bridge-only"])
    r = A["intruder"].call("connect_unix", RUN + "/vmm7.sock")
    check("another process -> the VMM socket: refused", denied(r), r,
          backs=["unix-vmm-socket-bridge-only", "unix-path-machine-wide"])
    r = A["bridge7"].call("connect_vsock", 1, VSOCK_P7)
    check("bridge 7 -> vsock 1:%d: allowed" % VSOCK_P7, allowed(r), r, backs=["vsock-vmm-bridge-only"])
    stream_v = r.get("slot")
    r = A["intruder"].call("connect_vsock", 1, VSOCK_P7)
    check("another process -> vsock 1:%d: EPERM" % VSOCK_P7, r.get("errno") == "EPERM", r,
          backs=["vsock-vmm-bridge-only"])

    # Unix bridge socket: a grant, admitted by the agent itself over the API.
    r = A["agent"].call("connect_unix", RUN + "/bridge.sock")
    check("agent without a grant -> bridge socket: refused", denied(r), r,
          backs=["unix-bridge-socket-grant"])
    r = A["agent"].call("admit", token(S, 7, "file.read"), "file.read", 0, "")
    check("POST /v1/admit (capability for 7, from the agent): allow",
          r["status"] == 200 and r["body"].get("verdict") == "allow", r)
    r = A["agent"].call("connect_unix", RUN + "/bridge.sock")
    check("agent with the grant -> bridge socket: allowed", allowed(r), r,
          backs=["unix-bridge-socket-grant"])
    stream_u = r.get("slot")
    r = A["agent"].call("connect_unix", RUN + "/bridge-link.sock")
    check("agent with the grant -> bridge socket through a symlink: allowed", allowed(r), r,
          backs=["unix-inode-endpoints"])
    r = A["intruder"].call("connect_unix", RUN + "/bridge-link.sock")
    check("another process -> bridge socket through a symlink: refused", denied(r), r,
          backs=["unix-inode-endpoints", "unix-bridge-socket-grant"])
    r = A["agent"].call("connect_unix", RUN + "/unregistered.sock")
    check("connect to an unregistered socket: passes", allowed(r), r,
          backs=["unix-unregistered-untouched"])

    # TCP ServicePort: the gateway, in its network namespace, with a grant.
    stream_t = None
    r = A["gateway"].call("connect_tcp", GUEST_ADDR, TCP_PORT)
    check("gateway without a grant -> %s:%d: EPERM" % (GUEST_ADDR, TCP_PORT),
          r.get("errno") == "EPERM", r, backs=["tcp-serviceport-profile"])
    r = A["gateway"].call("admit", token(S, 7, "serviceport", "%d/tcp" % TCP_PORT),
                          "serviceport", TCP_PORT, "tcp")
    check("POST /v1/admit (ServicePort %d/tcp, from the gateway): allow" % TCP_PORT,
          r["status"] == 200 and r["body"].get("verdict") == "allow", r)
    r = A["gateway"].call("connect_tcp", GUEST_ADDR, TCP_PORT)
    check("gateway with the grant -> %s:%d: allowed" % (GUEST_ADDR, TCP_PORT), allowed(r), r,
          backs=["tcp-serviceport-profile"])
    stream_t = r.get("slot")
    r = A["intruder_ns"].call("connect_tcp", GUEST_ADDR, TCP_PORT)
    check("another process -> %s:%d: EPERM" % (GUEST_ADDR, TCP_PORT), r.get("errno") == "EPERM", r,
          backs=["tcp-serviceport-profile"])
    r = A["intruder_ns"].call("connect_tcp", GUEST_ADDR, TCP_OTHER)
    check("another process -> %s:%d (a port outside the profile): EPERM" % (GUEST_ADDR, TCP_OTHER),
          r.get("errno") == "EPERM", r, backs=["tcp-serviceport-profile"])
    r = A["intruder_ns"].call("connect_tcp", OTHER_ADDR, TCP_PORT)
    check("another process -> %s:%d (an address no sandbox registered): passes" % (OTHER_ADDR, TCP_PORT),
          allowed(r), r, backs=["tcp-serviceport-profile"])
    if not tcp_api:
        check("the TCP tier is configured through the API (service_addrs)", False,
              "PUT /v1/sandboxes refused service_addrs", backs=["tcp-serviceport-profile"])

    # A new activation attempt of the same generation keeps every stream.
    st_, r = install(S, 7, 2, A["bridge7"], A["vmm7"], [RUN + "/bridge.sock"],
                     [RUN + "/vmm7.sock"], [VSOCK_P7], tcp=tcp_api)
    check("PUT generation 7 activation 2: outcome activation", st_ == 200 and r.get("outcome") == "activation", r)
    for name, actor, slot in (("unix", A["agent"], stream_u), ("vsock", A["bridge7"], stream_v),
                              ("tcp", A["gateway"], stream_t)):
        r = actor.call("echo", slot) if slot else {"error": "no stream"}
        check("%s stream survives an activation change" % name, r.get("ok"), r, backs=["stream-lease"])

    sandbox_t()
    replacement(A, stream_u, stream_v, stream_t, tcp_api)
    return A


def sandbox_t():
    """Pid reuse, listener identity and fail closed, on a sandbox of their own."""
    vmm = Actor("vmm-t")
    bridge = Actor("bridge-t")
    vmm.call("listen_unix", RUN + "/t-vmm.sock")
    vmm.call("listen_unix", RUN + "/t-vmm2.sock")
    vmm.call("listen_vsock", VSOCK_PT)
    st_, r = install(T, 1, 1, bridge, vmm, [], [RUN + "/t-vmm.sock", RUN + "/t-vmm2.sock"],
                     [VSOCK_PT], tcp=False)
    check("PUT /v1/sandboxes/T generation 1", st_ == 200, r)
    r = bridge.call("connect_unix", RUN + "/t-vmm.sock")
    check("T's bridge -> its VMM socket: allowed", allowed(r), r)
    dead = bridge.pid
    bridge.kill()
    impostor = None
    for _ in range(50):
        a = Actor("impostor", pid=dead)
        if a.pid == dead:
            impostor = a
            break
        a.kill()
    if check("a process got the dead bridge's pid %d back (ns_last_pid)" % dead, impostor,
             backs=["pid-reuse-ns-identity", "lsm-pid-reuse-ns-identity"]):
        r = impostor.call("connect_unix", RUN + "/t-vmm.sock")
        check("the dead bridge's pid, reused -> VMM socket: refused", denied(r), r,
              backs=["pid-reuse-ns-identity"])
        r = impostor.call("connect_vsock", 1, VSOCK_PT)
        check("the dead bridge's pid, reused -> vsock: EPERM", r.get("errno") == "EPERM", r,
              backs=["lsm-pid-reuse-ns-identity"])
    bridge2 = Actor("bridge-t2")
    st_, r = install(T, 2, 1, bridge2, vmm, [], [RUN + "/t-vmm.sock", RUN + "/t-vmm2.sock"],
                     [VSOCK_PT], tcp=False)
    check("PUT /v1/sandboxes/T generation 2", st_ == 200 and r.get("outcome") == "replaced", r)
    r = bridge2.call("connect_unix", RUN + "/t-vmm2.sock")
    check("T's new bridge -> VMM socket: allowed", allowed(r), r)
    other = Actor("replacement-listener")
    other.call("listen_unix", RUN + "/t-vmm2.sock")
    r = bridge2.call("connect_unix", RUN + "/t-vmm2.sock")
    check("bridge -> a replacement listener on the VMM socket's path: refused", denied(r), r,
          backs=["unix-listener-identity"])
    st_, r = api("POST", "/v1/sandboxes/%s/retire" % T)
    check("POST /v1/sandboxes/T/retire", st_ == 200, r)
    r = bridge2.call("connect_unix", RUN + "/t-vmm.sock")
    check("bridge -> VMM socket of a retired record: refused", denied(r), r, backs=["unix-fail-closed"])
    st_, r = api("DELETE", "/v1/sandboxes/" + T)
    check("DELETE /v1/sandboxes/T", st_ == 200, r)


def replacement(A, stream_u, stream_v, stream_t, tcp_api):
    """Generation 8 replaces 7: every stream of 7 is cut, every grant dies."""
    A["vmm8"] = Actor("vmm8")
    A["bridge8"] = Actor("bridge8")
    A["vmm8"].call("listen_unix", RUN + "/vmm8.sock")
    A["vmm8"].call("listen_vsock", VSOCK_P8)
    A["bridge8"].call("listen_unix", RUN + "/bridge8.sock")
    st_, r = install(S, 8, 1, A["bridge8"], A["vmm8"], [RUN + "/bridge8.sock"],
                     [RUN + "/vmm8.sock"], [VSOCK_P8], tcp=tcp_api)
    streams = r.get("streams") or {}
    check("PUT generation 8: outcome replaced", st_ == 200 and r.get("outcome") == "replaced", r)
    check("the replacement cut the Unix stream (streams.unix_cut >= 1)",
          streams.get("unix_cut", 0) >= 1, streams,
          backs=["unix-stream-revocation", "unix-socket-epoch-tag"])
    check("the replacement cut the TCP stream (streams.tcp_cut >= 1)",
          streams.get("tcp_cut", 0) >= 1, streams, backs=["tcp-stream-revocation"])
    check("the replacement's revocation reports no error", streams.get("error") is None, streams,
          backs=["unix-stream-revocation", "tcp-stream-revocation"])
    r = A["agent"].call("echo", stream_u)
    check("unix stream of 7 after the replacement: cut", cut(r), r,
          backs=["unix-stream-revocation", "stream-lease"])
    r = A["bridge7"].call("echo", stream_v)
    check("vsock stream of 7 after the replacement: cut (EPIPE)", cut(r), r, backs=["stream-lease"])
    r = A["gateway"].call("echo", stream_t) if stream_t else {"error": "no stream"}
    check("tcp stream of 7 after the replacement: cut", cut(r), r, backs=["tcp-stream-revocation"])
    r = A["agent"].call("connect_unix", RUN + "/bridge8.sock")
    check("agent with 7's grant -> 8's bridge socket: refused", denied(r), r, backs=["epoch-revokes-grants"])
    r = A["bridge7"].call("connect_unix", RUN + "/vmm8.sock")
    check("bridge 7 -> 8's VMM socket: refused", denied(r), r, backs=["unix-vmm-socket-bridge-only"])
    r = A["bridge8"].call("connect_unix", RUN + "/vmm8.sock")
    check("bridge 8 -> its VMM socket: allowed", allowed(r), r)
    r = A["gateway"].call("connect_tcp", GUEST_ADDR, TCP_PORT)
    check("gateway with 7's ServicePort grant -> %s:%d: EPERM" % (GUEST_ADDR, TCP_PORT),
          r.get("errno") == "EPERM", r, backs=["epoch-revokes-grants", "tcp-serviceport-profile"])
    r = A["agent"].call("admit", token(S, 8, "file.read"), "file.read", 0, "")
    check("POST /v1/admit (capability for 8): allow", r["status"] == 200 and r["body"].get("verdict") == "allow", r)
    r = A["agent"].call("connect_unix", RUN + "/bridge8.sock")
    check("agent with 8's grant -> 8's bridge socket: allowed", allowed(r), r)


# --- enforcement across restart, kill -9, upgrade, stop --------------------------
def authorised(A, when):
    r = A["agent"].call("admit", token(S, 8, "file.read"), "file.read", 0, "")
    ok = r["status"] == 200 and r["body"].get("verdict") == "allow"
    r2 = A["agent"].call("connect_unix", RUN + "/bridge8.sock")
    check("%s: admit over the API and connect with the grant" % when, ok and allowed(r2), [r, r2])


def same_links(when, backs):
    st = status()
    now = links(st)
    moved = {h: (LINKS0.get(h), now.get(h)) for h in set(LINKS0) | set(now)
             if (LINKS0.get(h) or (None,))[0] != (now.get(h) or (None,))[0]}
    check("%s: every pinned link kept (programs swapped in place)" % when, not moved, moved, backs=backs)
    st_, r = api("GET", "/v1/sandboxes/" + S)
    check("%s: GET /v1/sandboxes/S: generation 8 still installed" % when,
          st_ == 200 and r["record"]["generation"] == 8, r)


def loop_stats(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return {"attempts": 0, "denied": 0, "allowed": [], "other": []}


def lifecycle(A):
    # Intruders that never stop trying: Unix (bridge and VMM sockets), VSOCK,
    # and TCP from inside the gateway's namespace.
    loops = [Actor("loop-unix"), Actor("loop-tcp", netns=GW_NS)]
    loops[0].p.stdin.write(json.dumps(["loop", RUN + "/loop-unix.json", ["unix", RUN + "/bridge8.sock"],
                                       ["unix", RUN + "/vmm8.sock"], ["vsock", 1, VSOCK_P8]]) + "\n")
    loops[1].p.stdin.write(json.dumps(["loop", RUN + "/loop-tcp.json", ["tcp", GUEST_ADDR, TCP_PORT]]) + "\n")
    for a in loops:
        a.p.stdin.flush()
        a.p.stdout.readline()
    phases = []

    def phase(name, action):
        before = {p: loop_stats(RUN + "/loop-%s.json" % p)["attempts"] for p in ("unix", "tcp")}
        t = time.time()
        action()
        time.sleep(2)  # keep trying after the step, too
        after = {p: loop_stats(RUN + "/loop-%s.json" % p)["attempts"] for p in ("unix", "tcp")}
        phases.append((name, time.time() - t, {p: after[p] - before[p] for p in after}))
        check("%s: the intruders kept trying throughout" % name,
              all(after[p] > before[p] for p in after), phases[-1])

    time.sleep(1)

    def restart():
        old = main_pid()
        rc, out = sh("systemctl restart execgated")
        check("systemctl restart execgated", rc == 0 and wait_active(old), out)

    phase("systemctl restart", restart)
    same_links("after systemctl restart", ["unix-survives-loader-exit", "lsm-survives-loader-exit"])
    authorised(A, "after systemctl restart")

    def kill9():
        old = main_pid()
        sh("kill -9 " + old)
        check("kill -9 of execgated: systemd starts it again", wait_active(old), old)

    phase("kill -9", kill9)
    same_links("after kill -9", ["unix-survives-loader-exit", "lsm-survives-loader-exit"])
    authorised(A, "after kill -9")

    def upgrade():
        old = main_pid()
        deb2 = sorted(glob.glob(DIR + "/deb2/execgate_*.deb") + glob.glob(DIR + "/deb2/libexecgate1_*.deb"))
        want = re.sub(r"^execgate_([^_]+)_.*", r"\1",
                      os.path.basename(glob.glob(DIR + "/deb2/execgate_*.deb")[0]))
        rc, out = sh("dpkg -i " + " ".join(deb2))
        ver = sh("dpkg-query -W -f='${Version}' execgate", quiet=True)[1]
        check("dpkg -i the upgrade (%s)" % want, rc == 0 and ver == want, out[-800:])
        check("the upgrade restarted the running daemon (postinst try-restart)", wait_active(old, 120), old)

    phase("package upgrade", upgrade)
    same_links("after the package upgrade", ["unix-survives-loader-exit", "lsm-survives-loader-exit"])
    authorised(A, "after the package upgrade")

    def stop():
        rc, out = sh("systemctl stop execgated")
        rc2, _ = sh("systemctl is-active --quiet execgated", want=3)
        check("systemctl stop execgated", rc == 0 and rc2 == 3, out)

    phase("systemctl stop", stop)
    check("after stop: links are pinned in %s/links" % PINS, os.listdir(PINS + "/links"),
          PINS, backs=["unix-survives-loader-exit", "lsm-survives-loader-exit"])
    rc, out = sh("execgate status --json")
    st = json.loads(out) if rc == 0 else {}
    moved = {h: (LINKS0.get(h), links(st).get(h)) for h in LINKS0
             if (links(st).get(h) or (None,))[0] != LINKS0[h][0]} if st else "no status"
    check("after stop: execgate status (from the pins): loaded, every link still attached",
          st.get("loaded") and not moved, moved or out[-500:],
          backs=["unix-survives-loader-exit", "lsm-survives-loader-exit"])
    r = A["agent"].call("connect_unix", RUN + "/bridge8.sock")
    check("after stop: the grant admitted before still connects", allowed(r), r)
    time.sleep(2)

    for name, p, backs in (("unix, vsock", "loop-unix", ["unix-survives-loader-exit", "lsm-survives-loader-exit"]),
                           ("tcp", "loop-tcp", ["tcp-serviceport-profile"])):
        s = loop_stats(RUN + "/%s.json" % p)
        check("intruder loop (%s): %d attempts, %d refused, %d allowed, %d other errors"
              % (name, s["attempts"], s["denied"], len(s["allowed"]), len(s["other"])),
              s["attempts"] > 0 and not s["allowed"] and not s["other"] and s["denied"] == s["attempts"],
              {"allowed": s["allowed"][:5], "other": s["other"][:5]}, backs=backs)
    for a in loops:
        a.kill()
    for name, secs, n in phases:
        say("phase %-20s %5.1f s, intruder attempts %s" % (name, secs, n))


def main():
    say("kernel %s, PID 1 is %s, LSMs %s" % (
        os.uname().release, open("/proc/1/comm").read().strip(),
        open("/sys/kernel/security/lsm").read().strip()))
    try:
        operator_install()
        A = worked_example()
        lifecycle(A)
    except Exception as e:  # any crash of the driver is a failure, never a skip
        import traceback
        traceback.print_exc(file=sys.stdout)
        check("the test ran to its end", False, repr(e))
    finally:
        for a in actors:
            try:
                a.kill()
            except Exception:
                pass
    print("\nguarantee                       claimed  checks")
    unchecked = []
    for g in sorted(set(CLAIMED) | set(guarantee_checks)):
        names = guarantee_checks.get(g, [])
        bad = [n for n, ok, _ in results if n in names and not ok]
        verdict = "FAIL" if bad else ("pass" if names else "NOT CHECKED")
        if g in CLAIMED and not names:
            unchecked.append(g)
        print("%-32s %-8s %s (%d checks)" % (g, "held" if g in CLAIMED else "-", verdict, len(names)))
    for g in unchecked:
        check("claimed guarantee %s is checked by the system test" % g, False, "no check backs it")
    failed = [n for n, ok, _ in results if not ok]
    print("\nsystem test: %d checks, %d failed, %.0f s in the guest" % (len(results), len(failed), time.time() - t0))
    for n in failed:
        print("  failed: " + n)
    return 1 if failed else 0


CLAIMED, LINKS0, WORKER, KID = [], {}, None, None
if __name__ == "__main__":
    sys.exit(main())
