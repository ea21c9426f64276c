#!/usr/bin/env bash
# Key files through the real binaries (docs/capability.md "Key files"): keygen writes the typed
# form, the worker's key reader (`check --keys`, offline) refuses every seed
# keygen writes, and each malformed file is refused with its own reason;
# the issuer reads only typed seeds. Needs no root and no loaded programs:
# only files under a temporary directory. (`keys add` needs a loaded
# worker: tests/kernel/test_keys_cli.c runs the same seed loop through it.)
#   BUILD=build-keys scripts/test-keys-cli.sh [SEEDS]
set -euo pipefail

BUILD=${BUILD:-build}
SEEDS=${1:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ISSUE="$ROOT/$BUILD/execgate-issue"
EXECGATE="$ROOT/$BUILD/execgate"
for b in "$ISSUE" "$EXECGATE"; do
	[ -x "$b" ] || { echo "test-keys-cli: $b: not built (make BUILD=$BUILD)" >&2; exit 1; }
done

# shellcheck source=scripts/cli-test-lib.sh
. "$ROOT/scripts/cli-test-lib.sh"
cli_test_start keys
mode_of() { stat -c %a "$1"; }

PUB_T=execgate-ed25519-public-v1
SEC_T=execgate-ed25519-secret-v1

# --- keygen writes the typed form ----------------------------------------
KID=$("$ISSUE" keygen --out cp)
P=cp/$KID.pub
S=cp/$KID.seed
[[ $(cat "$P") =~ ^$PUB_T\ [0-9a-f]{64}$ ]] && ok || fail "$P: not the typed public form"
[[ $(cat "$S") =~ ^$SEC_T\ [0-9a-f]{64}$ ]] && ok || fail "$S: not the typed secret form"
[ "$(wc -c <"$P")" -eq 92 ] && [ "$(wc -c <"$S")" -eq 92 ] && ok || fail "key files not 92 bytes"
[ "$(mode_of "$P")" = 644 ] && [ "$(mode_of "$S")" = 600 ] && ok || fail "modes $(mode_of "$P") $(mode_of "$S")"
cmp -s <("$ISSUE" pubkey --seed "$S") "$P" && ok || fail "pubkey --seed differs from the .pub"

# check --keys FILE|DIR, offline: the worker's reader, without a worker.
IDS=(--sandbox 5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 --worker aaaaaaaa-0000-4000-8000-00000000000a
	--generation 1 --activation 1 --now 1767225600)
TOKEN=$("$ISSUE" cap --key "$S" "${IDS[@]}" --scope file.read)
verdict=$("$EXECGATE" check --keys "$P" "${IDS[@]}" "$TOKEN" || true)
[ "$verdict" = allow ] && ok || fail "check --keys $P: [$verdict]"

# --- no seed keygen writes is ever accepted --------------------------------
SECRET_MSG="key-file-holds-secret: holds a secret key: refusing it; give the .pub file"
refused=0
mkdir wk
for i in $(seq 1 "$SEEDS"); do
	k=$("$ISSUE" keygen --out "g$i")
	set +e
	"$EXECGATE" check --keys "g$i/$k.seed" "${IDS[@]}" "$TOKEN" >out 2>err
	rc=$?
	# The old untyped form of the same seed, in a key directory.
	read -r _ body <"g$i/$k.seed"
	printf '%s\n' "$body" >wk/old.pub
	"$EXECGATE" check --keys wk "${IDS[@]}" "$TOKEN" >out2 2>err2
	rc2=$?
	set -e
	# Bash matching, not grep: the loop is dominated by process starts.
	if [ "$rc" -ne 1 ] || [[ $(<err) != *"$SECRET_MSG"* ]] || [ -s out ]; then
		fail "seed $i ($k): check --keys exit $rc [$(cat out err)]"
	elif [ "$rc2" -ne 1 ] || [[ $(<err2) != *"wk/old.pub: key-file-untyped"* ]] || [ -s out2 ]; then
		fail "seed $i ($k), untyped: check --keys exit $rc2 [$(cat out2 err2)]"
	else
		refused=$((refused + 1))
	fi
done
rm -rf g[0-9]*
[ "$refused" -eq "$SEEDS" ] && ok || fail "$refused of $SEEDS seeds refused"

# --- each malformed public key file, its own reason ------------------------
HEX=$(cut -d' ' -f2 "$P")
printf '%s %s\r\n' "$PUB_T" "$HEX" >crlf.pub
printf '%s %s\n' "$PUB_T" "${HEX:0:62}" >short.pub
printf '%s %s00\n' "$PUB_T" "$HEX" >long.pub
printf '%s %s\n\n' "$PUB_T" "$HEX" >twolines.pub
printf '%s %s # mine\n' "$PUB_T" "$HEX" >comment.pub
printf '%s %s\n' "$PUB_T" "${HEX^^}" >upper.pub
printf '%s\n' "$HEX" >untyped.pub
printf 'ssh-ed25519 %s\n' "$HEX" >ssh.pub
: >empty.pub
mkfifo fifo.pub
printf '%s %s\n' "$PUB_T" 0000000000000000000000000000000000000000000000000000000000000000 >zero.pub
while read -r file want; do
	expect_refused "check --keys $file" 1 "execgate: check: keys $file: $want" -- \
		"$EXECGATE" check --keys "$file" "${IDS[@]}" "$TOKEN"
done <<EOF
missing.pub key-file-missing: no such file
crlf.pub key-file-crlf
short.pub key-wrong-length
long.pub key-wrong-length
twolines.pub key-file-trailing-data
comment.pub key-file-trailing-data
upper.pub key-not-hex
untyped.pub key-file-untyped: untyped bare hex
ssh.pub key-file-unknown-type
empty.pub key-file-empty
fifo.pub key-file-not-regular
zero.pub all-zero-key
EOF

# --- the issuer reads seeds only in the typed form -------------------------
ISSUE_ARGS=("${IDS[@]}" --scope file.read)
cp -p "$P" pub-as-seed
chmod 600 pub-as-seed
expect_refused "cap --key .pub" 1 "key-file-holds-public: holds a public key" -- \
	"$ISSUE" cap --key pub-as-seed "${ISSUE_ARGS[@]}"
expect_refused "pubkey --seed .pub" 1 "key-file-holds-public" -- \
	"$ISSUE" pubkey --seed pub-as-seed
(umask 077 && cut -d' ' -f2 "$S" >old.seed)
expect_refused "cap --key untyped seed" 1 "key-file-untyped" -- \
	"$ISSUE" cap --key old.seed "${ISSUE_ARGS[@]}"
chmod 644 "$S"
expect_refused "cap --key 0644 seed" 1 "mode 0644 is too open" -- \
	"$ISSUE" cap --key "$S" "${ISSUE_ARGS[@]}"
chmod 600 "$S"
expect_refused "pubkey without --seed" 2 "missing --seed" -- "$ISSUE" pubkey
expect_refused "pubkey --seed twice" 2 "--seed: given more than once" -- \
	"$ISSUE" pubkey --seed "$S" --seed "$S"

# The conversion docs/capability.md gives for an old seed: it stays 0600 and
# signs as the same key.
sed -i "1s/^/$SEC_T /" old.seed
[ "$(mode_of old.seed)" = 600 ] && ok || fail "converted seed mode $(mode_of old.seed)"
cmp -s old.seed "$S" && ok || fail "converted seed differs from the typed seed"
cmp -s <("$ISSUE" pubkey --seed old.seed) "$P" && ok || fail "converted seed: wrong public key"
TOKEN=$("$ISSUE" cap --key old.seed "${ISSUE_ARGS[@]}")
verdict=$("$EXECGATE" check --keys "$P" "${IDS[@]}" "$TOKEN" || true)
[ "$verdict" = allow ] && ok || fail "token from the converted seed: [$verdict]"

cli_test_end test-keys-cli "$SEEDS keygen seeds refused by check --keys"
