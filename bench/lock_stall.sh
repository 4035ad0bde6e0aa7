# SPDX-License-Identifier: BSD-2-Clause
# Section lock_stall: the worst wait a traced thread sees on one probe hit,
# 4 threads of one process hitting the probes at once (they contend for its per-process
# lock), with inflight and, side by side in the same rounds, the inflight binary before the
# lock change (BENCH_INFLIGHT_BASELINE) and the empty program (the floor: what the uprobe
# itself costs at worst here). probe_loop -L times every event by the wall clock and by the
# thread's CPU clock (a spin for the lock burns CPU; a thread the scheduler preempted does
# not); the figures are the largest and how many took over 10 us, 100 us and 1 ms, and
# inflight's lock timeouts (updates that gave up: counted, the totals marked inexact).

lock_stall_run() { # CONFIG: prints probe_loop's two lines
	traced "$TMPB/ls.$1.log" "$1" "$LS_LOOP" -t "${BENCH_STALL_THREADS:-4}" \
		-d "$SECONDS_PER_RUN" -w 0.3 -W 30 -L
}

lock_stall() {
	local configs=(empty inflight) cfg rep out line lat summary
	LS_LOOP=$(private_copy "$BENCH/probe_loop")
	if [ -n "${BENCH_INFLIGHT_BASELINE:-}" ] && [ -x "$BENCH_INFLIGHT_BASELINE" ]; then
		configs+=(baseline)
	else
		note lock_stall "before/after not measured: set BENCH_INFLIGHT_BASELINE to the inflight built before the lock change"
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
			case $cfg in inflight | baseline)
				summary=$(grep '"type":"summary"' "$TMPB/ls.$cfg.log" | tail -n 1)
				record lock_stall "$cfg" 4 "$rep" lock_timeouts \
					"$(grep -o '"lock_timeouts":[0-9]*' <<<"$summary" | head -n 1 | cut -d: -f2)"
				;;
			esac
		done
	done
}
