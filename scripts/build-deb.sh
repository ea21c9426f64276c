#!/bin/bash
# `make deb`: builds execgate's .debs from the working tree with debhelper
# (dpkg-buildpackage -b -us -uc), then runs lintian on them.
#
#   build-deb.sh OUT_DIR VERSION [FROM_DIR]
#
# With FROM_DIR (the OUT_DIR of an earlier run), its built tree is reused:
# only the changelog changes and dpkg-buildpackage -nc repackages the same
# binaries under VERSION (make test-system's upgrade package).
#
# The tree's files (tracked and untracked, not ignored: what `git ls-files`
# lists, as they are in the working tree) are copied to OUT_DIR/src/
# execgate-VERSION/, with deploy/debian/ as debian/ and a changelog for
# VERSION. The packages (.deb, .buildinfo, .changes) and lintian's report
# (lintian.txt) end up in OUT_DIR. Any lintian error or warning fails the
# build; each override in deploy/debian/*.lintian-overrides says why.
set -euo pipefail

out=${1:?usage: build-deb.sh OUT_DIR VERSION [FROM_DIR]}
version=${2:?usage: build-deb.sh OUT_DIR VERSION [FROM_DIR]}
from=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "build-deb: $*" >&2; }

case $version in
[0-9]*) ;;
*) log "version $version: must start with a digit (Debian policy 5.6.12)"; exit 2 ;;
esac
for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null || { log "$t: not installed (scripts/setup-deps.sh installs it)"; exit 1; }
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src/execgate-$version
rm -rf "$out/src"
mkdir -p "$src"

cd "$root"
nc=()
if [ -n "$from" ]; then
	prev=$(ls -d "$from"/src/execgate-*/ 2>/dev/null | head -n1)
	[ -d "$prev/build" ] || { log "$from: no built tree to reuse"; exit 1; }
	rmdir "$src"
	cp -a "${prev%/}" "$src"
	rm -rf "$src/debian"
	nc=(-nc)
	stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Deleted-but-tracked files are listed too; copy only what exists.
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -C "$src" -xf -
	stamp=$(git log -1 --format=%ct)
else
	tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
	stamp=$(date +%s)
fi
cp -r "$src/deploy/debian" "$src/debian"
# dh_installsysusers reads debian/<package>.sysusers.
cp "$src/deploy/sysusers.d/execgate.conf" "$src/debian/execgate.sysusers"
{
	echo "execgate ($version) unstable; urgency=medium"
	echo
	echo "  * Built from the execgate tree by make deb."
	echo
	echo " -- $(sed -n 's/^Maintainer: //p' "$src/debian/control")  $(date -R -u -d "@$stamp")"
} >"$src/debian/changelog"

log "dpkg-buildpackage -b -us -uc ${nc[*]} in $src"
(cd "$src" && dpkg-buildpackage -b -us -uc "${nc[@]}") >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; log "dpkg-buildpackage failed (log: $out/build.log)"; exit 1; }

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
changes=$out/src/execgate_${version}_${arch}.changes
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$changes" "$out/"
changes=$out/$(basename "$changes")

log "lintian"
if ! lintian --fail-on error,warning --info --display-info "$changes" >"$out/lintian.txt" 2>&1; then
	cat "$out/lintian.txt" >&2
	log "lintian: errors or warnings (above); fix them or add a justified override"
	exit 1
fi
grep -E '^[EWI]:' "$out/lintian.txt" >&2 || true

# The paths the man pages, README.md and docs/api.md name must be in the
# package under those very names: dh_compress once made api.md api.md.gz
# behind execgate(8)'s back (deploy/debian/rules, override_dh_compress).
contents=$(dpkg-deb -c "$out/execgate_${version}_${arch}.deb" | awk '{ print $NF }')
for f in /usr/share/doc/execgate/api.md /usr/share/doc/execgate/execgated.conf.example; do
	grep -qx ".$f" <<<"$contents" || { log "execgate package: no $f, which the docs name"; exit 1; }
done
ls "$out"/*.deb
