#!/bin/bash
# The VM kernel matrix (`make vmtest`): boots each Debian kernel under
# virtme-ng (TCG, BPF LSM enabled), runs the kernel test binary built on the
# host inside it, and prints guarantee x kernel -> pass / fail / not offered.
# Exits non-zero on any failure in any VM.
#
#   vmtest.sh                 the matrix (make vmtest; make has built the binaries)
#   vmtest.sh check           only the guarantee-tag consistency check (no VM)
#   vmtest.sh judge           the matrix over the results of the last run (no VM)
#   vmtest.sh run [--kernel LABEL] -- CMD [ARGS...]
#                             boot one kernel (default debian-6.12) and run CMD
#                             in it through scripts/vm-guest.sh (bench, demo)
#
# Environment: BUILD (build dir, default build), EXECGATE_VM_TIMEOUT (seconds
# per boot, default 3000: the system test's VM (3000 too) runs beside the
# matrix in make check, so a whole check stays under 80 minutes at worst;
# a warm check's guests took 2 000 s and more beside other work),
# EXECGATE_VM_KERNELS (labels to boot, default all),
# EXECGATE_VM_FILTER (a Criterion --filter, e.g. 'revoke_vsock/*': only
# those tests run; the others are "filtered", neither pass nor failure, and
# no guarantee matrix is judged, since most of its cells did not run; a
# selected test skipped without a reason of its own counts as filtered too),
# EXECGATE_VM_SERIAL=1 (boot the kernels one after the other, not side by
# side), EXECGATE_VM_JUDGE=later (no matrix: `vmtest.sh judge` makes it),
# EXECGATE_VM_GUESTS ("LABEL:N ...": guests a kernel boots to share its
# suites, default debian-6.12:2, others 1; not with EXECGATE_VM_FILTER),
# EXECGATE_VM_SUITES ("SUITE ...": only those suites go into the queues;
# no guarantee matrix is judged), EXECGATE_VM_CPUS (vCPUs a guest has,
# default 2), EXECGATE_VM_EXEC_LOG=1 (each guest logs every program its
# tests run, with its wall time, to exec.tsv in its output dir;
# tests/kernel/harness.c), EXECGATE_TEST_TIMEOUT_SCALE (what the guests'
# test-kernel multiplies every case's timeout by, default 4: beside the
# other guests of make check a guest gets a fraction of a core for minutes;
# tests/criterion_timeout.c).
#
# Kernels (scripts/setup-vm-deps.sh fetches and caches them):
#   debian-6.1   no connect_unix, BPF LSM    -> tier lsm
#   debian-6.12  connect_unix and BPF LSM    -> tier full
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
build=$root/$BUILD
timeout_s=${EXECGATE_VM_TIMEOUT:-3000}
case_scale=${EXECGATE_TEST_TIMEOUT_SCALE:-4}
# Suites that test userspace alone (flag parsing, key files, CLI output,
# the demo's plumbing) behave the same on every kernel: they run on the
# host (make test-kernel) and are not repeated under TCG, where every process
# start is many times slower. They back no guarantee (tagged "none"), so no cell of
# the matrix needs them; EXECGATE_VM_ALL_SUITES=1 runs them anyway.
host_only_suites="keys_cli keystore cli_flags cli_demo cli_worker cli_verdict verbose"
[ "${EXECGATE_VM_ALL_SUITES:-0}" = 1 ] && host_only_suites=""
vm_filter='*/*'
[ -n "$host_only_suites" ] && vm_filter="!(${host_only_suites// /|})/*"
[ -n "${EXECGATE_VM_FILTER:-}" ] && vm_filter=$EXECGATE_VM_FILTER
# flatten marks them "host-only" (Criterion reports a filtered test as
# SKIPPED), which is neither a pass nor a failure of that kernel.
export EXECGATE_VM_HOST_ONLY=$host_only_suites
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
	# current directory when it checks it. no_timer_check: under TCG on a
	# loaded host the IO-APIC timer check can miss its ticks and panic the
	# boot ("IO-APIC + timer doesn't work!"), a guest that never reports.
	timeout -k 15 "$timeout_s" vng --disable-kvm --force-initramfs --force-9p \
		-r "/lib/modules/$ver/vmlinuz" -m 1G -p "${EXECGATE_VM_CPUS:-2}" \
		--append "lsm=lockdown,capability,landlock,bpf no_timer_check" \
		--rwdir="$out=$out" --exec "$cmd" </dev/null
}

