# SPDX-License-Identifier: BSD-2-Clause
# Running rows of the kernel matrix and reading what their driver said (sourced, bash, after
# tests/vm/kernels.sh and tests/vm/boot.sh). A row's files are in build/vm/logs/ROW/:
# console.log (what a person reads), proto.txt (the driver's protocol), files/ (what the
# guest sent back: the recording, the live summary, libbpf's full log when loading failed).

VM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM_SMP=${VM_SMP:-1}
VM_MEM=${VM_MEM:-1024}

# The stress row's guests: two vCPUs each (tests/vm/driver.sh: sec_stress)
VM_STRESS_SMP=${VM_STRESS_SMP:-2}

# vm_run_row ROW OUTDIR TIMEOUT-S INITRD [SMP SECTION...]: boots the row's cached kernel
# (vm_fetch first) with the driver (the INITRD says which sections), or runs the driver here
# for the host row (the SECTIONs, or all); writes OUTDIR/status ("rc SECONDS")
vm_run_row() {
	local row=$1 out=$2 limit=$3 initrd=$4 smp=${5:-$VM_SMP} t0=$SECONDS rc
	shift 5 2>/dev/null || shift $#
	rm -rf "$out"
	mkdir -p "$out"
	if [ "$row" = host ]; then
		INFL_BIN=${BUILD:-$VM_ROOT/build} timeout -k 5 "$limit" bash "$VM_ROOT/tests/vm/driver.sh" \
			"$@" 3>"$out/proto.txt" >"$out/console.log" 2>&1
		rc=$?
	else
		vm_boot "$VM_DIR/kernels/$row" "$initrd" "$out" "$limit" "$smp" "$VM_MEM"
		rc=$?
	fi
	echo "$rc $((SECONDS - t0))" >"$out/status"
}

