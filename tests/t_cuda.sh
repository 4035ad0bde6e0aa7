#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libcuda's memory calls without a GPU (attach/cuda.c, inflight.bpf.c "libcuda's memory
# calls"): the stand-in libcuda.so.1 of tests/cuda/ (the driver API's signatures, real
# allocations, failures on demand) under real programs. tests/cuda/cuda_workers.c says where
# every number below comes from: 4 worker threads on owners 1..4 and the main thread (no
# owner), every memory function inflight attaches to, 5 failed calls. Checked exactly, per
# (class, stage), at the peak and at the end, in the JSON summary, a recording (the reader
# and the independent decoder tests/record/recdump.py) and the Prometheus exposition; the
# program linked and loading the library with dlopen(), under both USDT mechanisms, under
# -b (--cuda-lib), without the contract, and with --no-cuda. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
INFLIGHT=${INFLIGHT:-$BUILD/inflight} # the sanitized build: INFLIGHT=build/san/inflight
C=$BUILD/tests/cuda
needs_root
command -v jq >/dev/null || skip_all "needs jq"
command -v curl >/dev/null || skip_all "needs curl"
for f in "$C/libcuda.so.1" "$C/cuda_workers" "$C/cuda_workers_dlopen" "$C/cuda_plain"; do
	[ -e "$f" ] || { not_ok "built: $f" "run make tests"; finish; }
done

# proj FILE, want_workers: what every run of cuda_workers must give (shared with the kernel
# matrix's driver)
source "$ROOT/tests/cuda/expect.sh"

# run NAME CMD...: traced under --, the projection in $got, exit in $rc
run() {
	local name=$1
	shift
	rm -f "$TMP/$name.json"
	"$INFLIGHT" --json -o "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	got=$(proj "$TMP/$name.json")
}

for mech in multi perf; do
	export INFLIGHT_ATTACH=$mech
	run linked -- "$C/cuda_workers"
	check_eq "$mech: linked libcuda: every call counted per owner and stage, exactly" \
		"$rc $got" "0 $want_workers"
	run dlopen -- "$C/cuda_workers_dlopen" "$C/libcuda.so.1"
	check_eq "$mech: libcuda loaded with dlopen() after the start: the same numbers" \
		"$rc $got" "0 $want_workers"
	wait_detached
done
unset INFLIGHT_ATTACH
# the locked form (what kernels before 5.17 run): libcuda's programs tail-call its lock's
# programs like the contract's do, through one program array
run locked --accounting locked -- "$C/cuda_workers"
check_eq "the locked form: the same numbers, libcuda's programs loaded" \
	"$rc $got $(grep -c 'not traced' "$TMP/locked.err")" "0 $want_workers 0"
wait_detached
check_eq "the failed calls are said once, not as an inexact total" \
	"$(grep -c 'CUDA memory calls failed' "$TMP/linked.err") $(grep -c 'inexact' "$TMP/linked.err")" "1 0"

# a program without the contract: device memory alone, owner (none), said so
run plain -- "$C/cuda_plain"
check_eq "no contract, libcuda linked: device memory by owner (none)" "$rc $got" \
	"0 peak 6000 (none);cuda_device 3 6000
end 4000 (none);cuda_device 2 4000
lifetime cuda_device 3/6000 1/2000
failed 1 events 0/0/0 exact true"
check_match "... the start says it" "$(cat "$TMP/plain.err")" \
	"cuda_plain carries none of the contract's probes: tracing libcuda's memory calls alone, owners \(none\)"
"$INFLIGHT" -- "$C/cuda_plain" >"$TMP/plain.txt" 2>&1
check_match "... and the summary" "$(cat "$TMP/plain.txt")" \
	"libcuda's memory calls alone \(no contract event\): every owner \(none\)"

# -p: a running program's memory from before the attach, freed after it (late attach)
CUDA_PLAIN_GATE=1 "$C/cuda_plain" >"$TMP/late.out" 2>&1 &
pg=$!
bg_track "$pg"
if wait_until 20 file_has "$TMP/late.out" '^gated'; then
	"$INFLIGHT" --json -o "$TMP/late.json" -p "$pg" >/dev/null 2>"$TMP/late.err" &
	ipid=$!
	bg_track "$ipid"
	if wait_until 30 file_has "$TMP/late.err" '^inflight: tracing'; then
		kill -USR1 "$pg"
		wait "$ipid"
		check_eq "-p: frees of memory allocated before the attach are the late-attach kind" \
			"$? $(jq -c 'select(.type == "summary") | .processes[0] | [.unmatched.free, .anomalies.double_free, .at_end.bytes, .at_end.bufs, .exact]' "$TMP/late.json")" \
			'0 [{"cuda_device":{"bufs":2,"bytes":0}},0,500,1,true]'
	else
		not_ok "-p: inflight attached" "$(cat "$TMP/late.err")"
	fi