# flatten JSON COLUMN [SUITE]: results JSON -> lines
# "suite::test<TAB>status<TAB>message", only SUITE's when given (a run with
# --filter 'SUITE/*' reports every other test as skipped). Criterion
# 2.4 writes multi-line messages unescaped, which is not JSON: parse with
# strict=False, which accepts control characters inside strings.
flatten() {
	python3 - "$@" <<'PY'
import json, os, sys
host_only = set(os.environ.get("EXECGATE_VM_HOST_ONLY", "").split())
only = sys.argv[3] if len(sys.argv) > 3 else None

def repaired(text):
    # Criterion writes assertion messages into its JSON unescaped: a
    # message quoting a string ("audit_events") breaks the document.
    # Each message is one line inside a "messages" array: re-quote it.
    out, inside = [], False
    for line in text.split("\n"):
        s = line.strip()
        if inside and s.startswith("]"):
            inside = False
        elif inside and s.startswith('"'):
            comma = s.endswith(",")
            body = s[1:-2] if comma else s[1:-1]
            line = line[: len(line) - len(line.lstrip())] + json.dumps(body) + ("," if comma else "")
        if s.startswith('"messages": [') and not s.endswith("]"):
            inside = True
        out.append(line)
    return "\n".join(out)


with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    text = f.read()
try:
    doc = json.loads(text, strict=False)
except ValueError:
    doc = json.loads(repaired(text), strict=False)
for suite in doc.get("test_suites", []):
    if only is not None and suite["name"] != only:
        continue
    for t in suite.get("tests", []):
        msgs = t.get("messages") or []
        first = msgs[0] if msgs else ""
        st = t.get("status")
        if st == "PASSED":
            s = "pass"
        elif st == "SKIPPED" and first.startswith("not offered by this kernel:"):
            s = "not-offered"
        elif (st == "SKIPPED" and os.environ.get("EXECGATE_VM_FILTER")
              and msgs in ([], ["The test was skipped."])):
            s = "filtered"
        elif st == "SKIPPED" and suite["name"] in host_only and sys.argv[2] == "vm":
            s = "host-only"
        elif st == "SKIPPED":
            s = "skipped"
        else:
            s = "fail"
        text = " / ".join(msgs).replace("\t", " ").replace("\n", " ")
        print(f"{suite['name']}::{t['name']}\t{s}\t{text}")
PY
}

# boot_failure VNG-RC T0 RC-FILE ERROR PREFIX: a boot that timed out, or
# whose guest never wrote its exit status, says so in ERROR.
boot_failure() {
	if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then
		echo "${5}timeout after ${timeout_s}s" >"$4"
	elif [ ! -f "$3" ]; then
		echo "${5}guest did not report (vng $1, after $((SECONDS - $2))s)" >"$4"
	fi
	return 0
}

# exec_log_env DIR: the guest's EXECGATE_EXEC_LOG, when asked for.
exec_log_env() {
	[ "${EXECGATE_VM_EXEC_LOG:-0}" = 1 ] && echo "EXECGATE_EXEC_LOG=$1/exec.tsv"
	return 0
}

run_one() {
	local label=$1 rc=0
	local out=$out_root/$label
	rm -rf "$out"
	mkdir -p "$out"
	log "$label: booting ${kver[$label]} (tier $(tier_of "$label"), timeout ${timeout_s}s)"
	local t0=$SECONDS
	boot "$label" "$out" tests env EXECGATE_BIN="$build/execgate" \
		EXECGATE_ISSUE_BIN="$build/execgate-issue" $(exec_log_env "$out") \
		EXECGATE_TEST_TIMEOUT_SCALE="$case_scale" \
		"$build/test-kernel" --jobs 1 --verbose --filter "$vm_filter" --json="$out/results.json" \
		>"$out/console.log" 2>&1 || rc=$?
	log "$label: vng exited $rc after $((SECONDS - t0))s (console: $out/console.log)"
	boot_failure "$rc" "$t0" "$out/tests.rc" "$out/error" ""
	if [ ! -f "$out/error" ] && [ ! -s "$out/results.json" ]; then
		echo "test binary wrote no results (exit $(cat "$out/tests.rc"))" >"$out/error"
	fi
	if [ -f "$out/error" ]; then
		tail -n 30 "$out/console.log" >&2 || true
	else
		flatten "$out/results.json" vm >"$out/results.tsv"
	fi
}

