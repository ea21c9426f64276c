#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Lints man pages: groff -man -ww and man -l --warnings must print nothing,
# no roff may leak into the rendered text (a help2man "[SECTION]" line, a
# request or an escape shown as text), and the page must carry its sections
# and the project's version. With --source, the pages are the hand-written
# docs/man/*.h2m, which man -l renders as pages of their own
# (scripts/man-h2m.sh): no version there, the build adds it.
# usage: man-lint.sh VERSION PAGE...    man-lint.sh --source PAGE...
set -u
version=${1:?usage: man-lint.sh VERSION PAGE... | --source PAGE...}
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
	[ "$version" = --source ] || grep -q "^\.TH .*\"[a-z-]* $version\"" "$page" ||
		fail "$name: .TH does not name version $version"
	for s in NAME DESCRIPTION "EXIT STATUS" FILES "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$page" || fail "$name: no $s section"
	done
	text=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null)
	[ -n "$text" ] || fail "$name: man -l renders nothing"
	# Roff shown as text: "[NAME]", ".B x", "\-", "\fB", "\e".
	leak=$(printf '%s\n' "$text" | grep -n -E '^ *\[[=<>]?[A-Z ]+\] *$|^ *\.[A-Za-z]{1,2}( |$)|\\[-fe&(]' | head -3)
	[ -z "$leak" ] || fail "$name: roff in the rendered text: $leak"
	[ "$fails" -ne "$before" ] || echo "  ok   $name: groff and man -l without warnings; NAME, DESCRIPTION, EXIT STATUS, FILES, SEE ALSO; version $version"
done
if [ "$fails" -ne 0 ]; then
	echo "man-lint: $fails FAILED"
	exit 1
fi
