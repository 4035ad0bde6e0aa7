#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# report.sh OUTDIR: turns a bench run's raw figures (OUTDIR/raw.csv, env.txt, notes.txt)
# into the markdown results file, on stdout. Each cell: median [min-max] over the rounds.
set -uo pipefail
dir=$1
raw=$dir/raw.csv
env_of() { sed -n "s/^$1=//p" "$dir/env.txt" | head -n 1; }

# stats SECTION CONFIG THREADS METRIC: "median min max n" (n = 0: nothing measured)
stats() {
	awk -F, -v s="$1" -v c="$2" -v t="$3" -v m="$4" \
		'$1 == s && $2 == c && $3 == t && $5 == m { print $6 }' "$raw" | sort -g |
		awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - - 0"; exit }
			med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%s %s %s %d\n", med, v[1], v[NR], NR
		}'
}

# num VALUE: three significant digits, no exponent
num() {
	awk -v v="$1" 'BEGIN {
		a = v < 0 ? -v : v
		if (a >= 100) printf "%.0f", v; else if (a >= 10) printf "%.1f", v
		else if (a >= 1) printf "%.2f", v; else printf "%.3g", v
	}'
}

# cell SECTION CONFIG THREADS METRIC: "median [min-max]" or "n/a"
cell() {
	local med lo hi n
	read -r med lo hi n < <(stats "$1" "$2" "$3" "$4")
	if [ "$n" = 0 ]; then
		printf 'n/a'
	else
		printf '%s [%s-%s]' "$(num "$med")" "$(num "$lo")" "$(num "$hi")"
	fi
}

# median SECTION CONFIG THREADS METRIC: the median alone ("" when not measured)
median() {
	local med lo hi n
	read -r med lo hi n < <(stats "$@")
	[ "$n" = 0 ] || printf '%s' "$med"
}

# verdict VALUE OP LIMIT: "met" / "missed" / "not measured"
verdict() {
	[ -n "$1" ] || { printf 'not measured'; return; }
	if awk "BEGIN { exit !($1 $2 $3) }"; then printf 'met'; else printf '**missed**'; fi
}

notes_of() {
	sed -n "s/^$1: /- /p" "$dir/notes.txt" 2>/dev/null | sort | uniq -c |
		awk '{ n = $1; $1 = ""; sub(/^ /, ""); print (n > 1 ? $0 " (" n " times)" : $0) }'
}

header() {
	cat <<EOF
# inflight benchmarks

Written by \`make bench\` (scripts/bench.sh); do not edit by hand. Raw figures:
[bench-raw.csv](bench-raw.csv) (one row per figure: section, config, threads, round, metric,
value).

Machine: $(env_of cpu), $(env_of cpus) CPUs, kernel $(env_of kernel); commit $(env_of commit),
$(env_of date). Load average at start $(env_of load_start), at end $(env_of load_end).

Method: every figure is the median over $(env_of reps) rounds, shown as \`median [min-max]\`.
Within a round the configurations run one after the other, starting from a different one
each round, so slow drift on the machine touches all of them alike; every ratio is taken
between figures of the same round, and the table shows the median of those ratios.
EOF
}

section_probe_cost() {
	local cfg label t
	cat <<EOF

## 1. Cost per probe hit

\`build/bench/probe_loop\` fires the contract's three probes in a tight loop: per thread four
owners in flight, each going through 23 events (8 \`buf_alloc\`, 8 \`buf_free\`, 7 \`stage\`,
six classes, eight stages), for $(env_of seconds_per_run) s after a 0.3 s warm-up. A tracer
attaches by pid before the measured window (the program waits until all three semaphores are
set). Nanoseconds per event per thread (thread-seconds / events), loop included:

| listener | 1 thread | 2 threads |
|---|---:|---:|
EOF
	while IFS='|' read -r cfg label; do
		printf '| %s | %s | %s |\n' "$label" "$(cell probe_cost "$cfg" 1 ns_per_hit)" \
			"$(cell probe_cost "$cfg" 2 ns_per_hit)"
	done <<'EOF'
noprobes|probes compiled out (the loop alone)
nop|(a) probes in, nothing attached
empty|(b) empty BPF programs (the floor)
args|(b') BPF programs that only fetch the arguments
inflight|(c) inflight -p
bpftrace|(d) bpftrace aggregation
atomic|(e) in-process atomic counters
lttng|(f) LTTng-UST, session recording
EOF
	cat <<EOF

Ratios (median of per-round ratios):

| ratio | 1 thread | 2 threads | target |
|---|---:|---:|---|
| inflight / empty BPF (c/b) | $(cell probe_cost inflight/empty 1 ratio) | $(cell probe_cost inflight/empty 2 ratio) | <= 1.2: $(verdict "$(median probe_cost inflight/empty 1 ratio)" '<=' 1.2) |
| inflight / bpftrace (c/d) | $(cell probe_cost inflight/bpftrace 1 ratio) | $(cell probe_cost inflight/bpftrace 2 ratio) | <= 1: $(verdict "$(median probe_cost inflight/bpftrace 1 ratio)" '<=' 1) |
| (c-a) / (b-a): added cost vs the floor's | $(cell probe_cost inflight-nop/empty-nop 1 ratio) | $(cell probe_cost inflight-nop/empty-nop 2 ratio) | |
| argument fetch / empty (b'/b) | $(cell probe_cost args/empty 1 ratio) | $(cell probe_cost args/empty 2 ratio) | |
| atomic counters / nop (e/a) | $(cell probe_cost atomic/nop 1 ratio) | $(cell probe_cost atomic/nop 2 ratio) | |

LTTng events discarded per run (its default discard mode, 4 x 512 KiB sub-buffers per CPU):
1 thread $(cell probe_cost lttng 1 discarded), 2 threads $(cell probe_cost lttng 2 discarded).
EOF
	notes_of probe_cost
}

section_attach_latency() {
	cat <<EOF

## 3. Attach latency

From the exec of the tracer's command (\`stamp_exec\` notes CLOCK_MONOTONIC, then execs it) to
the moment the target sees all three USDT semaphores set (it polls them every 50 us; the kernel
sets a semaphore as it registers the uprobe, so every hit from then on reaches the tracer).
Attaching by pid to a running \`probe_loop\`. Milliseconds:

| tracer | ms to live | target |
|---|---:|---|
| minimal libbpf loader (\`usdt_empty\`: open, load, attach 3 probes) | $(cell attach_latency empty 1 ms) | |
| inflight -p | $(cell attach_latency inflight 1 ms) | < 100: $(verdict "$(median attach_latency inflight 1 ms)" '<' 100) |
| bpftrace (aggregation script, compiled at start) | $(cell attach_latency bpftrace 1 ms) | |
EOF
	notes_of attach_latency
}

header
for s in probe_cost attach_latency prover_overhead record_ceiling; do
	if grep -q "^$s," "$raw" || grep -q "^$s:" "$dir/notes.txt" 2>/dev/null; then
		if declare -F "section_$s" >/dev/null; then
			"section_$s"
		fi
	fi
done
