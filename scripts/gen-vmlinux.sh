#!/bin/sh
# Regenerates vmlinux/vmlinux.h from the running kernel's BTF. The header is
# committed so that builds do not depend on the build machine's kernel; CO-RE
# relocations adapt the programs to whichever kernel loads them.
set -eu
cd "$(dirname "$0")/.."
btf=${BTF:-/sys/kernel/btf/vmlinux}
tmp=vmlinux/vmlinux.h.tmp
bpftool btf dump file "$btf" format c >"$tmp"
mv "$tmp" vmlinux/vmlinux.h
echo "vmlinux/vmlinux.h regenerated from $btf ($(uname -r))"
