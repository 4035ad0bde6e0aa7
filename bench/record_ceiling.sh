# SPDX-License-Identifier: BSD-2-Clause
# Section record_ceiling: the highest event rate `inflight record` keeps
# with zero lost events on this machine, and what happens above it. probe_loop fires at a set
# rate (1 or 2 threads: with 2, the firing threads and the recorder share the 2 CPUs) for
# BENCH_SECONDS x 1.5 while `inflight record -p` writes to a file under /tmp; per run:
#   rate     the rate achieved in the measured window (events/s; "max" asks for flat out)
#   lost     events the recorder reports lost (kernel ring buffer full, or in user space)
#   balance  recorded + lost - fired: what the recorder stored beyond the probe events (its
#            RSS records), never negative when no event goes missing silently
# and the recording's self-check (inflight report: its replay against the kernel's final
# counters), which must hold whenever nothing was lost; and the recorder's own CPU time per
# event recorded (user + system, from wait4: the BPF side runs in the firing threads) and the
# events it takes per voluntary context switch (how often it sleeps and is woken).

# threads|rate|ring buffer bytes (empty: inflight's default, 16 MiB). The last entry shrinks
# the ring to 64 KiB to show, at rates this machine can fire, what happens past the ceiling.
RC_RATES=("1|250000|" "1|500000|" "1|1000000|" "1|max|" "2|500000|" "2|1000000|"
	"2|1500000|" "2|max|" "2|max|65536")

# the recorder's closing line -> "RECORDED LOST"; nothing when LINE is not that line
# (tests/t_bench_smoke.sh holds the recorder to it)
rc_closing_counts() {
	printf '%s\n' "$1" | sed -n 's/.*recorded \([0-9]*\) event records\{0,1\} (\([0-9]*\) lost).*/\1 \2/p' |
		head -n 1
}

rc_run() { # THREADS RATE RING: prints probe_loop's line and the recorder's closing line
	local t=$1 rate=$2 ring=$3 args
	args=(-t "$t" -d "$(calc "$SECONDS_PER_RUN * 1.5")" -w 0.2 -W 30)
	[ "$rate" = max ] || args+=(-r "$rate")
	rm -f "$TMPB/rc.rec"
	TRACE_PREFIX=("$BENCH/measure")
	RECORD_OUT=$TMPB/rc.rec RECORD_RING=$ring traced "$TMPB/rc.log" record "$RC_LOOP" "${args[@]}"
	TRACE_PREFIX=()
	grep -m 1 'recorded [0-9]* event' "$TMPB/rc.log"
	grep -m 1 '^measure ' "$TMPB/rc.log"
}

record_ceiling() {
	local rep i n=${#RC_RATES[@]} t rate ring cfg line used closing fired recorded lost check
	if [ ! -x "$INFLIGHT" ] || ! "$INFLIGHT" record --help >/dev/null 2>&1; then
		note record_ceiling "not measured: $INFLIGHT has no record command"
		return 0
	fi
	RC_LOOP=$(private_copy "$BENCH/probe_loop")
	for ((rep = 1; rep <= REPS; rep++)); do
		for ((i = 0; i < n; i++)); do
			IFS='|' read -r t rate ring <<<"${RC_RATES[$(((i + rep) % n))]}"
			cfg=$rate${ring:+/ring$ring}
			line=$(rc_run "$t" "$rate" "$ring")
			used=$(printf '%s\n' "$line" | sed -n 's/^measure //p')
			closing=$(printf '%s\n' "$line" | grep -m 1 'recorded [0-9]* event')
			read -r recorded lost < <(rc_closing_counts "$closing")
			line=$(printf '%s\n' "$line" | grep -m 1 '^probe_loop ')
			if [ -z "$line" ] || [ -z "${lost:-}" ]; then
				note record_ceiling "$t thread(s) at $rate/s, round $rep: no result ($(tail -n 2 "$TMPB/rc.log" | tr '\n' ' '))"
				continue
			fi
			echo "$closing | $line" >>"$OUTDIR/record_ceiling.log"
			fired=$(($(kv allocs "$line") + $(kv frees "$line") + $(kv stages "$line")))
			check=$("$INFLIGHT" report --format json "$TMPB/rc.rec" 2>/dev/null |
				jq '[.processes[].check.mismatches // 0] | add')
			rm -f "$TMPB/rc.rec"
			record record_ceiling "$cfg" "$t" "$rep" rate "$(calc "$(kv mhits_per_s "$line") * 1e6")"
			record record_ceiling "$cfg" "$t" "$rep" lost "$lost"
			record record_ceiling "$cfg" "$t" "$rep" lost_pct "$(calc "$lost / $fired * 100")"
			record record_ceiling "$cfg" "$t" "$rep" balance "$((recorded + lost - fired))"
			record record_ceiling "$cfg" "$t" "$rep" check_mismatches "$check"
			[ -n "$used" ] && [ "$recorded" -gt 0 ] &&
				record record_ceiling "$cfg" "$t" "$rep" recorder_ns_per_event \
					"$(calc "($(kv user_s "$used") + $(kv sys_s "$used")) * 1e9 / $recorded")"
			[ -n "$used" ] && [ "$(kv vcsw "$used")" -gt 0 ] &&
				record record_ceiling "$cfg" "$t" "$rep" events_per_wakeup \
					"$(calc "$recorded / $(kv vcsw "$used")")"
		done
	done
}
