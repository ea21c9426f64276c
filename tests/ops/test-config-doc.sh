#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The configuration reference has one source, the table of keys in
# user/daemon/config.c, printed by `execgated --help-config`. This checks
# that docs/api.md's block and the CONFIGURATION section of the built
# execgated(8) are that text, line for line, and that the documented example
# deploy/execgated.conf names every key (set or commented out).
# usage: test-config-doc.sh BUILD_DIR
set -u
build=${1:?usage: test-config-doc.sh BUILD_DIR}
pass=0 fails=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
fail() {
	echo "  FAIL $*"
	fails=$((fails + 1))
}

"$build/execgated" --help-config >"$tmp/want" || fail "execgated --help-config: exit $?"
[ "$(grep -c '^[a-z_]* = ' "$tmp/want")" -ge 11 ] && ok ||
	fail "execgated --help-config lists $(grep -c '^[a-z_]* = ' "$tmp/want") keys"

# docs/api.md: between the markers, inside the fence.
sed -n '/^<!-- begin: execgated --help-config -->$/,/^<!-- end: execgated --help-config -->$/p' \
	docs/api.md | sed '1,2d;$d' | sed '$d' >"$tmp/api"
if diff -u "$tmp/want" "$tmp/api" >"$tmp/diff"; then
	ok
else
	fail "docs/api.md's configuration block is not execgated --help-config (run scripts/gen-config-doc.sh $build):"
	cat "$tmp/diff"
fi

# execgated(8), rendered: the lines after "The keys:", 7 columns in, up to
# the next section; man's minus signs and hyphens back to ASCII.
LC_ALL=C.UTF-8 MANWIDTH=100 man -E UTF-8 -l "$build/man/execgated.8" 2>/dev/null |
	sed -e 's/\xe2\x88\x92/-/g' -e 's/\xe2\x80\x90/-/g' |
	awk '/^CONFIGURATION$/ { c = 1; next } c && /^[A-Z]/ { exit }
	     c && k && !/^$/ { print substr($0, 8) } c && /The keys:$/ { k = 1 }' >"$tmp/man"
if diff -u "$tmp/want" "$tmp/man" >"$tmp/diff"; then
	ok
else
	fail "execgated(8)'s CONFIGURATION is not execgated --help-config:"
	cat "$tmp/diff"
fi

for key in $(sed -n 's/^\([a-z_]*\) = .*/\1/p' "$tmp/want"); do
	grep -Eq "^#?$key = " deploy/execgated.conf && ok ||
		fail "deploy/execgated.conf does not name $key (set, or as #$key = DEFAULT)"
done

echo "test-config-doc: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
