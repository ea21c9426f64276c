#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The one option parser (user/frontend/opts.c) as each program meets it: in
# execgate, execgated, execgate-issue and execgate-bridge, and in every
# subcommand, --help and -h print the same usage on stdout (exit 0) with a
# description for every flag,
# --version and -V print "PROG VERSION", and every flag the help lists,
# cut by one letter, is refused: exit 2, one line on stderr naming the
# option, nothing on stdout (getopt_long would have taken the prefix). The
# commands and flags are read from the programs' own help, so a flag added
# later is covered too. Nothing here loads, binds or writes anything: every
# run is refused, or answered, before that.
# usage: test-options.sh BUILD_DIR VERSION
set -u
build=${1:?usage: test-options.sh BUILD_DIR VERSION}
version=${2:?usage: test-options.sh BUILD_DIR VERSION}
pass=0 fails=0 out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
ok() { pass=$((pass + 1)); }
fail() {
	echo "  FAIL $*"
	fails=$((fails + 1))
}
run() { "$@" >"$out" 2>"$err" </dev/null; }

# PROG [CMD]: help, version and every flag cut by one letter.
check_unit() {
	local prog=$1 bin=$build/$1 rc flags f cut want
	shift
	local unit="$prog${1:+ $1}"

	run "$bin" "$@" --help
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$err" ] || ! head -1 "$out" | grep -q '^usage: '; then
		fail "$unit --help: exit $rc, stdout [$(head -1 "$out")], stderr [$(cat "$err")]"
		return
	fi
	cp "$out" "$out.help"
	run "$bin" "$@" -h
	cmp -s "$out" "$out.help" && [ ! -s "$err" ] && ok || fail "$unit -h differs from --help"
	for v in --version -V; do
		run "$bin" "$@" $v
		rc=$?
		[ $rc -eq 0 ] && [ "$(cat "$out")" = "$prog $version" ] && [ ! -s "$err" ] && ok ||
			fail "$unit $v: exit $rc, [$(cat "$out")] [$(cat "$err")]"
	done
	# "  --name ARG  help" or "  -c, --name ARG  help"
	flags=$(sed -n -E 's/^  (-[a-zA-Z], )?--([a-z][a-z0-9-]*).*/\2/p' "$out.help")
	# Every flag is described: text after the flag and its value.
	bare=$(grep -E '^  (-[a-zA-Z], )?--[a-z]' "$out.help" |
		grep -vE '^  (-[a-zA-Z], )?--[a-z][a-z0-9-]*( [^ ]+)? +[^ ].{8,}' || true)
	[ -z "$bare" ] && ok || fail "$unit --help: flags without a description: $bare"
	rm -f "$out.help"
	for want in help version; do
		printf '%s\n' "$flags" | grep -qx "$want" && ok || fail "$unit --help does not list --$want"
	done
	for f in $flags; do
		[ ${#f} -ge 3 ] || continue
		cut="--${f%?}"
		run "$bin" "$@" "$cut" 1
		rc=$?
		want="$prog: ${1:+$1: }$cut: unknown option ($unit --help)"
		if [ $rc -ne 2 ] || [ -s "$out" ] || [ "$(cat "$err")" != "$want" ]; then
			fail "$unit $cut: exit $rc, stderr [$(cat "$err")], want [$want]"
		else
			ok
		fi
	done
}

# The commands a program's --help lists: "  name ..." lines (execgate) or
# "       execgate-issue name ..." lines (execgate-issue).
commands() {
	"$build/$1" --help | sed -n -E \
		-e "s/^  ([a-z][a-z-]*)( .*)?$/\1/p" \
		-e "s/^(usage:)? +$1 ([a-z][a-z-]*)( .*)?$/\2/p" | awk '!seen[$0]++'
}

for prog in execgate execgate-issue execgated execgate-bridge; do
	check_unit $prog
	run "$build/$prog" --no-such-flag
	[ $? -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q -- "--no-such-flag" "$err" && ok ||
		fail "$prog --no-such-flag: [$(cat "$err")]"
done
n=0
for c in $(commands execgate); do
	check_unit execgate "$c"
	n=$((n + 1))
done
[ $n -ge 14 ] && ok || fail "execgate --help lists $n commands"
n=0
for c in $(commands execgate-issue); do
	check_unit execgate-issue "$c"
	n=$((n + 1))
done
[ $n -eq 8 ] && ok ||
	fail "execgate-issue --help lists $n commands, want keygen, pubkey, cap, selection, keyset, inspect-selection, inspect-keyset, fence"

# The cases from the report, verbatim.
run "$build/execgated" --conf /nonexistent/execgated.conf --check
[ $? -eq 2 ] && [ "$(cat "$err")" = "execgated: --conf: unknown option (execgated --help)" ] && ok ||
	fail "execgated --conf X --check: [$(cat "$err")]"
run "$build/execgate-issue" keygen --o /nonexistent/keys
[ $? -eq 2 ] && [ "$(cat "$err")" = "execgate-issue: keygen: --o: unknown option (execgate-issue keygen --help)" ] && ok ||
	fail "execgate-issue keygen --o DIR: [$(cat "$err")]"
run "$build/execgate" -V
[ $? -eq 0 ] && [ "$(cat "$out")" = "execgate $version" ] && ok || fail "execgate -V: [$(cat "$out")] [$(cat "$err")]"
# -c is execgated's one short alias: it takes a value like --config.
run "$build/execgated" -c
[ $? -eq 2 ] && [ "$(cat "$err")" = "execgated: -c: missing FILE (execgated --help)" ] && ok ||
	fail "execgated -c: [$(cat "$err")]"
run "$build/execgated" -c /nonexistent/a.conf --config /nonexistent/b.conf --check-config
[ $? -eq 2 ] && grep -q -- "--config: given more than once" "$err" && ok ||
	fail "execgated -c X --config Y: [$(cat "$err")]"

echo "test-options: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
