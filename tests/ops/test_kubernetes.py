#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks deploy/kubernetes/ without a cluster: every document parses
(yaml.safe_load), the DaemonSet has what execgated needs on a node
(privileged, hostPID, bpffs, host cgroup, API socket and state hostPaths),
the ConfigMap's execgated.conf has exactly the daemon's keys and agrees with
the mounts and the probes (liveness GET /v1/live, readiness GET /v1/ready),
the tier is set per node pool (empty by default; docs/kubernetes.md's
pool_daemonset makes a pool's own DaemonSet), the endpoint kinds default to
unix,vsock, and the entrypoint's cgroup v2 discovery is run on unified,
hybrid and legacy mountinfo, and its check of the rendered config by
execgated's parser (a stand-in execgated that runs CONFIG_CHECK). tests/kernel/pod_cgroup_sim.sh runs the entrypoint and the
loader's root detection in a simulated pod on a real kernel.

With CONFIG_CHECK (tests/ops/config_check.c, built once user/daemon/ has
sources), the rendered config is read by execgated's own parser too.

usage: test_kubernetes.py REPO_DIR SCRATCH_DIR [CONFIG_CHECK]"""
import os
import subprocess
import sys

import yaml

failures = []


def check(cond, what):
    if cond:
        print(f"  ok   {what}")
    else:
        print(f"  FAIL {what}")
        failures.append(what)


def under(path, mount):
    return path == mount or path.startswith(mount.rstrip("/") + "/")


def parse_conf(text):
    conf = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if sep != "=" or key in conf:
            check(False, f"execgated.conf line {line!r}: key=value, each key once")
        conf[key] = value
    return conf


CONF_KEYS = {"pin_dir", "state_dir", "cgroup", "require", "endpoint_kinds", "socket",
             "admin_group", "admit_group", "worker_id"}

# mountinfo lines (proc(5)) as a pod with the host's /sys/fs/cgroup at
# /host/sys/fs/cgroup would see them.
MOUNTINFO_HEAD = (
    "22 1 0:21 / / rw,relatime - overlay overlay rw\n"
    "23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "24 22 0:23 / /sys/fs/bpf rw,relatime master:9 - bpf bpf rw,mode=700\n")
MOUNTINFO = {
    "unified": MOUNTINFO_HEAD
    + "30 22 0:26 / /host/sys/fs/cgroup rw,nosuid,nodev,noexec,relatime master:4 - cgroup2 cgroup2 rw\n",
    "hybrid": MOUNTINFO_HEAD
    + "30 22 0:26 / /host/sys/fs/cgroup ro,nosuid,nodev,noexec master:4 - tmpfs tmpfs ro,mode=755\n"
    + "31 30 0:27 / /host/sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime master:5 - cgroup2 cgroup2 rw\n"
    + "32 30 0:28 / /host/sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime master:6 - cgroup cgroup rw,xattr,name=systemd\n"
    + "33 30 0:29 / /host/sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime master:7 - cgroup cgroup rw,cpu,cpuacct\n",
    "legacy": MOUNTINFO_HEAD
    + "30 22 0:26 / /host/sys/fs/cgroup ro,nosuid,nodev,noexec master:4 - tmpfs tmpfs ro,mode=755\n"
    + "32 30 0:28 / /host/sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime master:6 - cgroup cgroup rw,xattr,name=systemd\n",
    # A cgroup2 mounted elsewhere is not the host's tree and must not be taken.
    "none": MOUNTINFO_HEAD
    + "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n",
}


def daemon_reads(config_check, scratch, layout, text):
    """execgated's parser on the rendered config: accepted, and every value read as written."""
    path = os.path.join(scratch, layout, "rendered.conf")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([config_check, path], capture_output=True, text=True)
    want = parse_conf(text)
    got = parse_conf(r.stdout) if r.returncode == 0 else {}
    # config_check prints every setting; an empty one is a line not written.
    got = {k: v for k, v in got.items() if v != "" or k in want}
    check(r.returncode == 0 and got == want,
          f"entrypoint {layout}: execgated's config parser reads the rendered config as written"
          + (f" ({r.stderr.strip()})" if r.returncode else
             "" if got == want else f" (read {got}, wrote {want})"))


def run_entrypoint(script, scratch, layout, machine_id, worker_env=None, require=None,
                   exec_stub=False, kinds=None, config_check=None):
    d = os.path.join(scratch, layout)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "mountinfo"), "w") as f:
        f.write(MOUNTINFO[layout])
    with open(os.path.join(d, "machine-id"), "w") as f:
        f.write(machine_id)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "EXECGATE_MOUNTINFO": os.path.join(d, "mountinfo"),
           "EXECGATE_MACHINE_ID_FILE": os.path.join(d, "machine-id"),
           "EXECGATE_CONF_TEMPLATE": os.path.join(scratch, "execgated.conf"),
           "EXECGATE_CONF_OUT": os.path.join(d, "out.conf"),
           "NODE_NAME": "node-a"}
    if worker_env is not None:
        env["EXECGATE_WORKER_ID"] = worker_env
    if require is not None:
        env["EXECGATE_REQUIRE"] = require
    if kinds is not None:
        env["EXECGATE_ENDPOINT_KINDS"] = kinds
    argv = ["sh", script, "--render-only"]
    if exec_stub:
        # A stand-in execgated on PATH: what the entrypoint execs it with.
        # Its --check-config is execgated's parser (CONFIG_CHECK) when
        # given, which prints nothing to stderr and exits 0 on a good file.
        bindir = os.path.join(d, "bin")
        os.makedirs(bindir, exist_ok=True)
        stub = os.path.join(bindir, "execgated")
        check = (f'"{config_check}" "$2" >/dev/null; exit $?' if config_check
                 else 'echo "check-config $2"; exit 0')
        with open(stub, "w") as f:
            f.write('#!/bin/sh\n'
                    f'if [ "${{3:-}}" = --check-config ]; then {check}; fi\n'
                    'echo "argv=$*"\necho "EXECGATE_HOST_CGROUP=$EXECGATE_HOST_CGROUP"\n')
        os.chmod(stub, 0o755)
        env["PATH"] = bindir + ":" + env["PATH"]
        argv = argv[:2]
    return subprocess.run(argv, env=env, capture_output=True, text=True)


