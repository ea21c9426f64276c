#!/bin/sh
# make bench: capability admission (pure userspace), the connect_unix
# program in the kernel, then admission through execgated's socket (root:
# scratch cgroups and pins, removed afterwards).
# Prints figures and targets; asserts nothing.
set -eu
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."

if [ -x "$BUILD/bench-admission" ]; then
	echo "== admission (execgate core) =="
	"$BUILD/bench-admission"
	echo
fi
echo "== kernel: cgroup connect_unix =="
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: kernel part needs root; skipped" >&2
	exit 1
fi
"$BUILD/bench-kernel"

# The allowed path's floor, the socket tag, by kernel function.
echo
echo "== kernel: where the socket tag's time goes (perf) =="
BUILD="$BUILD" ./scripts/profile-tag.sh

# The rest of the allowed path, the checks before the tag, by kernel function.
echo
echo "== kernel: where the checks before the tag go (perf) =="
BUILD="$BUILD" ./scripts/profile-tag.sh checks

# install/retire -> every stale Unix stream stopped, 1 / 100 / 10 000 streams.
if [ -x "$BUILD/bench-revoke" ]; then
	echo
	echo "== stream revocation: Unix (cgroup tier) =="
	"$BUILD/bench-revoke"
fi

# The TCP tier: connect4 cost, connect() ratio, install -> stale TCP streams cut.
if [ -x "$BUILD/bench-tcp" ]; then
	echo
	echo "== TCP / ServicePort tier =="
	"$BUILD/bench-tcp"
fi

# execgated: admit over its socket against the in-process call, 1-16 clients.
if [ -x "$BUILD/bench-daemon" ] && [ -x "$BUILD/execgated" ]; then
	echo
	echo "== execgated: admission over the API socket =="
	EXECGATED_BIN="$PWD/$BUILD/execgated" "$BUILD/bench-daemon"
fi

# The LSM tier needs BPF LSM and vsock_loopback: where this kernel lacks them,
# the same binary runs in a virtme-ng VM (Debian 6.12, lsm=...,bpf).
echo
echo "== kernel: BPF LSM tier =="
rc=0
"$BUILD/bench-lsm" || rc=$?
if [ "$rc" -eq 3 ]; then
	echo "bench: running bench-lsm in a virtme-ng VM (debian-6.12) instead"
	BUILD="$BUILD" ./scripts/vmtest.sh run --kernel debian-6.12 -- "$PWD/$BUILD/bench-lsm"
elif [ "$rc" -ne 0 ]; then
	exit "$rc"
fi
