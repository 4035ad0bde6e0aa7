# SPDX-License-Identifier: BSD-2-Clause
# Shared by the bench sections (bench/*.sh, sourced by scripts/bench.sh): where figures go,
# how background processes are started and stopped (each by its own pid, never by name),
# and how each tracer under comparison is attached to one process.
#
# Raw data: one CSV row per figure, "section,config,threads,rep,metric,value"; rep numbers
# tie together the figures measured in the same round of alternation, so a ratio is always
# taken between neighbours in time.

BENCH=$BUILD/bench
OUTDIR=${BENCH_OUT:-$BUILD/bench/results}
RAW=$OUTDIR/raw.csv
NOTES=$OUTDIR/notes.txt
REPS=${BENCH_REPS:-5}
SECONDS_PER_RUN=${BENCH_SECONDS:-1}
INFLIGHT=${INFLIGHT:-$BUILD/inflight}
TMPB=$(mktemp -d /tmp/inflight-bench.XXXXXX)
BG_PIDS=()

# record SECTION CONFIG THREADS REP METRIC VALUE
record() {
	[ -n "$6" ] || { note "$1" "no $5 for $2 (threads $3, rep $4)"; return 0; }
	echo "$1,$2,$3,$4,$5,$6" >>"$RAW"
}

# note SECTION TEXT: a remark that goes into the results file under that section
note() {
	echo "$1: $2" >>"$NOTES"
	echo "bench: $1: $2" >&2
}

# kv KEY LINE: the value of KEY=value in a line of key=value pairs
kv() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# calc EXPR: floating-point arithmetic (awk), e.g. calc "1.5 / 3"
calc() {
	awk "BEGIN { printf \"%.6g\", $1 }"
}

alive() {
	kill -0 "$1" 2>/dev/null
}

# stop_bg PID [GRACE_S]: give it GRACE_S seconds to end on its own, then SIGINT, SIGTERM and
# SIGKILL, a few seconds apart. Returns its exit status.
stop_bg() {
	local pid=$1 ticks=$((${2:-0} * 10)) i sig
	for sig in NONE INT TERM KILL; do
		[ "$sig" = NONE ] || { kill -s "$sig" "$pid" 2>/dev/null; ticks=50; }
		for ((i = 0; i < ticks; i++)); do
			alive "$pid" || break 2
			sleep 0.1
		done
	done
	wait "$pid" 2>/dev/null
}

bench_cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		alive "$pid" && stop_bg "$pid"
	done
	lttng_cleanup
	rm -rf "$TMPB"
}

# private copies: a uprobe by path would also trap in other people's runs of the same binary
private_copy() {
	cp "$1" "$TMPB/$(basename "$1")"
	echo "$TMPB/$(basename "$1")"
}

# trace_with CONFIG PID: runs (execs) the tracer of CONFIG on process PID, in the foreground,
# behind the command in the TRACE_PREFIX array if set. Every tracer ends when the process does.
trace_with() {
	local cmd
	case $1 in
	empty) cmd=("$BENCH/usdt_empty" "$2") ;;
	args) cmd=("$BENCH/usdt_empty" -a "$2") ;;
	least) cmd=("$BENCH/usdt_empty" -m "$2") ;;
	least_record) cmd=("$BENCH/usdt_empty" -M "$2") ;;
	inflight) cmd=("$INFLIGHT" --json -p "$2") ;;
	locked) cmd=("$INFLIGHT" --json --accounting locked -p "$2") ;;
	inflight-norss) cmd=("$INFLIGHT" --json --no-rss -p "$2") ;;
	baseline) cmd=("$BENCH_INFLIGHT_BASELINE" --json -p "$2") ;;
	record) cmd=("$INFLIGHT" record -o "$RECORD_OUT" ${RECORD_RING:+--ring-size "$RECORD_RING"} -p "$2") ;;
	bpftrace)
		sed "s|@BIN@|$(readlink "/proc/$2/exe")|g" bench/bpftrace_agg.bt >"$TMPB/agg.$2.bt"
		cmd=(bpftrace -p "$2" "$TMPB/agg.$2.bt")
		;;
	*) echo "bench: unknown tracer $1" >&2; exit 2 ;;
	esac
	exec ${TRACE_PREFIX[@]+"${TRACE_PREFIX[@]}"} "${cmd[@]}"
}

# baseline_commit PATH: the commit of the git work tree that holds the binary PATH (a
# baseline built in `git worktree add /tmp/base COMMIT`, then make -C /tmp/base inflight),
# +dirty when that tree has changes not committed; nothing when it lies in no work tree
baseline_commit() {
	local d c
	d=$(dirname "$(readlink -f "$1")")
	c=$(git -C "$d" rev-parse --short HEAD 2>/dev/null) || return 0
	git -C "$d" diff --quiet HEAD 2>/dev/null || c+=+dirty
	echo "$c"
}

