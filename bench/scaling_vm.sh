# SPDX-License-Identifier: BSD-2-Clause
# Section scaling_vm: the scaling section's shape with more CPUs than this machine has: a
# qemu guest (TCG, so every figure is emulated: the shape across thread counts and the ratios
# within a round are what it shows, never a nanosecond to compare with the host's) with
# BENCH_VM_SMP vCPUs (8) on a kernel of the matrix (BENCH_VM_KERNEL, 6.12: the atomic form;
# fetched and cached as tests/t_kernels.sh does), probe_loop with 1, 2, 4 and 8 threads under
# the floor (b), inflight's atomic form (c) and its locked form (c-locked), alternated within
# each round (bench/scaling_vm_guest.sh). bpftrace does not travel into the guest. inflight
# runs without RSS there (--no-rss): the loop faults no pages while it is measured, and the
# rss_stat tracepoint is the one whose patching killed a multi-vCPU guest (tests/vm/hold.sh).

scaling_vm() {
	local row=${BENCH_VM_KERNEL:-6.12} smp=${BENCH_VM_SMP:-8} rounds=${BENCH_VM_REPS:-3}
	local out=$OUTDIR/scaling_vm stage line t rc
	source tests/vm/kernels.sh
	source tests/vm/boot.sh
	for t in qemu-system-x86_64 cpio; do
		command -v "$t" >/dev/null || { note scaling_vm "not measured: $t not found (scripts/install-deps.sh test)"; return 0; }
	done
	if ! vm_fetch "$row"; then
		note scaling_vm "not measured: kernel $row not fetched: $VM_WHY"
		return 0
	fi
	mkdir -p "$out"
	if ! tests/vm/initramfs.sh "$out/base.cpio" "$BUILD" >"$out/initramfs.log" 2>&1; then
		note scaling_vm "not measured: the initramfs did not build: $(tail -n 1 "$out/initramfs.log")"
		return 0
	fi
	# the loop, the floor's programs and this script, appended to the matrix's image
	stage=$(mktemp -d "$TMPB/vm.XXXXXX")
	install -D -m 755 "$BENCH/probe_loop" "$stage/opt/inflight/bench/probe_loop"
	install -D -m 755 "$BENCH/usdt_empty" "$stage/opt/inflight/bench/usdt_empty"
	install -D -m 755 bench/scaling_vm_guest.sh "$stage/vm/scaling.sh"
	printf 'bash /vm/scaling.sh %s %s "1 2 4 8"\n' "$rounds" "$SECONDS_PER_RUN" >"$stage/vm/cmd"
	(cd "$stage" && find opt vm | cpio -o -H newc -R 0:0 --quiet) >"$out/extra.cpio"
	cat "$out/base.cpio" "$out/extra.cpio" >"$out/initramfs.cpio"
	rm -f "$out/base.cpio" "$out/extra.cpio"
	vm_boot "$VM_DIR/kernels/$row" "$out/initramfs.cpio" "$out" "${BENCH_VM_TIMEOUT:-2400}" \
		"$smp" 2048
	rc=$?
	rm -f "$out/initramfs.cpio"
	grep -q '^done$' "$out/proto.txt" ||
		note scaling_vm "the guest did not finish (qemu status $rc; console: $(tr -d '\r' <"$out/console.log" | tail -n 2 | tr '\n' ' ' | cut -c1-200))"
	line=$(sed -n 's/^held //p' "$out/proto.txt")
	[ "$line" = 8 ] || note scaling_vm "tracepoints held in the guest: ${line:-none} of 8"
	scaling_vm_read "$out/proto.txt" "$rounds"
}

# scaling_vm_read PROTO ROUNDS: the guest's lines (bench/scaling_vm_guest.sh) into the raw
# figures, the ratios of each round, and env.txt's kernel and vCPUs
scaling_vm_read() {
	local line cfg t rep
	local -A vm_ns=()
	echo "scaling_vm_kernel=$(sed -n 's/^kernel \([^ ]*\) cpus .*/\1/p' "$1")" >>"$OUTDIR/env.txt"
	echo "scaling_vm_cpus=$(sed -n 's/^kernel [^ ]* cpus //p' "$1")" >>"$OUTDIR/env.txt"
	while read -r line; do
		case $line in
		"failed "*) note scaling_vm "no result: ${line#failed }" ;;
		"run "*)
			read -r _ cfg t rep _ <<<"$line"
			vm_ns[$cfg.$t.$rep]=$(kv ns_per_hit "$line")
			record scaling_vm "$cfg" "$t" "$rep" ns_per_hit "${vm_ns[$cfg.$t.$rep]}"
			[ "$cfg" = empty ] || scaling_vm_exact "$cfg" "$t" "$rep" "$line"
			;;
		esac
	done <"$1"
	for rep in $(seq 1 "$2"); do
		for t in 1 2 4 8; do
			scaling_vm_ratio inflight empty "$t" "$rep"
			scaling_vm_ratio locked empty "$t" "$rep"
			scaling_vm_ratio inflight locked "$t" "$rep"
		done
	done
}

# scaling_vm_ratio X Y THREADS REP
scaling_vm_ratio() {
	local x=${vm_ns[$1.$3.$4]:-} y=${vm_ns[$2.$3.$4]:-}
	[ -n "$x" ] && [ -n "$y" ] && record scaling_vm "$1/$2" "$3" "$4" ratio "$(calc "$x / $y")"
	return 0
}

# scaling_vm_exact CONFIG THREADS REP LINE: the guest's inflight counted what the loop fired
scaling_vm_exact() {
	local seen want
	seen=$(kv seen "$4" | tr ',' ' ')
	want="$(kv allocs "$4") $(kv frees "$4") $(kv stages "$4")"
	if [ -z "$seen" ]; then
		note scaling_vm "$1, $2 thread(s), round $3: no JSON summary from inflight: totals not checked"
		return 0
	fi
	if [ "$seen" = "$want" ] && [ "$(kv exact "$4")" = true ]; then
		record scaling_vm "$1" "$2" "$3" exact 1
	else
		record scaling_vm "$1" "$2" "$3" exact 0
		note scaling_vm "$2 thread(s), round $3: $1 counted $seen (alloc free stage), probe_loop fired $want, exact $(kv exact "$4")"
	fi
	record scaling_vm "$1" "$2" "$3" given_up "$(kv given_up "$4")"
}
