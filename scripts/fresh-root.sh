#!/bin/bash
# A fresh Debian 12 root, as a newcomer's machine starts: debootstrap
# --variant=minbase of bookworm with the three suites a Debian 12 install
# lists (main, updates, security), nothing else. Built once and cached
# under ${XDG_CACHE_HOME:-$HOME/.cache}/execgate/fresh-root-<hash>/, where
# <hash> covers this script; every use works on a copy-on-write overlay of
# it, so the cache never changes.
#
#   fresh-root.sh path                 build the cache if needed; print its dir
#   fresh-root.sh enter DIR -- CMD...  mount an overlay of the root under DIR
#                                      with /proc, /sys (bpffs and cgroups
#                                      with it) and /dev bound in, run CMD in a
#                                      chroot there, and take it all down
#                                      again. "/" is not a mount point inside.
#                                      EXECGATE_FRESH_BIND="SRC:DST ..." binds
#                                      more in (DST inside the root).
#
# The package archive's downloads are kept in the cache's apt-archives/ and
# bound over the root's /var/cache/apt/archives, so that a second run
# downloads nothing. Root only (debootstrap, mount, chroot).
set -euo pipefail

self=$(readlink -f "$0")
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/execgate
hash=$(sha256sum <"$self" | cut -c1-16)
base=$cache_root/fresh-root-$hash
log() { echo "fresh-root: $*" >&2; }
die() {
	log "$*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount, chroot)"

build() {
	[ -f "$base/.complete" ] && return 0
	command -v debootstrap >/dev/null || die "debootstrap: not installed (scripts/setup-deps.sh)"
	mkdir -p "$cache_root"
	exec 8>"$cache_root/.fresh-root.lock"
	flock 8
	[ -f "$base/.complete" ] && return 0
	local work
	work=$(mktemp -d "$cache_root/.fresh-root-build.XXXXXX")
	log "debootstrap --variant=minbase bookworm (once; cached in $base)"
	if ! debootstrap --variant=minbase bookworm "$work/root" http://deb.debian.org/debian \
		>"$work/debootstrap.log" 2>&1; then
		tail -n 30 "$work/debootstrap.log" >&2
		rm -rf "$work"
		die "debootstrap failed"
	fi
	cat >"$work/root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
	rm -rf "$work/root/var/cache/apt/archives/"*.deb
	# Roots of older versions of this script: superseded.
	find "$cache_root" -maxdepth 1 -name 'fresh-root-*' ! -name "fresh-root-$hash" \
		-exec rm -rf {} + 2>/dev/null || true
	rm -rf "$base"
	# One level down: the chroot's "/" is then a directory of the overlay
	# mount, not the mount itself, as on a machine whose root is not a
	# mount point (the case the issue that made this script names).
	mkdir -p "$base/lower"
	mv "$work/root" "$base/lower/root"
	mkdir -p "$base/apt-archives/partial"
	rm -rf "$work"
	touch "$base/.complete"
}

if [ "${1:-}" = path ]; then
	build
	echo "$base"
	exit 0
fi

[ "${1:-}" = enter ] && [ $# -ge 4 ] && [ "$3" = -- ] || {
	echo "usage: fresh-root.sh path | fresh-root.sh enter DIR -- CMD..." >&2
	exit 2
}
dir=$2
shift 3
build
mkdir -p "$dir"
dir=$(readlink -f "$dir")
mkdir -p "$dir/upper" "$dir/work" "$dir/ovl"

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R -l "${mounted[$i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT INT TERM
mnt() { # ARGS... TARGET
	mount "$@"
	mounted+=("${!#}")
}

mnt -t overlay overlay -o "lowerdir=$base/lower,upperdir=$dir/upper,workdir=$dir/work" "$dir/ovl"
r=$dir/ovl/root
mnt --rbind /proc "$r/proc"
mnt --rbind /sys "$r/sys"
mnt --rbind /dev "$r/dev"
# bpffs sits under /sys and came with it; a private /tmp as on a real machine.
mnt -t tmpfs tmpfs "$r/tmp"
mnt --bind "$base/apt-archives" "$r/var/cache/apt/archives"
cp /etc/resolv.conf "$r/etc/resolv.conf"
for b in ${EXECGATE_FRESH_BIND:-}; do
	src=${b%%:*} dst=${b#*:}
	mkdir -p "$r$dst"
	mnt --bind "$src" "$r$dst"
done
rc=0
chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	TERM="${TERM:-dumb}" LANG=C.UTF-8 "$@" || rc=$?
exit "$rc"