# has_locked_form: whether $INFLIGHT can be told to run the locked form on this kernel
# (--accounting locked), for the configuration `locked` beside the atomic form
has_locked_form() {
	[ -x "$INFLIGHT" ] && "$INFLIGHT" --help 2>&1 | grep -q -- '--accounting'
}

# anomaly SUMMARY NAME: the anomaly counter NAME of a --json summary line ("" when the
# summary has no such counter: a baseline built before it existed)
anomaly() {
	grep -o "\"$2\":[0-9]*" <<<"$1" | head -n 1 | cut -d: -f2
}

# traced LOG CONFIG CMD...: starts CMD (which must wait for a tracer: probe_loop -W), attaches
# CONFIG's tracer to it (output in LOG), and prints CMD's stdout. If the tracer dies before
# CMD ends, CMD is stopped and nothing is printed.
traced() {
	local log=$1 cfg=$2 lp tp
	shift 2
	local exe i
	exe=$(readlink -f "$1")
	"$@" >"$TMPB/traced.out" & lp=$!
	BG_PIDS+=("$lp")
	# $! is the forked shell until it has exec'd CMD: attach only once it is CMD
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink "/proc/$lp/exe" 2>/dev/null)" = "$exe" ] && break
		sleep 0.01
	done
	(trace_with "$cfg" "$lp") >"$log" 2>&1 & tp=$!
	BG_PIDS+=("$tp")
	while alive "$lp"; do
		if ! alive "$tp"; then
			stop_bg "$lp"
			echo "bench: tracer $cfg ended early: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
			return 1
		fi
		sleep 0.05
	done
	wait "$lp" || { stop_bg "$tp"; return 1; }
	stop_bg "$tp" 20
	cat "$TMPB/traced.out"
}

# LTTng: a session daemon (started here, and stopped, only if none runs) and one session
# per measurement, writing under $TMPB, destroyed and deleted right after.
LTTNG_SESSIOND_PID=
LTTNG_SESSION=
# lttng_ready: 0 when a session daemon answers (ours if none did); else 1, why in LTTNG_WHY.
# Not in a subshell: the daemon's pid must stay known here, to stop it at the end.
lttng_ready() {
	LTTNG_WHY=
	command -v lttng >/dev/null || { LTTNG_WHY="lttng-tools is not installed"; return 1; }
	lttng list >/dev/null 2>&1 && return 0
	# no session daemon answers: start ours in the background and remember its pid
	lttng-sessiond --no-kernel >"$TMPB/sessiond.log" 2>&1 &
	LTTNG_SESSIOND_PID=$!
	BG_PIDS+=("$LTTNG_SESSIOND_PID")
	local i
	for ((i = 0; i < 50; i++)); do
		lttng list >/dev/null 2>&1 && return 0
		alive "$LTTNG_SESSIOND_PID" || break
		sleep 0.1
	done
	LTTNG_WHY="lttng-sessiond did not start: $(tail -n 3 "$TMPB/sessiond.log" | tr '\n' ' ')"
	return 1
}

lttng_start() {
	LTTNG_SESSION=inflight-bench-$$
	lttng create "$LTTNG_SESSION" --output="$TMPB/lttng" >/dev/null &&
		lttng enable-event -u -s "$LTTNG_SESSION" 'prover_bench:*' >/dev/null &&
		lttng start "$LTTNG_SESSION" >/dev/null
}

# lttng_stop: stops and destroys the session; prints the events it discarded (empty when
# lttng cannot say)
lttng_stop() {
	local stopped discarded
	stopped=$(lttng stop "$LTTNG_SESSION" 2>&1)
	discarded=$(printf '%s\n' "$stopped" | sed -n 's/.*Warning: \([0-9]*\) events were discarded.*/\1/p')
	if [ -z "$discarded" ]; then
		discarded=$(lttng list "$LTTNG_SESSION" 2>/dev/null |
			sed -n 's/.*Discarded events: *\([0-9]*\).*/\1/p' | head -n 1)
	fi
	# lttng 2.13 sometimes reports INT64_MAX plus something: no count at all
	[ "${#discarded}" -lt 16 ] || discarded=
	[ -n "$discarded" ] || [ -z "$stopped" ] || echo "bench: lttng stop: $stopped" | head -n 3 >&2
	lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	LTTNG_SESSION=
	rm -rf "$TMPB/lttng"
	echo "$discarded"
}

lttng_cleanup() {
	[ -n "$LTTNG_SESSION" ] && lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	[ -n "$LTTNG_SESSIOND_PID" ] && alive "$LTTNG_SESSIOND_PID" && stop_bg "$LTTNG_SESSIOND_PID"
	return 0
}
