#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian 12 packages inflight needs, only those missing; idempotent and quick
# when everything is there. `make` calls it. Usage: scripts/install-deps.sh [build|test|bench|all]
set -eu
want=${1:-build}

build_pkgs="clang llvm libbpf-dev bpftool systemtap-sdt-dev libelf-dev zlib1g-dev libzstd-dev
 pkg-config libjson-c-dev libmicrohttpd-dev libcap-dev dpkg-dev xz-utils make
 musl-tools gnulib autoconf automake linux-libc-dev debhelper"
test_pkgs="bpftrace valgrind libclang-rt-14-dev prometheus curl util-linux libcap2-bin
 binutils chromium xmlstarlet jq libxml2-utils python3 liblttng-ust-dev
 qemu-system-x86 busybox-static cpio g++ lld mold gcc-multilib rustc cargo tmux
 debootstrap lintian bash-completion man-db strace"
bench_pkgs="hyperfine liblttng-ust-dev lttng-tools"

case $want in
build) pkgs=$build_pkgs ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
bench) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
all) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
*) echo "install-deps: unknown set '$want': use build, test, bench or all" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# node and npm come with the machine image, not from Debian (whose npm conflicts with it)
[ "$want" = build ] || command -v npm >/dev/null || echo "install-deps: npm not found; the speedscope viewer test needs Node.js and npm" >&2
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing; run as root or install them: apt-get install$missing" >&2
	exit 3
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
