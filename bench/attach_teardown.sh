# SPDX-License-Identifier: BSD-2-Clause
# Section attach_teardown: attach and teardown by attach mechanism, on targets with
# 3, 100 and 400 USDT probe sites (build/bench/sites_N, bench/gen_sites.sh), and the cost per
# hit of each mechanism. Results: docs/bench.md; what they mean: docs/attach.md.
#
# spawn  `--`-style runs: the tool starts the target, the target fires every site once and
#        exits, the tool notices, prints, detaches and exits. Figures, from CLOCK_MONOTONIC
#        stamps: live (exec of the tool to the target seeing its semaphores set), attach (the
#        attach calls alone, where the tool says), summary (target exit to the tool's
#        "stopped" line), exit (target exit to the waiting shell seeing the tool gone: the
#        figure a user waits for), kernel (target exit to the last link closed, in the forked
#        child for fork/sibling). Configs: usdt_attach MECH:DETACH (bench/usdt_attach.c, libbpf
#        1.5), inflight, inflight_perf (inflight forced to perf-event uprobes: what 5.10 and
#        6.1 get), baseline (BENCH_INFLIGHT_BASELINE), bpftrace (-c), empty (usdt_empty,
#        the existing minimal loader, by pid), empty_base (BENCH_USDT_EMPTY_BASELINE: a
#        usdt_empty built against another libbpf).
# pid    -p runs on a target that keeps running: the tool is stopped with SIGINT after the
#        target fired; exit (signal to the shell seeing the tool gone) and sema0 (signal to
#        the target seeing all three semaphores back at 0: the kernel has unregistered every
#        uprobe).
# hit    ns per hit in probe_loop (section probe_cost's method), 1 and 2 threads, with an
#        empty program attached by each mechanism.
# hit400 ns per hit in sites_400 firing all its 400 sites round after round (its CPU time over
#        its hits), an empty program on each site by each mechanism: the cost per hit with
#        400 sites attached.
# BENCH_ATTACH_SCENARIOS picks some (default: spawn pid hit hit400), BENCH_ATTACH_CONFIGS the
# spawn configs (default: all that can run here).
# CSV rows: section attach_teardown, config SCENARIO:CONFIG, "threads" = probe sites (spawn,
# pid) or threads (hit). BENCH_ATTACH_REPS (3) rounds: a perf-event run at 400 sites takes
# most of a minute.

AT_REPS=${BENCH_ATTACH_REPS:-3}
AT_SITES=${BENCH_ATTACH_SITES:-"3 100 400"}
AT_PID_SITES=${BENCH_ATTACH_PID_SITES:-100}
AT_SCENARIOS=" ${BENCH_ATTACH_SCENARIOS:-spawn pid hit hit400} "
AT_HIT_ROUNDS=${BENCH_ATTACH_HIT_ROUNDS:-2500}

at_ms() { # LATER_NS EARLIER_NS: milliseconds between two stamps ("" if either is missing)
	[ -n "$1" ] && [ -n "$2" ] && [ "$1" != 0 ] && [ "$2" != 0 ] && calc "($1 - $2) / 1e6"
}

# at_wait_report FILE TIMEOUT_S: until the forked child has written its line
at_wait_report() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# at_zombie PID: 1 when PID is still a zombie half a second after it ended, 0 when reaped
at_zombie() {
	local st
	sleep 0.5
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ "$st" = Z ] && echo 1 || echo 0
}

