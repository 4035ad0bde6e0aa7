# SPDX-License-Identifier: BSD-2-Clause
# Section rss_cost (a breakdown behind items 1 and 2): inflight also traces kmem:rss_stat,
# which the kernel fires on every change of any process's RSS counters - each page fault,
# each unmap. Here probe_loop -F page-faults in a loop (each page of 1 MiB touched, then all
# dropped with MADV_DONTNEED, again); CPU nanoseconds per page touched, 1 thread, with:
#   none   nothing attached
#   other  inflight attached to another process: what every process on the host pays
#   self   inflight attached to this process: what the traced program pays per fault
#   norss  the same with --no-rss: what that option saves

rss_cost() {
	local loop cfg rep i k n=4 line configs=(none other self norss) op tp
	if [ ! -x "$INFLIGHT" ]; then
		note rss_cost "not measured: $INFLIGHT is not built"
		return 0
	fi
	loop=$(private_copy "$BENCH/probe_loop")
	# a fault costs microseconds and varies by several percent run to run: more rounds
	for ((rep = 1; rep <= ${BENCH_RSS_REPS:-7}; rep++)); do
		declare -A ns_of=()
		for ((i = 0; i < n; i++)); do
			cfg=${configs[$(((i + rep) % n))]}
			case $cfg in
			none) line=$("$loop" -F -d "$SECONDS_PER_RUN" -w 0.3) ;;
			self) line=$(traced "$TMPB/rss_self.log" inflight "$loop" -F -d "$SECONDS_PER_RUN" -w 0.3 -W 30) ;;
			norss) line=$(traced "$TMPB/rss_norss.log" inflight-norss "$loop" -F -d "$SECONDS_PER_RUN" -w 0.3 -W 30) ;;
			other)
				# a quiet traced process (100 events/s), and inflight on it printing at
				# 10 Hz: once it has printed, it is attached
				"$loop" -r 100 -d 600 >/dev/null & op=$!
				BG_PIDS+=("$op")
				sleep 0.1
				"$INFLIGHT" -i 100ms -p "$op" >"$TMPB/rss_other.log" 2>&1 & tp=$!
				BG_PIDS+=("$tp")
				for ((k = 0; k < 100; k++)); do
					[ -s "$TMPB/rss_other.log" ] && break
					sleep 0.05
				done
				line=$("$loop" -F -d "$SECONDS_PER_RUN" -w 0.3)
				stop_bg "$tp"
				stop_bg "$op"
				;;
			esac
			if [ -z "$line" ]; then
				note rss_cost "$cfg, round $rep: no result"
				continue
			fi
			echo "$cfg $line" >>"$OUTDIR/rss_cost.log"
			ns_of[$cfg]=$(kv ns_per_hit "$line")
			record rss_cost "$cfg" 1 "$rep" ns_per_page "${ns_of[$cfg]}"
		done
		for cfg in other self norss; do
			[ -n "${ns_of[$cfg]:-}" ] && [ -n "${ns_of[none]:-}" ] &&
				record rss_cost "$cfg" 1 "$rep" added_ns_per_page "$(calc "${ns_of[$cfg]} - ${ns_of[none]}")"
		done
		unset ns_of
	done
}
