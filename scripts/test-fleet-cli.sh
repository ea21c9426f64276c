#!/usr/bin/env bash
# The fleet's signed documents through the real binaries: execgate-issue
# selection, keyset, inspect-selection and inspect-keyset (docs/fleet.md).
# The fixed vectors of tests/vectors/fleet_v1.json are reproduced from
# their seeds; every refusal exits with its documented code, names its
# reason on one stderr line and prints nothing on stdout. Needs no root:
# only files under a temporary directory.
#   BUILD=build scripts/test-fleet-cli.sh
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ISSUE="$ROOT/$BUILD/execgate-issue"
VECTORS="$ROOT/tests/vectors/fleet_v1.json"
[ -x "$ISSUE" ] || { echo "test-fleet-cli: $ISSUE: not built (make BUILD=$BUILD)" >&2; exit 1; }

# shellcheck source=scripts/cli-test-lib.sh
. "$ROOT/scripts/cli-test-lib.sh"
cli_test_start fleet

vec() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"v": v}))' "$VECTORS" "$1"; }

# Seed n of the vectors, typed (core/key_file.h), mode 0600, and its .pub.
for n in 1 2 3; do
	mkdir -p "v$n"
	printf 'execgate-ed25519-secret-v1 %s\n' "$(vec "v['seeds']['$n']")" >"v$n/k.seed"
	chmod 600 "v$n/k.seed"
	"$ISSUE" pubkey --seed "v$n/k.seed" >"v$n/k.pub"
done

# --- the fixed vectors, from the commands -------------------------------
SEL=$("$ISSUE" selection --key "v$(vec "v['selection']['signer_seed']")/k.seed" \
	--sandbox "$(vec "v['selection']['sandbox']")" --worker "$(vec "v['selection']['worker']")" \
	--generation "$(vec "v['selection']['generation']")" \
	--activation "$(vec "v['selection']['activation']")" \
	--pod-uid "$(vec "v['selection']['pod_uid']")" \
	--substrate "$(vec "v['selection']['substrate']")" \
	--now "$(vec "v['selection']['issued_at']")" --v1)
[ "$SEL" = "$(vec "v['selection']['text']")" ] && ok || fail "selection differs from the vector: $SEL"
KS=$("$ISSUE" keyset --root-key v1/k.seed --version "$(vec "v['keyset']['version']")" \
	--now "$(vec "v['keyset']['issued_at']")" v3/k.pub v2/k.pub)
[ "$KS" = "$(vec "v['keyset']['text']")" ] && ok || fail "keyset differs from the vector: $KS"
# and the v2 vectors (tests/vectors/fleet_v2.json), same seeds
vec2() { VECTORS="$ROOT/tests/vectors/fleet_v2.json" vec "$1"; }
SEL2=$("$ISSUE" selection --key "v$(vec2 "v['selection']['signer_seed']")/k.seed" \
	--sandbox "$(vec2 "v['selection']['sandbox']")" --worker "$(vec2 "v['selection']['worker']")" \
	--generation "$(vec2 "v['selection']['generation']")" \
	--activation "$(vec2 "v['selection']['activation']")" \
	--pod-uid "$(vec2 "v['selection']['pod_uid']")" \
	--substrate "$(vec2 "v['selection']['substrate']")" \
	--now "$(vec2 "v['selection']['issued_at']")" --for "$(vec2 "v['selection']['audience']")")
[ "$SEL2" = "$(vec2 "v['selection']['text']")" ] && ok || fail "selection v2 differs from the vector: $SEL2"
KSV2=$("$ISSUE" keyset --root-key v1/k.seed --version "$(vec2 "v['keyset']['version']")" \
	--now "$(vec2 "v['keyset']['issued_at']")" --expires-in 1d v3/k.pub v2/k.pub)
[ "$KSV2" = "$(vec2 "v['keyset']['text']")" ] && ok || fail "keyset v2 differs from the vector: $KSV2"

# --- fresh keys: keygen makes control-plane and root keys alike ----------
RK=$("$ISSUE" keygen --out root)
CA=$("$ISSUE" keygen --out cp)
CB=$("$ISSUE" keygen --out cp)
OTHER=$("$ISSUE" keygen --out other)
S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7
W=aaaaaaaa-0000-4000-8000-00000000000a
IDS=(--sandbox $S --worker $W --generation 8 --activation 2)

before=$(date +%s)
out=$("$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}" --v1)
after=$(date +%s)
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out =~ ^[A-Za-z0-9_-]{192}$ ]] && ok ||
	fail "selection: not one line of 192 base64url characters: [$out]"
