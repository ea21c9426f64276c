#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# execgated's pod, simulated in a private mount namespace: the host's cgroup
# tree mounted under HOST/sys/fs/cgroup (as the DaemonSet's hostPath), and at
# /sys/fs/cgroup a pod-like cgroup2 mount of a scratch cgroup of our own,
# first as a bind mount (a runtime without a cgroup namespace) and then as a
# fresh cgroup2 mount inside a cgroup namespace rooted there (the usual
# pod on a cgroup v2 node). In each, the loader must take the host's mounts
# for the cgroup v2 root and the memory cgroup root (execgate status), with
# EXECGATE_HOST_CGROUP and without; the DaemonSet's entrypoint must render
# the host's root; a real `execgate load` must attach and create its tag
# maps from there; and execgated, started from the rendered config, must
# answer the DaemonSet's probes: live, ready exactly when status holds the
# guarantees of the default endpoint kinds (unix, vsock), and after an
# unload live but not ready. Nothing leaves the namespaces: inside, every mount this
# process sees is made private before anything is mounted, and the scratch
# mounts hang off one of those ("/" need not be a mount point, as in a
# chroot, where `unshare --propagation private` fails). The scratch cgroups,
# pins and files go on exit.
#
# usage: pod_cgroup_sim.sh EXECGATE_BIN YAML
# Prints one line per check and "N passed, M failed"; exits 1 on a failure.
set -eu

execgate=$1
yaml=$2
execgated=$(dirname "$execgate")/execgated
[ "$(id -u)" = 0 ] || { echo "pod_cgroup_sim: needs root" >&2; exit 1; }
[ -x "$execgate" ] || { echo "pod_cgroup_sim: $execgate: not executable" >&2; exit 1; }
[ -x "$execgated" ] || { echo "pod_cgroup_sim: $execgated: not executable" >&2; exit 1; }
command -v curl >/dev/null || { echo "pod_cgroup_sim: needs curl (the probes)" >&2; exit 1; }
command -v unshare >/dev/null || { echo "pod_cgroup_sim: needs unshare (util-linux)" >&2; exit 1; }

scratch=$(mktemp -d /tmp/eg-podsim.XXXXXX)
name=eg-podsim-$$
pins=/sys/fs/bpf/$name

