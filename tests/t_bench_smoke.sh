#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The bench programs (bench/, run by `make bench`) still build, run and print what
# scripts/bench.sh parses: each for a fraction of a second, with exact event counts checked.
# Needs root for the BPF part (usdt_empty, bpftrace), as the rest of the suite does.
source "$(dirname "$0")/lib.sh"
B=$BUILD/bench
LINE_RE='^probe_loop emitter=[a-z]+ work=(pipeline|faults) threads=[0-9]+ pipes=[0-9]+ rate=[0-9]+ seconds=[0-9.]+ hits=[0-9]+ ns_per_hit=[0-9.]+ wall_ns_per_hit=[0-9.]+ mhits_per_s=[0-9.]+ enabled_ns=[0-9]+ wait_ms=[0-9.]+ allocs=[0-9]+ frees=[0-9]+ stages=[0-9]+ residual=0$'

kv() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# every owner fires 8 allocs, 8 frees and 7 stage events; plus one owner-less alloc and free
check_counts() { # WHAT LINE
	local a f s
	a=$(kv allocs "$2") f=$(kv frees "$2") s=$(kv stages "$2")
	check_eq "$1: as many frees as allocs" "$f" "$a"
	check_eq "$1: 7 stage events per 8 allocs" "$s" "$(((a - 1) / 8 * 7))"
	check "$1: events in the measured window" test "$(kv hits "$2")" -gt 0
}

for v in probe_loop probe_loop_noprobes probe_loop_atomic probe_loop_lttng; do
	if [ "$v" = probe_loop_lttng ] && [ ! -x "$B/$v" ]; then
		continue # built by `make bench-progs` only: liblttng-ust-dev is a bench dependency
	fi
	for t in 1 2; do
		out=$("$B/$v" -t "$t" -d 0.05 -w 0.01)
		check_match "$v -t $t: output line" "$out" "$LINE_RE"
		check_eq "$v -t $t: threads" "$(kv threads "$out")" "$t"
		check_counts "$v -t $t" "$out"
	done
done
check_match "atomic variant names itself" "$("$B/probe_loop_atomic" -d 0.01 -w 0)" ' emitter=atomic '
check_match "noprobes variant names itself" "$("$B/probe_loop_noprobes" -d 0.01 -w 0)" ' emitter=noprobes '
"$B/probe_loop" -t 0 >/dev/null 2>&1
check_eq "probe_loop refuses 0 threads" "$?" 2
"$B/probe_loop" -W 0.05 -d 0.01 >/dev/null 2>&1
check_eq "probe_loop -W: exit 3 when no tracer listens" "$?" 3

# start_loop WAIT: probe_loop in the background, waiting WAIT s for a tracer, as $lp once
# it is probe_loop itself (a tracer attaches by pid)
start_loop() {
	"$B/probe_loop" -W "$1" -d 0.05 -w 0.01 >"$TMP/loop.out" &
	lp=$!
	for _ in $(seq 100); do
		[ "$(readlink "/proc/$lp/exe")" = "$(readlink -f "$B/probe_loop")" ] && break
		sleep 0.01
	done
}

# the floor: empty BPF programs, then argument fetch only, one shared atomic add and one
# per-CPU add, a drained design's hit (sharing_cost), and the least an exact hit does, live
# and recorded (probe_cost), attached by pid before the window
for mode in "" -a -s -c -L -m -M; do
	start_loop 20
	att=$("$B/usdt_empty" $mode "$lp" 2>"$TMP/usdt_empty.err")
	rc=$?
	wait "$lp"
	check_eq "usdt_empty $mode exits 0 when the process ends" "$rc" 0
	check_match "usdt_empty $mode reports its attach" "$(head -n 1 <<<"$att")" \
		"^usdt_empty attached pid=$lp load_ms=[0-9.]+ attach_ms=[0-9.]+$"
	case $mode in -m | -M)
		# every buffer record inserted and found again: the least did its whole work
		check_eq "usdt_empty $mode: no buffer record lost" "$(sed -n 's/^usdt_empty lost=//p' <<<"$att")" 0
	esac
	out=$(cat "$TMP/loop.out")
	check_match "probe_loop under usdt_empty $mode: output line" "$out" "$LINE_RE"
	check "probe_loop under usdt_empty $mode saw the probes enabled" test "$(kv enabled_ns "$out")" -gt 0
done
"$B/usdt_empty" 999999999 >/dev/null 2>&1
check_eq "usdt_empty: no such process" "$?" 1