"$ISSUE" inspect-selection --keys cp "$out" >info
want="format selection-v1
key_id $CA
sandbox $S
worker $W
substrate firecracker-host
generation 8
activation 2
pod_uid 00000000-0000-0000-0000-000000000000"
[ "$(head -8 info)" = "$want" ] && ok || fail "inspect-selection: [$(cat info)]"
at=$(sed -n 's/^issued_at //p' info)
[ "$at" -ge "$before" ] && [ "$at" -le "$after" ] && ok || fail "issued_at $at not in [$before, $after]"
[ "$(tail -1 info)" = "signature verified" ] && ok || fail "inspect-selection: $(tail -1 info)"
"$ISSUE" inspect-selection "$out" | grep -qx 'signature not-checked' && ok ||
	fail "inspect-selection without --keys claims a checked signature"

expect_refused "selection under another key" 1 "selection refused: unknown-key" -- \
	"$ISSUE" inspect-selection --keys other "$out"
bad=${out:0:100}$([ "${out:100:1}" = A ] && echo B || echo A)${out:101}
expect_refused "selection with one character changed" 1 "selection refused:" -- \
	"$ISSUE" inspect-selection --keys cp "$bad"
expect_refused "truncated selection" 1 "selection refused: truncated" -- \
	"$ISSUE" inspect-selection --keys cp "${out:0:188}"
expect_refused "selection with trailing bytes" 1 "selection refused: trailing-bytes" -- \
	"$ISSUE" inspect-selection --keys cp "${out}AAAA"
expect_refused "padded selection" 1 "selection refused: bad-text" -- \
	"$ISSUE" inspect-selection --keys cp "${out}=="
expect_refused "a key set given as a selection" 1 "selection refused:" -- \
	"$ISSUE" inspect-selection "$KS"
expect_refused "a selection given as a key set" 1 "key set refused:" -- \
	"$ISSUE" inspect-keyset "$SEL"

# --- selection v2: addressed to the worker whose prefix it goes under ------
W2=bbbbbbbb-0000-4000-8000-00000000000b
out2=$("$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}")
[[ $out2 =~ ^[A-Za-z0-9_-]{214}$ ]] && ok || fail "selection v2: not 214 base64url characters: [$out2]"
"$ISSUE" inspect-selection --keys cp "$out2" >info
[ "$(head -1 info)" = "format selection-v2" ] && grep -qx "audience $W" info && ok ||
	fail "inspect-selection v2 (audience defaults to --worker): [$(cat info)]"
out2=$("$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}" --for $W2)
"$ISSUE" inspect-selection --keys cp "$out2" | grep -qx "audience $W2" && ok ||
	fail "selection --for: the audience is not $W2"
expect_refused "truncated selection v2" 1 "selection refused: truncated" -- \
	"$ISSUE" inspect-selection --keys cp "${out2:0:208}"
expect_refused "--for and --v1" 2 "--for and --v1" -- \
	"$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}" --for $W2 --v1
expect_refused "--for an all-zero UUID" 2 "--for" -- \
	"$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}" --for 00000000-0000-0000-0000-000000000000

# --- selection: usage and key errors --------------------------------------
expect_refused "selection without --worker" 2 "missing --worker" -- \
	"$ISSUE" selection --key "cp/$CA.seed" --sandbox $S --generation 1 --activation 1
expect_refused "selection without --key" 2 "missing --key SEEDFILE" -- \
	"$ISSUE" selection "${IDS[@]}"
expect_refused "all-zero sandbox" 2 "must not be all-zero" -- \
	"$ISSUE" selection --key "cp/$CA.seed" --sandbox 00000000-0000-0000-0000-000000000000 \
	--worker $W --generation 1 --activation 1
expect_refused "generation 2^53" 2 "above the largest generation" -- \
	"$ISSUE" selection --key "cp/$CA.seed" --sandbox $S --worker $W \
	--generation 9007199254740992 --activation 1
expect_refused "activation 2^32" 2 "--activation" -- \
	"$ISSUE" selection --key "cp/$CA.seed" --sandbox $S --worker $W --generation 1 \
	--activation 4294967296
expect_refused "unknown substrate" 2 "unknown substrate" -- \
	"$ISSUE" selection --key "cp/$CA.seed" "${IDS[@]}" --substrate qemu
expect_refused "a .pub as --key" 1 "key-file-holds-public" -- \
	"$ISSUE" selection --key "cp/$CA.pub" "${IDS[@]}"
cp "cp/$CA.seed" open.seed
chmod 644 open.seed
expect_refused "a seed others can read" 1 "mode 0644 is too open" -- \
	"$ISSUE" selection --key open.seed "${IDS[@]}"

