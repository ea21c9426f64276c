#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints a help2man include with the parts of a man page that come from the
# binary's own --help, kept verbatim (help2man would refill the indented
# usage lines into one paragraph):
#   [SYNOPSIS]  the usage block: the "usage:" line and the indented lines
#               after it;
#   [COMMANDS]  for each subcommand that usage block names, its own --help;
#   [OPTIONS]   without subcommands: --help from its first option line on;
#   [CONFIGURATION]  where --help lists --help-config: its output, the
#               reference of every configuration key (docs/api.md carries
#               the same text, tests/ops/test-config-doc.sh).
# A subcommand whose --help fails fails the page: the manual never silently
# lacks a command. usage: man-fragment.sh BINARY
set -eu
bin=${1:?usage: man-fragment.sh BINARY}
prog=$(basename "$bin")
help=$("$bin" --help)

# roff-safe verbatim text: backslashes, hyphens as minus signs (so flags
# can be searched and copied), a leading control character.
roff() {
	sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# The usage block; continuation lines aligned under the text after
# "usage: " move left with it.
usage=$(printf '%s\n' "$help" | awk '
	NR == 1 && match($0, /^[Uu]sage: */) { w = RLENGTH; line[n++] = substr($0, w + 1); next }
	n && /^[ \t]/ { line[n++] = $0; next }
	{ exit }
	END {
		for (i = 1; i < n; i++)
			if (substr(line[i], 1, w) ~ /[^ ]/) w = 0
		for (i = 0; i < n; i++)
			print i ? substr(line[i], w + 1) : line[i]
	}')
if [ -z "$usage" ]; then
	echo "man-fragment: $prog --help: the first line is not \"usage: ...\"" >&2
	exit 1
fi
nusage=$(printf '%s\n' "$usage" | wc -l)
# Subcommands: a lowercase word at the start of a usage line, after the
# program name when the line repeats it ("  check --keys ...",
# "       execgate-issue cap --key ...").
cmds=$(printf '%s\n' "$help" | head -n "$nusage" | sed -n \
	-e "1s/^[Uu]sage: *$prog \\([a-z][a-z-]*\\).*/\\1/p" \
	-e "2,\$s/^[ \\t]*\\(${prog}[ \\t]\\{1,\\}\\)\\{0,1\\}\\([a-z][a-z-]*\\)\\([ \\t].*\\)\\{0,1\\}\$/\\2/p" | awk '!seen[$0]++')

printf '[=SYNOPSIS]\n.nf\n'
printf '%s\n' "$usage" | roff
printf '.fi\n'
if [ -n "$cmds" ]; then
	echo "[=COMMANDS]"
	for c in $cmds; do
		if ! sub=$("$bin" "$c" --help 2>&1); then
			echo "man-fragment: $prog $c --help failed:" >&2
			printf '%s\n' "$sub" >&2
			exit 1
		fi
		printf '.SS "%s"\n.nf\n' "$c"
		printf '%s\n' "$sub" | roff
		printf '.fi\n'
	done
else
	# From the first option line on: the text before it is what the
	# hand-written DESCRIPTION says better.
	rest=$(printf '%s\n' "$help" | tail -n "+$((nusage + 1))" | sed '/^[ \t]*-/,$!d')
	if [ -n "$rest" ]; then
		printf '[=OPTIONS]\n.nf\n'
		printf '%s\n' "$rest" | roff
		printf '.fi\n'
	fi
fi
if printf '%s\n' "$help" | grep -q -- '--help-config'; then
	printf '[CONFIGURATION]\n'
	printf 'One \\fIkey\\fR = \\fIvalue\\fR per line; a line whose first non-blank character is\n'
	printf '# is a comment. An unknown key, a key given twice or a bad value stops\n'
	printf '.B %s\nwith exit 2. The keys:\n.PP\n.nf\n' "$prog"
	"$bin" --help-config | roff
	printf '.fi\n'
fi