# at_wait_detached INFLIGHT: until that inflight's detaching children are gone (up to 300 s;
# attach/detach.h): the next run's attach would wait behind their unregistrations
at_wait_detached() {
	local bin busy p i
	bin=$(readlink -f "$1")
	for ((i = 0; i < 3000; i++)); do
		busy=
		for p in $(pgrep -x inflight-detach); do
			[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin" ] && busy=1
		done
		[ -z "$busy" ] && return 0
		sleep 0.1
	done
}

at_bpftrace_script() { # BINARY: counts every hit of the contract's probes
	printf 'usdt:%s:prover:* { @hits = count(); }\n' "$1" >"$TMPB/at.bt"
}

# at_spawn CONFIG N REP: one `--`-style run, figures recorded
at_spawn() {
	local cfg=$1 n=$2 rep=$3 target=${AT_TARGET[$2]} out=$TMPB/at.out rpt=$TMPB/at.report
	local mech=${cfg%%:*} det=${cfg#*:} start end exit_ns line hits want child kdone cmd=()
	rm -f "$out" "$rpt" "$rpt.tmp" "$TMPB/at.start" "$TMPB/at.end" "$TMPB/at.json"
	case $cfg in
	inflight) cmd=("$INFLIGHT" --json -o "$TMPB/at.json" -- "$target" -W 60) ;;
	inflight_perf) cmd=(env INFLIGHT_ATTACH=perf "$INFLIGHT" --json -o "$TMPB/at.json" -- "$target" -W 60) ;;
	baseline) cmd=("$BENCH_INFLIGHT_BASELINE" --json -o "$TMPB/at.json" -- "$target" -W 60) ;;
	bpftrace) at_bpftrace_script "$target"; cmd=(bpftrace -c "$target -W 60" "$TMPB/at.bt") ;;
	empty | empty_base) ;;
	*) cmd=("$BENCH/usdt_attach" -m "$mech" -d "$det" -T 3 -o "$rpt" -c -- "$target" -W 60) ;;
	esac
	if [ "$cfg" = empty ] || [ "$cfg" = empty_base ]; then # usdt_empty attaches by pid only
		local tp loader=$BENCH/usdt_empty
		[ "$cfg" = empty ] || loader=$BENCH_USDT_EMPTY_BASELINE
		# the target goes on 2 s after its semaphores are set: with perf-event uprobes
		# they are set by the first site of each probe, and the rest must be attached
		# before the target exits
		"$target" -W 60 -s 2 >"$TMPB/at.tout" &
		tp=$!
		BG_PIDS+=("$tp")
		at_wait_exec "$tp" "$target"
		"$BENCH/stamp_exec" "$TMPB/at.start" "$loader" "$tp" >"$out" 2>&1
		local lrc=$?
		"$BENCH/stamp_exec" "$TMPB/at.end" true
		wait "$tp"
		cat "$TMPB/at.tout" >>"$out"
		if [ "$lrc" != 0 ]; then
			note attach_teardown "spawn $cfg, $n sites, round $rep: the loader failed: $(grep -v '^sites_target' "$out" | tail -n 1)"
			return 0
		fi
	else
		"$BENCH/stamp_exec" "$TMPB/at.start" "${cmd[@]}" >"$out" 2>&1
		"$BENCH/stamp_exec" "$TMPB/at.end" true
	fi
	start=$(cat "$TMPB/at.start") end=$(cat "$TMPB/at.end")
	exit_ns=$(kv exit_ns "$(grep '^sites_target exit' "$out")")
	line=$(grep '^sites_target fired' "$out")
	if [ -z "$exit_ns" ] || [ -z "$line" ]; then
		note attach_teardown "spawn $cfg, $n sites, round $rep: no result: $(grep -v '^sites_target' "$out" | tail -n 2 | tr '\n' ' ')"
		return 0
	fi
	want=$(kv hits "$line")
	record attach_teardown "spawn:$cfg" "$n" "$rep" live_ms "$(at_ms "$(kv enabled_ns "$line")" "$start")"
	record attach_teardown "spawn:$cfg" "$n" "$rep" exit_ms "$(at_ms "$end" "$exit_ns")"
	case $cfg in
	inflight | inflight_perf | baseline)
		at_wait_detached "$([ "$cfg" = baseline ] && echo "$BENCH_INFLIGHT_BASELINE" || echo "$INFLIGHT")"
		# the JSON beside -- CMD goes to -o (a baseline older than -o wrote it to stdout)
		hits=$(cat "$TMPB/at.json" "$out" 2>/dev/null | grep '"type":"summary"' | tail -n 1 | grep -o '"events":{[^}]*}' | head -n 1 |
			grep -o ':[0-9]\+' | tr -d : | awk '{ s += $1 } END { print s + 0 }') ;;
	bpftrace) hits=$(sed -n 's/^@hits: //p' "$out") ;;
	empty | empty_base) record attach_teardown "spawn:$cfg" "$n" "$rep" attach_ms "$(kv attach_ms "$(grep '^usdt_empty attached' "$out")")"
		return 0 ;;
	*)
		record attach_teardown "spawn:$cfg" "$n" "$rep" attach_ms "$(kv attach_ms "$(grep '^usdt_attach attached' "$out")")"
		line=$(grep '^usdt_attach stopped' "$out")
		hits=$(kv hits "$line")
		record attach_teardown "spawn:$cfg" "$n" "$rep" summary_ms "$(at_ms "$(kv stop_ns "$line")" "$exit_ns")"
		if [ "$det" = fork ] || [ "$det" = sibling ]; then
			child=$(kv child "$(grep '^usdt_attach forked' "$out")")
			at_wait_report "$rpt" 300 || note attach_teardown "spawn $cfg, $n sites, round $rep: the detaching child wrote nothing in 300 s"
			kdone=$(kv done_ns "$(cat "$rpt" 2>/dev/null)")
			[ -n "$child" ] && record attach_teardown "spawn:$cfg" "$n" "$rep" zombie "$(at_zombie "$child")"
		else
			kdone=$(kv done_ns "$(grep '^usdt_attach detached' "$out")")
		fi
		record attach_teardown "spawn:$cfg" "$n" "$rep" kernel_ms "$(at_ms "$kdone" "$exit_ns")"
		;;
	esac
	record attach_teardown "spawn:$cfg" "$n" "$rep" exact "$([ "$hits" = "$want" ] && echo 1 || echo 0)"
	[ "$hits" = "$want" ] || note attach_teardown "spawn $cfg, $n sites, round $rep: counted ${hits:-nothing}, fired $want"
}

