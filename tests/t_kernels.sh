#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel matrix (docs/kernels.md): inflight's real-BPF checks (tests/vm/driver.sh: load,
# test_tracer, the prover traced and recorded, privileges) on the kernels production hosts
# run: Debian 11's 5.10, Debian 12's 6.1 and 6.1-rt, Debian 13's 6.12 and 6.12-rt, each in a
# qemu guest (TCG), and on this machine's own kernel directly. The newest kernel of each
# series is fetched from Debian's mirror (cached in build/vm/kernels); the initramfs is built
# once from the current build. Every in-guest check is one TAP line prefixed with the
# kernel's name, and each kernel ends with one summary line (with the BPF load failure's
# reason when there is one). Under CI=true a kernel that cannot be fetched is a failure.
# Each kernel also boots a stress row: two vCPUs, 4 threads firing the contract flat out
# (driver.sh: sec_stress), every hit counted and none given up.
# Env: KERNELS="6.1 5.10" to run some rows only; VM_JOBS, VM_SMP: guests at once and vCPUs
# each (VM_STRESS_SMP for the stress rows); VM_TIMEOUT: seconds per guest; VM_BUDGET:
# seconds for the whole matrix.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/vm/kernels.sh"
source "$ROOT/tests/vm/boot.sh"
source "$ROOT/tests/vm/matrix.sh"
needs_root
rows=${KERNELS:-$VM_ROWS}
jobs=${VM_JOBS:-2}
limit=${VM_TIMEOUT:-480}
# tests/run.sh gives this file 1500 s: the matrix ends its last guests in time to report them
budget=${VM_BUDGET:-1440}
start=$SECONDS
for t in qemu-system-x86_64 cpio jq python3 setpriv; do
	command -v "$t" >/dev/null || skip_all "$t not found (scripts/install-deps.sh test)"
done
[ -x "$BUILD/tests/test_tracer" ] || skip_all "build/tests/test_tracer missing (make all tests)"
# the guests run the static binary (tests/vm/initramfs.sh)
[ -x "$ROOT/build/static/inflight" ] || skip_all "build/static/inflight missing (make static)"

# 1. the kernels (one at a time: they share the private apt state)
declare -A kver unfetched
run=()
for row in $rows; do
	if [ "$row" = host ]; then
		run+=(host)
		continue
	fi
	t=$SECONDS
	if vm_fetch "$row"; then
		kver[$row]=$VM_KVER
		run+=("$row")
		echo "# $row: $VM_KVER ($((SECONDS - t)) s to resolve and fetch)"
		[ -n "$VM_KNOTE" ] && echo "# $row: newer than that: $VM_KNOTE"
	elif [ "${CI:-}" = true ]; then
		not_ok "$row: kernel fetched from Debian's mirror" "$VM_WHY"
		unfetched[$row]="not fetched (a failure under CI=true): $VM_WHY"
	else
		skip "$row: kernel fetched from Debian's mirror" "$VM_WHY"
		unfetched[$row]="not fetched (skipped): $VM_WHY"
	fi
done

# 2. the initramfs, once, from the current build
initrd=$VM_DIR/initramfs.cpio
if ! err=$("$ROOT/tests/vm/initramfs.sh" "$initrd" "$BUILD" 2>&1); then
	not_ok "initramfs built from the current build" "$err"
	finish
fi
echo "# initramfs: $(($(stat -c %s "$initrd") / 1024)) KiB"
# the stress rows' image: the same, with /vm/cmd running only that section
stress_initrd=$VM_DIR/initramfs-stress.cpio
vm_extra_cpio "$VM_DIR/stress-cmd.cpio" "bash /vm/driver.sh stress"
cat "$initrd" "$VM_DIR/stress-cmd.cpio" >"$stress_initrd"

# 3. the rows, VM_JOBS at a time; each guest's timeout shrinks so the last ones still end
# within the budget (a row that gets no time is reported as not run)
logs=$VM_DIR/logs
declare -A started
for job in "${run[@]}" "${run[@]/%/+stress}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	left=$((budget - (SECONDS - start)))
	[ "$left" -lt 30 ] && continue
	[ "$left" -gt "$limit" ] && left=$limit
	started[$job]=1
	row=${job%+stress}
	if [ "$job" = "$row" ]; then
		vm_run_row "$row" "$logs/$row" "$left" "$initrd" &
	else
		vm_run_row "$row" "$logs/$job" "$left" "$stress_initrd" "$VM_STRESS_SMP" stress &
	fi
done
wait

# 4. what each row said, then one summary line per kernel
summaries=()
for row in $rows; do
	if [ -n "${unfetched[$row]:-}" ]; then
		summaries+=("kernel $row: ${unfetched[$row]}")
		continue
	fi
	if [ -z "${started[$row]:-}" ]; then
		not_ok "$row: run" "not started: the matrix's budget of $budget s was spent"
		summaries+=("kernel $row: not run (budget of $budget s spent)")
		continue
	fi
	n0=$_n
	vm_report_row "$row" "$logs/$row" "${kver[$row]:-}"
	[ "$_n" -gt "$n0" ] || not_ok "$row: reported its checks" "nothing came back from the row"
	summaries+=("$VM_SUMMARY")
	if [ -z "${started[$row+stress]:-}" ]; then
		not_ok "$row: stress row run" "not started: the matrix's budget of $budget s was spent"
		summaries+=("kernel $row, stress: not run (budget of $budget s spent)")
		continue
	fi
	n0=$_n
	VM_STRESS_ROW=1 vm_report_row "$row" "$logs/$row+stress" "${kver[$row]:-}"
	[ "$_n" -gt "$n0" ] || not_ok "$row: stress row reported its checks" "nothing came back"
	cpus="$VM_STRESS_SMP vCPUs"
	[ "$row" = host ] && cpus="this machine's CPUs"
	summaries+=("${VM_SUMMARY/:/, stress ($cpus):}")
done
echo "kernel matrix: ${#run[@]} rows in $((SECONDS - start)) s, $jobs at a time, $VM_SMP vCPU each (logs: build/vm/logs/ROW/)"
printf '%s\n' "${summaries[@]}"
finish
