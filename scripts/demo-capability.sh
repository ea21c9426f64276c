#!/usr/bin/env bash
# Capability round trip: keygen -> issue -> check, through the comparator
# cases and the worked example (sandbox S runs as execution 7 on worker A,
# then is restored as execution 8 on worker B). Every verdict shown is the
# output of a real `execgate check`; the script fails if one differs from
# what docs/capability.md (Comparator) says it must be.
#   BUILD=build-alt scripts/demo-capability.sh
set -euo pipefail

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ISSUE="$ROOT/$BUILD/execgate-issue"
EXECGATE="$ROOT/$BUILD/execgate"
for b in "$ISSUE" "$EXECGATE"; do
	[ -x "$b" ] || { echo "demo-capability: $b: not built (make BUILD=$BUILD)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/execgate-demo.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

S=5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 # sandbox S
T=7a111a2b-3c4d-4e5f-8091-a2b3c4d5e6f7 # another sandbox
A=aaaaaaaa-0000-4000-8000-00000000000a # worker A
B=bbbbbbbb-0000-4000-8000-00000000000b # worker B
NOW=1767225600                         # 2026-01-01T00:00:00Z, fixed so the run repeats

say() { printf '%s\n' "$*"; }
show() { say "\$ $*"; }

say "== keys (control plane: seed + public key; workers get only *.pub) =="
show "execgate-issue keygen --out keys"
KID=$("$ISSUE" keygen --out "$TMP/keys")
say "$KID"
"$ISSUE" keygen --out "$TMP/other" >/dev/null # a key the workers do not trust
mkdir "$TMP/worker-keys"
cp "$TMP/keys/$KID.pub" "$TMP/worker-keys/"
SEED="$TMP/keys/$KID.seed"
say "$(cd "$TMP" && ls -l keys | awk 'NR>1 {print $1, $NF}')"
# Typed key files: the first word says public or secret (the key itself is
# not shown). A worker refuses a .seed given as a key, by its content.
say "$(cd "$TMP/keys" && for f in "$KID.pub" "$KID.seed"; do printf '%s: %s <64 hex>\n' "$f" "$(cut -d' ' -f1 "$f")"; done)"
set +e
seed_as_key=$("$EXECGATE" check --keys "$SEED" --sandbox "$S" --worker "$A" --generation 7 \
	--activation 1 --now "$NOW" AAAA 2>&1)
set -e
case "$seed_as_key" in
*key-file-holds-secret*) say "(check --keys $KID.seed: refused: key-file-holds-secret)" ;;
*)
	say "demo-capability: a seed given as a key was not refused as a secret: $seed_as_key" >&2
	exit 1
	;;
esac
say

issue() { "$ISSUE" cap --key "$SEED" --sandbox "$S" --now "$NOW" "$@"; }

say "== tokens (execgate-issue cap ...) =="
CAP7=$(issue --worker "$A" --generation 7 --activation 1 --scope file.read,exec)
CAP8=$(issue --worker "$B" --generation 8 --activation 1 --scope file.read,exec)
CAP8A=$(issue --worker "$A" --generation 8 --activation 1 --scope file.read,exec)
CAP7ACT2=$(issue --worker "$A" --generation 7 --activation 2 --scope file.read,exec,terminal)
CAPPORT=$(issue --worker "$A" --generation 7 --activation 1 --scope serviceport --port 8080/tcp)
FOREIGN=$("$ISSUE" cap --key "$(ls "$TMP"/other/*.seed)" --sandbox "$S" --worker "$A" \
	--generation 7 --activation 1 --scope file.read --now "$NOW")
show "execgate-issue cap --key keys/$KID.seed --sandbox S --worker A --generation 7 --activation 1 --scope file.read,exec --now $NOW"
say "$CAP7"
say "(${#CAP7} characters: 184 bytes, base64url without padding)"
say

# A tampered copy: one character inside the signature changed.
pos=200
c=${CAP7:$pos:1}
[ "$c" = A ] && r=B || r=A
TAMPERED="${CAP7:0:$pos}$r${CAP7:$((pos + 1))}"

# The two receivers of the worked example.
ON_A=(--sandbox "$S" --worker "$A" --generation 7 --activation 1)
ON_B=(--sandbox "$S" --worker "$B" --generation 8 --activation 1 --retired-below 8)

ROWS=()
fails=0
# check LABEL EXPECTED RECEIVER-DESCRIPTION -- execgate check args...
check() {
	local label=$1 want=$2 where=$3 out rc
	shift 4
	set +e
	out=$("$EXECGATE" check --keys "$TMP/worker-keys" --now "${NOW_AT:-$NOW}" "$@" 2>&1)
	rc=$?
	set -e
	say "[$label] at $where"
	say "  $out   (exit $rc)"
	if [ "$out" != "$want" ]; then
		say "  ^^^ expected: $want"
		fails=$((fails + 1))
	fi
	# The exit code a script branches on: 0 allow, 3 refresh-route, 4 deny
	# (execgate check --help).
	if [ "$rc" != "$(want_rc "$want")" ]; then
		say "  ^^^ expected exit $(want_rc "$want")"
		fails=$((fails + 1))
	fi
	ROWS+=("$label|$where|$out|$rc")
}