at_wait_exec() { # PID BINARY: until PID runs BINARY (the forked shell has exec'd it)
	local i exe
	exe=$(readlink -f "$2")
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$exe" ] && return 0
		sleep 0.01
	done
}

# at_pid CONFIG N REP: a -p run; the target waits for its semaphores to be 0 again
at_pid() {
	local cfg=$1 n=$2 rep=$3 target=${AT_TARGET[$2]} rpt=$TMPB/at.report tp lp i stop_ns end zero
	rm -f "$rpt" "$rpt.tmp" "$TMPB/at.tout" "$TMPB/at.lout"
	"$target" -W 60 -z 300 >"$TMPB/at.tout" &
	tp=$!
	BG_PIDS+=("$tp")
	at_wait_exec "$tp" "$target"
	"$BENCH/usdt_attach" -m "${cfg%%:*}" -d "${cfg#*:}" -T 3 -o "$rpt" -p "$tp" >"$TMPB/at.lout" 2>&1 &
	lp=$!
	BG_PIDS+=("$lp")
	for ((i = 0; i < 600; i++)); do
		grep -q '^sites_target fired' "$TMPB/at.tout" 2>/dev/null && break
		alive "$tp" || break
		sleep 0.05
	done
	kill -INT "$lp" 2>/dev/null
	wait "$lp"
	"$BENCH/stamp_exec" "$TMPB/at.end" true
	wait "$tp"
	stop_ns=$(kv stop_ns "$(grep '^usdt_attach stopped' "$TMPB/at.lout")")
	end=$(cat "$TMPB/at.end")
	zero=$(kv sema_zero_ns "$(grep '^sites_target exit' "$TMPB/at.tout")")
	if [ -z "$stop_ns" ] || [ -z "$zero" ] || [ "$zero" = 0 ]; then
		note attach_teardown "pid $cfg, $n sites, round $rep: no result: $(tail -n 2 "$TMPB/at.lout" | tr '\n' ' ')"
		return 0
	fi
	record attach_teardown "pid:$cfg" "$n" "$rep" exit_ms "$(at_ms "$end" "$stop_ns")"
	record attach_teardown "pid:$cfg" "$n" "$rep" sema0_ms "$(at_ms "$zero" "$stop_ns")"
	# a forked child still closing links would slow the next run down: let it finish
	case $cfg in *:fork | *:sibling) at_wait_report "$rpt" 300 ;; esac
}

