# SPDX-License-Identifier: BSD-2-Clause
# Section sharing_cost: what a probe hit's BPF program itself costs (the kernel's BPF
# statistics, kernel.bpf_stats_enabled: run_time_ns / run_cnt of the three contract
# programs), with 1 thread and with 2 threads of one process on two CPUs, so that the cost
# of sharing state between threads is seen apart from the uprobe's, which section 1 includes
# and which varies more than this. Configs:
#   empty     programs that do nothing: the statistics' own cost and the program's entry
#   shared    one atomic add to a word every thread shares: the floor of any exact design
#             with one serialization word per hit (a total, a lock, a ticket)
#   percpu    one add to this CPU's word: per-CPU counters, which give no exact peak
#   args      the arguments fetched (libbpf's usdt.bpf.h), nothing else
#   hbuf      the arguments and a record per live buffer in a BPF hash map, inflight's
#             buffer map: an insert at an alloc, a lookup and a delete at a free
#   tbuf      the same records in an open-addressing table in a BPF array, claimed by
#             compare-and-swap (bench/usdt_empty.bpf.c): the alternative, measured
#   hproc     the arguments and the process's record found in a BPF hash map keyed by
#             the pid, inflight's `procs`, and one word of it added to
#   aproc     the same with the record in a BPF array, found by its index
#   plog      the arguments, the process's record found as hproc finds it, a place taken in it
#             (one fetch-and-add) and the op into the next slot of a per-CPU log: the hit of a
#             design whose accounting one drainer applies later, in place order (the drainer
#             not built: the hit's side priced)
#   ring      the arguments and a 56-byte event (inflight's) into a BPF ring buffer without a
#             wake-up, read by usdt_empty's loop every 100 ms: what writing an event out
#             costs apart from its accounting (what it costs after the program, its stores
#             to lines the reader had, shows in section 1's time, not here)
#   inflight  inflight -p: the atomic form (kernels 5.17+), no lock
#   locked    inflight --accounting locked -p: the locked form (a lock per process, a queue
#             behind it), side by side with the atomic form on one kernel
#   record    inflight record -p: the atomic form, every event also into its CPU's ring
#   procs     inflight with 1 thread in each of two processes at once (`-b`): the same
#             work on two CPUs with no state shared between them
#   inflight0 the baseline (BENCH_INFLIGHT_BASELINE), side by side
# The statistics are read twice while the loop runs, after its warm-up, and the figures are
# the difference: the tracer's attach and the loop's start and end are not in them.

# sharing_progs CONFIG: the names of CONFIG's three contract programs, as a Python regular
# expression. inflight has each in two forms, of which it loads one: `on_buf_alloc` (atomic)
# or `on_buf_alloc_nocas` (locked); asking for the form the configuration means leaves a
# window with no runs (no result, noted) if the tracer loaded the other. The baseline's form
# is whichever its own look at the kernel chose. A program the hit tail-calls (the locked form's
# lock_wait_more, map_combine) counts no runs of its own: its time is in its caller's.
sharing_progs() {
	case $1 in
	empty) echo '^empty_(alloc|free|stage)$' ;;
	shared | percpu | args | hbuf | tbuf | hproc | aproc | plog | ring)
		echo "^${1}_(alloc|free|stage)\$" ;;
	inflight | procs | record) echo '^on_(buf_alloc|buf_free|stage)$' ;;
	locked) echo '^on_(buf_alloc|buf_free|stage)_nocas$' ;;
	inflight0) echo '^on_(buf_alloc|buf_free|stage)(_nocas)?$' ;;
	esac
}

# sharing_stats REGEX: run_time_ns and run_cnt summed over the loaded programs so named
sharing_stats() {
	bpftool prog show --json 2>/dev/null | python3 -c '
import json, re, sys
t = n = 0
for p in json.load(sys.stdin):
    if re.search(sys.argv[1], p["name"]) and p.get("run_cnt", 0):
        t += p.get("run_time_ns", 0)
        n += p["run_cnt"]
print(t, n)' "$1"
}

# sharing_window REGEX: once the programs so named run, the ns per run over a window of the
# loop's measured time ("ns_per_run=N runs=M"), or nothing
sharing_window() {
	local before after k
	for ((k = 0; k < 200; k++)); do
		read -r _ n < <(sharing_stats "$1")
		[ "${n:-0}" -gt 1000 ] && break
		sleep 0.05
	done
	sleep 0.5
	before=$(sharing_stats "$1")
	sleep 1.5
	after=$(sharing_stats "$1")
	awk -v b="$before" -v a="$after" 'BEGIN { split(b, x); split(a, y);
		if (y[2] > x[2]) printf "ns_per_run=%.1f runs=%d\n", (y[1] - x[1]) / (y[2] - x[2]), y[2] - x[2] }'
}

