#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sources deploy/bash-completion/execgate and checks COMPREPLY for typed
# lines, then checks its tables against the built binaries: the subcommands
# `--help` lists and every flag each subcommand's --help names must be
# completed. usage: test-completion.sh BUILD_DIR
BUILD=${1:?usage: test-completion.sh BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=../../deploy/bash-completion/execgate
. deploy/bash-completion/execgate || exit 1

fails=0
ok() { echo "  ok   $*"; }
fail() {
	echo "  FAIL $*"
	fails=$((fails + 1))
}

# Splits a line as bash does for completion (blanks, and '=' as its own
# word), runs the function `complete -p` registered for its command, and
# prints the sorted COMPREPLY on one line.
complete_line()
{
	local line=$1 fn
	local -a words
	read -r -a words <<<"${line//=/ = }"
	[[ $line == *" " ]] && words+=("")
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=$((${#words[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	fn=$(complete -p "${words[0]}" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	[[ -n $fn ]] || {
		echo "<no completion registered for ${words[0]}>"
		return
	}
	COMPREPLY=()
	"$fn" "${words[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | paste -sd ' '
}

expect()
{
	local line=$1 want=$2 got
	got=$(complete_line "$line")
	if [[ $got == "$want" ]]; then
		ok "'$line<TAB>' -> '$got'"
	else
		fail "'$line<TAB>' -> '$got', want '$want'"
	fi
}

scratch=$BUILD/ops-completion
rm -rf "$scratch" && mkdir -p "$scratch/pins.d" && : >"$scratch/kid.pub" || exit 1

echo "completion: typed lines"
expect "execgate ins" "install"
expect "execgate install --bri" "--bridge-pid --bridge-socket"
expect "execgate --ver" "--verbose --version"
expect "execgate --vers" "--version"
expect "execgate re" "retire revoke"
expect "execgate s" "show status"
expect "execgate events --d" "--drain"
expect "execgate forget --" "--help --json --pin-dir --sandbox --state-dir --verbose --version"
expect "execgate load --require " "cgroup full lsm tcp"
expect "execgate load --require=l" "lsm"
expect "execgate load --js" "--json"
expect "execgate install --substrate firecracker-k" "firecracker-k8s"
expect "execgate install --sandbox " ""
expect "execgate admit --scope file.read,e" "file.read,exec"
expect "execgate check --established --no" "--no-record --now"
expect "execgate keys " "add list remove"
expect "execgate keys --state-dir $scratch l" "list"
expect "execgate keys add $scratch/kid" "$scratch/kid.pub"
expect "execgate load --pin-dir $scratch/pin" "$scratch/pins.d"
expect "execgate --p" "--pin-dir"
expect "execgate --pin-dir $scratch/pin" "$scratch/pins.d"
expect "execgate --pin-dir $scratch/x ke" "keys"
expect "execgate --pin-dir=$scratch/x --state-dir $scratch keys l" "list"
expect "execgate --state-dir $scratch keys --j" "--json"
expect "execgate --state-dir $scratch node-key r" "reset"
expect "execgate load --mode " "audit enforce"
expect "execgate load --mode=a" "audit"
expect "execgate install --mode " "audit enforce inherit"
expect "execgate mode " "audit enforce"
expect "execgate mode e" "enforce"
expect "execgate mode --sandbox 5f0c2c1e-7a4b-4c1d-9e3f-000000000007 " "audit enforce inherit"
expect "execgate mode audit " ""
expect "execgate --pin-dir $scratch mode a" "audit"
expect "execgate help ins" "install"
expect "execgate help install " ""
expect "execgate-issue c" "cap"
expect "execgate-issue cap --not" "--not-before"
expect "execgate-issue keygen --out $scratch/p" "$scratch/pins.d"
expect "execgated --con" "--config"
expect "execgated --config $scratch/ki" "$scratch/kid.pub"
expect "execgated -c $scratch/ki" "$scratch/kid.pub"
expect "execgate-bridge --vm" "--vmm-socket"
expect "execgate-bridge --vsock" "--vsock-port"
expect "execgate verdict " "verify"
expect "execgate node-key " "init reset"
expect "execgate node-key r" "reset"
expect "execgate node-key reset --w" "--worker-id"
expect "execgate verdict verify --node-key $scratch/ki" "$scratch/kid.pub"

# Words of a shell list variable or function output, sorted, one line.
sorted() { tr ' ' '\n' | sed '/^$/d' | sort -u | paste -sd ' '; }

# Every --flag that "$@" prints (stdout and stderr) must be in $flags.
flags_cover()
{
	local what=$1 flags=$2 f missing=
	shift 2
	local help
	help=$("$@" 2>&1)
	for f in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
		[[ " $flags " == *" $f "* ]] || missing="$missing $f"
	done
	if [[ -z $missing ]]; then
		ok "$what: every flag of its --help is completed"
	else
		fail "$what: --help names$missing, deploy/bash-completion/execgate does not complete it"
	fi
}

echo "completion: tables against the binaries' --help"
for bin in execgate execgate-issue; do
	[[ -x $BUILD/$bin ]] || fail "$BUILD/$bin: not built"
done
have=$(echo "$_execgate_commands" | sorted)
want=$("$BUILD/execgate" --help | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p' | sorted)
if [[ -n $want && $have == "$want" ]]; then
	ok "execgate: the subcommands of --help: $want"
else
	fail "execgate: --help lists '$want', the completion '$have'"
fi
for c in $want; do
	flags_cover "execgate $c" "$(_execgate_flags "$c")" "$BUILD/execgate" "$c" --help
done

have=$(echo "$_execgate_issue_commands" | sorted)
want=$("$BUILD/execgate-issue" --help | grep -o 'execgate-issue [a-z][a-z-]*' | cut -d' ' -f2 | sorted)
if [[ -n $want && $have == "$want" ]]; then
	ok "execgate-issue: the subcommands of --help: $want"
else
	fail "execgate-issue: --help lists '$want', the completion '$have'"
fi
for c in $want; do
	flags_cover "execgate-issue $c" "$(_execgate_issue_flags "$c")" "$BUILD/execgate-issue" "$c" --help
done

if [[ -x $BUILD/execgated ]]; then
	flags_cover "execgated" "$_execgated_flags" "$BUILD/execgated" --help
elif compgen -G 'user/daemon/*.c' >/dev/null; then
	fail "$BUILD/execgated: not built, but user/daemon/ has sources"
else
	echo "  NOT TESTED execgated: no $BUILD/execgated (user/daemon/ has no sources yet)"
fi

flags_cover "execgate-bridge" "$_execgate_bridge_flags" "$BUILD/execgate-bridge" --help

if ((fails)); then
	echo "test-completion: $fails FAILED"
	exit 1
fi
echo "test-completion: all passed"
