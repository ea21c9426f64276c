# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by the CLI test scripts (scripts/test-keys-cli.sh,
# scripts/test-fleet-cli.sh): a scratch directory to run in, the pass and
# fail counts, and the check that a refusal looks as the docs promise.
# bash only (local, [[ ]]); the caller runs under set -euo pipefail.

# cli_test_start NAME: $TMP, a new /tmp/execgate-NAME.XXXXXX removed on
# exit, becomes the working directory; the counts start at 0.
cli_test_start() {
	TMP=$(mktemp -d "/tmp/execgate-$1.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT INT TERM
	cd "$TMP"
	fails=0
	pass=0
}

ok() { pass=$((pass + 1)); }
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# expect_refused WHAT WANT_RC WANT_TEXT -- command...: exits WANT_RC, stderr
# is one line holding WANT_TEXT, stdout is empty (docs: a one-line error
# naming the object and the reason, nothing half-written).
expect_refused() {
	local what=$1 want_rc=$2 want=$3 rc
	shift 4
	set +e
	"$@" >out 2>err
	rc=$?
	set -e
	if [ "$rc" -ne "$want_rc" ]; then
		fail "$what: exit $rc, want $want_rc ($(cat err))"
	elif ! grep -qF -- "$want" err; then
		fail "$what: stderr [$(cat err)] lacks [$want]"
	elif [ "$(wc -l <err)" -ne 1 ]; then
		fail "$what: stderr is $(wc -l <err) lines: [$(cat err)]"
	elif [ -s out ]; then
		fail "$what: printed [$(cat out)]"
	else
		ok
	fi
}

# cli_test_end NAME [NOTE]: "NAME: P passed, F failed (NOTE)"; fails when
# anything failed.
cli_test_end() {
	echo "$1: $pass passed, $fails failed${2:+ ($2)}"
	[ "$fails" -eq 0 ]
}