# vm_files OUTDIR: unpacks the files the driver sent (file NAME / base64 / end NAME)
vm_files() {
	mkdir -p "$1/files"
	awk -v dir="$1/files" '
		/^file [A-Za-z0-9._-]+$/ { name = $2; f = dir "/" name ".b64"; printf "" > f; next }
		/^end / { close(f); name = ""; next }
		name != "" { print >> f }' "$1/proto.txt"
	local b
	for b in "$1"/files/*.b64; do
		[ -f "$b" ] || continue
		base64 -d "$b" >"${b%.b64}" 2>/dev/null || echo "vm: $b did not decode" >&2
		rm -f "$b"
	done
}

# vm_report_row ROW OUTDIR KVER: the row's TAP lines (through tests/lib.sh's ok/not_ok, each
# prefixed with the kernel's name), then its summary line in VM_SUMMARY; the row's pass and
# fail counts are the growth of lib.sh's own counters (_n, _failed) over the row
vm_report_row() {
	local row=$1 out=$2 kver=$3 name line rc secs p0=$((_n - _failed)) f0=$_failed why="" times=""
	local verifier="" done=0 booted=0
	read -r rc secs <"$out/status"
	name=$(sed -n 's/^kernel //p' "$out/proto.txt" | head -n 1)
	[ -n "$name" ] && booted=1
	[ -n "$name" ] || name=$(vm_row_kname "$row" "$kver")
	vm_files "$out"
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		"not ok - "*) not_ok "$name: ${line#not ok - }" ;;
		"# "*) echo "# $name: ${line#\# }" ;;
		"time boot "* | "time load "* | "time tracer "* | "time prover "* | "time priv "* | "time cuda "* | "time ring "* | "time images "* | "time stress "* | "time driver "*)
			times="$times ${line#time }s" ;;
		"load-failed "*) why=${line#load-failed } ;;
		"verifier "*) verifier=${line#verifier } ;;
		done) done=1 ;;
		esac
	done < <(awk '/^file /{ f = 1 } !f { print } /^end /{ f = 0 }' "$out/proto.txt")
	if [ "$booted" = 0 ]; then
		not_ok "$name: booted and started the driver" \
			"$(vm_status_text "$rc" "$secs"); console: $(vm_console_tail "$out")"
	elif [ "$done" = 0 ]; then
		not_ok "$name: the driver ran to its end" \
			"$(vm_status_text "$rc" "$secs"); console: $(vm_console_tail "$out")"
	fi
	if [ "$booted" = 1 ] && [ -n "${VM_STRESS_ROW:-}" ]; then
		vm_check_stress "$name" "$out"
	elif [ "$booted" = 1 ]; then
		vm_check_recording "$name" "$out"
	fi
	# the host row runs no guest: its console is the driver's own output
	if [ "$booted" = 1 ] && [ "$done" = 1 ] && [ "$row" != host ]; then
		vm_check_kernel_log "$name" "$out"
	fi
	VM_SUMMARY="kernel $name: $((_n - _failed - p0)) passed, $((_failed - f0)) failed"
	VM_SUMMARY="$VM_SUMMARY ($row, ${kver:-the host kernel}; ${secs}s:${times:- no timings})"
	[ -n "$why" ] && VM_SUMMARY="$VM_SUMMARY; BPF load failed: $why"
	[ -n "$verifier" ] && VM_SUMMARY="$VM_SUMMARY; verifier: $verifier"
	[ -s "$out/files/verbose.log" ] && VM_SUMMARY="$VM_SUMMARY; libbpf log: ${out#"$VM_ROOT"/}/files/verbose.log"
	[ "$booted" = 1 ] && [ "$done" = 0 ] && VM_SUMMARY="$VM_SUMMARY; $(vm_status_text "$rc" "$secs")"
	[ "$booted" = 0 ] && VM_SUMMARY="$VM_SUMMARY; did not boot: $(vm_status_text "$rc" "$secs")"
	true
}

# vm_row_kname ROW "PACKAGE VERSION": the kernel's uname -r before it has said so itself
vm_row_kname() {
	local p=${2%% *}
	[ "$1" = host ] && { uname -r; return; }
	p=${p#linux-image-}
	echo "${p%-unsigned}"
}

vm_status_text() {
	case $1 in
	124 | 137) echo "timed out after $2 s" ;;
	0) echo "qemu ended after $2 s" ;;
	*) echo "exit status $1 after $2 s" ;;
	esac
}

# Every oops or warning the kernel logged on a guest's console, one line each (its header,
# CPU and RIP lines and its call trace's function names, joined by '|'), up to 8
vm_console_reports() {
	tr -d '\r' <"$1/console.log" | sed 's/^\[ *[0-9.]*\] *//' | awk '
		function flush() { if (rep != "") print substr(rep, 1, 1500); rep = "" }
		function add(line) { rep = rep line "|" }
		/BUG:|Oops|general protection fault|Unable to handle|WARNING: CPU|Kernel panic/ {
			if (!(on && /^Kernel panic/)) flush()
			on = 1; trace = 0; add($0); next }
		on && /^(CPU: |RIP: |Call Trace:)/ { add($0); trace = /^Call Trace:/; next }
		on && trace && /^<\/?(TASK|IRQ|NMI|SOFTIRQ)>/ { add($0); next }
		on && trace && /^ *(\? )?[A-Za-z_][A-Za-z0-9_.]*\+0x/ {
			sub(/^ */, ""); sub(/\/0x[0-9a-f]+.*/, ""); add($0); next }
		on && trace { trace = 0 }
		END { flush() }' | head -n 8
}

# The first of them (what a guest that died is shown with)
vm_console_oops() {
	vm_console_reports "$1" | head -n 1
}

# What the console says of a guest that did not finish: its last three lines, after the
# kernel's first oops or warning when it had one
vm_console_tail() {
	local oops
	oops=$(vm_console_oops "$1")
	[ -n "$oops" ] && printf 'oops: %s ... ' "$oops"
	tr -d '\r' <"$1/console.log" | grep -v '^\s*$' | tail -n 3 | tr '\n' '|' | cut -c1-400
}

