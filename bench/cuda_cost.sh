# SPDX-License-Identifier: BSD-2-Clause
# Section cuda_cost: what inflight adds to a CUDA driver memory call. cuda_loop calls
# cuMemAlloc_v2 and cuMemFree_v2 of the stand-in libcuda.so.1 (tests/cuda/libcuda.c: malloc
# and free) in a loop, one thread; wall nanoseconds per call (an alloc or a free), with:
#   none      nothing attached
#   inflight  inflight -- cuda_loop: the entry and return probe of every call, the alloc's
#             accounting at its return and the free's at its entry
# Configurations alternate within each round; the added cost is taken within a round. The
# inflight run waits for its uprobes to be gone (INFLIGHT_DETACH=inline): until then the
# next run of the same file would still trap.

cuda_cost_run() { # CONFIG: cuda_loop's line
	case $1 in
	none) "$CC_LOOP" -d "$SECONDS_PER_RUN" ;;
	inflight) INFLIGHT_DETACH=inline "$INFLIGHT" --no-rss --json -o /dev/null -- "$CC_LOOP" \
		-d "$SECONDS_PER_RUN" \
		2>"$TMPB/cuda_cost.err" ;;
	esac
}

cuda_cost() {
	local configs=(none inflight) cfg rep i n=2 line ns
	if [ ! -x "$INFLIGHT" ] || [ ! -x "$BENCH/cuda_loop" ]; then
		note cuda_cost "not measured: $INFLIGHT or $BENCH/cuda_loop is not built"
		return 0
	fi
	# a private copy with its library: a uprobe by path traps in every user of the file
	mkdir -p "$TMPB/cuda"
	cp "$BENCH/cuda_loop" "$BENCH/libcuda.so.1" "$TMPB/cuda/"
	CC_LOOP=$TMPB/cuda/cuda_loop
	for ((rep = 1; rep <= REPS; rep++)); do
		declare -A ns_of=()
		for ((i = 0; i < n; i++)); do
			cfg=${configs[$(((i + rep) % n))]}
			line=$(cuda_cost_run "$cfg")
			ns=$(kv ns_per_call "$line")
			ns_of[$cfg]=$ns
			record cuda_cost "$cfg" 1 "$rep" ns_per_call "$ns"
		done
		[ -n "${ns_of[none]}" ] && [ -n "${ns_of[inflight]}" ] &&
			record cuda_cost inflight 1 "$rep" added_ns_per_call \
				"$(calc "${ns_of[inflight]} - ${ns_of[none]}")"
		unset ns_of
	done
}