# sharing_run CONFIG THREADS: prints sharing_window's line
sharing_run() {
	local cfg=$1 t=$2 lp lp2 tp line cmd=() i
	local loop_args=(-t "$t" -d 3.5 -w 0.3 -W 30)
	case $cfg in
	empty) cmd=("$BENCH/usdt_empty") ;;
	shared) cmd=("$BENCH/usdt_empty" -s) ;;
	percpu) cmd=("$BENCH/usdt_empty" -c) ;;
	args) cmd=("$BENCH/usdt_empty" -a) ;;
	hbuf) cmd=("$BENCH/usdt_empty" -h) ;;
	tbuf) cmd=("$BENCH/usdt_empty" -t) ;;
	hproc) cmd=("$BENCH/usdt_empty" -H) ;;
	aproc) cmd=("$BENCH/usdt_empty" -A) ;;
	plog) cmd=("$BENCH/usdt_empty" -L) ;;
	ring) cmd=("$BENCH/usdt_empty" -R) ;;
	inflight) cmd=("$INFLIGHT" --json -p) ;;
	record) cmd=("$INFLIGHT" record -q --force -o "$TMPB/sharing.rec" -p) ;;
	locked) cmd=("$INFLIGHT" --json --accounting locked -p) ;;
	inflight0) cmd=("$BENCH_INFLIGHT_BASELINE" --json -p) ;;
	esac
	if [ "$cfg" = procs ]; then
		# the "tracing" line is on stderr, the summary (JSON) apart
		"$INFLIGHT" --json -b "$SC_LOOP" 2>"$TMPB/sharing.log" >/dev/null & tp=$!
		BG_PIDS+=("$tp")
		for ((i = 0; i < 100; i++)); do
			grep -q '^inflight: tracing' "$TMPB/sharing.log" 2>/dev/null && break
			sleep 0.05
		done
		"$SC_LOOP" -t 1 -d 3.5 -w 0.3 -W 30 >/dev/null & lp=$!
		"$SC_LOOP" -t 1 -d 3.5 -w 0.3 -W 30 >/dev/null & lp2=$!
		BG_PIDS+=("$lp" "$lp2")
		line=$(sharing_window "$(sharing_progs "$cfg")")
		wait "$lp" "$lp2"
		stop_bg "$tp"
	else
		"$SC_LOOP" "${loop_args[@]}" >/dev/null & lp=$!
		BG_PIDS+=("$lp")
		for ((i = 0; i < 100; i++)); do
			[ "$(readlink "/proc/$lp/exe" 2>/dev/null)" = "$SC_LOOP" ] && break
			sleep 0.01
		done
		"${cmd[@]}" "$lp" >"$TMPB/sharing.log" 2>&1 & tp=$!
		BG_PIDS+=("$tp")
		line=$(sharing_window "$(sharing_progs "$cfg")")
		wait "$lp"
		stop_bg "$tp" 20
	fi
	echo "$line"
}

sharing_cost() {
	local configs=(empty shared percpu args hbuf tbuf hproc aproc plog ring inflight record)
	local cfg rep t i n line
	if [ ! -x "$INFLIGHT" ]; then
		note sharing_cost "not measured: $INFLIGHT is not built"
		return 0
	fi
	SC_LOOP=$(private_copy "$BENCH/probe_loop")
	if has_locked_form; then
		configs+=(locked)
	else
		note sharing_cost "the locked form not measured: $INFLIGHT has no --accounting"
	fi
	configs+=(procs)
	[ -n "${BENCH_INFLIGHT_BASELINE:-}" ] && [ -x "$BENCH_INFLIGHT_BASELINE" ] && configs+=(inflight0)
	n=${#configs[@]}
	sysctl -qw kernel.bpf_stats_enabled=1
	for ((rep = 1; rep <= REPS; rep++)); do
		for t in 1 2; do
			for ((i = 0; i < n; i++)); do
				cfg=${configs[$(((i + rep) % n))]}
				[ "$cfg" = procs ] && [ "$t" = 1 ] && continue
				line=$(sharing_run "$cfg" "$t")
				if [ -z "$line" ]; then
					note sharing_cost "$cfg, $t thread(s), round $rep: no result (no runs of programs $(sharing_progs "$cfg"))"
					continue
				fi
				echo "$cfg $t $line" >>"$OUTDIR/sharing_cost.log"
				record sharing_cost "$cfg" "$t" "$rep" ns_per_run "$(kv ns_per_run "$line")"
			done
		done
	done
	sysctl -qw kernel.bpf_stats_enabled=0
}