# --- key set v2: a signed expiry ------------------------------------------
KSX=$("$ISSUE" keyset --root-key "root/$RK.seed" --version 3 --now 1767225600 --expires-in 1h "cp/$CA.pub")
"$ISSUE" inspect-keyset --root-keys root "$KSX" >info
[ "$(head -1 info)" = "format keyset-v2" ] && grep -qx "expires_at 1767229200" info && ok ||
	fail "inspect-keyset v2: [$(cat info)]"
expect_refused "--expires-in 0s" 2 "--expires-in" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 --expires-in 0s "cp/$CA.pub"
expect_refused "--expires-in without a unit" 2 "--expires-in" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 --expires-in 60 "cp/$CA.pub"

# --- key set ---------------------------------------------------------------
KS2=$("$ISSUE" keyset --root-key "root/$RK.seed" --version 2 "cp/$CA.pub" "cp/$CB.pub")
[ "$(printf '%s\n' "$KS2" | wc -l)" -eq 1 ] && [[ $KS2 =~ ^[A-Za-z0-9_-]+$ ]] && ok ||
	fail "keyset: not one base64url line"
"$ISSUE" inspect-keyset --root-keys root "$KS2" >info
sorted=$(printf '%s\n' "$CA" "$CB" | LC_ALL=C sort | sed 's/^/key /')
want="format keyset-v1
root_key_id $RK
version 2"
[ "$(head -3 info)" = "$want" ] && [ "$(sed -n 5p info)" = "keys 2" ] &&
	[ "$(sed -n 6,7p info)" = "$sorted" ] && [ "$(tail -1 info)" = "signature verified" ] && ok ||
	fail "inspect-keyset: [$(cat info)]"
expect_refused "key set under another root" 1 "key set refused: unknown-key" -- \
	"$ISSUE" inspect-keyset --root-keys cp "$KS2"
# 172 bytes are 230 characters; the first 228 are 171 whole bytes.
expect_refused "truncated key set" 1 "key set refused: truncated" -- \
	"$ISSUE" inspect-keyset --root-keys root "${KS2:0:228}"
expect_refused "key set with a stray character" 1 "key set refused: bad-text" -- \
	"$ISSUE" inspect-keyset --root-keys root "${KS2:0:228}A"
bad=${KS2:0:60}$([ "${KS2:60:1}" = A ] && echo B || echo A)${KS2:61}
expect_refused "key set with one character changed" 1 "key set refused:" -- \
	"$ISSUE" inspect-keyset --root-keys root "$bad"

expect_refused "the root among the keys" 1 "is the root key $RK itself" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 "cp/$CA.pub" "root/$RK.pub"
expect_refused "a key given twice" 1 "duplicate-key" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 "cp/$CA.pub" "cp/$CA.pub"
expect_refused "a seed as PUBFILE" 1 "key-file-holds-secret" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 "cp/$CA.seed"
expect_refused "a missing PUBFILE" 1 "key-file-missing" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3 cp/nope.pub
expect_refused "version 0" 2 "--version '0': not a number in 1..9007199254740991" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 0 "cp/$CA.pub"
expect_refused "version 2^53" 2 "not a number in 1..9007199254740991" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 9007199254740992 "cp/$CA.pub"
expect_refused "no PUBFILE" 2 "missing PUBFILE" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 3
expect_refused "no --root-key" 2 "missing --root-key SEEDFILE" -- \
	"$ISSUE" keyset --version 3 "cp/$CA.pub"
expect_refused "a .pub as --root-key" 1 "key-file-holds-public" -- \
	"$ISSUE" keyset --root-key "root/$RK.pub" --version 3 "cp/$CA.pub"
# "keyset --version" alone is still the program's version; with other
# arguments and no value (an empty $N) it is a usage error, not a version
# line a script could publish as a key set.
[ "$("$ISSUE" keyset --version)" = "$("$ISSUE" --version)" ] && ok || fail "keyset --version alone"
expect_refused "--version without N after other flags" 2 "--version: missing N" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version
expect_refused "--version with a file for N" 2 "--version 'cp/$CA.pub': not a number" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version "cp/$CA.pub"

# The largest set: 64 keys; a 65th is a usage error.
mkdir many
for i in $(seq 1 64); do "$ISSUE" keygen --out many >/dev/null; done
KS64=$("$ISSUE" keyset --root-key "root/$RK.seed" --version 9 many/*.pub)
"$ISSUE" inspect-keyset --root-keys "root/$RK.pub" "$KS64" | grep -qx 'keys 64' && ok ||
	fail "a key set of 64 keys"
expect_refused "65 keys" 2 "unexpected argument" -- \
	"$ISSUE" keyset --root-key "root/$RK.seed" --version 9 many/*.pub "cp/$CA.pub"

cli_test_end test-fleet-cli
