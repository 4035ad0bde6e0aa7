# SPDX-License-Identifier: BSD-2-Clause
# Section ring_overhead: the flight recorder (`record --ring`) beside live tracing and a full
# recording, alternated run by run, BENCH_RING_REPS (5) rounds:
#   per hit   probegen storm (one thread flat out, 5 probe hits a round, BENCH_RING_ROUNDS
#             rounds) timed by itself between its gate and its end, traced -b by: nothing,
#             live (`inflight -b`, the summary only), ring (`record --ring 1m`), record
#             (`record -o FILE`)
#   prover    proofs per minute and CPU per proof of the reference prover's "events" workload
#             (2^10 constraints: tens of thousands of hits per second) under the same
#   memory    the loader's peak RSS (getrusage) through a storm of BENCH_RING_MEM_ROUNDS
#             rounds: ring with --ring-size 16M and 64M, record to a file, live

RO_PROVER_ARGS=(--log-n 10 --proofs 200)

# ro_tracer CONFIG PROGRAM: starts the tracer of CONFIG on every process of PROGRAM in the
# background (RO_TRACER its pid, 0 for none) and waits for it to attach
ro_tracer() {
	local i
	RO_TRACER=0
	case $1 in
	untraced) return 0 ;;
	live) "$INFLIGHT" -b "$2" >/dev/null 2>"$TMPB/ro.err" & ;;
	ring) "$INFLIGHT" record --ring 1m --dump-dir "$TMPB/ro.d" -b "$2" 2>"$TMPB/ro.err" & ;;
	record) "$INFLIGHT" record --force -o "$TMPB/ro.rec" -b "$2" 2>"$TMPB/ro.err" & ;;
	esac
	RO_TRACER=$!
	BG_PIDS+=("$RO_TRACER")
	for ((i = 0; i < 500; i++)); do
		grep -qE '^inflight: (tracing|recording)' "$TMPB/ro.err" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

ro_stop() {
	[ "$RO_TRACER" = 0 ] || stop_bg "$RO_TRACER"
	rm -f "$TMPB/ro.rec"
}

# ro_storm CONFIG REP: the storm's own ns per hit
ro_storm() {
	local cfg=$1 rep=$2 pg i ns
	pg=$RO_PG
	ro_tracer "$cfg" "$pg" || { note ring_overhead "$cfg: the tracer did not attach"; ro_stop; return; }
	"$pg" storm "$RO_ROUNDS" gate >"$TMPB/ro.storm" &
	local p=$!
	for ((i = 0; i < 500; i++)); do
		grep -q gated "$TMPB/ro.storm" && break
		sleep 0.01
	done
	sleep 0.05 # "gated" is printed just before its sigwait()
	kill -USR1 "$p"
	wait "$p"
	ns=$(sed -n 's/^storm: [0-9]* events, \([0-9.]*\) ns\/event$/\1/p' "$TMPB/ro.storm")
	record ring_overhead "$cfg" hit "$rep" ns_per_hit "$ns"
	ro_stop
}

# ro_prover CONFIG REP: proofs per minute and CPU s per proof (tracer included)
ro_prover() {
	local cfg=$1 rep=$2 line used
	ro_tracer "$cfg" "$RO_PROVER" || { note ring_overhead "$cfg: the tracer did not attach"; ro_stop; return; }
	"$BENCH/measure" "$RO_PROVER" --json "${RO_PROVER_ARGS[@]}" >"$TMPB/ro.out" 2>"$TMPB/ro.perr"
	line=$(grep -m 1 '^{"proofs"' "$TMPB/ro.out")
	used=$(sed -n 's/^measure //p' "$TMPB/ro.perr")
	ro_stop
	# the tracer's own CPU is not the prover's: the wall figure is what the pipeline lost
	record ring_overhead "$cfg" prover "$rep" proofs_per_min \
		"$(printf '%s\n' "$line" | sed -n 's/.*"proofs_per_min":\([0-9.]*\).*/\1/p')"
	record ring_overhead "$cfg" prover "$rep" prover_cpu_s "$(calc "$(kv user_s "$used") + $(kv sys_s "$used")")"
}

# ro_memory CONFIG: the loader's peak RSS through a storm of RO_MEM_ROUNDS rounds
ro_memory() {
	local cfg=$1 cmd used line
	case $cfg in
	ring16) cmd=("$INFLIGHT" record --ring 1h --ring-size 16M --dump-dir "$TMPB/ro.d") ;;
	ring64) cmd=("$INFLIGHT" record --ring 1h --ring-size 64M --dump-dir "$TMPB/ro.d") ;;
	record) cmd=("$INFLIGHT" record --force -o "$TMPB/ro.rec") ;;
	live) cmd=("$INFLIGHT") ;;
	esac
	"$BENCH/measure" "${cmd[@]}" -- "$RO_PG" storm "$RO_MEM_ROUNDS" >/dev/null 2>"$TMPB/ro.merr"
	used=$(sed -n 's/^measure //p' "$TMPB/ro.merr")
	record ring_overhead "$cfg" memory 1 maxrss_kib "$(kv maxrss_kib "$used")"
	line=$(grep 'flight recorder: ' "$TMPB/ro.merr" | tail -n 1)
	if [ -n "$line" ]; then
		record ring_overhead "$cfg" memory 1 ring_bytes_max \
			"$(printf '%s\n' "$line" | sed -n 's/.*at most (\([0-9]*\) bytes).*/\1/p')"
		record ring_overhead "$cfg" memory 1 let_go \
			"$(printf '%s\n' "$line" | sed -n 's/.* held, \([0-9]*\) let go.*/\1/p')"
	fi
	rm -f "$TMPB/ro.rec"
}

ring_overhead() {
	local configs=(untraced live ring record) reps=${BENCH_RING_REPS:-5} rep i n cfg
	RO_ROUNDS=${BENCH_RING_ROUNDS:-200000}
	RO_MEM_ROUNDS=${BENCH_RING_MEM_ROUNDS:-2000000}
	if [ ! -x "$BUILD/tests/probegen" ] || [ ! -x "$INFLIGHT" ]; then
		note ring_overhead "not measured: $BUILD/tests/probegen or $INFLIGHT is not built"
		return 0
	fi
	RO_PG=$(private_copy "$BUILD/tests/probegen")
	RO_PROVER=$(private_copy "$BUILD/prover")
	mkdir -p "$TMPB/ro.d"
	n=${#configs[@]}
	for ((rep = 1; rep <= reps; rep++)); do
		for ((i = 0; i < n; i++)); do
			ro_storm "${configs[$(((i + rep) % n))]}" "$rep"
		done
		for ((i = 0; i < n; i++)); do
			ro_prover "${configs[$(((i + rep) % n))]}" "$rep"
		done
	done
	for cfg in live record ring16 ring64; do
		ro_memory "$cfg"
	done
	[ -z "$(ls -A "$TMPB/ro.d")" ] || note ring_overhead "a trigger fired during the bench: $(ls "$TMPB/ro.d")"
}
