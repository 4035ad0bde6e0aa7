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
# per-CPU add (sharing_cost), attached by pid before the window
for mode in "" -a -s -c; do
	start_loop 20
	att=$("$B/usdt_empty" $mode "$lp" 2>"$TMP/usdt_empty.err")
	rc=$?
	wait "$lp"
	check_eq "usdt_empty $mode exits 0 when the process ends" "$rc" 0
	check_match "usdt_empty $mode reports its attach" "$att" \
		"^usdt_empty attached pid=$lp load_ms=[0-9.]+ attach_ms=[0-9.]+$"
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
	for v in 100 110 105; do echo "sharing_cost,shared,2,1,ns_per_run,$v"; done
	echo "sharing_cost,shared,1,1,ns_per_run,30.5"
} >"$TMP/res/raw.csv"
printf 'reps=5\n' >"$TMP/res/env.txt"
: >"$TMP/res/notes.txt"
rep=$(bash "$ROOT/bench/report.sh" "$TMP/res")
check_match "report: median [min-max]" "$rep" '^\| \(b\) empty BPF programs \(the floor\) \| 3 \[1-20\] \| n/a \| n/a \| n/a \|$'
check_match "report: median of an even count, verdict" "$rep" \
	'^\| inflight / empty BPF \(c/b\) \| 2.75 \[1.50-4\] \| n/a \| <= 1.2: 1 thread \*\*missed\*\*, 2 threads not measured \|$'
check_match "report: the sharing breakdown's rows, 1 and 2 threads" "$rep" \
	'^\| one atomic add to a word both threads share \| 30.5 \[30.5-30.5\] \| 105 \[100-110\] \|$'
finish
