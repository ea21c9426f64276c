#!/bin/sh
# Runs inside a virtme-ng guest booted by scripts/vmtest.sh (or bench/demo):
# prepares the kernel facilities the tests need, then runs CMD with the
# environment that tells tests what the booted kernel must offer.
#
#   vm-guest.sh --results DIR [--tier lsm|full] [--name NAME] -- CMD [ARGS...]
#
# DIR is the --rwdir shared with the host: CMD's exit status goes to
# DIR/NAME.rc and facts about the guest kernel to DIR/NAME.env (NAME defaults
# to "run"). The guest sees the host's filesystem copy-on-write; only DIR
# reaches the host.
set -u

results="" tier="" name=run
while [ $# -gt 0 ]; do
	case $1 in
	--results) results=$2; shift 2 ;;
	--tier) tier=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "vm-guest: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$results" ] && [ $# -gt 0 ] || { echo "usage: vm-guest.sh --results DIR [--tier T] [--name N] -- CMD..." >&2; exit 2; }

fail() {
	echo "vm-guest: $*" >&2
	echo 125 >"$results/$name.rc"
	exit 125
}

# Both matrix kernels are modular: AF_VSOCK and its loopback transport (local
# connections to CID 1) are modules. 9p is already loaded: it is the root.
for m in vsock vsock_loopback; do
	modprobe "$m" || fail "modprobe $m failed"
done
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || fail "cannot mount bpffs"
mountpoint -q /sys/kernel/security || mount -t securityfs securityfs /sys/kernel/security ||
	fail "cannot mount securityfs"
# bench reads bpf_prog_info.run_time_ns / run_cnt.
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null 2>&1 || true

{
	echo "uname=$(uname -r)"
	echo "lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)"
	echo "cgroup2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)"
	echo "tier=$tier"
} >"$results/$name.env"

export EXECGATE_VM=1
[ -n "$tier" ] && export EXECGATE_EXPECT_TIER="$tier"

"$@"
rc=$?
echo "$rc" >"$results/$name.rc"
exit "$rc"
