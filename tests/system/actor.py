# SPDX-License-Identifier: Apache-2.0
"""One actor of the system test (tests/system/guest.py): a process that
makes real socket calls on command. Bridges, VMMs, agents, the TCP gateway
and guest, intruders: each is its own process, because the kernel judges
the process (tgid, start time, executable) and grants go to the caller.

Commands, one JSON array a line on stdin, one JSON answer a line on stdout:
  ["pid"]                          -> {"pid": N}
  ["listen_unix", PATH]            echo server on a Unix stream socket
  ["listen_vsock", PORT]           echo server on AF_VSOCK (any CID)
  ["listen_tcp", ADDR, PORT]       echo server on TCP
  ["connect_unix", PATH]           -> {"slot": N} or {"errno": "EPERM"}
  ["connect_vsock", CID, PORT]
  ["connect_tcp", ADDR, PORT]
  ["echo", SLOT]                   round trip on a slot: {"ok": true} or
                                   {"errno": ...} / {"eof": true}
  ["close", SLOT]
  ["admit", TOKEN, SCOPE, PORT, PROTO]   POST /v1/admit from this process
  ["loop", OUT, SPEC...]           every 50 ms, try each connect of SPEC
                                   (["unix", PATH], ["vsock", CID, PORT],
                                   ["tcp", ADDR, PORT]); writes counts to
                                   OUT (JSON) until killed
"""
import errno
import json
import os
import socket
import sys
import threading
import time

API = "/run/execgate/api.sock"
slots = {}


def err(e):
    return {"errno": errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)}


def echo_server(s):
    def conn(c):
        try:
            while True:
                b = c.recv(4096)
                if not b:
                    break
                c.sendall(b)
        except OSError:
            pass
        finally:
            c.close()

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=conn, args=(c,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()


def listen(kind, args):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(args[0]):
            os.unlink(args[0])
        s.bind(args[0])
    elif kind == "vsock":
        s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        s.bind((socket.VMADDR_CID_ANY, int(args[0])))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((args[0], int(args[1])))
    s.listen(64)
    echo_server(s)
    slots[len(slots) + 1000] = s  # keep it open
    return {"listening": True}


def connect(kind, args):
    if kind == "unix":
        s, addr = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), args[0]
    elif kind == "vsock":
        s, addr = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM), (int(args[0]), int(args[1]))
    else:
        s, addr = socket.socket(socket.AF_INET, socket.SOCK_STREAM), (args[0], int(args[1]))
    s.settimeout(5)
    try:
        s.connect(addr)
    except OSError as e:
        s.close()
        return err(e)
    n = len(slots) + 1
    slots[n] = s
    return {"slot": n}


def echo(slot):
    s = slots[slot]
    try:
        s.sendall(b"ping")
        b = s.recv(16)
    except OSError as e:
        return err(e)
    if not b:
        return {"eof": True}
    return {"ok": b == b"ping"}


class UnixHTTP:
    """One HTTP/1.1 request on the API socket, from this process."""

    @staticmethod
    def request(method, path, body=None):
        import http.client

        class Conn(http.client.HTTPConnection):
            def connect(self):
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(30)
                self.sock.connect(API)

        c = Conn("localhost")
        data = None if body is None else json.dumps(body)
        c.request(method, path, body=data,
                  headers={"Content-Type": "application/json"} if data else {})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        return r.status, text


def admit(token, scope, port, proto):
    body = {"token": token, "scope": scope}
    if port:
        body["port"] = port
        body["proto"] = proto
    status, text = UnixHTTP.request("POST", "/v1/admit", body)
    return {"status": status, "body": json.loads(text)}


def loop(out, specs):
    counts = {"attempts": 0, "denied": 0, "allowed": [], "other": []}
    last = 0
    while True:
        for spec in specs:
            r = connect(spec[0], spec[1:])
            counts["attempts"] += 1
            now = time.time()
            if "slot" in r:
                slots.pop(r["slot"]).close()
                counts["allowed"].append([now, spec])
            elif r["errno"] in ("EPERM", "EACCES"):
                counts["denied"] += 1
            else:
                counts["other"].append([now, spec, r["errno"]])
        if time.time() - last > 0.2:
            with open(out + ".tmp", "w") as f:
                json.dump(counts, f)
            os.rename(out + ".tmp", out)
            last = time.time()
        time.sleep(0.05)


def main():
    out = sys.stdout
    for line in sys.stdin:
        cmd = json.loads(line)
        op, args = cmd[0], cmd[1:]
        try:
            if op == "pid":
                r = {"pid": os.getpid()}
            elif op.startswith("listen_"):
                r = listen(op[7:], args)
            elif op.startswith("connect_"):
                r = connect(op[8:], args)
            elif op == "echo":
                r = echo(args[0])
            elif op == "close":
                slots.pop(args[0]).close()
                r = {}
            elif op == "admit":
                r = admit(*args)
            elif op == "loop":
                out.write(json.dumps({"looping": True}) + "\n")
                out.flush()
                loop(args[0], args[1:])
            else:
                r = {"error": "unknown command " + op}
        except OSError as e:
            r = err(e)
        out.write(json.dumps(r) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
