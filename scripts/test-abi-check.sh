#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make abi-check` must fail when libexecgate's ABI changes and pass when
# it does not. Run by `make test-abi` (scripts/make/abi.mk), which passes
# the build's variables in the environment: BUILD CC CFLAGS CPPFLAGS
# LDLIBS SOMAJOR SOLIB LIB_OBJS (the objects libexecgate.so is linked from).
#
# Three libraries, each checked by the real target (make abi-check
# ABI_SOLIB=...) against the checked-in abi/libexecgate.abi:
#  1. the library as built: must pass;
#  2. the same objects and one more exported call: must fail, naming it;
#  3. user/lib/worker.c compiled against a copy of the public headers in
#     which struct eg_worker_stats grew a member: must fail, naming it.
set -eu

: "${BUILD:?}" "${CC:?}" "${SOLIB:?}" "${LIB_OBJS:?}" "${SOMAJOR:?}"
MAKE=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "test-abi: FAIL: $*" >&2
	[ -f "$tmp/out" ] && sed 's/^/  | /' "$tmp/out" >&2
	exit 1
}

link() {
	out=$1
	shift
	# shellcheck disable=SC2086 # word lists on purpose
	$CC -shared -Wl,-soname,"libexecgate.so.$SOMAJOR" \
		-Wl,--version-script=user/lib/libexecgate.map -Wl,--no-undefined \
		$CFLAGS -o "$out" "$@" $LDLIBS
}

abi_check() {
	$MAKE -s --no-print-directory abi-check ABI_SOLIB="$1" >"$tmp/out" 2>&1
}

# 1. no change
abi_check "$SOLIB" || fail "abi-check refused the library as built ($SOLIB)"
echo "test-abi: ok: the library as built passes"

# 2. one exported call more (eg_worker_* is exported by the version script)
cat >"$tmp/extra.c" <<'C'
int eg_worker_abi_test_extra(void);
int eg_worker_abi_test_extra(void)
{
	return 0;
}
C
# shellcheck disable=SC2086
$CC $CPPFLAGS $CFLAGS -fPIC -c "$tmp/extra.c" -o "$tmp/extra.o"
# shellcheck disable=SC2086
link "$tmp/added.so" $LIB_OBJS "$tmp/extra.o"
if abi_check "$tmp/added.so"; then
	fail "abi-check passed a library with an added exported call"
fi
grep -q 'eg_worker_abi_test_extra' "$tmp/out" ||
	fail "abi-check failed, but not naming the added call"
echo "test-abi: ok: an added call fails abi-check"

# 3. a public struct that grew
mkdir -p "$tmp/include/execgate"
cp include/execgate/*.h "$tmp/include/execgate/"
sed -i 's/^\tsize_t keys;$/\tsize_t keys;\n\tuint64_t abi_test_added;/' \
	"$tmp/include/execgate/execgate.h"
grep -q 'abi_test_added' "$tmp/include/execgate/execgate.h" ||
	fail "could not grow struct eg_worker_stats in the header copy"
# shellcheck disable=SC2086
$CC -I"$tmp/include" $CPPFLAGS $CFLAGS -fPIC -c user/lib/worker.c -o "$tmp/worker.o"
objs=
for o in $LIB_OBJS; do
	[ "$o" = "$BUILD/obj/lib/worker.o" ] && o=$tmp/worker.o
	objs="$objs $o"
done
case $objs in *"$tmp/worker.o"*) ;; *) fail "no $BUILD/obj/lib/worker.o in LIB_OBJS" ;; esac
# shellcheck disable=SC2086
link "$tmp/grown.so" $objs
if abi_check "$tmp/grown.so"; then
	fail "abi-check passed a library whose struct eg_worker_stats grew"
fi
grep -q 'eg_worker_stats' "$tmp/out" ||
	fail "abi-check failed, but not naming struct eg_worker_stats"
echo "test-abi: ok: a grown public struct fails abi-check"