else
	not_ok "-p: the program waits at its gate" "$(cat "$TMP/late.out")"
fi

# --no-cuda: the contract alone, nothing of libcuda attached or counted
# (the input buffers' peak: the last one's alloc, some owners maybe still in load)
peak_classes() {
	jq -r 'select(.type == "summary") | .processes[0].peak |
		"peak \(.bytes) \([.classes | to_entries[] | "\(.key) \(.value.bufs) \(.value.bytes)"] | join(","))"' "$1"
}
run nocuda --no-cuda -- "$C/cuda_workers"
check_eq "--no-cuda: only the program's own buffers" "$rc $(peak_classes "$TMP/nocuda.json")
$(echo "$got" | tail -n +2)" \
	"0 peak 4000 input 4 4000
end 0 
lifetime input 4/4000 4/4000
failed 0 events 4/4/8 exact true"
"$INFLIGHT" --no-cuda -- "$C/cuda_plain" >/dev/null 2>"$TMP/nocuda.err"
check_eq "--no-cuda on a program without the contract: refused as before (exit 5)" "$?" 5

# --cuda-lib: a library of another name
cp "$C/libcuda.so.1" "$TMP/libgpu-driver.so"
run renamed --cuda-lib "$TMP/libgpu-driver.so" -- "$C/cuda_workers_dlopen" "$TMP/libgpu-driver.so"
check_eq "--cuda-lib PATH: a driver library of another name" "$rc $got" "0 $want_workers"
run unnamed -- "$C/cuda_workers_dlopen" "$TMP/libgpu-driver.so"
check_eq "... without it, that library is not libcuda" "$rc $(peak_classes "$TMP/unnamed.json")" \
	"0 peak 4000 input 4 4000"

# a recording: the reader and the independent decoder agree with the live numbers
rm -f "$TMP/w.rec"
"$INFLIGHT" record -q -o "$TMP/w.rec" -- "$C/cuda_workers" >/dev/null 2>&1
check_eq "record: the run recorded" "$?" 0
check_eq "record: format 1.6 (1.3 brought its classes)" "$(head -c 12 "$TMP/w.rec" | od -An -tu2 -j8 | tr -s ' ')" " 1 6"
check_eq "recdump (independent): in flight at the end per (stage, class)" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/w.rec" atend | tr '\n' ',')" \
	"gpu;cuda_device 4 $dev4,(none);cuda_device 1 10240,"
check_eq "recdump: the peak" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/w.rec" summary | cut -d' ' -f1,2)" \
	"peak $((dev4 + 10240 + 16384 + 32768 + 4000))"
check_eq "report folded = recdump folded (memory x time per stage and class)" \
	"$("$INFLIGHT" report "$TMP/w.rec" --format folded | sort)" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/w.rec" folded | sort)"
"$INFLIGHT" report "$TMP/w.rec" --format json -o "$TMP/w.rep.json" 2>/dev/null
check_eq "report json: the peak's composition by class, the replay matches the kernel" \
	"$(jq -c '.processes[0] | [.peak.bytes, ([.peak.classes | to_entries[] | "\(.key)=\(.value.bytes)"] | sort), .replay_exact, .check.mismatches]' "$TMP/w.rep.json" 2>&1)" \
	"[$((dev4 + 10240 + 16384 + 32768 + 4000)),[\"cuda_device=$((dev4 + 10240))\",\"cuda_host=16384\",\"cuda_managed=32768\",\"input=4000\"],true,0]"
"$INFLIGHT" report "$TMP/w.rec" >"$TMP/w.txt" 2>&1
check_match "report text: the replay matches the kernel's final counters" "$(cat "$TMP/w.txt")" \
	"check +the replay matches the kernel's final counters"
"$INFLIGHT" compare "$TMP/w.rec" "$TMP/w.rec" >"$TMP/cmp.txt" 2>&1
check_match "compare: the CUDA classes are compared" "$(cat "$TMP/cmp.txt")" "cuda_device"

# -b: the processes of a binary started after the attach, libcuda by --cuda-lib
"$INFLIGHT" --json -o "$TMP/bin.json" -b "$C/cuda_workers" --cuda-lib "$C/libcuda.so.1" \
	>/dev/null 2>"$TMP/bin.err" &
ipid=$!
bg_track "$ipid"
if wait_until 30 file_has "$TMP/bin.err" '^inflight: tracing'; then
	"$C/cuda_workers" >/dev/null 2>&1
	prc=$?
	kill -INT "$ipid"
	wait "$ipid"
	check_eq "-b with --cuda-lib: a later process counted exactly" \
		"$? $prc $(proj "$TMP/bin.json")" "0 0 $want_workers"