# --- the shared queue of suites (no EXECGATE_VM_FILTER) ---------------------------

# The suites a guest runs, in the order the guests take them: the
# parameterized suites first (--list counts one test for each, and each
# runs one case a parameter: the situation table is 3 tests and 44 cases),
# then by count, largest first, so that what is left at the end is short.
suite_order() {
	local param
	param=$(grep -ho 'ParameterizedTest([^,]*, *[a-z_0-9]*' "$root"/tests/kernel/test_*.c |
		sed 's/.*, *//' | sort -u)
	"$build/test-kernel" --list 2>&1 |
		sed -n 's/^\([a-z_0-9]*\): \([0-9]*\) tests\{0,1\}$/\1 \2/p' |
		while read -r suite n; do
			case " $host_only_suites " in *" $suite "*) continue ;; esac
			grep -qx "$suite" <<<"$param" && n=$((n + 1000))
			echo "$n $suite"
		done | sort -k1,1nr -k2,2 | awk '{ print $2 }'
}

# The longest suites first, by what each took on this kernel in the last
# matrix that ran it (remember_seconds): the guests of a kernel then end
# close together, where the order by count left one guest running a long
# suite alone at the end. Suites with no record yet keep suite_order's
# place, before the measured ones. The record only orders the queue; it
# never decides what runs.
seconds_file() {
	echo "${EXECGATE_VMTEST_CACHE:-/var/cache/execgate-vmtest}/suite-seconds.$1.tsv"
}
measured_order() {
	local label=$1 f
	shift
	f=$(seconds_file "$label")
	printf '%s\n' "$@" | awk -v f="$f" '
		BEGIN { while ((getline l < f) > 0) { split(l, a, " "); sec[a[1]] = a[2] } }
		{ printf "%d %06d %s\n", ($1 in sec) ? 1 : 0, ($1 in sec) ? 999999 - sec[$1] : NR, $1 }' |
		sort -k1,1n -k2,2n | awk '{ print $3 }'
}
# remember_seconds LABEL DIR: the seconds each suite took in this run, for
# the next run's order; suites this run did not run keep their record (a
# run of a few suites does not forget the others). Written whole, then
# renamed: a reader never sees half.
remember_seconds() {
	local f
	f=$(seconds_file "$1")
	[ -d "$(dirname "$f")" ] || return 0
	{ cat "$f" 2>/dev/null; cat "$2"/g*/suites.tsv 2>/dev/null; } |
		awk 'NF >= 2 && $2 ~ /^[0-9]+$/ { sec[$1] = $2 } END { for (s in sec) print s, sec[s] }' |
		sort >"$f.tmp" && mv "$f.tmp" "$f" || rm -f "$f.tmp"
}

