# SPDX-License-Identifier: BSD-2-Clause
# Section probe_cost: nanoseconds per contract event in probe_loop's tight
# loop, 1 and 2 threads, for each way of listening (configs below). Configurations alternate
# within each round, starting from a different one each round, so drift hits them all alike;
# ratios are taken within a round.
#
# configs: noprobes  probes compiled out (the loop's own cost)
#          nop       (a) probes in, nothing attached: the semaphore test
#          empty     (b) empty BPF programs on the three probes: the floor
#          args      (b') BPF programs that only fetch the arguments
#          least     (m) the least an exact hit does, whatever its accounting: the
#                    arguments, a place taken in the process's record (the serialization
#                    word), the owner's record and a record per live buffer, nothing
#                    counted (usdt_empty -m): how much of the targets the semantics take
#          least_record (m') that, and the least recording adds: the clock, an event
#                    into a ring buffer (usdt_empty -M)
#          inflight  (c) inflight attached to the process (-p): on kernels 5.17+ the atomic
#                    form, which takes no lock (bpf/acct.bpf.h)
#          locked    (c-locked) the same inflight forced into the locked form (--accounting
#                    locked: a lock per process, a queue behind it), which kernels before 5.17
#                    run: the two forms side by side on one kernel
#          record    (c') inflight record -p, every event also written to a file
#          baseline  (c0) another inflight binary, for before/after figures of a change:
#                    BENCH_INFLIGHT_BASELINE=PATH (e.g. built in a `git worktree` of the
#                    commit before it: make -C /tmp/base inflight), what it is in words in
#                    BENCH_INFLIGHT_BASELINE_DESC
#          bpftrace  (d) bpftrace, per-(class, stage) counts and bytes, owner stages in maps
#          atomic    (e) in-process atomic counters per (class, stage)
#          lttng     (f) LTTng-UST tracepoints, recorded by a session

probe_cost_run() { # CONFIG THREADS: prints probe_loop's line (+ " discarded=N" for lttng)
	local cfg=$1 common=(-t "$2" -d "$SECONDS_PER_RUN" -w 0.3) line discarded
	case $cfg in
	noprobes) "$PC_NOPROBES" "${common[@]}" ;;
	nop) "$PC_LOOP" "${common[@]}" ;;
	atomic) "$PC_ATOMIC" "${common[@]}" ;;
	lttng)
		lttng_start || return 1
		line=$("$PC_LTTNG" "${common[@]}" -W 10)
		discarded=$(lttng_stop)
		[ -n "$line" ] && echo "$line discarded=$discarded"
		;;
	record)
		rm -f "$TMPB/pc.rec"
		RECORD_OUT=$TMPB/pc.rec traced "$TMPB/$cfg.log" record "$PC_LOOP" "${common[@]}" -W 30
		rm -f "$TMPB/pc.rec"
		;;
	*) traced "$TMPB/$cfg.log" "$cfg" "$PC_LOOP" "${common[@]}" -W 30 ;;
	esac
}

probe_cost() {
	local configs=() cfg rep t i n line ns
	PC_LOOP=$(private_copy "$BENCH/probe_loop")
	PC_NOPROBES=$BENCH/probe_loop_noprobes
	PC_ATOMIC=$BENCH/probe_loop_atomic
	PC_LTTNG=$(private_copy "$BENCH/probe_loop_lttng")
	for cfg in noprobes nop empty args least least_record inflight locked record baseline bpftrace atomic lttng; do
		case $cfg in
		record) [ -x "$INFLIGHT" ] && "$INFLIGHT" record --help >/dev/null 2>&1 ||
			{ note probe_cost "(c') not measured: no inflight record"; continue; } ;;
		baseline) [ -n "${BENCH_INFLIGHT_BASELINE:-}" ] || continue
			[ -x "$BENCH_INFLIGHT_BASELINE" ] || { note probe_cost "(c0) not measured: $BENCH_INFLIGHT_BASELINE is not executable"; continue; } ;;
		inflight) [ -x "$INFLIGHT" ] || { note probe_cost "(c) not measured: $INFLIGHT is not built"; continue; } ;;
		locked) has_locked_form || { note probe_cost "(c-locked) not measured: $INFLIGHT has no --accounting"; continue; } ;;
		bpftrace) command -v bpftrace >/dev/null || { note probe_cost "(d) not measured: bpftrace is not installed"; continue; } ;;
		lttng) lttng_ready || { note probe_cost "(f) not measured: $LTTNG_WHY"; continue; } ;;
		esac
		configs+=("$cfg")
	done
	n=${#configs[@]}
	for ((rep = 1; rep <= REPS; rep++)); do
		for t in 1 2; do
			declare -A ns_of=()
			for ((i = 0; i < n; i++)); do
				cfg=${configs[$(((i + rep) % n))]}
				if ! line=$(probe_cost_run "$cfg" "$t") || [ -z "$line" ]; then
					note probe_cost "$cfg, $t thread(s), round $rep: no result"
					continue
				fi
				echo "$line" >>"$OUTDIR/probe_cost.log"
				ns=$(kv ns_per_hit "$line")
				ns_of[$cfg]=$ns
				record probe_cost "$cfg" "$t" "$rep" ns_per_hit "$ns"
				record probe_cost "$cfg" "$t" "$rep" wall_ns_per_hit "$(kv wall_ns_per_hit "$line")"
				case $cfg in inflight | locked | baseline) probe_cost_exact "$cfg" "$t" "$rep" "$line" ;; esac
				[ "$cfg" = lttng ] && record probe_cost lttng "$t" "$rep" discarded "$(kv discarded "$line")"
			done
			probe_cost_ratios "$t" "$rep"
			unset ns_of
		done
	done
}

