# SPDX-License-Identifier: BSD-2-Clause
# Section scaling: nanoseconds per contract event in probe_loop's tight loop as the number of
# firing threads grows (1, 2, 4 and 8), for four listeners side by side in the same rounds.
# The runs are section probe_cost's (probe_cost_run); as there, configurations alternate
# within each round, starting from a different one each round, and ratios are taken within a
# round.
#
# configs: empty     (b) empty BPF programs on the three probes: the floor
#          inflight  (c) inflight attached to the process (-p), the atomic form
#          locked    (c-locked) inflight --accounting locked: the locked form
#          bpftrace  (d) bpftrace, per-(class, stage) counts and bytes, owner stages in maps

declare -F probe_cost_run >/dev/null || source bench/probe_cost.sh

SCALING_THREADS=(1 2 4 8)

scaling() {
	local configs=() cfg rep t i n line
	PC_LOOP=$(private_copy "$BENCH/probe_loop")
	for cfg in empty inflight locked bpftrace; do
		case $cfg in
		inflight) [ -x "$INFLIGHT" ] || { note scaling "(c) not measured: $INFLIGHT is not built"; continue; } ;;
		locked) has_locked_form || { note scaling "(c-locked) not measured: $INFLIGHT has no --accounting"; continue; } ;;
		bpftrace) command -v bpftrace >/dev/null || { note scaling "(d) not measured: bpftrace is not installed"; continue; } ;;
		esac
		configs+=("$cfg")
	done
	n=${#configs[@]}
	for ((rep = 1; rep <= REPS; rep++)); do
		for t in "${SCALING_THREADS[@]}"; do
			declare -A ns_of=()
			for ((i = 0; i < n; i++)); do
				cfg=${configs[$(((i + rep) % n))]}
				if ! line=$(probe_cost_run "$cfg" "$t") || [ -z "$line" ]; then
					note scaling "$cfg, $t thread(s), round $rep: no result"
					continue
				fi
				echo "$cfg $line" >>"$OUTDIR/scaling.log"
				ns_of[$cfg]=$(kv ns_per_hit "$line")
				record scaling "$cfg" "$t" "$rep" ns_per_hit "${ns_of[$cfg]}"
				case $cfg in inflight | locked) scaling_exact "$cfg" "$t" "$rep" "$line" ;; esac
			done
			scaling_ratio inflight empty "$t" "$rep"
			scaling_ratio inflight bpftrace "$t" "$rep"
			scaling_ratio locked empty "$t" "$rep"
			scaling_ratio inflight locked "$t" "$rep"
			unset ns_of
		done
	done
}

# scaling_ratio X Y THREADS REP: the ratio X/Y of this round's figures, when both were measured
scaling_ratio() {
	[ -n "${ns_of[$1]:-}" ] && [ -n "${ns_of[$2]:-}" ] &&
		record scaling "$1/$2" "$3" "$4" ratio "$(calc "${ns_of[$1]} / ${ns_of[$2]}")"
	return 0
}

# scaling_exact CONFIG THREADS REP LINE: probe_cost_exact's check (exact totals, hits given
# up, the lock's figures for the locked form) of the inflight run just done, filed under this
# section: it records under probe_cost, so its record and note calls write to scratch files
# (RAW and NOTES set for that call only), whose lines are renamed into the real ones after.
scaling_exact() {
	local raw=$TMPB/scaling.raw notes=$TMPB/scaling.notes text
	: >"$raw"
	: >"$notes"
	RAW=$raw NOTES=$notes probe_cost_exact "$@" 2>/dev/null
	sed 's/^probe_cost,/scaling,/' "$raw" >>"$RAW"
	while IFS= read -r text; do
		note scaling "${text#probe_cost: }"
	done <"$notes"
}