want_rc() {
	case $1 in
	allow) echo 0 ;;
	refresh-route:*) echo 3 ;;
	deny:*) echo 4 ;;
	*) echo "?" ;;
	esac
}

say "== checks (execgate check --keys worker-keys ...) =="
check "cap for 7" "allow" "A (runs 7)" -- "${ON_A[@]}" "$CAP7"
check "cap for 8" "allow" "B (runs 8)" -- "${ON_B[@]}" "$CAP8"
check "cap for 8 reaches A" "refresh-route: worker-mismatch" "A (runs 7)" -- "${ON_A[@]}" "$CAP8"
check "cap for 8 (restored on A)" "refresh-route: generation-mismatch" "A (runs 7)" -- \
	"${ON_A[@]}" "$CAP8A"
check "cap for 7 after 8 installed" "refresh-route: generation-retired" "B (runs 8)" -- \
	"${ON_B[@]}" "$CAP7"
check "cap for activation 2, new open" "refresh-route: activation-mismatch" "A (act 1)" -- \
	"${ON_A[@]}" "$CAP7ACT2"
check "cap for activation 2, stream" "allow" "A (act 1)" -- "${ON_A[@]}" --established "$CAP7ACT2"
check "cap for 7, no record here" "refresh-route: no-record" "C (no record)" -- \
	--sandbox "$S" --no-record "$CAP7"
check "tampered signature" "deny: bad-signature" "A (runs 7)" -- "${ON_A[@]}" "$TAMPERED"
check "signed by an unknown key" "deny: unknown-key" "A (runs 7)" -- "${ON_A[@]}" "$FOREIGN"
check "trailing bytes" "deny: malformed: trailing-bytes" "A (runs 7)" -- "${ON_A[@]}" "${CAP7}AAAA"
NOW_AT=$((NOW + 120 + 15)) check "cap for 7 at expiry+15s" "allow" "A (runs 7)" -- "${ON_A[@]}" "$CAP7"
NOW_AT=$((NOW + 120 + 16)) check "cap for 7 at expiry+16s" "deny: expired" "A (runs 7)" -- "${ON_A[@]}" "$CAP7"
check "cap for sandbox S" "deny: sandbox-mismatch" "A (runs T)" -- \
	--sandbox "$T" --worker "$A" --generation 7 --activation 1 "$CAP7"
check "terminal with a file.read,exec cap" "deny: scope-not-allowed" "A (runs 7)" -- \
	"${ON_A[@]}" --scope terminal "$CAP7"
check "the same with --need, --scope's older name" "deny: scope-not-allowed" "A (runs 7)" -- \
	"${ON_A[@]}" --need terminal "$CAP7"
check "ServicePort 8080/tcp, in profile" "allow" "A (serves 8080/tcp)" -- \
	"${ON_A[@]}" --service-port 8080/tcp --port 8080/tcp "$CAPPORT"
check "ServicePort 8080/tcp, not in profile" "deny: port-not-allowed" "A (serves 9090/tcp)" -- \
	"${ON_A[@]}" --service-port 9090/tcp --port 8080/tcp "$CAPPORT"
# --scope and --need are one flag: both given is a flag given twice.
set +e
out=$("$EXECGATE" check --keys "$TMP/worker-keys" "${ON_A[@]}" --scope exec --need terminal \
	"$CAP7" 2>&1)
rc=$?
set -e
if [ "$rc" != 2 ] || [ "$out" != "execgate: check: --need: the scope was given already (--scope and --need are one flag) (execgate check --help)" ]; then
	say "  ^^^ check --scope X --need Y: expected exit 2 and one usage line; got exit $rc: $out"
	fails=$((fails + 1))
fi
say

say "== the same check, machine-readable (--json, token read from stdin) =="
show "printf '%s\\n' \"\$CAP8\" | execgate check --keys worker-keys --sandbox S --worker A --generation 7 --activation 1 --now $NOW --json -"
set +e
json=$(printf '%s\n' "$CAP8" | "$EXECGATE" check --keys "$TMP/worker-keys" "${ON_A[@]}" --now "$NOW" --json -)
rc=$?
set -e
say "$json"
say "(exit $rc)"
# The same verdict as the text form above, in the schema's members, and the
# same exit code.
got=$(printf '%s' "$json" | jq -r '[.schema_version, .verdict, .reason, .token.worker,
	.token.generation, .record.worker, .record.generation] | map(tostring) | join(" ")') || got="(not JSON)"
want="2 refresh-route worker-mismatch $B 8 $A 7"
if [ "$got" != "$want" ] || [ "$rc" != 3 ]; then
	say "  ^^^ expected exit 3 and: $want; got exit $rc and: $got"
	fails=$((fails + 1))
fi
say

say "== summary =="
printf '%-38s %-20s %-36s %s\n' "token" "receiver" "verdict" "exit"
printf '%-38s %-20s %-36s %s\n' "-----" "--------" "-------" "----"
for row in "${ROWS[@]}"; do
	IFS='|' read -r l w o rc <<<"$row"
	printf '%-38s %-20s %-36s %s\n' "$l" "$w" "$o" "$rc"
done
if [ "$fails" -ne 0 ]; then
	say "demo-capability: $fails verdict(s) differ from docs/capability.md (Comparator)" >&2
	exit 1
fi