else
	not_ok "-b with --cuda-lib: inflight started" "$(cat "$TMP/bin.err")"
fi
wait_detached

# -b on a binary without the contract: its processes' device memory alone
"$INFLIGHT" --json -o "$TMP/binplain.json" -b "$C/cuda_plain" --cuda-lib "$C/libcuda.so.1" \
	>/dev/null 2>"$TMP/binplain.err" &
ipid=$!
bg_track "$ipid"
if wait_until 30 file_has "$TMP/binplain.err" '^inflight: tracing'; then
	"$C/cuda_plain" >/dev/null 2>&1
	prc=$?
	"$C/cuda_workers_dlopen" "$C/libcuda.so.1" >/dev/null 2>&1 # another binary: not counted
	kill -INT "$ipid"
	wait "$ipid"
	check_eq "-b on a binary without the contract: its later process, device memory alone" \
		"$? $prc $(jq -c 'select(.type == "summary") | [(.processes | length), .processes[0].peak.bytes, .processes[0].at_end.bytes, .processes[0].anomalies.cuda_failed]' "$TMP/binplain.json")" \
		"0 0 [1,6000,4000,1]"
	check_match "... the start says so" "$(cat "$TMP/binplain.err")" \
		"cuda_plain carries none of the contract's probes: tracing libcuda's memory calls \(.*libcuda.so.1\) alone in its processes"
else
	not_ok "-b on a binary without the contract: inflight started" "$(cat "$TMP/binplain.err")"
fi
wait_detached

# Prometheus: the exposition of a live process holding its device memory
CUDA_WORKERS_GATE=1 "$INFLIGHT" serve --listen 127.0.0.1:0 -- "$C/cuda_workers" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
if wait_until 30 file_has "$TMP/sv.out" '^gated' && port=$(serve_port "$TMP/sv.err") &&
	[ -n "$port" ]; then
	body=$(curl -sS "http://127.0.0.1:$port/metrics")
	pg=$(pgrep -P "$sv" | head -n 1)
	check_eq "prometheus: device bytes by owner's stage, peak composition, failures" \
		"$(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"cuda_device\",stage=\"gpu\"}") $(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"cuda_device\",stage=\"none\"}") $(metric "$body" "inflight_peak_composition_bytes{pid=\"$pg\",class=\"cuda_managed\",stage=\"gpu\"}") $(metric "$body" "inflight_allocs_total{pid=\"$pg\",class=\"cuda_host\"}") $(metric "$body" "inflight_rejected_events_total{pid=\"$pg\",reason=\"cuda_failed\"}")" \
		"$dev4 10240 32768 5 5"
	kill -USR1 "$pg"
	wait "$sv"
	check_eq "... serve ends with its command" "$?" 0
else
	not_ok "prometheus: serve started and the program held" "$(cat "$TMP/sv.err")"
fi

# --- a flight recorder's dump whose window began after the device memory was allocated:
# libcuda's buffers are part of the state carried in, and the dump's replay is exact
mkdir "$TMP/dumps"
CUDA_WORKERS_GATE=1 "$INFLIGHT" record --ring 1s --dump-after 0 --dump-dir "$TMP/dumps" -- \
	"$C/cuda_workers" >"$TMP/ring.out" 2>"$TMP/ring.err" &
rec=$!
bg_track "$rec"
if wait_until 30 file_has "$TMP/ring.out" '^gated'; then
	sleep 1.5 # the allocations leave the 1 s ring: only the carried state holds them
	kill -USR1 "$rec"
	wait_until 30 file_has "$TMP/ring.err" 'flight recorder: wrote '
	pkill -USR1 -P "$rec" -x cuda_workers
	wait "$rec"
	check_eq "ring: the recorder ends with its command" "$?" 0
	dump=$(ls "$TMP"/dumps/*.infl 2>/dev/null | head -n 1)
	check_eq "ring: the dump carries libcuda's buffers in, device memory by class, exact" \
		"$("$INFLIGHT" report "$dump" -f json 2>/dev/null |
			jq -c '.processes[0] | [.at_end.classes, .exact]')" \
		"[{\"cuda_device\":{\"bufs\":5,\"bytes\":$((dev4 + 10240))}},true]"
	check_match "... the replay matches the kernel's final counters" \
		"$("$INFLIGHT" report "$dump" 2>&1)" "check +the replay matches the kernel's final counters"
else
	not_ok "ring: the recorder started and the program held" "$(cat "$TMP/ring.err")"
fi
finish
