# SPDX-License-Identifier: BSD-2-Clause
# Section loader_cost: what the inflight process itself costs while it
# prints the live timeline at 10 Hz (-i 100ms) over a prover run of about BENCH_LOADER_SECONDS
# (10): CPU time (user + system, from wait4) per second of wall time, in percent of one core,
# and peak RSS. Attached by pid, so the prover's own CPU time is not counted; the BPF
# programs' time is charged to the prover's threads (see probe_cost), not here.
# Workload: the prover's default shape (--log-n 16), and its event-heavy stress (--log-n 10).

LC_WORKLOADS=("shape|--log-n 16|4" "events|--log-n 10|200") # name|args|proofs per 2 s or so

loader_cost() {
	local w name args per rep i lp pp used cpu wall proofs secs=${BENCH_LOADER_SECONDS:-10} exe
	local launched steady0 c0 c1 t0 t1
	if [ ! -x "$INFLIGHT" ] || [ ! -x "$BUILD/prover" ]; then
		note loader_cost "not measured: $INFLIGHT or $BUILD/prover is not built"
		return 0
	fi
	LC_PROVER=$(private_copy "$BUILD/prover")
	exe=$(readlink -f "$LC_PROVER")
	for w in "${LC_WORKLOADS[@]}"; do
		IFS='|' read -r name args per <<<"$w"
		# about `secs` seconds of proving: scale the proof count from a short run
		proofs=$(lc_proofs_for "$secs" $args --proofs "$per")
		for ((rep = 1; rep <= REPS; rep++)); do
			# shellcheck disable=SC2086
			"$LC_PROVER" $args --proofs "$proofs" >/dev/null 2>&1 & pp=$!
			BG_PIDS+=("$pp")
			for ((i = 0; i < 100; i++)); do
				[ "$(readlink "/proc/$pp/exe" 2>/dev/null)" = "$exe" ] && break
				sleep 0.01
			done
			launched=$(date +%s.%N)
			rm -f "$TMPB/lc.err" # its last round's "tracing" line must not be read as this one's
			"$BENCH/measure" "$INFLIGHT" -i 100ms -p "$pp" >"$TMPB/lc.out" 2>"$TMPB/lc.err" & lp=$!
			BG_PIDS+=("$lp")
			# the steady state: from the attach done (its "tracing" line) to the end, without
			# the load (the kernel's verifier runs on the loader's time): the CPU at that
			# line, taken from the whole run's
			steady0=$(lc_cpu_once_tracing "$lp" "$launched")
			wait "$pp"
			stop_bg "$lp" 20
			used=$(sed -n 's/^measure //p' "$TMPB/lc.err")
			if [ -z "$used" ] || [ "$(kv status "$used")" != 0 ]; then
				note loader_cost "$name, round $rep: no result ($(grep -v '^measure ' "$TMPB/lc.err" | tail -n 2 | tr '\n' ' '))"
				continue
			fi
			echo "$name $used" >>"$OUTDIR/loader_cost.log"
			wall=$(kv wall_s "$used")
			cpu=$(calc "($(kv user_s "$used") + $(kv sys_s "$used")) / $wall * 100")
			record loader_cost inflight "$name" "$rep" cpu_pct "$cpu"
			record loader_cost inflight "$name" "$rep" maxrss_mib "$(calc "$(kv maxrss_kib "$used") / 1024")"
			record loader_cost inflight "$name" "$rep" wall_s "$wall"
			if [ -n "$steady0" ]; then
				read -r c0 t0 <<<"$steady0"
				c1=$(calc "$(kv user_s "$used") + $(kv sys_s "$used")")
				t1=$wall
				record loader_cost inflight "$name" "$rep" attach_cpu_s "$c0"
				record loader_cost inflight "$name" "$rep" steady_cpu_pct \
					"$(calc "($c1 - $c0) / ($t1 - $t0) * 100")"
			else
				note loader_cost "$name, round $rep: no steady-state reading"
			fi
		done
	done
}

# lc_proofs_for SECONDS ARGS... --proofs N: the proof count that runs about SECONDS
lc_proofs_for() {
	local secs=$1 line wall n
	shift
	n=${*: -1}
	line=$("$LC_PROVER" --json "$@" 2>/dev/null | grep -m 1 '^{"proofs"')
	wall=$(printf '%s\n' "$line" | sed -n 's/.*"wall_s":\([0-9.]*\).*/\1/p')
	[ -n "$wall" ] || { echo "$n"; return; }
	awk -v s="$secs" -v w="$wall" -v n="$n" 'BEGIN { p = int(n * s / w); print p < n ? n : p }'
}

# lc_cpu_now PID ORIGIN: "CPU-SECONDS SECONDS-SINCE-ORIGIN" of PID now (user + system,
# /proc/PID/stat; ORIGIN a `date +%s.%N`)
lc_cpu_now() {
	local f
	[ -n "$1" ] && f=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return
	awk -v hz="$(getconf CLK_TCK)" -v now="$(date +%s.%N)" -v o="$2" \
		'{ printf "%.3f %.3f\n", ($12 + $13) / hz, now - o }' <<<"$f"
}

# lc_cpu_once_tracing MEASURE-PID ORIGIN: lc_cpu_now of its inflight once it said "tracing"
lc_cpu_once_tracing() {
	local i
	for ((i = 0; i < 3000; i++)); do
		grep -q '^inflight: tracing' "$TMPB/lc.err" 2>/dev/null && break
		sleep 0.01
	done
	lc_cpu_now "$(pgrep -P "$1" -x inflight | head -n 1)" "$2"
}
