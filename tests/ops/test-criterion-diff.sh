#!/bin/sh
# The test programs' Criterion, linked statically with tests/criterion_git.c
# in place of libgit2 (Makefile, CRITERION_LIBS), still prints the diff
# under a failed string assertion: the one thing Criterion uses libgit2
# for. A program with one such failure must fail and show both lines.
#   test-criterion-diff.sh CC LINK_ARGS...   (from the tree's top)
set -eu
cc=$1
shift
dir=$(mktemp -d /tmp/egt-crit-diff.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() {
	echo "test-criterion-diff: $*" >&2
	exit 1
}
cat >"$dir/t.c" <<'C'
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
Test(diff, shown) { cr_assert(eq(str, "line one\nline two", "line one\nline 2")); }
C
"$cc" -o "$dir/t" "$dir/t.c" "$@" || fail "does not link with: $*"
if "$dir/t" >"$dir/out" 2>&1; then
	fail "a failed assertion passed"
fi
grep -qF -- '-"line two"' "$dir/out" && grep -qF -- '+"line 2"' "$dir/out" ||
	fail "no diff under the failed assertion: $(cat "$dir/out")"
echo "test-criterion-diff: the static Criterion prints the diff"
