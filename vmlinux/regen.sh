#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Regenerate the pinned vmlinux.h from a kernel's BTF. The build never runs this:
# vmlinux.h is a pinned input so CO-RE objects do not depend on the build host's kernel.
# Usage: vmlinux/regen.sh [BTF-FILE]   (default /sys/kernel/btf/vmlinux)
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=$(uname -m)
case $arch in x86_64) dir=x86 ;; aarch64) dir=arm64 ;; *) dir=$arch ;; esac
out=$(dirname "$0")/$dir/vmlinux.h
[ -r "$btf" ] || { echo "regen: cannot read $btf: kernel has no BTF (needs CONFIG_DEBUG_INFO_BTF)" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "regen: wrote $out from $btf ($(uname -r))"
