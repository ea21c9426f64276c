#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Rewrites the exit-code tables of README.md, docs/operators.md and
# docs/man/execgate.h2m (the blocks between the "begin/end: execgate
# --help-exit-codes" markers) from the built CLI's --help-exit-codes, the
# one table in user/execgate/exit_codes.c: a Markdown table in a .md file,
# .TP paragraphs in a man page source; `x` in a meaning is code in Markdown
# and bold in roff. Run it (make exit-codes-doc) after changing a code;
# tests/ops/test-exit-codes-doc.sh fails until it is run.
# usage: gen-exit-codes-doc.sh BUILD_DIR [FILE...]
set -eu
build=${1:?usage: gen-exit-codes-doc.sh BUILD_DIR [FILE...]}
shift
[ $# -gt 0 ] || set -- README.md docs/operators.md docs/man/execgate.h2m
ref=$(mktemp)
trap 'rm -f "$ref"' EXIT
"$build/execgate" --help-exit-codes >"$ref"
[ -s "$ref" ] || {
	echo "gen-exit-codes-doc: $build/execgate --help-exit-codes printed nothing" >&2
	exit 1
}
for doc in "$@"; do
	case $doc in
	*.md) begin='<!-- begin: execgate --help-exit-codes -->' end='<!-- end: execgate --help-exit-codes -->' form=md ;;
	*) begin='.\" begin: execgate --help-exit-codes' end='.\" end: execgate --help-exit-codes' form=roff ;;
	esac
	[ "$(grep -cxF "$begin" "$doc")" = 1 ] && [ "$(grep -cxF "$end" "$doc")" = 1 ] || {
		echo "gen-exit-codes-doc: $doc: not one begin and one end marker" >&2
		exit 1
	}
	# The markers by the environment: awk -v would take "\"" for an escape.
	BEGIN_MARK=$begin END_MARK=$end awk -v ref="$ref" -v form="$form" '
		function roff(s,   out, n, i, parts) {
			gsub(/\\/, "\\e", s)
			gsub(/-/, "\\-", s)
			n = split(s, parts, "`")
			out = parts[1]
			for (i = 2; i <= n; i++)
				out = out (i % 2 ? "\\fR" : "\\fB\\%") parts[i]
			if (out ~ /^[.\047]/)
				out = "\\&" out
			return out
		}
		BEGIN { begin = ENVIRON["BEGIN_MARK"]; end = ENVIRON["END_MARK"] }
		$0 == begin {
			print
			if (form == "md")
				print "| code | meaning |\n| --- | --- |"
			while ((getline line < ref) > 0) {
				tab = index(line, "\t")
				code = substr(line, 1, tab - 1)
				text = substr(line, tab + 1)
				if (form == "md")
					print "| " code " | " text " |"
				else
					print ".TP\n.B " code "\n" roff(text)
			}
			skip = 1
			next
		}
		$0 == end { skip = 0 }
		!skip' "$doc" >"$doc.tmp"
	mv "$doc.tmp" "$doc"
done