# the bpftrace peer script: attached before the first event, it counts exactly what was fired
if command -v bpftrace >/dev/null || [ "${CI:-}" = true ]; then
	start_loop 30
	sed "s|@BIN@|$(readlink -f "$B/probe_loop")|g" "$ROOT/bench/bpftrace_agg.bt" >"$TMP/agg.bt"
	bpftrace -p "$lp" "$TMP/agg.bt" >"$TMP/bt.out" 2>"$TMP/bt.err"
	wait "$lp"
	out=$(cat "$TMP/loop.out")
	sum() { sed -n "s/^@$1\[.*\]: //p" "$TMP/bt.out" | awk '{ s += $1 } END { print s + 0 }'; }
	check_eq "bpftrace peer script counted every alloc" "$(sum allocs)" "$(kv allocs "$out")"
	check_eq "bpftrace peer script counted every free" "$(sum frees)" "$(kv frees "$out")"
	check_eq "bpftrace peer script: alloc bytes = free bytes" "$(sum alloc_bytes)" "$(sum free_bytes)"
fi

# record_ceiling reads the recorder's closing line: it must still parse, and count exactly
source "$ROOT/bench/record_ceiling.sh"
start_loop 20
"$BUILD/inflight" record -o "$TMP/rc.rec" -p "$lp" >"$TMP/rc.log" 2>&1
wait "$lp"
out=$(cat "$TMP/loop.out")
read -r recorded lost < <(rc_closing_counts "$(cat "$TMP/rc.log")")
check_eq "record_ceiling parses the recorder's closing line: nothing lost" "${lost:-none}" 0
check "... and at least every event probe_loop fired recorded (RSS records besides)" \
	test "${recorded:-0}" -ge $(($(kv allocs "$out") + $(kv frees "$out") + $(kv stages "$out")))

