#!/bin/bash
# The VM kernel matrix (`make vmtest`): boots each Debian kernel under
# virtme-ng (TCG, BPF LSM enabled), runs the kernel test binary built on the
# host inside it, and prints guarantee x kernel -> pass / fail / not offered.
# Exits non-zero on any failure in any VM.
#
#   vmtest.sh                 the matrix (make vmtest; make has built the binaries)
#   vmtest.sh run [--kernel LABEL] -- CMD [ARGS...]
#                             boot one kernel (default debian-6.12) and run CMD
#                             in it through scripts/vm-guest.sh (bench, demo)
#
# Environment: BUILD (build dir, default build), EXECGATE_VM_TIMEOUT (seconds
# per boot, default 290), EXECGATE_VM_KERNELS (labels to boot, default all).
#
# Kernels (scripts/setup-vm-deps.sh fetches and caches them):
#   debian-6.1   no connect_unix, BPF LSM    -> tier lsm
#   debian-6.12  connect_unix and BPF LSM    -> tier full
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
build=$root/$BUILD
timeout_s=${EXECGATE_VM_TIMEOUT:-290}
out_root=$build/vmtest

log() { echo "vmtest: $*" >&2; }
die() {
	log "$*"
	exit 1
}

tier_of() {
	case $1 in
	debian-6.1) echo lsm ;;
	debian-6.12) echo full ;;
	*) die "unknown kernel label $1" ;;
	esac
}

declare -A kver
load_kernels() {
	local label ver
	while read -r label ver; do
		kver[$label]=$ver
	done < <("$root/scripts/setup-vm-deps.sh")
	[ -n "${kver[debian-6.1]:-}" ] && [ -n "${kver[debian-6.12]:-}" ] ||
		die "setup-vm-deps.sh did not report both kernels"
}

# boot LABEL OUTDIR NAME CMD...: one VM; CMD runs under vm-guest.sh. Returns
# vng's status (124 on timeout).
boot() {
	local label=$1 out=$2 name=$3
	shift 3
	local ver=${kver[$label]} tier
	tier=$(tier_of "$label")
	local cmd
	cmd=$(printf '%q ' "$root/scripts/vm-guest.sh" --results "$out" --tier "$tier" \
		--name "$name" -- "$@")
	# The guest sees the host root copy-on-write; only --rwdir reaches back.
	# The explicit guest=host form: vng resolves a bare path relative to the
	# current directory when it checks it.
	timeout -k 15 "$timeout_s" vng --disable-kvm --force-initramfs --force-9p \
		-r "/lib/modules/$ver/vmlinuz" -m 1G -p 2 \
		--append "lsm=lockdown,capability,landlock,bpf" \
		--rwdir="$out=$out" --exec "$cmd" </dev/null
}

# results JSON -> lines "suite::test<TAB>status<TAB>message". Criterion
# 2.4 writes multi-line messages unescaped, which is not JSON: parse with
# strict=False, which accepts control characters inside strings.
flatten() {
	python3 - "$1" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    doc = json.loads(f.read(), strict=False)
for suite in doc.get("test_suites", []):
    for t in suite.get("tests", []):
        msgs = t.get("messages") or []
        first = msgs[0] if msgs else ""
        st = t.get("status")
        if st == "PASSED":
            s = "pass"
        elif st == "SKIPPED" and first.startswith("not offered by this kernel:"):
            s = "not-offered"
        elif st == "SKIPPED":
            s = "skipped"
        else:
            s = "fail"
        text = " / ".join(msgs).replace("\t", " ").replace("\n", " ")
        print(f"{suite['name']}::{t['name']}\t{s}\t{text}")
PY
}

run_one() {
	local label=$1 rc=0
	local out=$out_root/$label
	rm -rf "$out"
	mkdir -p "$out"
	log "$label: booting ${kver[$label]} (tier $(tier_of "$label"), timeout ${timeout_s}s)"
	local t0=$SECONDS
	boot "$label" "$out" tests env EXECGATE_BIN="$build/execgate" \
		EXECGATE_ISSUE_BIN="$build/execgate-issue" \
		"$build/test-kernel" --jobs 1 --json="$out/results.json" \
		>"$out/console.log" 2>&1 || rc=$?
	log "$label: vng exited $rc after $((SECONDS - t0))s (console: $out/console.log)"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "timeout after ${timeout_s}s" >"$out/error"
	elif [ ! -f "$out/tests.rc" ]; then
		echo "guest did not report (vng $rc)" >"$out/error"
	elif [ ! -s "$out/results.json" ]; then
		echo "test binary wrote no results (exit $(cat "$out/tests.rc"))" >"$out/error"
	fi
	if [ -f "$out/error" ]; then
		tail -n 30 "$out/console.log" >&2 || true
	else
		flatten "$out/results.json" >"$out/results.tsv"
	fi
}

