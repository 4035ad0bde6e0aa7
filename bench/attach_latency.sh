# SPDX-License-Identifier: BSD-2-Clause
# Section attach_latency: from the exec of a tracer's command to the moment
# its probes are live in the target. The target (probe_loop -W) polls its three USDT
# semaphores every 50 us and notes when all are set; the kernel sets a semaphore when it
# registers the uprobe (the tracer attaches its program to it right after: the figure can be
# optimistic by that last step). stamp_exec notes the time just before it execs the tracer.
# Both use CLOCK_MONOTONIC.
#
# configs: empty (the minimal libbpf loader: the floor), inflight, bpftrace (the same
# aggregation script as in probe_cost; bpftrace compiles it with LLVM at start).

attach_latency() {
	local configs=() cfg rep i n line enabled stamp
	AL_LOOP=$(private_copy "$BENCH/probe_loop")
	for cfg in empty inflight bpftrace; do
		case $cfg in
		inflight) [ -x "$INFLIGHT" ] || { note attach_latency "inflight not measured: $INFLIGHT is not built"; continue; } ;;
		bpftrace) command -v bpftrace >/dev/null || { note attach_latency "bpftrace is not installed"; continue; } ;;
		esac
		configs+=("$cfg")
	done
	n=${#configs[@]}
	for ((rep = 1; rep <= REPS; rep++)); do
		for ((i = 0; i < n; i++)); do
			cfg=${configs[$(((i + rep) % n))]}
			rm -f "$TMPB/stamp"
			TRACE_PREFIX=("$BENCH/stamp_exec" "$TMPB/stamp")
			line=$(traced "$TMPB/$cfg.log" "$cfg" "$AL_LOOP" -d 0.2 -w 0 -W 30 -P 50)
			TRACE_PREFIX=()
			enabled=$(kv enabled_ns "$line")
			stamp=$(cat "$TMPB/stamp" 2>/dev/null)
			if [ -z "$enabled" ] || [ -z "$stamp" ]; then
				note attach_latency "$cfg, round $rep: no result"
				continue
			fi
			record attach_latency "$cfg" 1 "$rep" ms "$(calc "($enabled - $stamp) / 1e6")"
		done
	done
}
