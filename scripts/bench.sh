#!/bin/sh
# make bench: capability admission (pure userspace) then the connect_unix
# program in the kernel (root: scratch cgroups and pins, removed afterwards).
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