# The host's cgroup2 root and its cgroup v1 memory root, if any: mounts
# whose directory is the hierarchy's root (inode 1).
root_of() { # FSTYPE [OPTION]
	awk -v t="$1" -v o="${2:-}" '{
		for (i = 7; i <= NF; i++) if ($i == "-") break
		if ($(i + 1) != t) next
		if (o != "" && index("," $(i + 3) ",", "," o ",") == 0) next
		print $5
	}' /proc/self/mountinfo | while read -r m; do
		[ "$(stat -c %i "$m" 2>/dev/null)" = 1 ] && { echo "$m"; break; }
	done
}
cg2=$(root_of cgroup2)
v1mem=$(root_of cgroup memory)
[ -n "$cg2" ] || { echo "pod_cgroup_sim: no cgroup2 root mounted" >&2; exit 1; }
case $cg2 in /sys/fs/cgroup | /sys/fs/cgroup/*) ;; *)
	echo "pod_cgroup_sim: cgroup2 at $cg2, not under /sys/fs/cgroup" >&2; exit 1 ;;
esac
rel2=${cg2#/sys/fs/cgroup}       # "" (unified) or /unified (hybrid)
relmem=${v1mem#/sys/fs/cgroup}   # /memory on hybrid hosts

cleanup() {
	for f in "$scratch"/daemon-*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	"$execgate" unload --pin-dir "$pins" --state-dir "$scratch/state" >/dev/null 2>&1 || true
	rmdir "$cg2/$name/attach" "$cg2/$name/pod" "$cg2/$name" 2>/dev/null || true
	# Only directories here: the mounts on them lived in the namespaces.
	rmdir "/dev/shm/$name-bind/host/sys/fs/cgroup" "/dev/shm/$name-cgroupns/host/sys/fs/cgroup" \
		2>/dev/null || true
	rm -rf "$scratch" "/dev/shm/$name-bind" "/dev/shm/$name-cgroupns"
}
trap cleanup EXIT INT TERM
mkdir "$cg2/$name" "$cg2/$name/pod" "$cg2/$name/attach"

# The DaemonSet's entrypoint and config template, as the ConfigMap ships them.
python3 - "$yaml" "$scratch" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cm = [d for d in docs if d["kind"] == "ConfigMap"][0]
for k in ("entrypoint.sh", "execgated.conf"):
    open(f"{sys.argv[2]}/{k}", "w").write(cm["data"][k])
EOF
echo 5f0c1e2d3c4b5a69788796a5b4c3d2e1 >"$scratch/machine-id"

# Runs inside the namespaces. $1: bind or cgroupns.
cat >"$scratch/inner.sh" <<'EOF'
set -eu
mode=$1
pass=0 fail=0
ok() { echo "  ok   $mode: $*"; pass=$((pass + 1)); }
bad() { echo "  FAIL $mode: $*"; fail=$((fail + 1)); }
expect() { # WHAT GOT WANT
	if [ "$2" = "$3" ]; then ok "$1 = $3"; else bad "$1 = '$2', want '$3'"; fi
}

# Every mount this namespace sees becomes private here, so that nothing
# mounted or unmounted below reaches the host. A mount point written with
# an escape (\040) is not one of ours; its make-private may fail.
awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
	mount --make-private "$m" 2>/dev/null || true
done
# The scratch mounts go in a directory on a mount made private above: the
# scratch dir's own, or /dev/shm when that mount is not visible (a chroot
# on a directory of the host's root).
visible() { # DIR: the mount that holds DIR is in our mountinfo
	m=$(findmnt -n -o TARGET -T "$1" 2>/dev/null) || return 1
	[ -n "$m" ] && awk -v m="$m" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo
}
if visible "$scratch"; then mnt=$scratch/mnt-$mode
elif mountpoint -q /dev/shm; then mnt=/dev/shm/$name-$mode
else bad "no private mount to work on: $scratch is on no visible mount and /dev/shm is not one"
	echo "$pass passed, $fail failed"; exit 1
fi
host=$mnt/host/sys/fs/cgroup
# A pod's namespace holds the pod's mounts alone: another mount of a cgroup
# hierarchy elsewhere on this host (a chroot's, a bind for a container) is
# not in it, and would give the loader a second candidate for the host's
# root. Gone here, in our private copy only.
awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break
	if (($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") && $5 !~ "^/sys/fs/cgroup(/|$)") print $5
}' /proc/self/mountinfo | sort -r | while read -r m; do
	umount -l "$m" 2>/dev/null || true
done

# The pod's view: the host's tree moves under $host, and /sys/fs/cgroup
# becomes the pod's own cgroup.
mkdir -p "$mnt/stash" "$host"
mount --rbind /sys/fs/cgroup "$mnt/stash"
umount -R /sys/fs/cgroup
if [ "$mode" = bind ]; then
	mount --bind "$mnt/stash$rel2/$name/pod" /sys/fs/cgroup
else
	mount -t cgroup2 none /sys/fs/cgroup # the namespace's root: our pod cgroup
fi
mount --rbind "$mnt/stash" "$host"
umount -R "$mnt/stash"
grep -q " /sys/fs/cgroup .* - cgroup2 " /proc/self/mountinfo ||
	{ bad "no pod cgroup2 mount at /sys/fs/cgroup"; echo "$pass passed, $fail failed"; exit 1; }
[ "$(stat -c %i /sys/fs/cgroup)" != 1 ] && ok "the pod's /sys/fs/cgroup is not the hierarchy root" ||
	bad "the pod's /sys/fs/cgroup is the root: the simulation is wrong"

want2=$host$rel2
if [ -n "$relmem" ]; then wantmem=$host$relmem
elif grep -qw memory "$host$rel2/cgroup.controllers"; then wantmem=$want2
else wantmem=None; fi

roots() { # -> "cgroup2|memory|skipped"
	"$execgate" status --json --pin-dir "$pins" --state-dir "$scratch/state" 2>/dev/null |
		python3 -c 'import json, sys
r = json.load(sys.stdin)["cgroup_roots"]
print("%s|%s|%s" % (r["cgroup2"], r["memory"], r["skipped"]))'
}
for how in env mountinfo; do
	if [ $how = env ]; then export EXECGATE_HOST_CGROUP=$host; else unset EXECGATE_HOST_CGROUP; fi
	r=$(roots)
	expect "$how: cgroup v2 root" "${r%%|*}" "$want2"
	r2=${r#*|}
	expect "$how: memory cgroup root" "${r2%%|*}" "$wantmem"
done
# mountinfo alone passes over the pod's mount, and says so.
expect "mountinfo: passed over" "${r##*|}" /sys/fs/cgroup
# Named at the pod's own mount: nothing is taken, rather than the pod's cgroup.
r=$(EXECGATE_HOST_CGROUP=/sys/fs/cgroup roots)
expect "EXECGATE_HOST_CGROUP=/sys/fs/cgroup: cgroup v2 root" "${r%%|*}" None

# The entrypoint renders the host's root into execgated.conf.
conf=$(EXECGATE_HOST_CGROUP=$host EXECGATE_MACHINE_ID_FILE=$scratch/machine-id \
	EXECGATE_CONF_TEMPLATE=$scratch/execgated.conf sh "$scratch/entrypoint.sh" --render-only 2>"$scratch/ep.err") ||
	bad "entrypoint: $(cat "$scratch/ep.err")"
expect "entrypoint: cgroup=" "$(echo "$conf" | sed -n 's/^cgroup=//p')" "$want2"

# A real load from inside the pod: attached at a scratch cgroup of the
# host's tree, tag maps made from the host's memory root.
if out=$("$execgate" load --cgroup "$want2/$name/attach" --pin-dir "$pins" \
	--state-dir "$scratch/state" 2>&1); then
	ok "execgate load --cgroup $want2/$name/attach"
	"$execgate" unload --pin-dir "$pins" --state-dir "$scratch/state" >/dev/null 2>&1 ||
		bad "execgate unload"
else
	bad "execgate load: $out"
fi

# The DaemonSet's probes, on execgated started from the rendered config in
# this pod. Only what must stay off the host's own changes: the cgroup (a
# scratch one, not the root), the pins, the state dir and the socket.
probe() { # PATH -> "CODE BODY"
	curl -s --max-time 5 --unix-socket "$sock" -w ' %{http_code}' "http://localhost$1" || true
}
sock=$scratch/api-$mode.sock
echo "$conf" | sed -e "s|^cgroup=.*|cgroup=$want2/$name/attach|" -e "s|^pin_dir=.*|pin_dir=$pins|" \
	-e "s|^state_dir=.*|state_dir=$scratch/state|" -e "s|^socket=.*|socket=$sock|" >"$scratch/d-$mode.conf"
EXECGATE_HOST_CGROUP=$host "$execgated" --config "$scratch/d-$mode.conf" >"$scratch/d-$mode.log" 2>&1 &
echo $! >"$scratch/daemon-$mode.pid"
for i in $(seq 1 300); do [ -S "$sock" ] && probe /v1/live >/dev/null && break; sleep 0.1; done
live=$(probe /v1/live)
expect "execgated: GET /v1/live" "${live##* }" 200
# Ready exactly when status holds (or holds in audit) a Unix guarantee and
# the VSOCK one: the host has no BPF LSM (503), a VM with lsm=...,bpf has.
want=$("$execgate" status --json --pin-dir "$pins" --state-dir "$scratch/state" 2>/dev/null |
	python3 -c 'import json, sys
g = {x["name"]: x["held"] or x["audit"] for x in json.load(sys.stdin)["guarantees"]}
unix = g.get("unix-bridge-socket-grant") or g.get("unix-path-machine-wide")
print(200 if unix and g.get("vsock-vmm-bridge-only") else 503)')
ready=$(probe /v1/ready)
expect "execgated: GET /v1/ready (endpoint kinds unix,vsock)" "${ready##* }" "$want"
[ "$want" = 200 ] || case $ready in *'"missing":["vsock"]'* | *'"missing":["unix","vsock"]'*)
	ok "execgated: the 503 names the kinds not enforced" ;;
	*) bad "execgated: GET /v1/ready: $ready" ;; esac
"$execgate" unload --pin-dir "$pins" --state-dir "$scratch/state" >/dev/null 2>&1 || bad "execgate unload"
live=$(probe /v1/live)
ready=$(probe /v1/ready)
expect "execgated after execgate unload: GET /v1/live" "${live##* }" 200
expect "execgated after execgate unload: GET /v1/ready" "${ready##* }" 503
kill "$(cat "$scratch/daemon-$mode.pid")" 2>/dev/null || true
wait "$(cat "$scratch/daemon-$mode.pid")" 2>/dev/null || true
rm -f "$scratch/daemon-$mode.pid"
[ "$fail" = 0 ] || cat "$scratch/d-$mode.log"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
EOF

export execgate execgated scratch name pins rel2 relmem
rc=0
# --propagation unchanged: inner.sh makes the mounts it sees private itself.
unshare -m --propagation unchanged sh "$scratch/inner.sh" bind || rc=1
# A cgroup namespace is rooted at the cgroup of the process that makes it.
sh -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C -m --propagation unchanged sh "$2" cgroupns' \
	sh "$cg2/$name/pod" "$scratch/inner.sh" || rc=1
exit $rc
