#!/bin/bash
# make test-setup: the set-up scripts on a machine that has nothing. In a
# fresh Debian 12 root (scripts/fresh-root.sh: debootstrap minbase, cached,
# "/" not a mount point), after `apt-get install make` as a newcomer would,
# runs scripts/setup-deps.sh and scripts/setup-vm-deps.sh (the kernels
# resolved in the archive, not unpacked), then checks that:
#   - every program of scripts/check-tools.txt resolves;
#   - the Python modules the checks import load;
#   - a program including every library header the build uses links with
#     every library the Makefile names;
#   - dpkg-checkbuilddeps accepts deploy/debian/control (make deb).
# It is not a second make check: nothing is built and no test runs.
#
# A pass is remembered for these exact scripts (a stamp in the cache named
# by their hash) for 7 days; EXECGATE_TEST_SETUP_FORCE=1 runs it anyway.
# Root (debootstrap, chroot).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { echo "test-setup: $*" >&2; }
die() {
	log "FAILED: $*"
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"

inputs=(scripts/setup-deps.sh scripts/setup-vm-deps.sh scripts/check-tools.txt
	scripts/test-setup.sh scripts/fresh-root.sh deploy/debian/control)
key=$(cat "${inputs[@]}" | sha256sum | cut -c1-16)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/execgate
stamp=$cache_root/test-setup-$key.ok
if [ "${EXECGATE_TEST_SETUP_FORCE:-}" != 1 ] && [ -f "$stamp" ] &&
	[ -n "$(find "$stamp" -mtime -7 2>/dev/null)" ]; then
	log "passed on $(cat "$stamp") with these same set-up scripts (${inputs[*]});" \
		"not run again (EXECGATE_TEST_SETUP_FORCE=1 runs it)"
	exit 0
fi

start=$(date +%s)
work=$(mktemp -d /tmp/egk-setup.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

# The inside: one script, so that the chroot is entered once.
mkdir -p "$work/in"
cat >"$work/in/inside.sh" <<'EOF'
set -eu
cd /src
fail=0
bad() { echo "test-setup: $*" >&2; fail=1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends make >/dev/null
echo "test-setup: scripts/setup-deps.sh" >&2
scripts/setup-deps.sh
echo "test-setup: scripts/setup-vm-deps.sh (kernels resolved only)" >&2
EXECGATE_VMTEST_RESOLVE_ONLY=1 scripts/setup-vm-deps.sh >/dev/null
n=0
for p in $(grep -v '^#' scripts/check-tools.txt | awk 'NF { print $1 }'); do
	n=$((n + 1))
	command -v "$p" >/dev/null || bad "$p: not installed by the set-up scripts (scripts/check-tools.txt)"
done
echo "test-setup: $n programs of scripts/check-tools.txt checked" >&2
python3 -c 'import yaml, jsonschema' || bad "python3: yaml or jsonschema does not import"
cat >/tmp/link.c <<'C'
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <gelf.h>
#include <jansson.h>
#include <microhttpd.h>
#include <sodium.h>
#include <systemd/sd-daemon.h>
#include <zlib.h>
int main(void) { return 0; }
C
# The libraries the Makefile links (LDLIBS, DAEMON_LDLIBS, FLEET_LDLIBS, tests).
libs=$(sed -n 's/^\(LDLIBS\|DAEMON_LDLIBS\|FLEET_LDLIBS\) :=//p' Makefile | tr ' ' '\n' | grep '^-l' | sort -u | tr '\n' ' ')
# The test programs' Criterion, static (Makefile's CRITERION_LIBS, joined
# across its continuation line).
crit=$(sed -n '/^CRITERION_LIBS :=/,/[^\\]$/p' Makefile | sed 's/^CRITERION_LIBS :=//; s/\\$//' | tr -s ' \t\n' ' ')
# shellcheck disable=SC2086
cc -o /tmp/link /tmp/link.c $libs $crit 2>/tmp/link.err ||
	bad "headers or libraries missing: $(head -c 600 /tmp/link.err)"
clang -fsanitize=address,undefined -o /tmp/link-san /tmp/link.c $libs $crit 2>/tmp/link.err ||
	bad "the sanitizer runtime is missing: $(head -c 600 /tmp/link.err)"
(cd deploy && dpkg-checkbuilddeps debian/control) 2>/tmp/bd.err ||
	bad "make deb: $(cat /tmp/bd.err)"
exit $fail
EOF

log "a fresh Debian 12 root: apt-get install make, then the set-up scripts"
if ! EXECGATE_FRESH_BIND="$root:/src $work/in:/setup" "$root/scripts/fresh-root.sh" enter \
	"$work/root" -- sh /setup/inside.sh 2>&1 </dev/null | sed 's/^/  /' >&2; then
	die "in the fresh root (above)"
fi
mkdir -p "$cache_root"
find "$cache_root" -maxdepth 1 -name 'test-setup-*.ok' -delete
date -u +%Y-%m-%dT%H:%M:%SZ >"$stamp"
log "passed in $(($(date +%s) - start)) s"
