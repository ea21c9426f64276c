#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Rewrites docs/api.md's configuration reference (the block between the
# "begin/end: execgated --help-config" markers) from the built daemon's
# --help-config, the one table of keys in user/daemon/config.c. Run it
# after adding a key; tests/ops/test-config-doc.sh fails until it is run.
# usage: gen-config-doc.sh BUILD_DIR [DOC]
set -eu
build=${1:?usage: gen-config-doc.sh BUILD_DIR [DOC]}
doc=${2:-docs/api.md}
ref=$(mktemp)
trap 'rm -f "$ref" "$doc.tmp"' EXIT
"$build/execgated" --help-config >"$ref"
grep -q '^<!-- begin: execgated --help-config -->$' "$doc" || {
	echo "gen-config-doc: $doc: no begin marker" >&2
	exit 1
}
awk -v ref="$ref" '
	/^<!-- begin: execgated --help-config -->$/ {
		print; print "```"
		while ((getline line < ref) > 0) print line
		print "```"; skip = 1; next
	}
	/^<!-- end: execgated --help-config -->$/ { skip = 0 }
	!skip' "$doc" >"$doc.tmp"
mv "$doc.tmp" "$doc"