# at_hit CONFIG THREADS REP: ns per hit in probe_loop with an empty program attached
at_hit() {
	local cfg=$1 t=$2 rep=$3 lp tp line
	"$AT_LOOP" -t "$t" -d "$SECONDS_PER_RUN" -w 0.3 -W 30 >"$TMPB/at.hit" &
	lp=$!
	BG_PIDS+=("$lp")
	at_wait_exec "$lp" "$AT_LOOP"
	case $cfg in
	empty) "$BENCH/usdt_empty" "$lp" >"$TMPB/at.hitlog" 2>&1 & ;;
	*) "$BENCH/usdt_attach" -m "$cfg" -p "$lp" >"$TMPB/at.hitlog" 2>&1 & ;;
	esac
	tp=$!
	BG_PIDS+=("$tp")
	wait "$lp"
	stop_bg "$tp" 60
	line=$(cat "$TMPB/at.hit")
	[ -n "$line" ] || { note attach_teardown "hit $cfg, $t thread(s), round $rep: no result"; return 0; }
	record attach_teardown "hit:$cfg" "$t" "$rep" ns_per_hit "$(kv ns_per_hit "$line")"
}

# at_hit400 CONFIG REP: ns per hit of sites_400's own loop over its 400 sites
at_hit400() {
	local cfg=$1 rep=$2 target=${AT_TARGET[400]} rpt=$TMPB/at.report tp line
	rm -f "$rpt" "$rpt.tmp"
	"$target" -W 60 -s 0.5 -r "$AT_HIT_ROUNDS" >"$TMPB/at.tout" &
	tp=$!
	BG_PIDS+=("$tp")
	at_wait_exec "$tp" "$target"
	# the detach is left to a child, whose end is awaited before the next run
	"$BENCH/usdt_attach" -m "$cfg" -d fork -o "$rpt" -p "$tp" >"$TMPB/at.lout" 2>&1
	wait "$tp"
	at_wait_report "$rpt" 300 || note attach_teardown "hit400 $cfg, round $rep: the detaching child wrote nothing in 300 s"
	line=$(grep '^sites_target fired' "$TMPB/at.tout")
	[ -n "$line" ] || { note attach_teardown "hit400 $cfg, round $rep: no result: $(tail -n 2 "$TMPB/at.lout" | tr '\n' ' ')"; return 0; }
	record attach_teardown "hit400:$cfg" 400 "$rep" ns_per_hit "$(kv ns_per_hit "$line")"
}

