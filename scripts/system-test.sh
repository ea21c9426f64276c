#!/bin/bash
# make test-system: execgate as shipped, under systemd as PID 1. Builds the
# .debs twice (the second with a bumped version, for the upgrade), boots
# Debian 12 with the 6.12 kernel and BPF LSM in a TCG VM, and runs
# tests/system/guest.py in it: install the package, set the worker id,
# `systemctl enable --now execgated`, the worked example on every tier
# through the HTTP API, then restart, kill -9, upgrade and stop with
# intruders trying to connect throughout. Then the docs that run
# (scripts/doc-test.py): every marked block of README.md and
# docs/operators.md, in order, as a reader would type it, on a node made
# fresh again.
#
# The root (scripts/system-root.sh) is cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/execgate/ and booted with snapshot=on, so
# it is never modified (and with cache=unsafe: nothing the guest writes is
# kept, so its fsyncs, dpkg's many, need cost nothing); the test, the .debs
# and guest.py go on a second, read-only disk made for each run. The guest's report comes back on the
# second serial port (BUILD/system-test/results.log), the console on the
# first (console.log).
#
# A test that cannot run fails. EXECGATE_SKIP_SYSTEM_TEST=1 skips it with a
# loud SKIPPED line. EXECGATE_SYSTEM_TIMEOUT: seconds for the VM (3000; alone
# it takes 5 to 10 minutes, the guest 3 to 6 and the docs 2 to 3 more, but
# inside make check it shares two cores with the matrix's guests and the
# host stages, and a cold check ran it past 1200 s: 705 s for the guest's
# checks, 220 s for the README, then the timeout in docs/operators.md).
# EXECGATE_SYSTEM_REUSE_DEBS=1 reuses the .debs of the last run (for work
# on tests/system/ only). EXECGATE_SYSTEM_PARTS: what runs in the VM, "guest
# docs" by default (for work on one of them; a run of one part says so).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
out=$root/$BUILD/system-test
log() { echo "test-system: $*" >&2; }
die() {
	log "FAILED: $*"
	exit 1
}

if [ "${EXECGATE_SKIP_SYSTEM_TEST:-}" = 1 ]; then
	echo "########################################################################"
	echo "SKIPPED: test-system (EXECGATE_SKIP_SYSTEM_TEST=1): the .deb under systemd"
	echo "as PID 1 was NOT tested"
	echo "########################################################################"
	exit 0
fi

start=$(date +%s)
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, the VM's root image)"
# The 6.12 kernel the VM matrix uses: setup-vm-deps.sh names it and records
# the package it came from beside its modules (and installs qemu first).
ver=$("$root/scripts/setup-vm-deps.sh" | awk '$1 == "debian-6.12" { print $2 }')
for t in debootstrap mke2fs qemu-system-x86_64 dpkg-buildpackage lintian; do
	command -v "$t" >/dev/null || die "$t: not installed (scripts/setup-deps.sh, scripts/setup-vm-deps.sh)"
done
[ -n "$ver" ] || die "scripts/setup-vm-deps.sh named no debian-6.12 kernel"
kdeb=$(cat "/lib/modules/$ver/.execgate-vmtest" 2>/dev/null || true)
[ -f "$kdeb" ] || die "kernel $ver: its package ($kdeb) is gone from the cache; rerun with EXECGATE_VMTEST_REFRESH=1"

