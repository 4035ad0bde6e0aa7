#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the guests' initramfs (an uncompressed newc cpio): busybox-static for init and the
# shell tools, bash for the driver, setpriv (util-linux: capabilities for the privilege
# checks), jq, bpftool (for hand-run feature probes), the static inflight (build/static, `make
# static`: the binary production hosts get, alone, with no library of this host), the
# current build's prover, test_tracer, test_lifecycle and probegen with every shared library
# ldd lists for those helpers (they, bash, setpriv, jq and bpftool are glibc programs of this
# host), the dynamic loader, tests/vm/init as /init and tests/vm/driver.sh. Cloud kernels
# have no 9p or virtio-fs built in, so everything the guest runs travels in here.
# Usage: tests/vm/initramfs.sh OUT.cpio [BUILD-DIR]  (env STATIC_INFLIGHT: the static binary,
# default build/static/inflight)
set -eu
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build}
stage=$(mktemp -d "${TMPDIR:-/tmp}/inflight-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

die() { echo "initramfs: $*" >&2; exit 1; }

# put FILE DEST: FILE at DEST inside the image, with the libraries it loads
put() {
	local f=$1 dest=$stage$2 lib
	[ -f "$f" ] || die "$f is missing (run make all tests; scripts/install-deps.sh test)"
	mkdir -p "$(dirname "$dest")"
	cp -L "$f" "$dest"
	# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
	for lib in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[ -f "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}

# put_static FILE DEST: FILE at DEST, refused unless it is static (no interpreter, no NEEDED):
# nothing of this host's userland goes with it
put_static() {
	[ -f "$1" ] || die "$1 is missing (make static)"
	readelf -ld "$1" | grep -qE 'INTERP|\(NEEDED\)' && die "$1 is not static (make static)"
	install -D -m 755 "$1" "$stage$2"
}

busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
# init runs before any library could be found: busybox must be the static build
readelf -l "$busybox" | grep -q INTERP && die "$busybox is not static (install busybox-static)"
put "$busybox" /bin/busybox
for a in $("$busybox" --list); do
	[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
done
put "$(command -v bash)" /bin/bash
put "$(command -v setpriv)" /usr/bin/setpriv
put "$(command -v jq)" /usr/bin/jq
put "$(command -v bpftool || echo /usr/sbin/bpftool)" /usr/sbin/bpftool
put_static "${STATIC_INFLIGHT:-$root/build/static/inflight}" /opt/inflight/inflight
put "$build/prover" /opt/inflight/prover
put "$build/tests/test_tracer" /opt/inflight/tests/test_tracer
put "$build/tests/probegen" /opt/inflight/tests/probegen
put "$build/tests/test_lifecycle" /opt/inflight/tests/test_lifecycle
# libcuda's calls: the stand-in driver (found where the build put it, as ldd names it) and
# its programs, with what they must give
put "$build/tests/cuda/cuda_workers" /opt/inflight/tests/cuda/cuda_workers
put "$build/tests/cuda/cuda_workers_dlopen" /opt/inflight/tests/cuda/cuda_workers_dlopen
put "$build/tests/cuda/libcuda.so.1" /opt/inflight/tests/cuda/libcuda.so.1
install -D -m 644 "$root/tests/cuda/expect.sh" "$stage/vm/cuda_expect.sh"
# several images in one process: an application and its libraries, each row in its own
# directory ($ORIGIN finds the linked library), and their known answers
for f in two-libs/app two-libs/libgpu.so two-libs/libaux.so plain/app plain/libgpu.so \
	plain/libplain.so; do
	put "$build/tests/images/$f" "/opt/inflight/tests/images/$f"
done
install -D -m 644 "$root/tests/images/expect.sh" "$stage/vm/images_expect.sh"
install -D -m 644 "$root/bpf/inflight.h" "$stage/vm/inflight.h"
install -m 755 "$root/tests/vm/init" "$stage/init"
install -D -m 755 "$root/tests/vm/driver.sh" "$stage/vm/driver.sh"
install -D -m 644 "$root/tests/vm/hold.sh" "$stage/vm/hold.sh"
mkdir -p "$stage"/{proc,sys,dev,tmp,run,root,etc}
chmod 1777 "$stage/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	>"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
# the console the kernel opens for init before devtmpfs is mounted
[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
