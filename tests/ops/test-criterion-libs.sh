#!/bin/sh
# What the test programs link besides Criterion's archive (the Makefile's
# CRITERION_LIBS), each checked with a small program of its own:
# - tests/criterion_git.c, in place of libgit2: a failed string assertion
#   still fails and prints its diff, the one thing Criterion uses libgit2
#   for;
# - tests/criterion_timeout.c: EXECGATE_TEST_TIMEOUT_SCALE scales a suite's
#   and a case's own timeout (a case of 2 s that sleeps 3 s times out as
#   written and passes at scale 3), and a value outside 1..20 ends the run
#   with exit 2 and names the variable.
#   test-criterion-libs.sh CC LINK_ARGS...   (from the tree's top)
set -eu
cc=$1
shift
dir=$(mktemp -d /tmp/egt-crit-libs.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() {
	echo "test-criterion-libs: $*" >&2
	exit 1
}
# Run a Criterion program whose cases time out on purpose, with its
# status in $rc. Criterion 2.4.1 (Debian 12's) can deadlock its runner when
# a case times out on a loaded machine (its death callback waits for the
# runner, which waits for the callback; fixed upstream in 2.4.2): seen in
# a make check, hung for good. A run still going after 60 s is that hang,
# not a verdict: killed, named, and run once more.
crit() {
	for try in 1 2; do
		rc=0
		timeout -k 5 60 "$@" >"$dir/out" 2>&1 || rc=$?
		[ "$rc" = 124 ] || [ "$rc" = 137 ] || return 0
		echo "test-criterion-libs: $* hung in Criterion's runner (try $try), killed" >&2
	done
	fail "$*: hung twice: $(cat "$dir/out")"
}

cat >"$dir/diff.c" <<'C'
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
Test(diff, shown) { cr_assert(eq(str, "line one\nline two", "line one\nline 2")); }
C
"$cc" -o "$dir/diff" "$dir/diff.c" "$@" || fail "does not link with: $*"
if "$dir/diff" >"$dir/out" 2>&1; then
	fail "a failed assertion passed"
fi
grep -qF -- '-"line two"' "$dir/out" && grep -qF -- '+"line 2"' "$dir/out" ||
	fail "no diff under the failed assertion: $(cat "$dir/out")"
echo "test-criterion-libs: the static Criterion prints the diff"

cat >"$dir/timeout.c" <<'C'
#include <criterion/criterion.h>
#include <unistd.h>
TestSuite(scaled, .timeout = 2);
Test(scaled, by_its_suite) { usleep(3000000); }
Test(scaled, by_its_own, .timeout = 2) { usleep(3000000); }
C
"$cc" -o "$dir/timeout" "$dir/timeout.c" "$@" || fail "does not link with: $*"
crit env -u EXECGATE_TEST_TIMEOUT_SCALE "$dir/timeout"
[ "$rc" != 0 ] || fail "cases of 3 s passed a timeout of 2 s: $(cat "$dir/out")"
grep -q 'Failing: 2 ' "$dir/out" || fail "unscaled: want 2 timeouts: $(cat "$dir/out")"
crit env EXECGATE_TEST_TIMEOUT_SCALE=3 "$dir/timeout"
[ "$rc" = 0 ] || fail "scale 3: the cases still timed out: $(cat "$dir/out")"
crit env EXECGATE_TEST_TIMEOUT_SCALE=0.5 "$dir/timeout"
[ "$rc" = 2 ] && grep -q 'EXECGATE_TEST_TIMEOUT_SCALE=0.5: not a number from 1 to 20' "$dir/out" ||
	fail "scale 0.5: want exit 2 and the reason, got $rc: $(cat "$dir/out")"
echo "test-criterion-libs: EXECGATE_TEST_TIMEOUT_SCALE scales suites' and cases' timeouts"
