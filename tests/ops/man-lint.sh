#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Lints generated man pages: groff -man -ww and man -l --warnings must print
# nothing, the page must carry its sections and the project's version.
# usage: man-lint.sh VERSION PAGE...
set -u
version=${1:?usage: man-lint.sh VERSION PAGE...}
shift
[ $# -gt 0 ] || {
	echo "man-lint: no pages given" >&2
	exit 1
}
fails=0
fail() {
	echo "  FAIL $*"
	fails=$((fails + 1))
}
for page in "$@"; do
	name=$(basename "$page")
	before=$fails
	if [ ! -s "$page" ]; then
		fail "$name: missing or empty"
		continue
	fi
	out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$out" ] || fail "$name: groff -man -Tutf8 -ww: $out"
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
	[ -z "$out" ] || fail "$name: man -l --warnings: $out"
	# .TH NAME SECTION DATE SOURCE: the source names this version.
	grep -q "^\.TH .*\"[a-z-]* $version\"" "$page" || fail "$name: .TH does not name version $version"
	for s in NAME DESCRIPTION "EXIT STATUS" FILES "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$page" || fail "$name: no $s section"
	done
	text=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null)
	[ -n "$text" ] || fail "$name: man -l renders nothing"
	[ "$fails" -ne "$before" ] || echo "  ok   $name: groff and man -l without warnings; NAME, DESCRIPTION, EXIT STATUS, FILES, SEE ALSO; version $version"
done
if [ "$fails" -ne 0 ]; then
	echo "man-lint: $fails FAILED"
	exit 1
fi
