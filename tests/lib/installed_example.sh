#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds docs/examples/check_token.c against the INSTALLED library (make
# install DESTDIR=..., then pkg-config on the staged execgate.pc), runs it
# on a scratch pin dir and cgroup, and checks every verdict it prints.
# Usage: installed_example.sh BUILD_DIR STAGE_DIR (root; host kernel).
set -euo pipefail
build=$(cd "$1" && pwd)
stage=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
EXECGATE=$build/execgate
ISSUE=$build/execgate-issue
fail() { echo "installed-example: FAIL: $*" >&2; exit 1; }

cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$cg2" ] || fail "no cgroup2 mount in /proc/self/mountinfo"
TMP=$(mktemp -d /tmp/eglib.XXXXXX)
CG=$cg2/eglib-$$
PIN=/sys/fs/bpf/eglib-$$
EG=(--pin-dir "$PIN" --state-dir "$TMP/state")
cleanup() {
	set +e
	[ -e "$PIN" ] && "$EXECGATE" unload "${EG[@]}" >/dev/null 2>&1
	rm -rf "$PIN"
	rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir "$CG"

# 1. The staged tree is what an integrator gets.
pcdir=$(dirname "$(find "$stage" -name execgate.pc | head -1)")
[ -f "$pcdir/execgate.pc" ] || fail "execgate.pc not installed under $stage"
for f in execgate.h verdict.h types.h sizes.h connect.h admin.h text.h; do
	[ -n "$(find "$stage" -path "*/include/execgate/$f")" ] || fail "header execgate/$f not installed"
done
# The maps' layout is internal: installed, it would be the ABI again.
for f in abi.h revoke_abi.h revoke_tcp_abi.h task_start_abi.h; do
	[ -z "$(find "$stage" -path "*/include/execgate/$f")" ] || fail "internal header execgate/$f installed"
done
incdir=$(dirname "$(find "$stage" -path '*/include/execgate/execgate.h')")
if grep -E '#include .*(abi\.h|abi/|linux/)' "$incdir"/*.h; then
	fail "an installed header includes a kernel header or the kernel layout"
fi
# Each installed header compiles on its own, from the staged tree alone.
for h in "$incdir"/*.h; do
	printf '#include <execgate/%s>\n' "$(basename "$h")" |
		cc -Wall -Wextra -Werror -fsyntax-only -I"$(dirname "$incdir")" -x c - ||
		fail "installed header execgate/$(basename "$h") does not compile on its own"
done
# PKG_CONFIG_PATH adds the stage to the default search, which still finds
# the libbpf and libsodium this .pc requires.
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs execgate) || fail "pkg-config execgate"
# shellcheck disable=SC2086
cc -Wall -Wextra -Werror -o "$TMP/check_token" "$root/docs/examples/check_token.c" $flags
readelf -d "$TMP/check_token" | grep -q 'NEEDED.*\[libexecgate\.so\.1\]' ||
	fail "the example does not link libexecgate.so.1"
# The .so sits beside the pkgconfig directory that holds execgate.pc.
export LD_LIBRARY_PATH=${pcdir%/pkgconfig}

# 2. A worker with a sandbox installed for generation 8.
"$EXECGATE" load --cgroup "$CG" "${EG[@]}" >/dev/null
"$ISSUE" keygen --out "$TMP/cp" >"$TMP/kid"
KID=$(cat "$TMP/kid")
"$EXECGATE" keys add "${EG[@]}" "$TMP/cp/$KID.pub" >/dev/null
S=5f0c1e2a-0000-4000-8000-00000000000a
B=9a1e0000-0000-4000-8000-00000000000b
"$EXECGATE" install "${EG[@]}" --sandbox $S --worker $B --generation 8 --activation 1 \
	--bridge-pid $$ --bridge-socket "$TMP/bridge.sock" >/dev/null
cap() { "$ISSUE" cap --key "$TMP/cp/$KID.seed" --sandbox $S --worker $B --activation 1 \
	--scope file.read --ttl 120 "$@"; }

# 3. The example's verdicts, from real calls through the installed .so.
run() { "$TMP/check_token" "$PIN" "$TMP/state" "$1" || true; }
got=$(run "$(cap --generation 8)")
want="libexecgate $("$EXECGATE" --version | awk '{print $NF}')
check allow ok cache_hit=0 granted=0
check allow ok cache_hit=1 granted=0
admit allow ok cache_hit=1 granted=1"
[ "$got" = "$want" ] || fail "generation 8: got
$got
want
$want"
got=$(run "$(cap --generation 7)" | sed -n 2p)
[ "$got" = "check refresh-route generation-retired cache_hit=0 granted=0" ] ||
	fail "generation 7: got '$got'"
got=$(run "not-a-token" | sed -n 2p)
[ "$got" = "check deny malformed cache_hit=0 granted=0" ] || fail "garbage: got '$got'"
echo "installed-example: pass (pkg-config: $flags)"
