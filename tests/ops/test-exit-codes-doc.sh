#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The exit codes have one source, the table in user/execgate/exit_codes.c,
# printed by `execgate --help-exit-codes`. This checks that the tables of
# README.md, docs/operators.md and execgate(8)'s source are the ones
# scripts/gen-exit-codes-doc.sh writes from it, that every code of the
# table is in `execgate --help` and each command's --help, and that the
# built execgate(8) shows every code.
#
# By hand it checks what make test-ops checks: it runs from the
# repository's top wherever it is started, and first brings the built page
# up to date with make (test-ops has it built already; a plain make or make
# deb builds no build/man/, and a page older than docs/man/execgate.h2m or
# the binary would be checked instead of the one the docs give).
# usage: test-exit-codes-doc.sh BUILD_DIR
set -u
build=${1:?usage: test-exit-codes-doc.sh BUILD_DIR}
build=$(realpath -m -- "$build")
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
pass=0 fails=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
fail() {
	echo "  FAIL $*"
	fails=$((fails + 1))
}

"$build/execgate" --help-exit-codes >"$tmp/codes" || fail "execgate --help-exit-codes: exit $?"
codes=$(cut -f1 "$tmp/codes")
[ "$(echo "$codes" | tr '\n' ' ')" = "$(seq 0 "$(($(wc -l <"$tmp/codes") - 1))" | tr '\n' ' ')" ] &&
	ok || fail "execgate --help-exit-codes: codes are not 0..N in order: $codes"

for doc in README.md docs/operators.md docs/man/execgate.h2m; do
	mkdir -p "$tmp/$(dirname "$doc")"
	cp "$doc" "$tmp/$doc"
	if ! ./scripts/gen-exit-codes-doc.sh "$build" "$tmp/$doc"; then
		fail "$doc: scripts/gen-exit-codes-doc.sh refused it"
	elif diff -u "$doc" "$tmp/$doc" >"$tmp/diff"; then
		ok
	else
		fail "$doc: its exit-code table is not execgate --help-exit-codes (run make exit-codes-doc):"
		cat "$tmp/diff"
	fi
done

# --help: "exit codes: 0 ok/allow, 1 failed, ..." names every code.
for cmd in "" load status keys install events audit-report; do
	"$build/execgate" $cmd --help | sed -n '/^exit codes:/,/^$/p' | tr '\n' ' ' >"$tmp/help"
	for c in $codes; do
		grep -Eq "(: | )$c [a-z]" "$tmp/help" && ok ||
			fail "execgate $cmd --help: no exit code $c in: $(cat "$tmp/help")"
	done
done

# execgate(8), rendered: EXIT STATUS has one paragraph per code. A make
# run under make test-ops would see the parent's jobserver flags.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s BUILD="$build" \
	"$build/man/execgate.8" >"$tmp/make" 2>&1; then
	fail "make $build/man/execgate.8: $(tail -n 5 "$tmp/make")"
fi
LC_ALL=C.UTF-8 MANWIDTH=100 man -E UTF-8 -l "$build/man/execgate.8" 2>/dev/null |
	awk '/^EXIT STATUS$/ { c = 1; next } c && /^[A-Z]/ { exit } c' >"$tmp/man"
for c in $codes; do
	grep -Eq "^ {7}$c( |\$)" "$tmp/man" && ok || fail "execgate(8): EXIT STATUS has no code $c"
done

echo "test-exit-codes-doc: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