# How many guests a kernel boots: EXECGATE_VM_GUESTS ("LABEL:N ...";
# default 6.12, which runs every tier's tests, two; the others one).
guests_of() {
	local item n=1
	[ "$1" = debian-6.12 ] && n=2
	for item in ${EXECGATE_VM_GUESTS:-}; do
		[ "${item%%:*}" = "$1" ] && n=${item#*:}
	done
	[[ "$n" =~ ^[1-8]$ ]] || die "EXECGATE_VM_GUESTS: $1:$n: 1 to 8 guests"
	echo "$n"
}

# run_guest LABEL NAME: one guest of the kernel, taking suites from its
# queue until none is left (scripts/vm-suites.sh). Its files: NAME.rc and
# NAME.env in the kernel's dir (vm-guest.sh), the rest under NAME/.
run_guest() {
	local label=$1 name=$2 rc=0 t0=$SECONDS
	local dir=$out_root/$label
	local out=$dir/$name
	mkdir -p "$out"
	log "$label/$name: booting ${kver[$label]} (tier $(tier_of "$label"), timeout ${timeout_s}s)"
	boot "$label" "$dir" "$name" env EXECGATE_BIN="$build/execgate" \
		EXECGATE_ISSUE_BIN="$build/execgate-issue" $(exec_log_env "$out") \
		EXECGATE_TEST_TIMEOUT_SCALE="$case_scale" \
		"$root/scripts/vm-suites.sh" "$dir/queue" "$out" "$build/test-kernel" \
		>"$out/console.log" 2>&1 || rc=$?
	log "$label/$name: vng exited $rc after $((SECONDS - t0))s (console: $out/console.log)"
	boot_failure "$rc" "$t0" "$dir/$name.rc" "$out/error" "$name: "
}

# run_queue LABEL: the kernel's suites into its queue, its guests side by
# side, then one kernel's results as run_one leaves them (results.tsv,
# tests.rc, error, console.log) for judge.
run_queue() {
	local label=$1 n i=0 g suite f taken rc json
	local dir=$out_root/$label
	local pids=()
	rm -rf "$dir"
	mkdir -p "$dir/queue/todo" "$dir/queue/taken"
	for suite in $(measured_order "$label" "${suites[@]}"); do
		printf -v f '%03d-%s' "$i" "$suite"
		: >"$dir/queue/todo/$f"
		i=$((i + 1))
	done
	n=$(guests_of "$label")
	for ((g = 1; g <= n; g++)); do
		run_guest "$label" "g$g" &
		pids+=($!)
	done
	for g in "${pids[@]}"; do
		wait "$g" || true
	done
	# No guest took a suite: none started (qemu that never got as far as
	# the guest is a boot failure, not a test result). One more guest, said
	# loudly. Suites left after a guest that started and then died are
	# that guest's failure ("never taken" below), not a reason to boot.
	if [ -z "$(ls "$dir/queue/taken")" ]; then
		log "$label: no guest started (no suite taken); booting one more guest"
		run_guest "$label" "g$((n + 1))"
	fi
	rc=0
	: >"$dir/results.tsv"
	: >"$dir/console.log"
	for g in "$dir"/g*/; do
		g=$(basename "$g")
		{ echo "--- guest $g"; cat "$dir/$g/console.log"; } >>"$dir/console.log" 2>/dev/null
		# A guest that took no suite and printed nothing never started: the
		# others ran its share.
		taken=$(ls "$dir/queue/taken" | grep -c "\.$g\$" || true)
		if [ -f "$dir/$g/error" ] && { [ "$taken" -gt 0 ] || [ -s "$dir/$g/console.log" ]; }; then
			cat "$dir/$g/error" >>"$dir/error"
		fi
		[ -f "$dir/$g.rc" ] && [ "$(cat "$dir/$g.rc")" != 0 ] && rc=$(cat "$dir/$g.rc")
	done
	for suite in "${suites[@]}"; do
		json=$(ls "$dir"/g*/json/"$suite.json" 2>/dev/null | head -n 1)
		if [ -z "$json" ] || [ ! -s "$json" ]; then
			taken=$(ls "$dir/queue/taken" | sed -n "s/^[0-9]*-$suite\.//p")
			echo "suite $suite: no results (${taken:+taken by guest $taken}${taken:-never taken})" \
				>>"$dir/error"
			continue
		fi
		flatten "$json" vm "$suite" >>"$dir/results.tsv"
	done
	echo "$rc" >"$dir/tests.rc"
	remember_seconds "$label" "$dir"
	log "$label: $(wc -l <"$dir/results.tsv") cases from ${#suites[@]} suites; seconds a suite: $(
		cat "$dir"/g*/suites.tsv 2>/dev/null | sort -k2,2nr | head -n 5 |
			awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
	[ -f "$dir/error" ] && tail -n 30 "$dir/console.log" >&2
	return 0
}

# Guarantee tags: each Test(suite, name, ...) in tests/kernel/test_*.c is
# directly preceded by a comment naming the guarantees it backs:
#   /* guarantees: stream-lease, unix-path-machine-wide@lsm */
#   /* guarantees: none */                 (CLI, probe: backs no guarantee)
# NAME@TIER[+TIER] counts the test for NAME only on kernels of those tiers
# (cgroup, lsm, full); on other kernels the test backs nothing for NAME.
# The names are the loader's own: whatever `execgate status --json` lists,
# read from a pin dir nothing is loaded in.
#
# gmatrix check STATUS_JSON SRC_DIR
#   every test tagged, every tag a real guarantee, every guarantee tagged;
#   one line per problem on stderr, exit 1 if any.
# gmatrix matrix STATUS_JSON SRC_DIR COLUMN=TIER=RESULTS_TSV...
#   per-test detail, then guarantee x kernel -> pass / fail / not offered
#   (partial: some tests passed, the others were not offered); exit 1 on
#   any check problem or failed cell.
gmatrix() {
	python3 - "$@" <<'PY'
import glob, json, os, re, sys

TIERS = {"cgroup", "lsm", "full"}
# Test(suite, name, ...) and ParameterizedTest(TYPE *param, suite, name, ...)
TEST = re.compile(r"^(?:Test\(\s*|ParameterizedTest\([^,]*,\s*)(\w+)\s*,\s*(\w+)", re.M)
TAG = re.compile(r"/\*\s*guarantees:((?:(?!\*/).)*)\*/\s*$", re.S | re.M)

def names(status_json):
    with open(status_json, encoding="utf-8") as f:
        doc = json.load(f)
    return [g["name"] for g in doc["guarantees"]]

def tags(src):
    """suite::test -> [(guarantee, set of tiers or None)], problems"""
    out, bad = {}, []
    for path in sorted(glob.glob(os.path.join(src, "test_*.c"))):
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path)
        for m in TEST.finditer(text):
            test = f"{m[1]}::{m[2]}"
            line = text.count("\n", 0, m.start()) + 1
            t = None
            for t in TAG.finditer(text, 0, m.start()):
                pass
            if not t or text[t.end():m.start()].strip():
                bad.append(f"{rel}:{line}: {test}: no /* guarantees: ... */ comment "
                           "directly above it")
                continue
            body = " ".join(l.strip().lstrip("*") for l in t[1].split("\n"))
            items = [i.strip() for i in body.split(",") if i.strip()]
            out[test] = []
            if items == ["none"]:
                continue
            for item in items:
                name, _, on = item.partition("@")
                tiers = set(on.split("+")) if on else None
                if tiers is not None and not tiers <= TIERS:
                    bad.append(f"{rel}:{line}: {test}: {item}: tiers are "
                               f"{', '.join(sorted(TIERS))}")
                out[test].append((name, tiers))
    return out, bad

def check(status_json, src):
    known = names(status_json)
    tagged, bad = tags(src)
    used = {n for ts in tagged.values() for n, _ in ts}
    if not known:
        bad.append("execgate status --json lists no guarantees")
    for test, ts in sorted(tagged.items()):
        for n, _ in ts:
            if n not in known:
                bad.append(f"{test}: tag {n} is not a guarantee execgate status lists")
    for n in known:
        if n not in used:
            bad.append(f"guarantee {n} (execgate status) is backed by no test")
    return known, tagged, bad

def results(path):
    r = {}
    if os.path.isfile(path):
        for line in open(path, encoding="utf-8"):
            test, st, _ = line.rstrip("\n").split("\t", 2)
            r[test] = st
    return r

def cell(sts):
    if any(s not in ("pass", "not-offered") for s in sts):
        return "fail"
    if sts and all(s == "pass" for s in sts):
        return "pass"
    if all(s == "not-offered" for s in sts):
        return "not offered"
    return "partial"

def matrix(status_json, src, columns):
    known, tagged, bad = check(status_json, src)
    cols = []
    for c in columns:
        label, tier, path = c.split("=", 2)
        cols.append((label, tier, os.path.isfile(path), results(path)))
    cw = max([11] + [max(len(l), len(t) + 7) for l, t, _, _ in cols])

    def row(first, w, cells):
        print(f"{first:<{w}}" + "".join(f"  {s:<{cw}}" for s in cells).rstrip())

    # Per test: what each kernel said.
    tests = sorted(set(tagged) | {t for _, _, _, r in cols for t in r})
    w = max([4] + [len(t) for t in tests])
    print()
    row("test", w, [l for l, _, _, _ in cols])
    for t in tests:
        sts = [r.get(t, "missing") if have else "no-results" for _, _, have, r in cols]
        row(t, w, ["not offered" if s == "not-offered" else s for s in sts])
        if t not in tagged:
            bad.append(f"{t}: ran, but carries no guarantees tag in {src}")
        if all(have for _, _, have, _ in cols) and all(s == "not-offered" for s in sts):
            bad.append(f"{t}: not offered on any kernel of the matrix: CI never ran it")
    # Per guarantee: the tests backing it on each kernel's tier.
    failed = False
    w = max([9] + [len(n) for n in known])
    print()
    row("guarantee", w, [l for l, _, _, _ in cols])
    row("", w, [f"(tier {tier})" for _, tier, _, _ in cols])
    for n in known:
        cells = []
        for _, tier, have, r in cols:
            backing = [t for t, ts in tagged.items()
                       if any(g == n and (on is None or tier in on) for g, on in ts)]
            c = cell([r.get(t, "missing") if have else "no-results" for t in backing])
            failed |= c == "fail"
            cells.append(c)
        row(n, w, cells)
    print()
    sys.stdout.flush()
    for b in bad:
        print(f"vmtest: {b}", file=sys.stderr)
    return 1 if bad or failed else 0

mode = sys.argv[1]
if mode == "check":
    _, _, bad = check(sys.argv[2], sys.argv[3])
    for b in bad:
        print(f"vmtest: {b}", file=sys.stderr)
    sys.exit(1 if bad else 0)
sys.exit(matrix(sys.argv[2], sys.argv[3], sys.argv[4:]))
PY
}

