#!/bin/sh
# Installs what `make vmtest` needs on a Debian 12 host: virtme-ng (from trixie,
# pinned so nothing else comes from there), qemu, udev, kmod, busybox-static,
# and the Debian 6.1 and 6.12+deb12 kernels of the VM matrix, unpacked where
# vng finds them (/lib/modules/<version>/vmlinuz beside the modules).
#
# Idempotent: with everything in place a run costs one dpkg query and a few
# stat calls. EXECGATE_VMTEST_RESOLVE_ONLY=1 (make test-setup) stops after
# resolving the kernel packages in the archive. Prints one line per kernel on stdout: "<label> <version>", which
# scripts/vmtest.sh reads; everything else goes to stderr.
#
# Never `apt-get -t trixie`: that drags libc6 and dozens of core packages from
# trixie. The pin (priority 100) keeps trixie and bookworm-backports below the
# installed bookworm packages; only an explicit pkg/trixie request wins.
set -eu

SOURCES=/etc/apt/sources.list.d/execgate-vmtest.sources
PREFS=/etc/apt/preferences.d/execgate-vmtest
CACHE=${EXECGATE_VMTEST_CACHE:-/var/cache/execgate-vmtest}
PKGS="virtme-ng udev qemu-system-x86 kmod busybox-static"

log() { echo "setup-vm-deps: $*" >&2; }
die() {
	log "$*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (installs packages, writes /lib/modules)"

# One run at a time: make check's two VM lanes (vmtest, test-system) each
# start with it, side by side, and on a fresh machine the second would find
# apt's lock taken or a kernel half unpacked. The second waits for the first,
# then finds everything in place.
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 || die "cannot lock $CACHE/.lock"

installed() {
	dpkg-query -W -f='${db:Status-Abbrev}\n' "$@" 2>/dev/null | grep -c '^ii' || true
}

updated=0
apt_update() {
	[ "$updated" -eq 1 ] && return 0
	log "apt-get update"
	apt-get update -q >/dev/null
	updated=1
}

# --- apt sources and pin -------------------------------------------------------
ensure_sources() {
	changed=0
	if ! grep -rqs 'bookworm-security' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		# The newest 6.1 and 6.12+deb12 images are only in bookworm-security.
		log "adding bookworm-security to $SOURCES"
		changed=1
	fi
	want=$(
		cat <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	)
	if [ "$changed" -eq 1 ]; then
		want=$(printf '%s\n\n%s\n' "$want" "$(
			cat <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		)")
	fi
	if [ ! -f "$SOURCES" ] || [ "$(cat "$SOURCES")" != "$want" ]; then
		printf '%s\n' "$want" >"$SOURCES.tmp"
		mv "$SOURCES.tmp" "$SOURCES"
		changed=1
	fi
	prefs=$(
		cat <<'EOF'
Package: *
Pin: release n=trixie
Pin-Priority: 100

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100
EOF
	)
	if [ ! -f "$PREFS" ] || [ "$(cat "$PREFS")" != "$prefs" ]; then
		printf '%s\n' "$prefs" >"$PREFS.tmp"
		mv "$PREFS.tmp" "$PREFS"
		changed=1
	fi
	if [ "$changed" -eq 1 ]; then
		apt_update
	fi
}

# --- packages --------------------------------------------------------------------
ensure_packages() {
	n=$(echo $PKGS | wc -w)
	# shellcheck disable=SC2086
	[ "$(installed $PKGS)" -eq "$n" ] && return 0
	apt_update
	before=$(dpkg-query -W -f='${Version}\n' libc6 python3 2>/dev/null | tr '\n' ' ')
	log "installing $PKGS (virtme-ng from trixie)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		virtme-ng/trixie udev qemu-system-x86 kmod busybox-static >/dev/null
	after=$(dpkg-query -W -f='${Version}\n' libc6 python3 2>/dev/null | tr '\n' ' ')
	[ "$before" = "$after" ] || die "libc6/python3 changed ($before -> $after): check the trixie pin"
}

# --- kernels ---------------------------------------------------------------------
# Names are resolved from the archive, never hard-coded: ABI numbers move with
# every security update.
resolve_61() {
	dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-6\.1\.[0-9.-]*-amd64\)$/\1/p' | head -n1)
	# linux-image-amd64 depends on the signed image; the -unsigned one has the
	# same version and contents without the signature wrapper.
	[ -n "$dep" ] && echo "${dep%-amd64}-amd64-unsigned"
}

