#!/bin/sh
# Installs every Debian 12 package the build, tests, fuzzing and VM tests need.
# Idempotent: a machine that already has everything costs one dpkg query.
set -eu

# build-essential: dpkg-checkbuilddeps (make deb) wants it by name, and
# --no-install-recommends would not bring it. e2fsprogs (mke2fs, the system
# test's image), openssl (etcd's test certificates) and procps (/bin/kill,
# the unit's ExecReload, which systemd-analyze verify looks for) are not in
# a minimal Debian root. libnanopb-dev: the static Criterion's protocol
# buffers (Makefile, CRITERION_LIBS). scripts/check-tools.txt lists the
# programs these give, and make test-setup checks them in a fresh root.
PKGS="make build-essential clang llvm gcc pkg-config libbpf-dev bpftool libsodium-dev libelf-dev
zlib1g-dev libcriterion-dev libnanopb-dev libjansson-dev libclang-rt-14-dev clang-format jq python3 iproute2
libmicrohttpd-dev libsystemd-dev systemd prometheus help2man groff-base man-db python3-yaml python3-jsonschema
linux-perf debhelper dpkg-dev fakeroot lintian debootstrap abigail-tools e2fsprogs util-linux
etcd-server etcd-client libcurl4-openssl-dev curl openssl git procps"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup-deps: missing packages:$missing (run as root to install)" >&2
		exit 1
	fi
	echo "setup-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