attach_teardown() {
	local spawn=() pid=(perf:inline perf:fork usdt:inline usdt:threads usdt:fork) hit=(perf multi usdt empty)
	local n rep i k cfg
	declare -gA AT_TARGET=()
	for n in $AT_SITES; do
		AT_TARGET[$n]=$(private_copy "$BENCH/sites_$n")
	done
	AT_LOOP=$(private_copy "$BENCH/probe_loop")
	for cfg in ${BENCH_ATTACH_CONFIGS:-perf:inline perf:fork multi:inline multi:fork usdt:inline \
		usdt:threads usdt:fork usdt:sibling empty empty_base inflight inflight_perf baseline bpftrace}; do
		case $cfg in
		empty_base) [ -n "${BENCH_USDT_EMPTY_BASELINE:-}" ] || continue ;;
		inflight | inflight_perf) [ -x "$INFLIGHT" ] || { note attach_teardown "inflight not measured: $INFLIGHT is not built"; continue; } ;;
		baseline) [ -n "${BENCH_INFLIGHT_BASELINE:-}" ] || continue ;;
		bpftrace) command -v bpftrace >/dev/null || { note attach_teardown "bpftrace is not installed"; continue; } ;;
		esac
		spawn+=("$cfg")
	done
	for ((rep = 1; rep <= AT_REPS; rep++)); do
		[[ $AT_SCENARIOS == *" spawn "* ]] && for n in $AT_SITES; do
			for ((i = 0; i < ${#spawn[@]}; i++)); do
				cfg=${spawn[$(((i + rep) % ${#spawn[@]}))]}
				echo "bench: attach_teardown: round $rep, $n sites, $cfg" >&2
				at_spawn "$cfg" "$n" "$rep"
			done
		done
		[[ $AT_SCENARIOS == *" pid "* ]] && for ((i = 0; i < ${#pid[@]}; i++)); do
			at_pid "${pid[$(((i + rep) % ${#pid[@]}))]}" "$AT_PID_SITES" "$rep"
		done
		[[ $AT_SCENARIOS == *" hit "* ]] && for k in 1 2; do
			for ((i = 0; i < ${#hit[@]}; i++)); do
				at_hit "${hit[$(((i + rep) % ${#hit[@]}))]}" "$k" "$rep"
			done
			at_hit_ratio "$k" "$rep"
		done
		[[ $AT_SCENARIOS == *" hit400 "* ]] && [ -n "${AT_TARGET[400]:-}" ] &&
			for ((i = 0; i < 3; i++)); do
				at_hit400 "${hit[$(((i + rep) % 3))]}" "$rep"
			done
		at_hit400_ratio "$rep"
	done
}

at_hit400_ratio() {
	local rep=$1 p m u
	p=$(awk -F, -v r="$rep" '$2 == "hit400:perf" && $4 == r { print $6 }' "$RAW")
	m=$(awk -F, -v r="$rep" '$2 == "hit400:multi" && $4 == r { print $6 }' "$RAW")
	u=$(awk -F, -v r="$rep" '$2 == "hit400:usdt" && $4 == r { print $6 }' "$RAW")
	[ -n "$p" ] && [ -n "$m" ] && record attach_teardown "hit400:multi/perf" 400 "$rep" ratio "$(calc "$m / $p")"
	[ -n "$p" ] && [ -n "$u" ] && record attach_teardown "hit400:usdt/perf" 400 "$rep" ratio "$(calc "$u / $p")"
	return 0
}

# per-hit ratios within the round: uprobe_multi and libbpf's USDT against perf-event uprobes
at_hit_ratio() {
	local t=$1 rep=$2 p m u
	p=$(awk -F, -v t="$t" -v r="$rep" '$2 == "hit:perf" && $3 == t && $4 == r && $5 == "ns_per_hit" { print $6 }' "$RAW")
	m=$(awk -F, -v t="$t" -v r="$rep" '$2 == "hit:multi" && $3 == t && $4 == r && $5 == "ns_per_hit" { print $6 }' "$RAW")
	u=$(awk -F, -v t="$t" -v r="$rep" '$2 == "hit:usdt" && $3 == t && $4 == r && $5 == "ns_per_hit" { print $6 }' "$RAW")
	[ -n "$p" ] && [ -n "$m" ] && record attach_teardown "hit:multi/perf" "$t" "$rep" ratio "$(calc "$m / $p")"
	[ -n "$p" ] && [ -n "$u" ] && record attach_teardown "hit:usdt/perf" "$t" "$rep" ratio "$(calc "$u / $p")"
	return 0
}
