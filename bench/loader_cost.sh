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
			"$BENCH/measure" "$INFLIGHT" -i 100ms -p "$pp" >"$TMPB/lc.out" 2>"$TMPB/lc.err" & lp=$!
			BG_PIDS+=("$lp")
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