# The loader's guarantee list, and what the host kernel offers: probe on a
# pin dir that does not exist lists every guarantee as not held and probes
# the tiers now (status would only report what a load recorded).
status_json=$out_root/status-unloaded.json
read_guarantees() {
	local none=$out_root/none-$$
	mkdir -p "$out_root"
	"$build/execgate" probe --json --pin-dir "/sys/fs/bpf/execgate-vmtest-none-$$" \
		--state-dir "$none" >"$status_json" ||
		die "execgate probe --json on an empty pin dir failed"
	rm -rf "$none"
}

host_tier() {
	python3 - "$status_json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
off = {t["name"] for t in doc["tiers"] if t["offered"]}
print("full" if off >= {"cgroup", "lsm"} else "lsm" if "lsm" in off
      else "cgroup" if "cgroup" in off else "none")
PY
}

matrix() {
	local labels=("$@") cols=() l
	local host_json=$build/test-kernel-host.json
	if [ -s "$host_json" ] && [ "$host_json" -nt "$build/test-kernel" ]; then
		flatten "$host_json" host >"$out_root/host.tsv"
		cols+=("host-$(uname -r | cut -d. -f1-2)=$(host_tier)=$out_root/host.tsv")
	fi
	for l in "${labels[@]}"; do
		cols+=("$l=$(tier_of "$l")=$out_root/$l/results.tsv")
	done
	gmatrix matrix "$status_json" "$root/tests/kernel" "${cols[@]}"
}

