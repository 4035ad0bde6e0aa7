# SPDX-License-Identifier: BSD-2-Clause
# Section rss_cost: inflight also traces kmem:rss_stat,
# which the kernel fires on every change of any process's RSS counters - each page fault,
# each unmap. Here probe_loop -F page-faults in a loop (each page of 1 MiB touched, then all
# dropped with MADV_DONTNEED, again); CPU nanoseconds per page touched, 1 thread, with:
#   none   nothing attached
#   other  inflight attached to another process: what every process on the host pays
#   self   inflight attached to this process: what the traced program pays per fault
#   norss  the same with --no-rss: what that option saves
#   other0 as `other`, with the baseline inflight (BENCH_INFLIGHT_BASELINE), side by side
# and, with the kernel's BPF statistics on (kernel.bpf_stats_enabled: they cost every program
# two clock reads, so they are kept out of the rows above), the nanoseconds the rss_stat
# program itself takes per run while attached to another process (handler, handler0):
# what the tracepoint's handler adds for a process nobody traces, trampoline excluded; and
# (floor) the same for an empty rss_stat program (usdt_empty -r): what the statistics and
# the program's entry cost by themselves.

# run_time_ns and run_cnt of the programs named $2* loaded since the ids in $1
rss_prog_stats() {
	bpftool prog show --json 2>/dev/null | python3 -c '
import json, sys
old = set(int(i) for i in sys.argv[1].split())
t = n = 0
for p in json.load(sys.stdin):
    if p["name"].startswith(sys.argv[2]) and p["id"] not in old:
        t += p.get("run_time_ns", 0)
        n += p.get("run_cnt", 0)
print(t, n)' "$1" "$2"
}

# other/other0/handler/handler0/floor: the fault loop while INFLIGHT traces a quiet process
# (INFLIGHT "empty": usdt_empty -r on it)
rss_other() {
	local inflight=$1 stats=$2 op tp k ids before after prog=on_rss_stat
	ids=$(bpftool prog show --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))')
	"$loop" -r 100 -d 600 >/dev/null & op=$!
	BG_PIDS+=("$op")
	sleep 0.1
	if [ "$inflight" = empty ]; then
		prog=empty_rss
		"$BENCH/usdt_empty" -r "$op" >"$TMPB/rss_other.log" 2>&1 & tp=$!
	else
		"$inflight" -i 100ms -p "$op" >"$TMPB/rss_other.log" 2>&1 & tp=$!
	fi
	BG_PIDS+=("$tp")
	for ((k = 0; k < 100; k++)); do
		[ -s "$TMPB/rss_other.log" ] && break
		sleep 0.05
	done
	if [ "$stats" = stats ]; then
		sysctl -qw kernel.bpf_stats_enabled=1
		before=$(rss_prog_stats "$ids" "$prog")
	fi
	line=$("$loop" -F -d "$SECONDS_PER_RUN" -w 0.3)
	if [ "$stats" = stats ]; then
		after=$(rss_prog_stats "$ids" "$prog")
		sysctl -qw kernel.bpf_stats_enabled=0
		line=$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x); split(a, y);
			if (y[2] > x[2]) printf "ns_per_hit=%.1f runs=%d\n", (y[1] - x[1]) / (y[2] - x[2]), y[2] - x[2] }')
	fi
	stop_bg "$tp"
	stop_bg "$op"
}

rss_cost() {
	local loop cfg rep i n line configs=(none other self norss handler floor)
	if [ ! -x "$INFLIGHT" ]; then
		note rss_cost "not measured: $INFLIGHT is not built"
		return 0
	fi
	loop=$(private_copy "$BENCH/probe_loop")
	if [ -n "${BENCH_INFLIGHT_BASELINE:-}" ] && [ -x "$BENCH_INFLIGHT_BASELINE" ]; then
		configs+=(other0 handler0)
	fi
	n=${#configs[@]}
	# a fault costs microseconds and varies by several percent run to run: more rounds
	for ((rep = 1; rep <= ${BENCH_RSS_REPS:-7}; rep++)); do
		declare -A ns_of=()
		for ((i = 0; i < n; i++)); do
			cfg=${configs[$(((i + rep) % n))]}
			case $cfg in
			none) line=$("$loop" -F -d "$SECONDS_PER_RUN" -w 0.3) ;;
			self) line=$(traced "$TMPB/rss_self.log" inflight "$loop" -F -d "$SECONDS_PER_RUN" -w 0.3 -W 30) ;;
			norss) line=$(traced "$TMPB/rss_norss.log" inflight-norss "$loop" -F -d "$SECONDS_PER_RUN" -w 0.3 -W 30) ;;
			other) rss_other "$INFLIGHT" "" ;;
			other0) rss_other "$BENCH_INFLIGHT_BASELINE" "" ;;
			handler) rss_other "$INFLIGHT" stats ;;
			handler0) rss_other "$BENCH_INFLIGHT_BASELINE" stats ;;
			floor) rss_other empty stats ;;
			esac
			if [ -z "$line" ]; then
				note rss_cost "$cfg, round $rep: no result"
				continue
			fi
			echo "$cfg $line" >>"$OUTDIR/rss_cost.log"
			case $cfg in
			handler* | floor) record rss_cost "$cfg" 1 "$rep" handler_ns "$(kv ns_per_hit "$line")"
				continue ;;
			esac
			ns_of[$cfg]=$(kv ns_per_hit "$line")
			record rss_cost "$cfg" 1 "$rep" ns_per_page "${ns_of[$cfg]}"
		done
		for cfg in other self norss other0; do
			[ -n "${ns_of[$cfg]:-}" ] && [ -n "${ns_of[none]:-}" ] &&
				record rss_cost "$cfg" 1 "$rep" added_ns_per_page "$(calc "${ns_of[$cfg]} - ${ns_of[none]}")"
		done
		unset ns_of
	done
}
