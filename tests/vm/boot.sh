# SPDX-License-Identifier: BSD-2-Clause
# Boots one guest (sourced, bash). qemu with TCG: KVM opens here but its vCPUs hang (nested
# virtualization), so every instruction is emulated. The first serial port (ttyS0) is the
# console, the second (ttyS1) the driver's protocol; the whole run is under a timeout, so a
# guest that hangs ends as a failure and never holds up the suite. noirqdebug: 6.1-rt with
# two emulated vCPUs took the protocol line's interrupt for a stuck one while the driver
# sent a recording ("irq 3: nobody cared ... Disabling IRQ #3"), and the line went dead.

# vm_boot KDIR INITRD OUTDIR TIMEOUT-S SMP MEM-MIB [CONSOLE-TO-STDOUT]: OUTDIR/console.log and
# OUTDIR/proto.txt (carriage returns removed); returns qemu's status (124: timed out)
vm_boot() {
	local kdir=$1 initrd=$2 out=$3 limit=$4 smp=$5 mem=$6 tee=${7:-} rc
	mkdir -p "$out"
	rm -f "$out/console.log" "$out/proto.raw" "$out/proto.txt"
	# shellcheck disable=SC2054 # commas inside qemu options
	local cmd=(qemu-system-x86_64 -nodefaults -no-user-config -accel tcg,thread=multi -cpu max
		-smp "$smp" -m "$mem" -kernel "$kdir/vmlinuz" -initrd "$initrd"
		-append "console=ttyS0 quiet panic=-1 loglevel=4 noirqdebug"
		-display none -monitor none -serial stdio -serial "file:$out/proto.raw" -no-reboot)
	if [ -n "$tee" ]; then
		timeout -k 5 "$limit" "${cmd[@]}" </dev/null 2>&1 | tee "$out/console.log"
		rc=${PIPESTATUS[0]}
	else
		timeout -k 5 "$limit" "${cmd[@]}" </dev/null >"$out/console.log" 2>&1
		rc=$?
	fi
	tr -d '\r' <"$out/proto.raw" >"$out/proto.txt" 2>/dev/null
	return "$rc"
}

# vm_extra_cpio OUT SCRIPT-TEXT: a small cpio holding /vm/cmd, appended to the initramfs (the
# kernel unpacks concatenated archives in order), so a command runs without rebuilding it
vm_extra_cpio() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/inflight-cmd.XXXXXX")
	mkdir -p "$d/vm"
	printf '%s\n' "$2" >"$d/vm/cmd"
	(cd "$d" && printf 'vm\nvm/cmd\n' | cpio -o -H newc -R 0:0 --quiet) >"$1"
	rm -rf "$d"
}