# ratios within one round: against the floor, against bpftrace, the cost each adds to the
# bare semaphore test compared with what the empty program adds, and the two forms of
# accounting against each other
probe_cost_ratios() {
	local t=$1 rep=$2 a=${ns_of[nop]:-} b=${ns_of[empty]:-} c=${ns_of[inflight]:-} d=${ns_of[bpftrace]:-}
	local l=${ns_of[locked]:-}
	[ -n "$c" ] && [ -n "$b" ] && record probe_cost inflight/empty "$t" "$rep" ratio "$(calc "$c / $b")"
	[ -n "$c" ] && [ -n "$d" ] && record probe_cost inflight/bpftrace "$t" "$rep" ratio "$(calc "$c / $d")"
	[ -n "$c" ] && [ -n "$b" ] && [ -n "$a" ] &&
		record probe_cost inflight-nop/empty-nop "$t" "$rep" ratio "$(calc "($c - $a) / ($b - $a)")"
	[ -n "$l" ] && [ -n "$b" ] && record probe_cost locked/empty "$t" "$rep" ratio "$(calc "$l / $b")"
	[ -n "$c" ] && [ -n "$l" ] && record probe_cost inflight/locked "$t" "$rep" ratio "$(calc "$c / $l")"
	[ -n "${ns_of[record]:-}" ] && [ -n "$b" ] && record probe_cost record/empty "$t" "$rep" ratio "$(calc "${ns_of[record]} / $b")"
	[ -n "$c" ] && [ -n "${ns_of[baseline]:-}" ] &&
		record probe_cost inflight/baseline "$t" "$rep" ratio "$(calc "$c / ${ns_of[baseline]}")"
	[ -n "${ns_of[least]:-}" ] && [ -n "$b" ] && record probe_cost least/empty "$t" "$rep" ratio "$(calc "${ns_of[least]} / $b")"
	[ -n "${ns_of[least_record]:-}" ] && [ -n "$b" ] &&
		record probe_cost least_record/empty "$t" "$rep" ratio "$(calc "${ns_of[least_record]} / $b")"
	[ -n "${ns_of[args]:-}" ] && [ -n "$b" ] && record probe_cost args/empty "$t" "$rep" ratio "$(calc "${ns_of[args]} / $b")"
	[ -n "${ns_of[atomic]:-}" ] && [ -n "$a" ] && record probe_cost atomic/nop "$t" "$rep" ratio "$(calc "${ns_of[atomic]} / $a")"
	return 0
}

# probe_cost_exact CONFIG THREADS REP LINE: the final summary (--json, in $TMPB/CONFIG.log) of
# an inflight run must count exactly the events probe_loop fired (it attached before the
# first one): exact = 1 when all three totals match, else 0. given_up: the hits its kernel
# side gave up, lock_timeouts (the locked form: the lock held and its queue full) plus
# contention_lost (the atomic form, which has no lock and gives no hit up: it must stay 0;
# a baseline built before it existed has none). The lock's own figures, hits that waited for room in
# its queue or for the lock (slot_waits, pool_waits), only for the forms that have a lock.
probe_cost_exact() {
	local cfg=$1 t=$2 rep=$3 summary seen want lt cl m
	summary=$(grep '"type":"summary"' "$TMPB/$cfg.log" | tail -n 1)
	seen=$(printf '%s\n' "$summary" | grep -o '"events":{[^}]*}' | head -n 1 |
		sed 's/[^0-9,]//g; s/,/ /g')
	if [ -z "$seen" ]; then
		note probe_cost "$cfg printed no JSON summary with its event counts: totals not checked"
		return 0
	fi
	want="$(kv allocs "$4") $(kv frees "$4") $(kv stages "$4")"
	if [ "$seen" = "$want" ]; then
		record probe_cost "$cfg" "$t" "$rep" exact 1
	else
		record probe_cost "$cfg" "$t" "$rep" exact 0
		note probe_cost "$t thread(s), round $rep: $cfg counted $seen (alloc free stage), probe_loop fired $want"
	fi
	lt=$(anomaly "$summary" lock_timeouts)
	cl=$(anomaly "$summary" contention_lost)
	record probe_cost "$cfg" "$t" "$rep" given_up "${lt:+$((lt + ${cl:-0}))}"
	[ "$cfg" = inflight ] && [ "${cl:-0}" != 0 ] &&
		note probe_cost "$t thread(s), round $rep: the atomic form gave up $cl hits (contention_lost), which it never should"
	[ "$cfg" = inflight ] && return 0
	for m in lock_timeouts slot_waits pool_waits; do
		record probe_cost "$cfg" "$t" "$rep" "$m" "$(anomaly "$summary" "$m")"
	done
}