# judge LABEL...: the guarantee matrix (unless EXECGATE_VM_JUDGE=later or a
# filter ran) and each kernel's counts; exits 1 on any failure.
judge() {
	local labels=("$@") bad=0 pass=0 fail=0 noff=0 l out p f n grc
	if [ -n "${EXECGATE_VM_FILTER:-}" ]; then
		log "EXECGATE_VM_FILTER=$EXECGATE_VM_FILTER: only those tests ran; no guarantee matrix"
	elif [ -n "${EXECGATE_VM_SUITES:-}" ]; then
		log "EXECGATE_VM_SUITES=$EXECGATE_VM_SUITES: only those suites ran; no guarantee matrix"
	elif [ "${EXECGATE_VM_JUDGE:-}" = later ]; then
		log "EXECGATE_VM_JUDGE=later: the guarantee matrix is judged by vmtest.sh judge"
	else
		matrix "${labels[@]}" || bad=1
	fi
	for l in "${labels[@]}"; do
		out=$out_root/$l
		if [ -f "$out/error" ]; then
			echo "$l (${kver[$l]}): FAILED: $(cat "$out/error")"
			# The guest's last words, where make check's summary (and so
			# CI's excerpt of it) shows them: a panic, an OOM, the test
			# that was running.
			tail -n 15 "$out/console.log" 2>/dev/null | tr -d '\r' | cut -c1-200 |
				sed "s/^/  console| /"
			bad=1
			fail=$((fail + 1))
			continue
		fi
		if [ ! -f "$out/results.tsv" ]; then
			echo "$l (${kver[$l]}): FAILED: no results (did it boot?)"
			bad=1
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
	echo "vmtest: $pass passed, $fail failed, $noff not offered"
	[ "$bad" -eq 0 ] || {
		log "FAILED (per-kernel logs under $out_root)"
		exit 1
	}
}