# the two forms of accounting side by side (probe_cost, scaling, lock_stall, sharing_cost):
# bench_form CONFIG runs bench/lib.sh's tracer of CONFIG on a short probe_loop, with the
# bench's helpers in a subshell of their own, and prints "progs NAME..." (the contract's BPF
# programs the tracer held, from its /proc/PID/fdinfo), "matched N" (how many of them
# sharing_cost's name pattern for CONFIG finds) and the rows probe_cost_exact, the bench's
# own check, recorded (raw.csv)
bench_form() (
	cd "$ROOT" || exit
	BENCH_OUT=$TMP/bench.$1 source bench/lib.sh
	source bench/probe_cost.sh
	source bench/sharing_cost.sh
	trap bench_cleanup EXIT
	mkdir -p "$OUTDIR"
	: >"$RAW"
	: >"$NOTES"
	exe=$(readlink -f "$BENCH/probe_loop")
	"$BENCH/probe_loop" -t 2 -d 0.2 -w 0.05 -W 20 >"$TMPB/loop.out" &
	lp=$!
	BG_PIDS+=("$lp")
	for _ in $(seq 100); do
		[ "$(readlink "/proc/$lp/exe")" = "$exe" ] && break
		sleep 0.01
	done
	(trace_with "$1" "$lp") >"$TMPB/$1.log" 2>&1 &
	tp=$!
	BG_PIDS+=("$tp")
	# libbpf loads the programs one by one (feature probes first): until all three are in
	progs=
	while alive "$lp" && [ "$(wc -w <<<"$progs")" -lt 3 ]; do
		progs=$(for f in /proc/"$tp"/fdinfo/*; do sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null; done |
			while read -r id; do bpftool prog show id "$id" --json 2>/dev/null | jq -r .name; done |
			grep -E '^on_(buf_alloc|buf_free|stage)(_nocas)?$' | sort | tr '\n' ' ')
		sleep 0.05
	done
	wait "$lp"
	stop_bg "$tp" 20
	echo "progs $progs"
	echo "matched $(tr ' ' '\n' <<<"$progs" | grep -cE "$(sharing_progs "$1")")"
	probe_cost_exact "$1" 2 1 "$(cat "$TMPB/loop.out")" 2>/dev/null
	cat "$RAW"
)

if "$BUILD/inflight" --help 2>&1 | grep -q -- --accounting; then
	for cfg in inflight locked; do
		out=$(bench_form "$cfg")
		if [ "$cfg" = locked ]; then
			want='on_buf_alloc_nocas on_buf_free_nocas on_stage_nocas '
		else
			want='on_buf_alloc on_buf_free on_stage '
		fi
		check_eq "bench tracer $cfg loads its form's programs" "$(sed -n 's/^progs //p' <<<"$out")" "$want"
		check_eq "sharing_cost's pattern for $cfg finds its three programs" \
			"$(sed -n 's/^matched //p' <<<"$out")" 3
		check_match "bench $cfg: the totals equal the events fired" "$out" "^probe_cost,$cfg,2,1,exact,1$"
		check_match "bench $cfg: no hit given up" "$out" "^probe_cost,$cfg,2,1,given_up,0$"
		if [ "$cfg" = locked ]; then
			check_match "bench $cfg: the lock's figures are kept" "$out" "^probe_cost,$cfg,2,1,slot_waits,[0-9]+$"
		else
			check "bench $cfg: no lock, so no lock figures" \
				test -z "$(grep -E ',(lock_timeouts|slot_waits|pool_waits),' <<<"$out")"
		fi
	done
elif [ "${CI:-}" = true ]; then
	not_ok "the bench's locked form" "$BUILD/inflight has no --accounting"
else
	skip "the bench's locked form" "$BUILD/inflight has no --accounting"
fi
# in_bench CMD...: CMD with the bench's helpers (bench/lib.sh), in a subshell
in_bench() (
	source "$ROOT/bench/lib.sh"
	rm -rf "$TMPB"
	"$@"
)
check_match "baseline_commit: a binary in a git work tree" "$(in_bench baseline_commit "$BUILD/inflight")" \
	'^[0-9a-f]{7,}(\+dirty)?$'
check_eq "baseline_commit: a binary in none" "$(in_bench baseline_commit /bin/sh)" ""

# helpers of the attach-latency and loader-cost figures
"$B/stamp_exec" "$TMP/stamp" sh -c 'exit 4'
check_eq "stamp_exec passes the command's status on" "$?" 4
check_match "stamp_exec writes a nanosecond stamp" "$(cat "$TMP/stamp")" '^[0-9]{6,}$'
"$B/stamp_exec" "$TMP/stamp" /nonexistent 2>/dev/null
check_eq "stamp_exec: command not found" "$?" 127
m=$("$B/measure" sh -c 'exit 5' 2>&1)
check_eq "measure passes the command's status on" "$?" 5
check_match "measure prints its figures" "$m" \
	'^measure wall_s=[0-9.]+ user_s=[0-9.]+ sys_s=[0-9.]+ maxrss_kib=[0-9]+ minflt=[0-9]+ vcsw=[0-9]+ status=5$'

# the report: medians and spreads of a known set
mkdir -p "$TMP/res"
{
	echo "section,config,threads,rep,metric,value"
	for v in 20 1 3 10 2; do echo "probe_cost,empty,1,1,ns_per_hit,$v"; done
	for v in 4 1.5; do echo "probe_cost,inflight/empty,1,1,ratio,$v"; done
	# the least an exact hit does: over the target, and under it with room left
	echo "probe_cost,least/empty,1,1,ratio,1.5"
	echo "probe_cost,least_record/empty,1,1,ratio,1.1"
	for v in 100 110 105; do echo "sharing_cost,shared,2,1,ns_per_run,$v"; done
	echo "sharing_cost,shared,1,1,ns_per_run,30.5"
	# the two forms side by side: the locked one's row, ratios, given up, the lock's figures
	for v in 9 5 7; do echo "probe_cost,locked,1,1,ns_per_hit,$v"; done
	echo "probe_cost,inflight/locked,1,1,ratio,0.8"
	for c in inflight locked; do
		echo "probe_cost,$c,1,1,exact,1"
		echo "probe_cost,$c,1,1,given_up,0"
		echo "lock_stall,$c,4,1,hits,1000"
	done
	echo "probe_cost,locked,1,1,slot_waits,3"
	echo "probe_cost,locked,1,1,pool_waits,0"
	echo "lock_stall,locked,4,1,given_up,2"
	echo "lock_stall,inflight,4,1,given_up,0"
	echo "lock_stall,locked,4,1,slot_waits,12"
	echo "sharing_cost,locked,2,1,ns_per_run,900"
} >"$TMP/res/raw.csv"
printf '%s\n' reps=5 baseline_path=/tmp/base/build/inflight baseline_commit=8a2a958 \
	'baseline_what=the lock-and-queue design' >"$TMP/res/env.txt"
: >"$TMP/res/notes.txt"
rep=$(bash "$ROOT/bench/report.sh" "$TMP/res")
check_match "report: median [min-max]" "$rep" '^\| \(b\) empty BPF programs \(the floor\) \| 3 \[1-20\] \| n/a \| n/a \| n/a \|$'
check_match "report: median of an even count, verdict" "$rep" \
	'^\| inflight / empty BPF \(c/b\) \| 2.75 \[1.50-4\] \| n/a \| <= 1.2: 1 thread \*\*missed\*\*, 2 threads not measured \|$'
check_match "report: the least's room under c/b's target, none when over it" "$rep" \
	'^\| the least an exact hit does / empty BPF \(m/b\) \| 1.50 \[1.50-1.50\] \| n/a \| what c/b.s target leaves the rest: 1 thread \*\*none\*\* \(0.3 over\), 2 threads not measured \|$'
check_match "report: the recorded least's room, in floors and ns of the floor's median" "$rep" \
	'^\| that, recorded / empty BPF \(m./b\) \| 1.10 \[1.10-1.10\] \| n/a \| what c.\/b.s target leaves the rest: 1 thread 0.4 \(1.20 ns\), 2 threads not measured \|$'
check_match "report: the sharing breakdown's rows, 1 and 2 threads" "$rep" \
	'^\| one atomic add to a word both threads share \| 30.5 \[30.5-30.5\] \| 105 \[100-110\] \|$'
check_match "report: the locked form's row" "$rep" \
	'^\| \(c-locked\) inflight, the locked form \(--accounting locked\) \| 7 \[5-9\] \| n/a \| n/a \| n/a \|$'
check_match "report: the atomic form against the locked one" "$rep" \
	'^\| atomic form / locked form \(c/c-locked\) \| 0.8 \[0.8-0.8\] \| n/a \| \|$'
check_match "report: the atomic form gives nothing up, and has no lock figures" "$rep" \
	'^- \(c\) the atomic form \(no lock[^)]*\): final totals equal to the events fired in 1 of 1 runs; given up per run: 1 thread 0 \[0-0\], 2 threads n/a\.$'
check_match "report: the locked form's lock figures" "$rep" \
	'^- \(c-locked\) the locked form: .*given up per run: 1 thread 0 \[0-0\].*; waited for room in the queue: 1 thread 3 \[3-3\], 2 threads n/a; waited for the lock: 1 thread 0 \[0-0\]'
check_match "report: the worst single hit, the locked form given up" "$rep" \
	'^\| inflight, the locked form \(--accounting locked\) \| n/a \| n/a \| n/a \| n/a \| n/a \| n/a \| 1000 \[1000-1000\] \| 2 \[2-2\] \| n/a \|$'
check_match "report: the worst single hit, the locked form's queue" "$rep" \
	'^The locked form: hits that waited for room in the queue behind the lock \(`slot_waits`\) 12 \[12-12\],$'
check_eq "report: the worst single hit, queue figures for the locked form alone" \
	"$(grep -c '^The .*: hits that waited for room in the queue' <<<"$rep")" 1
check_match "report: the sharing breakdown's locked row" "$rep" \
	'^\| inflight, the locked form \(--accounting locked\) \| n/a \| 900 \[900-900\] \|$'
check_match "report: what the baseline is, where, and its commit" "$rep" \
	'^"Before" \(the baseline inflight, c0\) is the lock-and-queue design: `/tmp/base/build/inflight` \(BENCH_INFLIGHT_BASELINE\), built in a git work tree of commit 8a2a958\.$'
# the scaling section's guest script, run here for one short round (the guest is the same
# script with the guest's paths), and the host's reading of its lines into raw figures
svm=$TMP/svm
mkdir -p "$svm"
(cd "$ROOT" && SVM_BENCH=$B SVM_INFLIGHT=$BUILD/inflight SVM_HOLD=tests/vm/hold.sh \
	bash bench/scaling_vm_guest.sh 1 0.1 "1 2" 3>"$svm/proto.txt" >"$svm/out" 2>&1)
check_eq "scaling_vm guest script: a run line for each form and thread count, then done" \
	"$(grep -c '^run ' "$svm/proto.txt") $(tail -n 1 "$svm/proto.txt")" "6 done"
(
	cd "$ROOT" || exit
	BENCH_OUT=$svm/res source bench/lib.sh
	source bench/scaling_vm.sh
	trap bench_cleanup EXIT
	mkdir -p "$OUTDIR"
	: >"$RAW"
	: >"$NOTES"
	scaling_vm_read "$svm/proto.txt" 1
) 2>"$svm/read.err"
svm_rows() { awk -F, -v c="$1" -v m="$2" '$2 == c && $5 == m { printf "%s%s:%s", n++ ? " " : "", $3, $6 }' "$svm/res/raw.csv"; }
for cfg in inflight locked; do
	check_eq "scaling_vm: $cfg counted every event the loop fired, exact, 1 and 2 threads" \
		"$(svm_rows "$cfg" exact)" "1:1 2:1"
	check_eq "scaling_vm: $cfg gave up no hit" "$(svm_rows "$cfg" given_up)" "1:0 2:0"
done
check_eq "scaling_vm: a ns_per_hit for each form and thread count" \
	"$(grep -c ',ns_per_hit,' "$svm/res/raw.csv")" 6
check_eq "scaling_vm: the three ratios of each thread count, taken within the round" \
	"$(awk -F, '$5 == "ratio" { print $2, $3 }' "$svm/res/raw.csv" | sort | tr '\n' ' ')" \
	"inflight/empty 1 inflight/empty 2 inflight/locked 1 inflight/locked 2 locked/empty 1 locked/empty 2 "
check_eq "scaling_vm: nothing noted (no failed run, no summary missing)" "$(cat "$svm/res/notes.txt")" ""
finish