def check_pool_snippet(repo, ds):
    """docs/kubernetes.md's pool_daemonset, on the manifest: a DaemonSet per
    node pool that does not overlap the default one."""
    with open(os.path.join(repo, "docs", "kubernetes.md")) as f:
        doc = f.read()
    marker = "<!-- tested: pool_daemonset"
    check(marker in doc, "docs/kubernetes.md: pool_daemonset is marked as tested")
    if marker not in doc:
        return
    block = doc.split(marker, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    func = block.split("\nkubectl", 1)[0]
    manifest = os.path.join(repo, "deploy", "kubernetes", "execgated.yaml")
    for tier in ("cgroup", "lsm", "tcp", "full"):
        r = subprocess.run(["sh", "-c", func + f'\npool_daemonset {tier} "$1"', "sh", manifest],
                           capture_output=True, text=True)
        try:
            docs = [d for d in yaml.safe_load_all(r.stdout) if d]
        except yaml.YAMLError as e:
            check(False, f"pool_daemonset {tier}: YAML ({e})")
            continue
        ok = r.returncode == 0 and len(docs) == 1 and docs[0].get("kind") == "DaemonSet"
        check(ok, f"pool_daemonset {tier}: one DaemonSet ({r.stderr.strip()})")
        if not ok:
            continue
        p = docs[0]
        pod = p["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}
        terms = pod["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        sel = p["spec"]["selector"]["matchLabels"]
        check(p["metadata"]["name"] == f"execgated-{tier}" and env.get("EXECGATE_REQUIRE") == tier
              and {"key": "execgate.io/require", "operator": "In", "values": [tier]}
              in terms[0]["matchExpressions"]
              and sel.get("execgate.io/pool") == tier
              and sel.items() <= p["spec"]["template"]["metadata"]["labels"].items()
              and not sel.items() <= ds["spec"]["template"]["metadata"]["labels"].items()
              and not ds["spec"]["selector"]["matchLabels"].items()
              <= p["spec"]["template"]["metadata"]["labels"].items(),
              f"pool_daemonset {tier}: execgated-{tier}, EXECGATE_REQUIRE={tier}, nodes "
              f"labelled {tier}, selectors disjoint from the default DaemonSet's")


def check_pod_uid_snippet(repo, scratch):
    """docs/kubernetes.md's pod_uid_of_pid, on the cgroup paths kubelet makes."""
    with open(os.path.join(repo, "docs", "kubernetes.md")) as f:
        doc = f.read()
    marker = "<!-- tested: pod_uid_of_pid"
    check(marker in doc, "docs/kubernetes.md: pod_uid_of_pid is marked as tested")
    if marker not in doc:
        return
    block = doc.split(marker, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    uid = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"
    cases = {
        "systemd": "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
        + uid.replace("-", "_") + ".slice/cri-containerd-" + "ab" * 32 + ".scope\n",
        "systemd-guaranteed": "0::/kubepods.slice/kubepods-pod" + uid.replace("-", "_")
        + ".slice/cri-containerd-" + "cd" * 32 + ".scope\n",
        "cgroupfs": "0::/kubepods/besteffort/pod" + uid + "/" + "ef" * 32 + "\n",
        "cgroupns": "0::/../../kubepods-burstable-pod" + uid.replace("-", "_")
        + ".slice/cri-containerd-" + "01" * 32 + ".scope\n",
        "hybrid": "12:pids:/kubepods/pod" + uid + "/x\n1:name=systemd:/kubepods/pod" + uid
        + "/x\n0::/kubepods/pod" + uid + "/x\n",
        "v1-only": "1:name=systemd:/kubepods/pod" + uid + "/x\n",
        "host": "0::/system.slice/sshd.service\n",
        "two-pods": "2:pids:/kubepods/pod" + uid + "/x\n0::/kubepods/pod"
        + uid.replace("1b", "2c", 1) + "/x\n",
    }
    for pid, (name, text) in enumerate(cases.items(), start=100):
        os.makedirs(os.path.join(scratch, "proc", str(pid)), exist_ok=True)
        with open(os.path.join(scratch, "proc", str(pid), "cgroup"), "w") as f:
            f.write(text)
        r = subprocess.run(["sh", "-c", block + '\npod_uid_of_pid "$1"', "sh", str(pid)],
                           env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                "PROC": os.path.join(scratch, "proc")},
                           capture_output=True, text=True)
        if name in ("host", "two-pods"):
            check(r.returncode != 0 and r.stdout == "",
                  f"pod_uid_of_pid {name}: no pod UID, fails")
        else:
            check(r.returncode == 0 and r.stdout == uid + "\n",
                  f"pod_uid_of_pid {name}: {r.stdout.strip() or r.stderr.strip()}")


def main():
    repo, scratch = sys.argv[1], sys.argv[2]
    config_check = sys.argv[3] if len(sys.argv) > 3 else None
    if not config_check:
        print("  NOT TESTED the rendered config against execgated's parser: no CONFIG_CHECK"
              " (user/daemon/ has no sources yet)")
    os.makedirs(scratch, exist_ok=True)
    kdir = os.path.join(repo, "deploy", "kubernetes")
    docs = []
    files = sorted(f for f in os.listdir(kdir) if f.endswith((".yaml", ".yml")))
    check(files != [], "deploy/kubernetes/ holds YAML files")
    for name in files:
        with open(os.path.join(kdir, name)) as f:
            loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        check(loaded != [], f"{name}: parses with yaml.safe_load ({len(loaded)} documents)")
        for d in loaded:
            check(isinstance(d, dict) and "apiVersion" in d and "kind" in d
                  and "name" in d.get("metadata", {}),
                  f"{name}: {d.get('kind')} has apiVersion, kind, metadata.name")
        docs += loaded

    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    check(len(by_kind.get("DaemonSet", [])) == 1, "exactly one DaemonSet")
    check(len(by_kind.get("ConfigMap", [])) == 1, "exactly one ConfigMap")
    if failures:
        return 1
    ds, cm = by_kind["DaemonSet"][0], by_kind["ConfigMap"][0]
    check(ds["apiVersion"] == "apps/v1", "DaemonSet apiVersion apps/v1")
    ns = ds["metadata"].get("namespace")
    check(cm["metadata"].get("namespace") == ns, "ConfigMap in the DaemonSet's namespace")
    if "Namespace" in by_kind:
        check(by_kind["Namespace"][0]["metadata"]["name"] == ns, "Namespace object matches")
        check(by_kind["Namespace"][0]["metadata"].get("labels", {}).get(
            "pod-security.kubernetes.io/enforce") == "privileged",
            "namespace admits privileged pods (pod security)")

    spec = ds["spec"]
    pod = spec["template"]["spec"]
    check(spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items(),
          "selector matches the pod template labels")
    check(pod.get("hostPID") is True, "hostPID: true")
    check(pod.get("hostNetwork") in (None, False), "no hostNetwork (the API is a Unix socket)")
    check(len(pod["containers"]) == 1, "one container")
    c = pod["containers"][0]
    check(c.get("securityContext", {}).get("privileged") is True, "container privileged: true")

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    check(set(mounts) <= set(volumes), "every volumeMount names a volume")

    def host_mount(host_path):
        for name, v in volumes.items():
            if v.get("hostPath", {}).get("path") == host_path and name in mounts:
                return mounts[name]
        return None

    bpf = host_mount("/sys/fs/bpf")
    check(bpf is not None and bpf["mountPath"] == "/sys/fs/bpf",
          "hostPath /sys/fs/bpf mounted at /sys/fs/bpf")
    check(bpf is not None and bpf.get("mountPropagation") == "Bidirectional",
          "bpffs mount Bidirectional (a bpffs mounted by the loader reaches the host)")
    cg = host_mount("/sys/fs/cgroup")
    check(cg is not None and cg.get("mountPropagation") in ("HostToContainer", "Bidirectional"),
          "host /sys/fs/cgroup mounted with host-to-container propagation (hybrid submount)")
    check(cg is not None and cg["mountPath"] != "/sys/fs/cgroup",
          "host cgroup tree not over the pod's own /sys/fs/cgroup")
    sock = host_mount("/run/execgate")
    check(sock is not None and not sock.get("readOnly", False),
          "hostPath /run/execgate mounted read-write (API socket)")
    state = host_mount("/var/lib/execgate")
    check(state is not None and not state.get("readOnly", False),
          "hostPath /var/lib/execgate mounted read-write (state dir)")
    cfg = [m for n, m in mounts.items()
           if volumes[n].get("configMap", {}).get("name") == cm["metadata"]["name"]]
    check(len(cfg) == 1, "the ConfigMap is mounted")

    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "spec.nodeName", "NODE_NAME from the downward API (spec.nodeName)")
    # The tier per node pool: empty by default (every tier offered: 6.1's
    # lsm, 6.12's both), and this DaemonSet stays off nodes labelled for a
    # pool DaemonSet of their own.
    check(env.get("EXECGATE_REQUIRE", {}).get("value") == "",
          "EXECGATE_REQUIRE defaults to empty (every tier the kernel offers: no crash loop on 6.1)")
    # Readiness means enforcement of Unix and VSOCK endpoints by default: a
    # node without BPF LSM (no VSOCK) stays NotReady.
    check(env.get("EXECGATE_ENDPOINT_KINDS", {}).get("value") == "unix,vsock",
          "EXECGATE_ENDPOINT_KINDS defaults to unix,vsock (a node without BPF LSM is not Ready)")
    check(cg is not None and env.get("EXECGATE_HOST_CGROUP", {}).get("value") == cg["mountPath"],
          "EXECGATE_HOST_CGROUP names the host cgroup mount")
    terms = (pod.get("affinity", {}).get("nodeAffinity", {})
             .get("requiredDuringSchedulingIgnoredDuringExecution", {})
             .get("nodeSelectorTerms", []))
    check(len(terms) == 1 and {"key": "execgate.io/require", "operator": "DoesNotExist"}
          in terms[0].get("matchExpressions", []),
          "the default DaemonSet skips nodes labelled execgate.io/require (a pool's own)")
    sbx = host_mount("/run/sbx")
    check(sbx is not None and sbx["mountPath"] == "/run/sbx",
          "sandbox socket dir hostPath /run/sbx at the same path (LSM inode endpoints)")

    check("execgated.conf" in cm["data"] and "entrypoint.sh" in cm["data"],
          "ConfigMap holds execgated.conf and entrypoint.sh")
    conf = parse_conf(cm["data"]["execgated.conf"])
    check(set(conf) == CONF_KEYS, f"execgated.conf keys are exactly {sorted(CONF_KEYS)}")
    if failures:
        return 1
    check(under(conf["pin_dir"], bpf["mountPath"]), "pin_dir on the bpffs mount")
    check(conf["state_dir"] == state["mountPath"], "state_dir is the state hostPath")
    check(os.path.dirname(conf["socket"]) == sock["mountPath"], "socket in the API hostPath dir")
    check(conf["cgroup"].startswith("@CGROUP_V2_ROOT@"), "cgroup is found on the node")
    check(conf["worker_id"] == "@WORKER_ID@", "worker_id is filled in on the node")
    check(conf["require"] == "@REQUIRE@", "require is set per node pool (EXECGATE_REQUIRE)")
    check(conf["endpoint_kinds"] == "@ENDPOINT_KINDS@",
          "endpoint_kinds is set per node pool (EXECGATE_ENDPOINT_KINDS)")
    check(conf["admin_group"].isdigit() and conf["admit_group"].isdigit(),
          "groups are numeric gids (SO_PEERCRED reports host gids)")

    cmd = c["command"]
    check(cfg[0]["mountPath"] + "/entrypoint.sh" in cmd, "the container runs entrypoint.sh")
    # Liveness is the process (200 after execgate unload too); readiness
    # is enforcement of the pool's endpoint kinds (tests/daemon/test_health.c).
    for probe, path in (("readinessProbe", "/v1/ready"), ("livenessProbe", "/v1/live")):
        argv = c.get(probe, {}).get("exec", {}).get("command", [])
        check(argv[:1] == ["curl"] and "--fail" in argv and "--unix-socket" in argv
              and argv[argv.index("--unix-socket") + 1] == conf["socket"]
              and argv[-1] == "http://localhost" + path,
              f"{probe}: curl --fail --unix-socket {conf['socket']} http://localhost{path}")

    # The entrypoint: cgroup v2 discovery per layout, worker id from the
    # node's machine id or from EXECGATE_WORKER_ID.
    script = os.path.join(scratch, "entrypoint.sh")
    with open(script, "w") as f:
        f.write(cm["data"]["entrypoint.sh"])
    with open(os.path.join(scratch, "execgated.conf"), "w") as f:
        f.write(cm["data"]["execgated.conf"])
    mid = "5f0c1e2d3c4b5a69788796a5b4c3d2e1"
    uuid = "5f0c1e2d-3c4b-5a69-7887-96a5b4c3d2e1"
    for layout, root in (("unified", "/host/sys/fs/cgroup"),
                         ("hybrid", "/host/sys/fs/cgroup/unified")):
        r = run_entrypoint(script, scratch, layout, mid + "\n")
        got = parse_conf(r.stdout) if r.returncode == 0 else {}
        check(r.returncode == 0 and got.get("cgroup") == conf["cgroup"].replace(
            "@CGROUP_V2_ROOT@", root), f"entrypoint {layout}: cgroup={root} ({r.stderr.strip()})")
        check(got.get("worker_id") == uuid, f"entrypoint {layout}: worker_id from machine-id")
        check(f"cgroup {layout} at {root}" in r.stderr, f"entrypoint {layout}: names the layout")
        check(set(got) == CONF_KEYS - {"require"} and all("@" not in v for v in got.values()),
              f"entrypoint {layout}: every placeholder filled, no require line by default")
        check(got.get("endpoint_kinds") == "unix,vsock",
              f"entrypoint {layout}: endpoint_kinds=unix,vsock by default")
        if config_check:
            daemon_reads(config_check, scratch, layout, r.stdout)
    r = run_entrypoint(script, scratch, "legacy", mid)
    check(r.returncode == 1 and "cgroup v1 only" in r.stderr,
          f"entrypoint legacy: refused, needs cgroup v2 ({r.stderr.strip()})")
    r = run_entrypoint(script, scratch, "none", mid)
    check(r.returncode == 1 and "no cgroup mount here" in r.stderr,
          f"entrypoint without the host cgroup mount: refused ({r.stderr.strip()})")
    r = run_entrypoint(script, scratch, "unified", "0" * 32)
    check(r.returncode == 1 and "all zero" in r.stderr, "entrypoint: all-zero machine-id refused")
    r = run_entrypoint(script, scratch, "unified", "not-a-machine-id")
    check(r.returncode == 1 and "not 32 hex digits" in r.stderr,
          "entrypoint: malformed machine-id refused")
    other = "aaaaaaaa-0000-4000-8000-00000000000a"
    r = run_entrypoint(script, scratch, "unified", "garbage", worker_env=other)
    got = parse_conf(r.stdout) if r.returncode == 0 else {}
    check(got.get("worker_id") == other, "entrypoint: EXECGATE_WORKER_ID overrides the machine id")

    for tier in ("cgroup", "lsm", "full"):
        r = run_entrypoint(script, scratch, "unified", mid, require=tier)
        got = parse_conf(r.stdout) if r.returncode == 0 else {}
        check(got.get("require") == tier and set(got) == CONF_KEYS,
              f"entrypoint: EXECGATE_REQUIRE={tier} renders require={tier}")
        if config_check and r.returncode == 0:
            daemon_reads(config_check, scratch, "unified", r.stdout)
    r = run_entrypoint(script, scratch, "unified", mid, kinds="vsock,tcp")
    got = parse_conf(r.stdout) if r.returncode == 0 else {}
    check(got.get("endpoint_kinds") == "vsock,tcp",
          "entrypoint: EXECGATE_ENDPOINT_KINDS=vsock,tcp renders endpoint_kinds=vsock,tcp")
    if config_check and r.returncode == 0:
        daemon_reads(config_check, scratch, "unified", r.stdout)
    r = run_entrypoint(script, scratch, "unified", mid, kinds="unix|vsock")
    check(r.returncode == 1 and "EXECGATE_ENDPOINT_KINDS=unix|vsock: not a list" in r.stderr,
          f"entrypoint: EXECGATE_ENDPOINT_KINDS that sed cannot take is refused ({r.stderr.strip()})")
    r = run_entrypoint(script, scratch, "unified", mid, require="tcp-and-more")
    check(r.returncode == 1 and "EXECGATE_REQUIRE=tcp-and-more: not one of" in r.stderr,
          f"entrypoint: a bad EXECGATE_REQUIRE is refused ({r.stderr.strip()})")
    r = run_entrypoint(script, scratch, "hybrid", mid, exec_stub=True, config_check=config_check)
    check(r.returncode == 0 and "EXECGATE_HOST_CGROUP=/host/sys/fs/cgroup" in r.stdout
          and "argv=--config " in r.stdout,
          "entrypoint: execs execgated --config with EXECGATE_HOST_CGROUP exported ("
          + " ".join(r.stdout.split()) + r.stderr.strip() + ")")
    # A value only execgated's parser knows to be wrong: the entrypoint
    # asks it before the start and names the pod's variables.
    if config_check:
        r = run_entrypoint(script, scratch, "hybrid", mid, exec_stub=True,
                           config_check=config_check, kinds="unix,smtp")
        check(r.returncode == 1 and "argv=" not in r.stdout
              and "EXECGATE_ENDPOINT_KINDS=unix,smtp is refused" in r.stderr
              and "smtp: not one of unix, vsock, tcp" in r.stderr,
              f"entrypoint: a config execgated refuses is not started ({r.stderr.strip()})")
        r = run_entrypoint(script, scratch, "hybrid", mid, exec_stub=True,
                           config_check=config_check, require="tcp")
        check(r.returncode == 0 and "argv=--config " in r.stdout,
              f"entrypoint: EXECGATE_REQUIRE=tcp is started ({r.stderr.strip()})")

    check_pool_snippet(repo, ds)
    check_pod_uid_snippet(repo, scratch)

    if failures:
        print(f"test_kubernetes: {len(failures)} FAILED")
        return 1
    print("test_kubernetes: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