version=$(sed -n 's/^#define EXECGATE_VERSION[ \t]*"\(.*\)"/\1/p' include/execgate/execgate.h)
t=$(date +%s)
if [ "${EXECGATE_SYSTEM_REUSE_DEBS:-}" = 1 ] && ls "$out"/deb1/execgate_*.deb "$out"/deb2/execgate_*.deb >/dev/null 2>&1; then
	# Only for iterating on tests/system/: the packages of the last run.
	log "REUSING the .debs of the last run (EXECGATE_SYSTEM_REUSE_DEBS=1)"
	rm -rf "$out/payload" "$out"/*.log "$out/payload.img"
else
	rm -rf "$out"
	mkdir -p "$out"
	log "make deb ($version, and $version+systest1 for the upgrade)"
	"$root/scripts/build-deb.sh" "$out/deb1" "$version" >/dev/null || die "make deb $version"
	# The same binaries under a newer version: what dpkg sees as an upgrade.
	"$root/scripts/build-deb.sh" "$out/deb2" "$version+systest1" "$out/deb1" >/dev/null ||
		die "make deb $version+systest1"
fi
debs_s=$(($(date +%s) - t))
mkdir -p "$out/payload/deb1" "$out/payload/deb2"
for n in 1 2; do
	cp "$out"/deb$n/execgate_*.deb "$out"/deb$n/libexecgate1_*.deb "$out/payload/deb$n/"
done

t=$(date +%s)
rootdir=$("$root/scripts/system-root.sh" "$kdeb") || die "building the root file system"
root_s=$(($(date +%s) - t))

parts=${EXECGATE_SYSTEM_PARTS:-guest docs}
for p in $parts; do
	case $p in guest | docs) ;; *) die "EXECGATE_SYSTEM_PARTS: unknown part '$p' (guest, docs)" ;; esac
done
[ "$parts" = "guest docs" ] || log "ONLY THESE PARTS: $parts (EXECGATE_SYSTEM_PARTS)"
python3 scripts/doc-test.py check README.md docs/operators.md >&2 || die "docs: unmarked or malformed blocks"
cp tests/system/guest.py tests/system/actor.py "$out/payload/"
mkdir -p "$out/payload/doc/docs"
cp scripts/doc-test.py README.md "$out/payload/doc/"
cp docs/operators.md "$out/payload/doc/docs/"
# Each part runs whatever the other's verdict; the run fails if either did.
{
	echo '#!/bin/bash'
	echo 'rc=0'
	for p in $parts; do
		case $p in
		guest) echo 'python3 -u /systest/guest.py /systest 2>&1 || rc=1' ;;
		docs)
			echo 'echo "=== docs that run (scripts/doc-test.py) ==="'
			echo 'cd /systest/doc && DOC_TEST_DEBS=/systest/deb1 python3 -u doc-test.py run --vm \'
			echo '	--workdir /root/execgate README.md docs/operators.md 2>&1 || rc=1'
			;;
		esac
	done
	echo 'exit $rc'
} >"$out/payload/run.sh"
mke2fs -q -t ext4 -L systest -d "$out/payload" "$out/payload.img" 64M >/dev/null

log "booting Debian 12 (systemd, $ver, lsm=...,bpf) under TCG"
t=$(date +%s)
: >"$out/console.log"
: >"$out/results.log"
rc=0
timeout "${EXECGATE_SYSTEM_TIMEOUT:-3000}" qemu-system-x86_64 -accel tcg -machine q35 -cpu max \
	-smp 2 -m 2G -nographic -monitor none -no-reboot \
	-kernel "$rootdir/vmlinuz" -initrd "$rootdir/initrd.img" \
	-drive "file=$rootdir/root.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
	-drive "file=$out/payload.img,format=raw,if=virtio,readonly=on" \
	-append "root=/dev/vda rw console=ttyS0 lsm=lockdown,capability,landlock,bpf panic=-1 no_timer_check" \
	-serial "file:$out/console.log" -serial "file:$out/results.log" </dev/null || rc=$?
vm_s=$(($(date +%s) - t))

cat "$out/results.log"
# A serial port ends lines with CR LF.
verdict=$(tr -d '\r' <"$out/results.log" | grep -a '^SYSTEST rc=' | tail -n1 || true)
total=$(($(date +%s) - start))
log "time: ${total} s in all: debs ${debs_s} s, root ${root_s} s (cached in $rootdir), VM ${vm_s} s"
if [ "$rc" -eq 124 ]; then
	tail -n 40 "$out/console.log" >&2
	die "the VM did not power off within ${EXECGATE_SYSTEM_TIMEOUT:-3000} s"
fi
if [ "$verdict" != "SYSTEST rc=0" ]; then
	tail -n 40 "$out/console.log" >&2
	die "${verdict:-no verdict from the guest} (qemu exit $rc; console: $out/console.log)"
fi
log "passed"