# --- vmtest.sh judge ---------------------------------------------------------------
# The matrix over results already there: make check runs it once both the
# VM lane and the host suite (the matrix's host column) are done.
if [ "${1:-}" = judge ]; then
	[ -x "$build/execgate" ] || die "$build/execgate missing: make BUILD=$BUILD first"
	read_guarantees
	load_kernels
	read -r -a labels <<<"${EXECGATE_VM_KERNELS:-debian-6.1 debian-6.12}"
	EXECGATE_VM_JUDGE= judge "${labels[@]}"
	exit 0
fi

# --- vmtest.sh check ---------------------------------------------------------------
if [ "${1:-}" = check ]; then
	[ -x "$build/execgate" ] || die "$build/execgate missing: make BUILD=$BUILD first"
	read_guarantees
	gmatrix check "$status_json" "$root/tests/kernel"
	log "guarantee tags: every test tagged, every guarantee backed"
	exit 0
fi

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
	# Through a pipe: with our stdout a regular file (make bench > log),
	# the VM's output truncated everything written to it before.
	boot "$label" "$out" run env EXECGATE_RESULTS="$out" EXECGATE_BIN="$build/execgate" \
		EXECGATE_ISSUE_BIN="$build/execgate-issue" "$@" 2>&1 | cat || rc=$?
	[ -f "$out/run.rc" ] || die "$label: guest did not report (vng $rc)"
	exit "$(cat "$out/run.rc")"
fi

# --- the matrix --------------------------------------------------------------------
[ -x "$build/test-kernel" ] || die "$build/test-kernel missing: run through make vmtest"
command -v python3 >/dev/null || die "python3 missing: run scripts/setup-deps.sh"
mkdir -p "$out_root"
# Untagged tests or unbacked guarantees fail before any VM boots.
read_guarantees
gmatrix check "$status_json" "$root/tests/kernel" || die "guarantee tags inconsistent"
load_kernels
read -r -a labels <<<"${EXECGATE_VM_KERNELS:-debian-6.1 debian-6.12}"
mapfile -t suites < <(suite_order)
[ -n "${EXECGATE_VM_FILTER:-}" ] || [ "${#suites[@]}" -gt 0 ] ||
	die "$build/test-kernel --list named no suite"
if [ -n "${EXECGATE_VM_SUITES:-}" ]; then
	for s in $EXECGATE_VM_SUITES; do
		printf '%s\n' "${suites[@]}" | grep -qx "$s" ||
			die "EXECGATE_VM_SUITES: $s: no such suite in the matrix (test-kernel --list)"
	done
	read -r -a suites <<<"$EXECGATE_VM_SUITES"
fi
# One kernel's boot, and the retry of a VM that never started.
run_kernel() {
	local l=$1
	if [ -z "${EXECGATE_VM_FILTER:-}" ]; then
		run_queue "$l"
		return
	fi
	run_one "$l"
	# qemu that never got as far as the guest (vng 255, no console output)
	# is a boot failure, not a test result: one more boot, said loudly.
	if grep -qs '^guest did not report' "$out_root/$l/error" &&
		! [ -s "$out_root/$l/console.log" ]; then
		log "$l: the VM did not start ($(cat "$out_root/$l/error")); booting it once more"
		run_one "$l"
	fi
}
# The kernels boot side by side: each guest runs one test at a time, so
# each keeps about one host core busy (TCG); one after the other, the
# matrix took the sum of both. A kernel with the most to run boots more
# than one guest, and they share its suites (run_queue): with one guest a
# kernel, 6.12 ran alone for most of the matrix's time while the other
# core had nothing left to do (docs/bench/2026-12-06-vm-lane.md).
# EXECGATE_VM_SERIAL=1 boots the kernels in turn.
pids=()
for l in "${labels[@]}"; do
	tier_of "$l" >/dev/null
	guests_of "$l" >/dev/null
	if [ "${EXECGATE_VM_SERIAL:-0}" = 1 ]; then
		run_kernel "$l"
	else
		run_kernel "$l" &
		pids+=($!)
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || true
done

judge "${labels[@]}"