# vm_check_kernel_log NAME OUTDIR: a guest that ran to its end said nothing alarming on its
# console while sessions attached, traced and detached. An oops or warning whose place or
# call trace is in the kernel's tracing (BPF, uprobes, tracepoints, perf events, the text
# patching they do: what inflight drives) fails the row; one elsewhere, or a watchdog's
# report of a vCPU not run for seconds wherever it stood, is shown as a comment line and
# passes, since the emulator's own quirks (a vCPU starved on a loaded host) are not the
# tracer's to answer for, but it is never hidden.
vm_check_kernel_log() {
	local name=$1 reports report bad="" what="no oops or warning in its tracing"
	reports=$(vm_console_reports "$2")
	if [ -z "$reports" ]; then
		ok "$name: the guest kernel logged no oops or warning"
		return
	fi
	while IFS= read -r report; do
		# a watchdog's report says a vCPU was not run for seconds (the emulator on a
		# loaded host), wherever it stood, and that is often in the probes' path
		if ! [[ ${report%%|*} =~ soft\ lockup|hard\ LOCKUP|stall|blocked\ for\ more ]] &&
			grep -qiE 'bpf|uprobe|tracepoint|trace_|perf_|ftrace|text_poke|static_call|jump_label' <<<"$report"; then
			bad=$report
			break
		fi
	done <<<"$reports"
	if [ -n "$bad" ]; then
		not_ok "$name: the guest kernel logged $what" "$bad"
		return
	fi
	ok "$name: the guest kernel logged $what"
	while IFS= read -r report; do
		echo "# $name: the guest kernel logged, not in its tracing or a starved vCPU's: $report"
	done <<<"$reports"
}

# vm_check_stress NAME OUTDIR: the stress row's recorded run, its peak replayed here by the
# independent decoder against the kernel's own (the schedule makes it differ run to run)
vm_check_stress() {
	local name=$1 f=$2/files kernel replay
	if [ ! -s "$f/stress.rec" ]; then
		not_ok "$name: host: the guest sent back its stress recording" \
			"missing; what came back: $(ls "$f" 2>/dev/null | tr '\n' ' ')"
		return
	fi
	kernel=$("${BUILD:-$VM_ROOT/build}/inflight" report "$f/stress.rec" --format json 2>&1 |
		jq -r '.processes[0] | "peak \(.peak.bytes)"' 2>&1)
	replay=$(python3 "$VM_ROOT/tests/record/recdump.py" "$f/stress.rec" summary 2>&1 |
		awk '{ print "peak", $2 }')
	check_eq "$name: host: the stress recording's peak equals the independent replay's" \
		"$kernel" "$replay"
}

# vm_check_recording NAME OUTDIR: the guest's recording decoded here by the independent
# reader, against the live session that watched the same run in the guest
vm_check_recording() {
	local name=$1 f=$2/files got
	if [ ! -s "$f/incident.rec" ] || [ ! -s "$f/live.json" ]; then
		not_ok "$name: host: the guest sent back its recording and live summary" \
			"missing; what came back: $(ls "$f" 2>/dev/null | tr '\n' ' ')"
		return
	fi
	ok "$name: host: the guest sent back its recording and live summary"
	got=$(python3 "$VM_ROOT/tests/vm/check_rec.py" "$f/incident.rec" 2>&1)
	local q='.processes[0] | "events \(.events.buf_alloc) \(.events.buf_free) \(.events.stage)"'
	local rj
	rj=$("${BUILD:-$VM_ROOT/build}/inflight" report "$f/incident.rec" --format json 2>&1)
	# both sessions exact on every row (the guest checks it too): the same run, the same events
	check_eq "$name: host: both sessions exact (the live one and the recording)" \
		"$(jq -r '.processes[0].exact' "$f/live.json" 2>&1) $(jq -r '.processes[0].exact' <<<"$rj" 2>&1)" \
		"true true"
	check_eq "$name: host: recorded events per probe (independent decoder) equal the live session's" \
		"$(sed -n 1p <<<"$got")" "$(jq -r "$q" "$f/live.json" 2>&1)"
	# the peak within the recording's session: its kernel's counters (END record) against
	# the decoder's replay of its events, in the kernel's accounting order
	q='.processes[0] | "peak \(.peak.bytes) at_us \(.peak.time_s * 1e6 | round) done \(.completed.owners)"'
	check_eq "$name: host: the kernel's peak, its time and owners done equal the decoder's replay" \
		"$("${BUILD:-$VM_ROOT/build}/inflight" report "$f/incident.rec" --format json 2>&1 | jq -r "$q" 2>&1)" \
		"$(python3 "$VM_ROOT/tests/record/recdump.py" "$f/incident.rec" summary 2>&1)"
	check_eq "$name: host: folded memory x time equals the independent decoder's" \
		"$("${BUILD:-$VM_ROOT/build}/inflight" report "$f/incident.rec" --format folded 2>&1 | sort)" \
		"$(python3 "$VM_ROOT/tests/record/recdump.py" "$f/incident.rec" folded 2>&1 | sort)"
}
