#!/bin/bash
# The root file system of `make test-system`: Debian 12 (minbase) with
# systemd as PID 1, the 6.12 kernel that scripts/setup-vm-deps.sh fetched,
# the run-time libraries execgate's .deb depends on, and the tools the test
# drives it with (curl, python3, iproute2). Built once with debootstrap and
# `mke2fs -d` (no loop mount), cached under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/execgate/system-root-<hash>/
# {root.img,vmlinuz,initrd.img}, where <hash> covers this script and the
# kernel package: a change to either builds a new root. Prints the cache
# directory on stdout; everything else goes to stderr.
#
# The test itself is not in the root: the root's unit (execgate-systest)
# runs /run.sh from a second disk that scripts/system-test.sh makes for
# every run, so changing the test never rebuilds the root.
#
#   system-root.sh KERNEL_DEB
set -euo pipefail

deb=${1:?usage: system-root.sh KERNEL_DEB}
[ -f "$deb" ] || { echo "system-root: $deb: no such kernel package" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "system-root: must run as root (debootstrap, chroot)" >&2; exit 1; }

self=$(readlink -f "$0")
hash=$( (cat "$self"; basename "$deb") | sha256sum | cut -c1-16)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/execgate
out=$cache_root/system-root-$hash
log() { echo "system-root: $*" >&2; }

if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache_root"
exec 9>"$cache_root/.system-root.lock"
flock 9
if [ -f "$out/.complete" ]; then # another run built it while we waited
	echo "$out"
	exit 0
fi

# Run-time dependencies of the execgate packages (deploy/debian/control,
# resolved by dpkg-shlibdeps) and what the test uses. The guest has no
# network: everything dpkg -i needs must be here.
PKGS="systemd-sysv udev dbus kmod initramfs-tools zstd linux-base
libbpf1 libelf1 zlib1g libsodium23 libmicrohttpd12 libjansson4 libsystemd0
curl python3 iproute2 procps sudo"

work=$(mktemp -d "$cache_root/.system-root-build.XXXXXX")
root=$work/root
mounted=()
cleanup() {
	local m
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[$i]}" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

log "debootstrap (minbase, bookworm) into $root"
debootstrap --variant=minbase --include="$(echo $PKGS | tr ' ' ',')" bookworm "$root" \
	http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }

cat >"$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
# Nothing installed below may start a daemon on the host.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

# A 6 MB initrd that mounts the virtio root, built by the kernel's postinst.
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$root/etc/initramfs-tools/modules"
sed -i -e 's/^MODULES=.*/MODULES=list/' -e 's/^#\?COMPRESS=.*/COMPRESS=zstd/' \
	"$root/etc/initramfs-tools/initramfs.conf"

for m in proc sys dev; do
	mount --bind "/$m" "$root/$m"
	mounted+=("$root/$m")
done
log "installing $(basename "$deb")"
cp "$deb" "$root/tmp/"
chroot "$root" dpkg -i "/tmp/$(basename "$deb")" >"$work/kernel.log" 2>&1 ||
	{ tail -n 30 "$work/kernel.log" >&2; log "kernel install failed"; exit 1; }
rm -f "$root/tmp/$(basename "$deb")"
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
	umount "${mounted[$i]}"
done
mounted=()
rm -f "$root/usr/sbin/policy-rc.d"

echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$root/etc/fstab"
echo execgate-systest >"$root/etc/hostname"
# sudo resolves the host name; unresolved, it warns on stderr, and that line
# would be in every output block of the docs that uses sudo.
printf '127.0.0.1\tlocalhost\n127.0.1.1\texecgate-systest\n' >"$root/etc/hosts"
# The console stays quiet: the test's output goes to the second serial port.
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"

# The test unit. Type=simple with Success/FailureAction: a oneshot ordered
# after multi-user.target deadlocks the boot transaction. No time limit of
# its own: EXECGATE_SYSTEM_TIMEOUT, on qemu, is the one limit (a limit here,
# once 1200 s, powered the guest off mid-run when the host was busy and the
# outer limit was larger).
cat >"$root/etc/systemd/system/execgate-systest.service" <<'EOF'
[Unit]
Description=execgate system test (scripts/system-test.sh)
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=simple
ExecStart=/usr/local/sbin/execgate-systest
RuntimeMaxSec=infinity
StandardOutput=file:/dev/ttyS1
StandardError=inherit

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/execgate-systest.service \
	"$root/etc/systemd/system/multi-user.target.wants/execgate-systest.service"
install -d "$root/usr/local/sbin"
cat >"$root/usr/local/sbin/execgate-systest" <<'EOF'
#!/bin/sh
# Mounts the per-run disk and runs its /run.sh; its last line on the second
# serial port is the verdict the host reads.
mkdir -p /systest
mount -o ro /dev/vdb /systest || { echo "SYSTEST rc=125 (no test disk)"; exit 1; }
/bin/bash /systest/run.sh
rc=$?
echo "SYSTEST rc=$rc"
exit $rc
EOF
chmod 0755 "$root/usr/local/sbin/execgate-systest"

ver=$(basename "$root"/lib/modules/*)
[ -f "$root/boot/vmlinuz-$ver" ] && [ -f "$root/boot/initrd.img-$ver" ] ||
	{ log "no vmlinuz/initrd for $ver in the root"; exit 1; }
mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$ver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$ver" "$work/out/initrd.img"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*_Packages
log "mke2fs -d (3G, sparse)"
# stdout is the cache directory alone: mke2fs says "Creating regular file"
# there, -q or not, when the image does not exist yet.
mke2fs -q -t ext4 -L systest-root -d "$root" "$work/out/root.img" 3G >&2
rm -rf "$out"
mv "$work/out" "$out"
touch "$out/.complete"
log "cached in $out"
echo "$out"
