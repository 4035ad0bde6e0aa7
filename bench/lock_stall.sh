# SPDX-License-Identifier: BSD-2-Clause
# Section lock_stall: the worst single probe hit a traced thread sees, 4 threads of one
# process hitting the probes at once, all on the same process's state. Configs, side by side
# in the same rounds:
#   empty     the floor: empty BPF programs, what the uprobe itself costs at worst here
#   locked    inflight --accounting locked: the locked form (a lock per process; a hit that
#             finds it held queues for its holder, and waits only while that queue is full)
#   inflight  inflight as this kernel runs it (5.17+): the atomic form, no lock, no hit waits
#   baseline  the inflight binary before a change (BENCH_INFLIGHT_BASELINE), when set
# probe_loop -L times every event by the wall clock and by the thread's CPU clock (a wait for
# the lock burns CPU; a thread the scheduler preempted does not); the figures are the largest
# and how many took over 10 us, 100 us and 1 ms, and the hits each tracer gave up (counted,
# the totals marked inexact): lock_timeouts + contention_lost; the lock's own figures (hits
# that waited: slot_waits, pool_waits) for the forms that have one.

lock_stall_run() { # CONFIG: prints probe_loop's two lines
	traced "$TMPB/ls.$1.log" "$1" "$LS_LOOP" -t "${BENCH_STALL_THREADS:-4}" \
		-d "$SECONDS_PER_RUN" -w 0.3 -W 30 -L
}

lock_stall() {
	local configs=(empty) cfg rep out line lat summary lt cl m
	LS_LOOP=$(private_copy "$BENCH/probe_loop")
	if has_locked_form; then
		configs+=(locked)
	else
		note lock_stall "the locked form not measured: $INFLIGHT has no --accounting"
	fi
	configs+=(inflight)
	if [ -n "${BENCH_INFLIGHT_BASELINE:-}" ] && [ -x "$BENCH_INFLIGHT_BASELINE" ]; then
		configs+=(baseline)
	else
		note lock_stall "before/after not measured: set BENCH_INFLIGHT_BASELINE to the inflight built before the change"
	fi
	for ((rep = 1; rep <= REPS; rep++)); do
		for ((i = 0; i < ${#configs[@]}; i++)); do
			cfg=${configs[$(((i + rep) % ${#configs[@]}))]}
			if ! out=$(lock_stall_run "$cfg") || [ -z "$out" ]; then
				note lock_stall "$cfg, round $rep: no result"
				continue
			fi
			line=$(grep '^probe_loop ' <<<"$out")
			lat=$(grep '^probe_loop_latency ' <<<"$out")
			echo "$cfg $line $lat" >>"$OUTDIR/lock_stall.log"
			record lock_stall "$cfg" 4 "$rep" ns_per_hit "$(kv ns_per_hit "$line")"
			for m in max_ns_per_hit hits_over_10us hits_over_100us hits_over_1ms \
				max_cpu_ns_per_hit cpu_hits_over_10us cpu_hits_over_100us cpu_hits_over_1ms; do
				record lock_stall "$cfg" 4 "$rep" "$m" "$(kv "$m" "$lat")"
			done
			record lock_stall "$cfg" 4 "$rep" hits "$(kv hits "$line")"
			[ "$cfg" = empty ] && continue
			summary=$(grep '"type":"summary"' "$TMPB/ls.$cfg.log" | tail -n 1)
			lt=$(anomaly "$summary" lock_timeouts)
			cl=$(anomaly "$summary" contention_lost)
			record lock_stall "$cfg" 4 "$rep" given_up "${lt:+$((lt + ${cl:-0}))}"
			[ "$cfg" = inflight ] && [ "${cl:-0}" != 0 ] &&
				note lock_stall "round $rep: the atomic form gave up $cl hits (contention_lost), which it never should"
			[ "$cfg" = inflight ] && continue
			for m in lock_timeouts slot_waits pool_waits; do
				record lock_stall "$cfg" 4 "$rep" "$m" "$(anomaly "$summary" "$m")"
			done
		done
	done
}