matrix() {
	local labels=("$@") cols=() files=() l
	local host_json=$build/test-kernel-host.json
	if [ -s "$host_json" ] && [ "$host_json" -nt "$build/test-kernel" ]; then
		flatten "$host_json" >"$out_root/host.tsv"
		cols+=("host-$(uname -r | cut -d. -f1-2)")
		files+=("$out_root/host.tsv")
	fi
	for l in "${labels[@]}"; do
		cols+=("$l")
		files+=("$out_root/$l/results.tsv")
	done

	local tests
	tests=$(cat "${files[@]}" 2>/dev/null | cut -f1 | sort -u)
	local w=9
	while read -r t; do [ ${#t} -gt $w ] && w=${#t}; done <<<"$tests"

	echo
	printf "%-${w}s" "guarantee"
	for c in "${cols[@]}"; do printf "  %-12s" "$c"; done
	echo
	local t f st
	while read -r t; do
		[ -n "$t" ] || continue
		printf "%-${w}s" "$t"
		for f in "${files[@]}"; do
			if [ -f "$f" ]; then
				st=$(awk -F'\t' -v t="$t" '$1 == t { print $2; exit }' "$f")
				[ -n "$st" ] || st=missing
			else
				st=no-results
			fi
			[ "$st" = not-offered ] && st="not offered"
			printf "  %-12s" "$st"
		done
		echo
	done <<<"$tests"
	echo
}

# --- vmtest.sh run ---------------------------------------------------------------
if [ "${1:-}" = run ]; then
	shift
	label=debian-6.12
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) label=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "usage: vmtest.sh run [--kernel LABEL] -- CMD..."
	load_kernels
	out=$out_root/run-$label
	rm -rf "$out"
	mkdir -p "$out"
	rc=0
	boot "$label" "$out" run env EXECGATE_RESULTS="$out" EXECGATE_BIN="$build/execgate" \
		EXECGATE_ISSUE_BIN="$build/execgate-issue" "$@" || rc=$?
	[ -f "$out/run.rc" ] || die "$label: guest did not report (vng $rc)"
	exit "$(cat "$out/run.rc")"
fi

# --- the matrix --------------------------------------------------------------------
[ -x "$build/test-kernel" ] || die "$build/test-kernel missing: run through make vmtest"
command -v python3 >/dev/null || die "python3 missing: run scripts/setup-deps.sh"
load_kernels
mkdir -p "$out_root"
read -r -a labels <<<"${EXECGATE_VM_KERNELS:-debian-6.1 debian-6.12}"
for l in "${labels[@]}"; do
	tier_of "$l" >/dev/null
	run_one "$l"
done

matrix "${labels[@]}"

pass=0 fail=0 noff=0 bad=0
for l in "${labels[@]}"; do
	out=$out_root/$l
	if [ -f "$out/error" ]; then
		echo "$l (${kver[$l]}): FAILED: $(cat "$out/error")"
		bad=1
		fail=$((fail + 1))
		continue
	fi
	p=$(awk -F'\t' '$2 == "pass"' "$out/results.tsv" | wc -l)
	f=$(awk -F'\t' '$2 == "fail" || $2 == "skipped"' "$out/results.tsv" | wc -l)
	n=$(awk -F'\t' '$2 == "not-offered"' "$out/results.tsv" | wc -l)
	grc=$(cat "$out/tests.rc")
	echo "$l (${kver[$l]}, tier $(tier_of "$l")): $p pass, $f fail, $n not offered, test-kernel exit $grc"
	awk -F'\t' '$2 == "fail" || $2 == "skipped" { printf "  %s %s: %s\n", toupper($2), $1, $3 }' \
		"$out/results.tsv"
	# An unexplained skip inside a VM is a failure: opt-out variables are
	# never set there, and "not offered" has its own prefix.
	[ "$f" -eq 0 ] && [ "$grc" -eq 0 ] || bad=1
	pass=$((pass + p))
	fail=$((fail + f))
	noff=$((noff + n))
done
echo "vmtest: $pass passed, $fail failed, $noff skipped"
[ "$bad" -eq 0 ] || {
	log "FAILED (per-kernel logs under $out_root)"
	exit 1
}
