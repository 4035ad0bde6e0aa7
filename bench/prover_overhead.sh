# SPDX-License-Identifier: BSD-2-Clause
# Section prover_overhead: proofs per minute of the reference prover
# (its own figure: wall time of the proving, set-up excluded) and the CPU time per proof of the
# whole command (tracer included: what tracing costs the machine, and a figure that other
# processes sharing the CPUs inflate far less than wall time) in four configurations,
# alternated run by run, BENCH_PROVER_REPS (7) rounds:
#   untraced  build/prover, nothing attached (the baseline)
#   noprobes  build/prover-noprobes (-DPROVER_NO_PROBES), nothing attached
#   live      inflight -i 100ms -- build/prover (live timeline at 10 Hz)
#   record    inflight record -o FILE -- build/prover
# on two workloads: "shape" (the default pipeline, 2^16 constraints per partition: a few
# hundred events per second, like the real thing) and "events" (2^10 constraints: partitions
# so small that the probes fire tens of thousands of times per second, a stress).

PO_WORKLOADS=("shape|--log-n 16 --proofs 6" "events|--log-n 10 --proofs 200")

# po_run CONFIG ARGS...: prints the prover's JSON summary line, then measure's line (the CPU
# time of the whole command: the prover, plus inflight and its BPF work when traced)
po_run() {
	local cfg=$1 cmd
	shift
	case $cfg in
	untraced) cmd=("$PO_PROVER" --json "$@") ;;
	noprobes) cmd=("$PO_NOPROBES" --json "$@") ;;
	live) cmd=("$INFLIGHT" --json -i 100ms -o "$TMPB/po.json" -- "$PO_PROVER" --json "$@") ;;
	record) cmd=("$INFLIGHT" record -o "$TMPB/po.rec" -- "$PO_PROVER" --json "$@") ;;
	esac
	"$BENCH/measure" "${cmd[@]}" >"$TMPB/po.out" 2>"$TMPB/po.err"
	rm -f "$TMPB/po.rec"
	grep -m 1 '^{"proofs"' "$TMPB/po.out"
	grep -m 1 '^measure ' "$TMPB/po.err"
}

# json_num KEY LINE
json_num() {
	printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}

prover_overhead() {
	local configs=(untraced noprobes) cfg w name args rep i n out line used ppm reps=${BENCH_PROVER_REPS:-7}
	if [ ! -x "$BUILD/prover" ] || [ ! -x "$BUILD/prover-noprobes" ]; then
		note prover_overhead "not measured: $BUILD/prover or $BUILD/prover-noprobes is not built"
		return 0
	fi
	PO_PROVER=$(private_copy "$BUILD/prover")
	PO_NOPROBES=$(private_copy "$BUILD/prover-noprobes")
	if [ -x "$INFLIGHT" ]; then
		configs+=(live)
		if "$INFLIGHT" record --help >/dev/null 2>&1; then
			configs+=(record)
		else
			note prover_overhead "record mode not measured: this inflight has no record command"
		fi
	else
		note prover_overhead "traced runs not measured: $INFLIGHT is not built"
	fi
	n=${#configs[@]}
	for w in "${PO_WORKLOADS[@]}"; do
		name=${w%%|*}
		read -r -a args <<<"${w#*|}"
		echo "$name: build/prover ${args[*]}" >>"$OUTDIR/prover_overhead.log"
		for ((rep = 1; rep <= reps; rep++)); do
			declare -A ppm_of=() cpu_of=()
			for ((i = 0; i < n; i++)); do
				cfg=${configs[$(((i + rep) % n))]}
				out=$(po_run "$cfg" "${args[@]}")
				line=$(printf '%s\n' "$out" | head -n 1)
				used=$(printf '%s\n' "$out" | sed -n 's/^measure //p')
				ppm=$(json_num proofs_per_min "$line")
				if [ -z "$ppm" ] || [ "$(json_num exit "$line")" != 0 ] || [ -z "$used" ]; then
					note prover_overhead "$name, $cfg, round $rep: no result ($(grep -v '^measure ' "$TMPB/po.err" | tail -n 2 | tr '\n' ' '))"
					continue
				fi
				echo "$cfg $used $line" >>"$OUTDIR/prover_overhead.log"
				ppm_of[$cfg]=$ppm
				cpu_of[$cfg]=$(calc "($(kv user_s "$used") + $(kv sys_s "$used")) / $(json_num proofs "$line")")
				record prover_overhead "$cfg" "$name" "$rep" proofs_per_min "$ppm"
				record prover_overhead "$cfg" "$name" "$rep" cpu_s_per_proof "${cpu_of[$cfg]}"
				po_per_proof "$cfg" "$name" "$rep" "$line" "$used"
			done
			po_ratios "$name" "$rep"
			unset ppm_of cpu_of
		done
	done
}

# throughput lost, in percent of the untraced run of the same round
po_ratios() {
	local name=$1 rep=$2 base=${ppm_of[untraced]:-} cfg
	[ -n "$base" ] || return 0
	# probes compiled in but idle, against compiled out: how much slower the probes build is
	if [ -n "${ppm_of[noprobes]:-}" ]; then
		record prover_overhead untraced "$name" "$rep" probes_in_pct "$(calc "(1 - $base / ${ppm_of[noprobes]}) * 100")"
		record prover_overhead untraced "$name" "$rep" probes_in_cpu_pct "$(calc "(${cpu_of[untraced]} / ${cpu_of[noprobes]} - 1) * 100")"
	fi
	for cfg in live record; do
		[ -n "${ppm_of[$cfg]:-}" ] || continue
		record prover_overhead "$cfg" "$name" "$rep" slowdown_pct "$(calc "(1 - ${ppm_of[$cfg]} / $base) * 100")"
		record prover_overhead "$cfg" "$name" "$rep" cpu_overhead_pct "$(calc "(${cpu_of[$cfg]} / ${cpu_of[untraced]} - 1) * 100")"
	done
	return 0
}

# What each proof asks of a tracer, for the overhead estimate in the results file: probe hits
# (inflight's own count, live runs) and minor page faults (each an RSS change, so a
# kmem:rss_stat event; untraced runs, from wait4)
po_per_proof() { # CONFIG WORKLOAD ROUND PROVER-JSON MEASURE-LINE
	local proofs events
	proofs=$(json_num proofs "$4")
	case $1 in
	untraced)
		record prover_overhead untraced "$2" "$3" minflt_per_proof "$(calc "$(kv minflt "$5") / $proofs")"
		;;
	live)
		events=$(grep '"type":"summary"' "$TMPB/po.json" 2>/dev/null | tail -n 1 | grep -o '"events":{[^}]*}' |
			head -n 1 | sed 's/[^0-9,]//g' | awk -F, '{ print $1 + $2 + $3 }')
		[ -n "$events" ] && record prover_overhead live "$2" "$3" events_per_proof "$(calc "$events / $proofs")"
		;;
	esac
	return 0
}