resolve_612() {
	apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
		sort -V | tail -n1
}

# kernel_version PKG: the uname -r of the image in PKG (the package name minus
# "linux-image-" and "-unsigned").
kernel_version() {
	v=${1#linux-image-}
	echo "${v%-unsigned}"
}

ensure_kernel() {
	label=$1 pkg=$2
	ver=$(kernel_version "$pkg")
	dir=/lib/modules/$ver
	if [ -f "$dir/vmlinuz" ] && [ -f "$dir/modules.dep" ] && [ -f "$dir/.execgate-vmtest" ]; then
		echo "$label $ver"
		return 0
	fi
	mkdir -p "$CACHE"
	chown _apt "$CACHE" 2>/dev/null || true
	deb=$(ls "$CACHE"/"${pkg}"_*.deb 2>/dev/null | sort -V | tail -n1 || true)
	if [ -z "$deb" ]; then
		apt_update
		log "downloading $pkg"
		(cd "$CACHE" && apt-get download -q "$pkg" >/dev/null) || die "$pkg: apt-get download failed"
		deb=$(ls "$CACHE"/"${pkg}"_*.deb | sort -V | tail -n1)
	fi
	log "unpacking $deb into $dir"
	tmp=$(mktemp -d "$CACHE/unpack.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	[ -d "$tmp/lib/modules/$ver" ] || die "$deb: no lib/modules/$ver inside"
	[ -f "$tmp/boot/vmlinuz-$ver" ] || die "$deb: no boot/vmlinuz-$ver inside"
	rm -rf "$dir"
	mkdir -p /lib/modules
	mv "$tmp/lib/modules/$ver" "$dir"
	mv "$tmp/boot/vmlinuz-$ver" "$dir/vmlinuz"
	cp "$tmp/boot/config-$ver" "$dir/config" 2>/dev/null || true
	rm -rf "$tmp"
	depmod "$ver"
	echo "$deb" >"$dir/.execgate-vmtest"
	echo "$label $ver"
}

ensure_sources
ensure_packages

# Fast path for the kernels: already unpacked ones are found without apt.
found=""
for dir in /lib/modules/*; do
	[ -f "$dir/.execgate-vmtest" ] || continue
	found="$found ${dir##*/}"
done
pick() { # newest installed version matching a pattern
	for v in $found; do echo "$v"; done | grep -E "$1" | sort -V | tail -n1
}
v61=$(pick '^6\.1\.[0-9]+-[0-9]+-amd64$' || true)
v612=$(pick '^6\.12\.[0-9]+\+deb12-amd64$' || true)

if [ -n "${EXECGATE_VMTEST_REFRESH:-}" ] || [ -z "$v61" ] || [ -z "$v612" ]; then
	[ -n "${EXECGATE_VMTEST_REFRESH:-}" ] && apt_update
	p61=$(resolve_61)
	if [ -z "$p61" ]; then
		apt_update
		p61=$(resolve_61)
	fi
	p612=$(resolve_612)
	if [ -z "$p612" ]; then
		apt_update
		p612=$(resolve_612)
	fi
	[ -n "$p61" ] || die "cannot resolve the Debian 6.1 image from linux-image-amd64"
	[ -n "$p612" ] || die "no linux-image-6.12.*+deb12-amd64-unsigned in the archive"
	if [ "${EXECGATE_VMTEST_RESOLVE_ONLY:-}" = 1 ]; then
		# make test-setup: the names resolve and the archive has both
		# images; nothing is downloaded or unpacked.
		for p in "$p61" "$p612"; do
			apt-cache show "$p" >/dev/null 2>&1 || die "$p: not in the archive"
			echo "resolved $p"
		done
		exit 0
	fi
	ensure_kernel debian-6.1 "$p61"
	ensure_kernel debian-6.12 "$p612"
else
	echo "debian-6.1 $v61"
	echo "debian-6.12 $v612"
fi
