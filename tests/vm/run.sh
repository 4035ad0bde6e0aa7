#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# One row of the kernel matrix, by hand: boots KERNEL with the current build's binaries
# and runs the in-guest driver (all of it, or the SECTIONs given with --driver), or any
# COMMAND (run by bash in the guest, as root, in /tmp; PATH has inflight, prover, probegen,
# test_tracer, driver.sh, jq, bpftool, setpriv, busybox). Prints the guest's console as it
# goes; exits with the command's status (the driver's: 1 when a check failed).
#   tests/vm/run.sh 6.1                        the whole driver on 6.1
#   tests/vm/run.sh 5.10 --driver load         only the load section (libbpf's log on failure)
#   tests/vm/run.sh 6.1 -- inflight -v -- probegen script /vm/run.txt
#   tests/vm/run.sh host --driver tracer       the driver on this machine's kernel, no VM
# Rows: 5.10 6.1 6.1-rt 6.12 6.12-rt host. Env: VM_SMP (2), VM_MEM (1024), VM_TIMEOUT (300).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/vm/kernels.sh"
source "$root/tests/vm/boot.sh"
usage() { sed -n '3,13s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
row=$1
shift
script=""
case ${1:-} in
"") script="driver.sh" ;;
--driver) shift; script="driver.sh $*" ;;
--) shift; [ $# -ge 1 ] || usage; script=$(printf '%q ' "$@") ;;
*) usage ;;
esac
build=${BUILD:-$root/build}
[ "$(id -u)" = 0 ] || { echo "vm: needs root (BPF in the host row; the kernel cache under build/)" >&2; exit 3; }

if [ "$row" = host ]; then
	# shellcheck disable=SC2086
	INFL_BIN=$build PATH=$build:$build/tests:$root/tests/vm:$PATH bash -c "$script" 3>/dev/null
	exit $?
fi
vm_row_pattern "$row" >/dev/null || { echo "vm: unknown row '$row' (rows: $VM_ROWS)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "vm: qemu-system-x86_64 not found (scripts/install-deps.sh test)" >&2; exit 3; }
t=$SECONDS
vm_fetch "$row" || { echo "vm: $row: $VM_WHY" >&2; exit 4; }
echo "vm: $row: $VM_KVER${VM_KNOTE:+ (newer: $VM_KNOTE)}" >&2
out=$VM_DIR/run/$row
mkdir -p "$out"
"$root/tests/vm/initramfs.sh" "$out/base.cpio" "$build" || exit 4
# the command travels as /vm/cmd in a second archive appended to the image; /vm/run.txt is
# a small probegen script for quick tries
vm_extra_cpio "$out/cmd.cpio" "printf 'stage 1 0\\nalloc 16 1 4096 1\\nalloc 17 2 8192 1\\nstage 1 1\\nfree 16 1 4096\\nstage 1 4\\n' >/vm/run.txt
$script"
cat "$out/base.cpio" "$out/cmd.cpio" >"$out/initrd"
echo "vm: booting ($((SECONDS - t)) s to fetch and pack)" >&2
t=$SECONDS
vm_boot "$VM_DIR/kernels/$row" "$out/initrd" "$out" "${VM_TIMEOUT:-300}" "${VM_SMP:-2}" \
	"${VM_MEM:-1024}" tee
rc=$?
status=$(sed -n 's/^vm-exit //p' "$out/proto.txt" | tail -n 1)
echo "vm: $row: guest ran $((SECONDS - t)) s; console in ${out#"$root"/}/console.log" >&2
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "vm: timed out after ${VM_TIMEOUT:-300} s" >&2
	exit 124
fi
[ -n "$status" ] || { echo "vm: the guest ended without the command's status (qemu: $rc)" >&2; exit 125; }
exit "$status"
