#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# report.sh OUTDIR: turns a bench run's raw figures (OUTDIR/raw.csv, env.txt, notes.txt)
# into the markdown results file, on stdout. Each cell: median [min-max] over the rounds.
set -uo pipefail
dir=$1
raw=$dir/raw.csv
env_of() { sed -n "s/^$1=//p" "$dir/env.txt" | head -n 1; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }

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

# num VALUE: integers as they are, else three significant digits, no exponent
num() {
	awk -v v="$1" 'BEGIN {
		a = v < 0 ? -v : v
		if (v == int(v)) printf "%.0f", v; else if (a >= 100) printf "%.0f", v; else if (a >= 10) printf "%.1f", v
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

# verdict2 SECTION CONFIG METRIC OP LIMIT: the verdict for 1 and for 2 threads
verdict2() {
	printf '1 thread %s, 2 threads %s' "$(verdict "$(median "$1" "$2" 1 "$3")" "$4" "$5")" \
		"$(verdict "$(median "$1" "$2" 2 "$3")" "$4" "$5")"
}

# least_room RATIO LIMIT: for 1 and 2 threads, what a target of LIMIT times the floor leaves
# beyond the least an exact hit does (RATIO, e.g. least/empty): LIMIT - RATIO in floors and
# in nanoseconds of the floor's median, or "none" when the least alone is over it
least_room() {
	local t r b sep=''
	for t in 1 2; do
		r=$(median probe_cost "$1" "$t" ratio)
		b=$(median probe_cost empty "$t" ns_per_hit)
		printf '%s%s thread%s ' "$sep" "$t" "$([ "$t" = 1 ] || echo s)"
		if [ -z "$r" ] || [ -z "$b" ]; then
			printf 'not measured'
		elif awk "BEGIN { exit !($r < $2) }"; then
			printf '%s (%s ns)' "$(num "$(calc "$2 - $r")")" "$(num "$(calc "($2 - $r) * $b")")"
		else
			printf '**none** (%s over)' "$(num "$(calc "$r - $2")")"
		fi
		sep=', '
	done
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
$(sed -n 's/^note=/Note: /p' "$dir/env.txt")
$(baseline_line)

Run: \`make bench\` (all sections, about 16 minutes here, plus 15-20 for attach_teardown), or
\`scripts/bench.sh SECTION...\` (probe_cost scaling scaling_vm sharing_cost lock_stall attach_latency prover_overhead loader_cost
rss_cost record_ceiling attach_teardown offline_memory). Knobs: BENCH_REPS, BENCH_SECONDS, BENCH_PROVER_REPS,
BENCH_RSS_REPS, BENCH_LOADER_SECONDS, BENCH_ATTACH_REPS; and BENCH_INFLIGHT_BASELINE=PATH adds
another inflight binary to sections 1 and 7, the breakdowns and the worst single hit, for
before/after figures (BENCH_INFLIGHT_BASELINE_DESC: what it is, in words, for the "Before" line).
inflight's two forms of accounting a hit run side by side on this one kernel: its default,
the atomic form (no lock; kernels 5.17+), and the locked form that older kernels run
(\`--accounting locked\`: a lock per process with a queue behind it).
The programs are in bench/ (probe_loop, usdt_empty, usdt_attach, sites_target, stamp_exec,
measure).

Method: every figure is the median over $(env_of reps) rounds ($(env_of prover_reps) for the prover runs, $(env_of rss_reps) for the RSS
breakdown), shown as \`median [min-max]\`.
Within a round the configurations run one after the other, starting from a different one
each round, so slow drift on the machine touches all of them alike; every ratio is taken
between figures of the same round, and the table shows the median of those ratios.
EOF
}

# baseline_line: what the baseline inflight (c0) is, its path, and the commit of the git work
# tree it lies in, when one was measured
baseline_line() {
	local path commit what
	path=$(env_of baseline_path)
	commit=$(env_of baseline_commit)
	what=$(env_of baseline_what)
	if [ -z "$path" ]; then
		# written before the path was kept: the words alone
		[ -z "$what" ] || echo "\"Before\" (the baseline inflight, c0): $what."
		return 0
	fi
	printf '"Before" (the baseline inflight, c0)%s: `%s` (BENCH_INFLIGHT_BASELINE)%s.\n' \
		"${what:+ is $what}" "$path" "${commit:+, built in a git work tree of commit $commit}"
}

# exact_runs SECTION CONFIG: "N of M": the runs whose final totals equaled the events fired
exact_runs() {
	awk -F, -v s="$1" -v c="$2" '$1 == s && $2 == c && $5 == "exact" { n++; t += $6 }
		END { printf "%d of %d", t, n }' "$raw"
}

# per_threads SECTION CONFIG METRIC THREADS...: "1 thread X, 2 threads Y"
per_threads() {
	local s=$1 c=$2 m=$3 t out=
	shift 3
	for t; do
		out+="${out:+, }$t thread$([ "$t" = 1 ] || echo s) $(cell "$s" "$c" "$t" "$m")"
	done
	printf '%s' "$out"
}

# forms_accounting SECTION THREADS...: for each inflight measured (the atomic form, the locked
# form, the baseline), the runs whose totals were exact and the hits given up per run; the
# lock's own figures only for the forms that have one
forms_accounting() {
	local s=$1 cfg label
	shift
	cat <<EOF

Exact totals and hits given up, per form. Given up: \`lock_timeouts\` + \`contention_lost\`
of the JSON summary, hits not accounted (counted, and the totals then marked inexact).
Waited: hits of a form with a lock that found the queue behind it full (\`slot_waits\`) or no
queue memory free in its pool (\`pool_waits\`), accounted all the same.

EOF
	while IFS='|' read -r cfg label; do
		grep -q "^$s,$cfg," "$raw" || continue
		printf -- '- %s: final totals equal to the events fired in %s runs; given up per run: %s' \
			"$label" "$(exact_runs "$s" "$cfg")" "$(per_threads "$s" "$cfg" given_up "$@")"
		if [ "$cfg" != inflight ]; then
			printf '; waited for room in the queue: %s; waited for the lock: %s' \
				"$(per_threads "$s" "$cfg" slot_waits "$@")" "$(per_threads "$s" "$cfg" pool_waits "$@")"
		fi
		printf '.\n'
	done <<'EOF'
inflight|(c) the atomic form (no lock: no hit waits, none is given up; must be 0)
locked|(c-locked) the locked form
baseline|(c0) the baseline
EOF
}

# the before/after row, only when a baseline was measured (leading newline: it follows a row)
baseline_row() {
	grep -q '^probe_cost,inflight/baseline,' "$raw" || return 0
	printf '\n| inflight / baseline inflight (c/c0): after / before | %s | %s | |' \
		"$(cell probe_cost inflight/baseline 1 ratio)" "$(cell probe_cost inflight/baseline 2 ratio)"
}

section_probe_cost() {
	local cfg label t
	cat <<EOF

## 1. Cost per probe hit

\`build/bench/probe_loop\` fires the contract's three probes in a tight loop: per thread four
owners in flight, each going through 23 events (8 \`buf_alloc\`, 8 \`buf_free\`, 7 \`stage\`,
six classes, eight stages), for $(env_of seconds_per_run) s after a 0.3 s warm-up. A tracer
attaches by pid before the measured window (the program waits until all three semaphores are
set). Nanoseconds per event: CPU time of the firing threads (user + kernel; the uprobe and
its BPF program run in the thread that hits the probe) over their events, which other
processes sharing the CPUs do not inflate; and their wall time over their events. The loop's
own cost is included in every row.

| listener | CPU, 1 thread | CPU, 2 threads | wall, 1 thread | wall, 2 threads |
|---|---:|---:|---:|---:|
EOF
	while IFS='|' read -r cfg label; do
		[ "$cfg" != baseline ] || grep -q '^probe_cost,baseline,' "$raw" || continue
		printf '| %s | %s | %s | %s | %s |\n' "$label" \
			"$(cell probe_cost "$cfg" 1 ns_per_hit)" "$(cell probe_cost "$cfg" 2 ns_per_hit)" \
			"$(cell probe_cost "$cfg" 1 wall_ns_per_hit)" "$(cell probe_cost "$cfg" 2 wall_ns_per_hit)"
	done <<'EOF'
noprobes|probes compiled out (the loop alone)
nop|(a) probes in, nothing attached
empty|(b) empty BPF programs (the floor)
args|(b') BPF programs that only fetch the arguments
least|(m) the least an exact hit does: arguments, a place, the owner's and the buffer's records
least_record|(m') that, and recording's least: the clock, an event into a ring
inflight|(c) inflight -p, the atomic form (no lock)
locked|(c-locked) inflight, the locked form (--accounting locked)
record|(c') inflight record -p (every event also to a file)
baseline|(c0) baseline inflight (BENCH_INFLIGHT_BASELINE), for before/after
bpftrace|(d) bpftrace aggregation
atomic|(e) in-process atomic counters
lttng|(f) LTTng-UST, session recording
EOF
	cat <<EOF

Ratios (median of per-round ratios):

| ratio | 1 thread | 2 threads | target |
|---|---:|---:|---|
| inflight / empty BPF (c/b) | $(cell probe_cost inflight/empty 1 ratio) | $(cell probe_cost inflight/empty 2 ratio) | <= 1.2: $(verdict2 probe_cost inflight/empty ratio '<=' 1.2) |
| inflight / bpftrace (c/d) | $(cell probe_cost inflight/bpftrace 1 ratio) | $(cell probe_cost inflight/bpftrace 2 ratio) | <= 1: $(verdict2 probe_cost inflight/bpftrace ratio '<=' 1) |
| locked form / empty BPF (c-locked/b) | $(cell probe_cost locked/empty 1 ratio) | $(cell probe_cost locked/empty 2 ratio) | |
| atomic form / locked form (c/c-locked) | $(cell probe_cost inflight/locked 1 ratio) | $(cell probe_cost inflight/locked 2 ratio) | |
| inflight record / empty BPF (c'/b) | $(cell probe_cost record/empty 1 ratio) | $(cell probe_cost record/empty 2 ratio) | <= 1.5: $(verdict2 probe_cost record/empty ratio '<=' 1.5) |
| the least an exact hit does / empty BPF (m/b) | $(cell probe_cost least/empty 1 ratio) | $(cell probe_cost least/empty 2 ratio) | what c/b's target leaves the rest: $(least_room least/empty 1.2) |
| that, recorded / empty BPF (m'/b) | $(cell probe_cost least_record/empty 1 ratio) | $(cell probe_cost least_record/empty 2 ratio) | what c'/b's target leaves the rest: $(least_room least_record/empty 1.5) |
| (c-a) / (b-a): added cost vs the floor's | $(cell probe_cost inflight-nop/empty-nop 1 ratio) | $(cell probe_cost inflight-nop/empty-nop 2 ratio) | |$(baseline_row)
| argument fetch / empty (b'/b) | $(cell probe_cost args/empty 1 ratio) | $(cell probe_cost args/empty 2 ratio) | |
| atomic counters / nop (e/a) | $(cell probe_cost atomic/nop 1 ratio) | $(cell probe_cost atomic/nop 2 ratio) | |
$(forms_accounting probe_cost 1 2)

LTTng events discarded per run (its default discard mode, 4 x 512 KiB sub-buffers per CPU):
1 thread $(cell probe_cost lttng 1 discarded), 2 threads $(cell probe_cost lttng 2 discarded).
EOF
	notes_of probe_cost
}

section_scaling() {
	local t
	cat <<EOF

## Scaling: cost per probe hit, 1 to 8 threads

Section 1's loop and measure (CPU nanoseconds of the firing threads per event) with 1, 2, 4
and 8 threads firing, for the floor (b), inflight in its atomic form (c) and in its locked
form (c-locked, \`--accounting locked\`) and bpftrace (d), alternated within each round; the
ratios are taken within a round.

| threads | (b) floor ns/hit | (c) atomic ns/hit | (c-locked) locked ns/hit | (d) bpftrace ns/hit | c/b | c-locked/b | c/c-locked | c/d |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
	for t in 1 2 4 8; do
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
			"$(cell scaling empty "$t" ns_per_hit)" "$(cell scaling inflight "$t" ns_per_hit)" \
			"$(cell scaling locked "$t" ns_per_hit)" "$(cell scaling bpftrace "$t" ns_per_hit)" \
			"$(cell scaling inflight/empty "$t" ratio)" "$(cell scaling locked/empty "$t" ratio)" \
			"$(cell scaling inflight/locked "$t" ratio)" "$(cell scaling inflight/bpftrace "$t" ratio)"
	done
	cat <<EOF

This machine has $(env_of cpus) CPUs, so 4 and 8 threads show the shape of contention (threads
taking turns on the CPUs and on the tracers' shared state), not parallel speedup; the targets
(c/b <= 1.2, c/d <= 1.0) are judged in section 1.
$(forms_accounting scaling 1 2 4 8)
EOF
	notes_of scaling
}

section_scaling_vm() {
	local t
	cat <<EOF

## Scaling in a guest with more CPUs: the shape, emulated

The scaling section's loop in a qemu guest with $(env_of scaling_vm_cpus) vCPUs (TCG: every instruction
emulated, on this machine's $(env_of cpus) CPUs), kernel $(env_of scaling_vm_kernel), for the floor (b) and
inflight's two forms (\`--no-rss\`), alternated within each round (bench/scaling_vm.sh).
Emulated nanoseconds are not the host's: what this shows is how each form's cost moves as
threads are added, and the ratios within a round. bpftrace does not run in the guest.

| threads | (b) floor ns/hit | (c) atomic ns/hit | (c-locked) locked ns/hit | c/b | c-locked/b | c/c-locked |
|---:|---:|---:|---:|---:|---:|---:|
EOF
	for t in 1 2 4 8; do
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
			"$(cell scaling_vm empty "$t" ns_per_hit)" "$(cell scaling_vm inflight "$t" ns_per_hit)" \
			"$(cell scaling_vm locked "$t" ns_per_hit)" "$(cell scaling_vm inflight/empty "$t" ratio)" \
			"$(cell scaling_vm locked/empty "$t" ratio)" "$(cell scaling_vm inflight/locked "$t" ratio)"
	done
	cat <<EOF

Exact totals and hits given up (\`lock_timeouts\` + \`contention_lost\`) per run:
- (c) the atomic form: final totals equal to the events fired and marked exact in $(exact_runs scaling_vm inflight) runs; given up: $(per_threads scaling_vm inflight given_up 1 2 4 8).
- (c-locked) the locked form: final totals equal to the events fired and marked exact in $(exact_runs scaling_vm locked) runs; given up: $(per_threads scaling_vm locked given_up 1 2 4 8).
EOF
	notes_of scaling_vm
}

# sharing_row LABEL CONFIG: one row of the sharing table, 1 and 2 threads
sharing_row() {
	printf '| %s | %s | %s |\n' "$1" "$(cell sharing_cost "$2" 1 ns_per_run)" \
		"$(cell sharing_cost "$2" 2 ns_per_run)"
}

section_sharing_cost() {
	cat <<EOF

## Breakdown: what sharing a process's state costs a hit

Section 1's loop, with the kernel's BPF statistics on (kernel.bpf_stats_enabled): the
nanoseconds the three contract programs themselves take per run, averaged over a 1.5 s
window of the loop's measured time (the uprobe's own cost, in section 1, is not in them).
With 2 threads of one process on the machine's 2 CPUs, whatever the programs write that both
threads share passes between the CPUs' caches on every hit.

| programs | 1 thread | 2 threads |
|---|---:|---:|
$(sharing_row "empty (the statistics and the program's entry)" empty)
$(sharing_row "one atomic add to a word both threads share" shared)
$(sharing_row "one add to a per-CPU word" percpu)
$(sharing_row "the arguments fetched (libbpf's usdt.bpf.h)" args)
$(sharing_row "... and a record per live buffer in a hash map (inflight's buffer map)" hbuf)
$(sharing_row "... and the records in an open-addressing table in an array" tbuf)
$(sharing_row "the arguments, and the process's record found in a hash map by its pid (inflight's)" hproc)
$(sharing_row "... and the same record found by its index in an array" aproc)
$(sharing_row "... found by hash, a place taken in it, the op into a per-CPU log (a drained design's hit)" plog)
$(sharing_row "the arguments, and a 56-byte event into a ring buffer (recording's, no clock)" ring)
$(sharing_row "inflight, the atomic form (no lock)" inflight)
$(sharing_row "inflight record (every event also into its CPU's ring)" record)
$(sharing_row "inflight, the locked form (--accounting locked)" locked)
| inflight, 1 thread in each of 2 processes at once | | $(cell sharing_cost procs 2 ns_per_run) |
EOF
	grep -q '^sharing_cost,inflight0,' "$raw" && sharing_row "baseline inflight" inflight0
	cat <<EOF

The shared word's row is the floor of any design that keeps an exact high-water mark with
one serialization word per hit (a total updated by fetch-and-add, a lock, a ticket): the
line's transfer between the CPUs, paid again for each further shared line a hit writes. The
per-CPU row is what per-CPU counters cost, which give totals but no exact peak. The
buffer rows, less the arguments' row, are what a record per live buffer costs a hit (an
alloc's insert, a free's lookup and removal, averaged over the loop's 8 allocs, 8 frees and
7 stages), kept the way inflight keeps them and the way an array of slots would. The two
process rows, less the arguments' row, are what finding the process's record costs every
hit: a hash map's lookup is a chain of kernel calls (the hash, the bucket's walk, the key's
compare), an array's is inlined by the JIT; on a host whose kernel mitigates return
speculation (this one: spec_rstack_overflow "$(env_of srso)", spectre_v2
"$(env_of spectre_v2 | cut -d';' -f1)"), each call pays for its return. The log row is the
whole hit of a design that only orders a hit and writes it down (a place by fetch-and-add
on the process's record, the op into this CPU's log), leaving its accounting to one
drainer that applies the logs in place order later, with no atomic operation: the drainer
is not built, so the row prices the hit's side alone, against inflight's row. The
arguments' rows compare what they fetch with a value no hit passes instead of storing it,
so that no row but the shared word's writes a line both threads share. The ring row, less
the arguments' row, is what the ring's reserve, copy and commit take inside the program; the
stores to ring lines the reader last held are paid after it (section 1's CPU time, where
a recorded hit costs row c' less row c).
EOF
	notes_of sharing_cost
}

section_attach_latency() {
	cat <<EOF

## 3. Attach latency

From the exec of the tracer's command (\`stamp_exec\` notes CLOCK_MONOTONIC, then execs it) to
the moment the target sees all three USDT semaphores set (it polls them every 50 us; the kernel
raises a semaphore as it registers the uprobe; the tracer attaches its program to the uprobe
right after, so the figures can be optimistic by that last step, microseconds for a libbpf
tool). Attaching by pid to a running \`probe_loop\`. Milliseconds:

| tracer | ms to live | target |
|---|---:|---|
| minimal libbpf loader (\`usdt_empty\`: open, load, attach 3 probes) | $(cell attach_latency empty 1 ms) | |
| inflight -p | $(cell attach_latency inflight 1 ms) | < 100: $(verdict "$(median attach_latency inflight 1 ms)" '<' 100) |
| bpftrace (aggregation script, compiled at start) | $(cell attach_latency bpftrace 1 ms) | |
EOF
	notes_of attach_latency
}

section_prover_overhead() {
	local w
	cat <<EOF

## 2 and 6. Traced prover overhead; disabled-probe cost

The reference prover, configurations alternated run by run: \`build/prover\` untraced, 
\`build/prover-noprobes\` (built with -DPROVER_NO_PROBES), traced live (\`inflight -i 100ms --
build/prover\`) and recorded (\`inflight record -o FILE -- build/prover\`). Proofs per minute
is the prover's own figure (set-up excluded). CPU seconds per proof counts the whole command:
the prover plus, when traced, inflight and the BPF programs (run in the prover's threads).
Workloads: **shape**: \`$(sed -n 's/^shape: build\/prover //p' "$dir/prover_overhead.log" 2>/dev/null)\` (the default pipeline: a
few hundred probe hits per second); **events**: \`$(sed -n 's/^events: build\/prover //p' "$dir/prover_overhead.log" 2>/dev/null)\` (tiny partitions:
tens of thousands of hits per second, a stress). Slowdowns are per round against the untraced
run of the same round (negative: faster).

| workload | config | proofs/min | CPU s/proof | slowdown % | CPU overhead % |
|---|---|---:|---:|---:|---:|
EOF
	for w in shape events; do
		printf '| %s | untraced | %s | %s | | |\n' "$w" \
			"$(cell prover_overhead untraced "$w" proofs_per_min)" "$(cell prover_overhead untraced "$w" cpu_s_per_proof)"
		printf '| %s | probes compiled out | %s | %s | | |\n' "$w" \
			"$(cell prover_overhead noprobes "$w" proofs_per_min)" "$(cell prover_overhead noprobes "$w" cpu_s_per_proof)"
		printf '| %s | inflight live, 10 Hz | %s | %s | %s | %s |\n' "$w" \
			"$(cell prover_overhead live "$w" proofs_per_min)" "$(cell prover_overhead live "$w" cpu_s_per_proof)" \
			"$(cell prover_overhead live "$w" slowdown_pct)" "$(cell prover_overhead live "$w" cpu_overhead_pct)"
		printf '| %s | inflight record | %s | %s | %s | %s |\n' "$w" \
			"$(cell prover_overhead record "$w" proofs_per_min)" "$(cell prover_overhead record "$w" cpu_s_per_proof)" \
			"$(cell prover_overhead record "$w" slowdown_pct)" "$(cell prover_overhead record "$w" cpu_overhead_pct)"
	done
	cat <<EOF

| target | measure | workload shape | workload events |
|---|---|---|---|
| traced live: under 1% | slowdown | $(verdict "$(median prover_overhead live shape slowdown_pct)" '<' 1) | $(verdict "$(median prover_overhead live events slowdown_pct)" '<' 1) |
| | CPU overhead | $(verdict "$(median prover_overhead live shape cpu_overhead_pct)" '<' 1) | $(verdict "$(median prover_overhead live events cpu_overhead_pct)" '<' 1) |
| recording: under 2% | slowdown | $(verdict "$(median prover_overhead record shape slowdown_pct)" '<' 2) | $(verdict "$(median prover_overhead record events slowdown_pct)" '<' 2) |
| | CPU overhead | $(verdict "$(median prover_overhead record shape cpu_overhead_pct)" '<' 2) | $(verdict "$(median prover_overhead record events cpu_overhead_pct)" '<' 2) |
| disabled probes indistinguishable from none: probes build slower by, % | proofs/min | $(cell prover_overhead untraced shape probes_in_pct) | $(cell prover_overhead untraced events probes_in_pct) |
| | CPU s/proof | $(cell prover_overhead untraced shape probes_in_cpu_pct) | $(cell prover_overhead untraced events probes_in_cpu_pct) |
EOF
	section_prover_estimate
	notes_of prover_overhead
}

# est_pct WORKLOAD MODE: tracing's cost per proof from the precise per-event figures of the
# other sections, in percent of the untraced run's CPU time per proof ("" if inputs lack)
est_pct() {
	local w=$1 mode=$2 E F cpu ppm a n c r L u per_event
	E=$(median prover_overhead live "$w" events_per_proof)
	F=$(median prover_overhead untraced "$w" minflt_per_proof)
	cpu=$(median prover_overhead untraced "$w" cpu_s_per_proof)
	ppm=$(median prover_overhead untraced "$w" proofs_per_min)
	a=$(median probe_cost nop 1 ns_per_hit)
	n=$(median probe_cost noprobes 1 ns_per_hit)
	c=$(median probe_cost inflight 1 ns_per_hit)
	r=$(median rss_cost self 1 added_ns_per_page)
	L=$(median loader_cost inflight "$w" cpu_pct)
	u=$(median record_ceiling 250000 1 recorder_ns_per_event)
	case $mode in
	idle) [ -n "$E" ] && [ -n "$cpu" ] && [ -n "$a" ] && [ -n "$n" ] &&
		calc "$E * ($a - $n) / ($cpu * 1e9) * 100"
		return ;;
	live) per_event=$c ;;
	record) per_event=$(median probe_cost record 1 ns_per_hit)
		[ -n "$u" ] && [ -n "$per_event" ] && per_event=$(calc "$per_event + $u") ;;
	esac
	for v in "$E" "$F" "$cpu" "$ppm" "$a" "$per_event" "$r" "$L"; do
		[ -n "$v" ] || return 0
	done
	# probes: each hit's added cost; RSS: each fault's (never below 0: noise); the loader's
	# CPU share over the wall time of one proof
	calc "($E * ($per_event - $a) + $F * ($r > 0 ? $r : 0) + $L / 100 * 60 / $ppm * 1e9) / ($cpu * 1e9) * 100"
}

section_prover_estimate() {
	local w live rec idle
	cat <<EOF

The machine is shared and 2 CPUs small: run to run, proofs/min varies by several percent and
CPU time per proof too, more than the 1-2% the targets ask to resolve. So here is also the
cost built from the precise per-event figures of the other sections: per proof, probe hits x
the added CPU per hit (section 1, 1 thread: (c) - (a) live; (c') - (a) plus the recorder's
CPU per event of section 4 when recording), + minor page faults x the added CPU per fault of
the RSS breakdown, + the loader's CPU share (section 5) over one proof's wall time; in percent
of the untraced CPU time per proof.

| estimate, % of untraced CPU per proof | shape | events | target |
|---|---:|---:|---|
EOF
	for mode in live record idle; do
		local label limit es ee
		case $mode in
		live) label="traced live" limit=1 ;;
		record) label="recording" limit=2 ;;
		idle) label="probes compiled in, idle (semaphore tests)" limit=0.1 ;;
		esac
		es=$(est_pct shape "$mode")
		ee=$(est_pct events "$mode")
		printf '| %s | %s | %s | < %s: shape %s, events %s |\n' "$label" \
			"$([ -n "$es" ] && num "$es" || echo n/a)" "$([ -n "$ee" ] && num "$ee" || echo n/a)" \
			"$limit" "$(verdict "$es" '<' "$limit")" "$(verdict "$ee" '<' "$limit")"
	done
	for w in shape events; do
		printf '\nInputs, %s: %s probe hits and %s minor faults per proof, %s CPU s per proof.' "$w" \
			"$(num "$(median prover_overhead live "$w" events_per_proof)")" \
			"$(num "$(median prover_overhead untraced "$w" minflt_per_proof)")" \
			"$(num "$(median prover_overhead untraced "$w" cpu_s_per_proof)")"
	done
	echo
}

section_loader_cost() {
	cat <<EOF

## 5. Loader cost

The inflight process alone (attached with \`-p\`, so the prover's CPU time is not counted),
printing the live timeline at 10 Hz (\`-i 100ms\`) over $(sed -n 's/^shape wall_s=\([0-9.]*\).*/\1/p' "$dir/loader_cost.log" 2>/dev/null | head -n 1) s or so of prover run: CPU time
(user + system, from wait4) per second of wall time, in percent of one core, and peak RSS.
The whole run includes the attach, whose BPF verification the kernel does on the loader's
time; the steady state is the CPU from the attach done (the "tracing" line) to the target's
end, per second of that time (/proc/PID/stat), the attach's CPU beside it.

| workload | CPU, whole run, % of a core | steady state, % of a core | attach, CPU s | peak RSS, MiB | target (steady state) |
|---|---:|---:|---:|---:|---|
| shape (\`--log-n 16\`) | $(cell loader_cost inflight shape cpu_pct) | $(cell loader_cost inflight shape steady_cpu_pct) | $(cell loader_cost inflight shape attach_cpu_s) | $(cell loader_cost inflight shape maxrss_mib) | < 1% and < 32 MiB: $(verdict "$(median loader_cost inflight shape steady_cpu_pct)" '<' 1), $(verdict "$(median loader_cost inflight shape maxrss_mib)" '<' 32) |
| events (\`--log-n 10\`) | $(cell loader_cost inflight events cpu_pct) | $(cell loader_cost inflight events steady_cpu_pct) | $(cell loader_cost inflight events attach_cpu_s) | $(cell loader_cost inflight events maxrss_mib) | < 1% and < 32 MiB: $(verdict "$(median loader_cost inflight events steady_cpu_pct)" '<' 1), $(verdict "$(median loader_cost inflight events maxrss_mib)" '<' 32) |
EOF
	notes_of loader_cost
}

# the baseline's rows, only when it was measured (leading newline: they follow a row)
rss_baseline_row() {
	grep -q '^rss_cost,other0,' "$raw" || return 0
	printf '\n| attached to another process, baseline inflight | %s | %s |' \
		"$(cell rss_cost other0 1 ns_per_page)" "$(cell rss_cost other0 1 added_ns_per_page)"
}

rss_handler_baseline_row() {
	grep -q '^rss_cost,handler0,' "$raw" || return 0
	printf '\n| baseline inflight | %s |' "$(cell rss_cost handler0 1 handler_ns)"
}

section_rss_cost() {
	cat <<EOF

## Breakdown: the cost of following RSS (kmem:rss_stat)

inflight also attaches to the kmem:rss_stat tracepoint, which the kernel fires on every change
of any process's RSS counters: every page fault and every unmap, in every process on the host.
A prover run touches far more pages than it fires probes (one \`shape\` run above: about 25,000
rss_stat events for under 1,000 probe hits, counted once with bpftrace), so this cost can
outweigh the probes'. \`probe_loop -F\` faults pages in a loop (each page of 1 MiB touched,
then all dropped with MADV_DONTNEED); CPU nanoseconds per page touched, 1 thread:

| inflight | ns per page | added per page |
|---|---:|---:|
| not attached | $(cell rss_cost none 1 ns_per_page) | |
| attached to another process (what every process pays) | $(cell rss_cost other 1 ns_per_page) | $(cell rss_cost other 1 added_ns_per_page) |
| attached to this process | $(cell rss_cost self 1 ns_per_page) | $(cell rss_cost self 1 added_ns_per_page) |
| attached to this process, \`--no-rss\` | $(cell rss_cost norss 1 ns_per_page) | $(cell rss_cost norss 1 added_ns_per_page) |$(rss_baseline_row)

\`--no-rss\` takes the tracepoint away: no probe fires here, so what is left is the
measurement's noise; RSS, its peak and untracked bytes are then not shown.

A fault costs microseconds and varies by hundreds of nanoseconds run to run, so the
handler's own share is measured apart, by the kernel's BPF statistics
(kernel.bpf_stats_enabled, on only for these runs): nanoseconds per run of the rss_stat
program while inflight traces another process, every process's faults on the host (the
tracepoint's trampoline, tens of nanoseconds on every kernel, not included). Target: an
untraced process pays at most 50 ns a fault.

| rss_stat program | ns per run |
|---|---:|
| empty (the floor: the statistics and the program's entry) | $(cell rss_cost floor 1 handler_ns) |
| inflight | $(cell rss_cost handler 1 handler_ns) |$(rss_handler_baseline_row)
EOF
	notes_of rss_cost
}

section_lock_stall() {
	local cfg label n=${BENCH_STALL_THREADS:-4}
	cat <<EOF

## The worst single hit with $n threads contending

\`probe_loop -L\`: $n threads of one process fire the contract's events flat out, each event
timed on its own, all of them on the one process's state in the kernel. Side by side in the
same rounds:

- empty: the floor, an empty BPF program: what the uprobe itself costs at worst here.
- the locked form (\`--accounting locked\`, what kernels before 5.17 run): a lock per
  process. A hit that finds it held does not wait for it: it is queued for the holder, which
  applies what is queued before it lets go (so the holder's own hit may take longer). A hit
  waits only while that queue is full (in \`lock_wait_more\`: 28 rounds of 256 looks at the
  lock and the queue, under a millisecond natively), and is given up (counted, the totals
  marked inexact) when that wait runs out.
- the atomic form (inflight's default from 5.17): no lock. Each hit takes its place in the
  process's order by one fetch-and-add and applies its counts by atomic operations; a
  compare-and-swap that fails was another hit's success and is tried again. No hit waits
  for another, and none is given up.$(grep -q '^lock_stall,baseline,' "$raw" && printf '\n%s' \
	'- the baseline inflight (c0, named under the machine line), for before/after.')

By the thread's CPU clock (what it spent running: a wait for the lock, others' queued hits
applied, a compare-and-swap tried again) and by the wall clock (which adds the time the
scheduler took the CPU away: with $n threads on this machine's $(env_of cpus) CPUs that alone
reaches tens of ms, in every row alike): the longest single event any thread saw, and how
many of "hits" events took longer. Given up: \`lock_timeouts\` + \`contention_lost\` of the
JSON summary, per run.

| | worst, CPU | CPU > 10 us | CPU > 100 us | CPU > 1 ms | worst, wall | wall > 1 ms | hits | given up | CPU ns per hit |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
	while IFS='|' read -r cfg label; do
		grep -q "^lock_stall,$cfg," "$raw" || continue
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" \
			"$(cell lock_stall "$cfg" 4 max_cpu_ns_per_hit)" \
			"$(cell lock_stall "$cfg" 4 cpu_hits_over_10us)" \
			"$(cell lock_stall "$cfg" 4 cpu_hits_over_100us)" \
			"$(cell lock_stall "$cfg" 4 cpu_hits_over_1ms)" \
			"$(cell lock_stall "$cfg" 4 max_ns_per_hit)" "$(cell lock_stall "$cfg" 4 hits_over_1ms)" \
			"$(cell lock_stall "$cfg" 4 hits)" \
			"$(if [ "$cfg" = empty ]; then echo; else cell lock_stall "$cfg" 4 given_up; fi)" \
			"$(cell lock_stall "$cfg" 4 ns_per_hit)"
	done <<'EOF'
empty|empty (the floor)
locked|inflight, the locked form (--accounting locked)
inflight|inflight, the atomic form (no lock)
baseline|baseline (c0)
EOF
	# the lock's own figures: only the forms that have one
	for cfg in locked baseline; do
		grep -q "^lock_stall,$cfg," "$raw" || continue
		printf '\n%s: hits that waited for room in the queue behind the lock (`slot_waits`) %s,\nfor the lock with no queue memory free in its pool (`pool_waits`) %s, per run.\n' \
			"$(case $cfg in locked) echo "The locked form" ;; *) echo "The baseline" ;; esac)" \
			"$(cell lock_stall "$cfg" 4 slot_waits)" "$(cell lock_stall "$cfg" 4 pool_waits)"
	done
	notes_of lock_stall
}

section_record_ceiling() {
	local t cfg ceiling
	cat <<EOF

## 4. Record-mode throughput ceiling

\`probe_loop\` fires at a set rate ("max": flat out) from 1 or 2 threads while
\`inflight record -p\` writes every event to a file; with 2 threads the firing threads and the
recorder share the machine's 2 CPUs. Lost: events the recorder reports lost (ring buffer full
in the kernel, or in user space). Balance: recorded + lost - fired, i.e. the RSS records the
recorder stores besides probe events; negative would mean events missing without a trace.
Mismatches: the recording's self-check (\`inflight report\`: its replay of the events against
the kernel's final counters), 0 when the two agree. Recorder CPU: the \`inflight record\`
process's user + system time per event recorded (the BPF side runs in the firing threads and
shows in section 1, row c'); events per wakeup: events recorded per voluntary context switch
of the recorder.

| threads | asked, events/s | achieved, events/s | lost | lost % | balance | mismatches | recorder CPU ns/event | events per wakeup |
|---:|---|---:|---:|---:|---:|---:|---:|---:|
EOF
	while IFS=, read -r t cfg; do
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "${cfg/\/ring/, ring buffer }" \
			"$(cell record_ceiling "$cfg" "$t" rate)" "$(cell record_ceiling "$cfg" "$t" lost)" \
			"$(cell record_ceiling "$cfg" "$t" lost_pct)" "$(cell record_ceiling "$cfg" "$t" balance)" \
			"$(cell record_ceiling "$cfg" "$t" check_mismatches)" \
			"$(cell record_ceiling "$cfg" "$t" recorder_ns_per_event)" \
			"$(cell record_ceiling "$cfg" "$t" events_per_wakeup)"
	done < <(awk -F, '$1 == "record_ceiling" && $5 == "rate" { print $3 "," $2 }' "$raw" |
		sort -t, -k1,1n -k2,2 -u | sort -t, -k1,1n -k2,2V)
	cat <<EOF

Highest achieved rate with zero lost events in every round (default ring buffer):
**$(num "$(rc_ceiling 0)") events/s**; target >= 1,500,000: $(verdict "$(rc_ceiling 0)" '>=' 1500000).
Counting only settings whose recordings also passed the self-check in every round:
$(num "$(rc_ceiling 1)") events/s. Rounds (default ring buffer) with a negative balance, an
event missing without a trace: $(rc_negative) (target 0).

Flat out, the firing threads bound the rate, not the recorder: each recorded event costs
its thread section 1's row c' and the recorder its CPU per event, and with 2 threads all
of them share the 2 CPUs. What one CPU of the recorder alone keeps up with, at its median
CPU per event flat out with 2 threads: **$(rc_capacity) events/s**; target >= 1,500,000:
$(verdict "$(rc_capacity)" '>=' 1500000).
EOF
	notes_of record_ceiling
}

# rc_ceiling CLEAN: the highest median achieved rate among settings (default ring buffer)
# that lost nothing in any round (CLEAN=1: and whose self-check found no mismatch in any)
section_offline_memory() {
	local cfg gib
	gib=$(awk -F, '$1 == "offline_memory" && $5 == "file_bytes" { printf "%.2f", $6 / 1073741824 }' "$raw")
	cat <<EOF

## 5. Offline memory: report and compare on a ${gib} GiB recording

A synthetic recording (\`tests/record/rec_gen\`: a prover-like run of
$(num "$(median offline_memory recording 1 events)") events, its kernel accounting modelled
exactly, so the report's replay check must find no mismatch), rendered in each format and
compared with itself. Peak RSS of the \`inflight\` process (getrusage), its wall and CPU
time. The reader streams the file and the timeline keeps per-process figures, not events: the
peak RSS must not grow with the file.

| command | peak RSS | wall | CPU | output |
|---|---:|---:|---:|---:|
EOF
	for cfg in report_json report_text report_svg report_html report_chrome compare; do
		printf '| %s | %s KiB | %s s | %s s | %s |\n' "${cfg/_/ --format }" \
			"$(cell offline_memory "$cfg" 1 maxrss_kib)" "$(cell offline_memory "$cfg" 1 wall_s)" \
			"$(cell offline_memory "$cfg" 1 cpu_s)" \
			"$(num "$(median offline_memory "$cfg" 1 output_bytes)") B"
	done
	cat <<EOF

Replay check of the JSON report: $(cell offline_memory report_json 1 check_mismatches) mismatches
(0: the replay equals the modelled kernel's final counters).

Before the streaming reader (commit 8d0719c, measured once on this machine with the same
generator): \`report --format json\` of a 1 GiB recording (45.1 M events) peaked at 5.50 GB
RSS in 78 s; \`report\` of 512 MiB at 2.78 GB (svg, text); \`compare\` of two 512 MiB
recordings at 5.49 GB; and a file over 4 GiB was refused.
EOF
	notes_of offline_memory
}

section_ring_overhead() {
	local cfg
	cat <<EOF

## 6. The flight recorder: ring beside live and record

\`record --ring 1m\` (bench/ring_overhead.sh) against live tracing (\`inflight -b\`, the
summary only) and a full recording (\`record -o\`), alternated run by run. Per hit: one
probegen thread flat out, timed by itself. Prover: the reference prover's "events" workload
(\`--log-n 10 --proofs 200\`), its own proofs per minute and its CPU. Goal: ring within 10%
of live.

| traced by | ns per hit | proofs/min | prover CPU s |
|---|---:|---:|---:|
EOF
	for cfg in untraced live ring record; do
		printf '| %s | %s | %s | %s |\n' "$cfg" "$(cell ring_overhead "$cfg" hit ns_per_hit)" \
			"$(cell ring_overhead "$cfg" prover proofs_per_min)" \
			"$(cell ring_overhead "$cfg" prover prover_cpu_s)"
	done
	cat <<EOF

The loader's memory through a storm (peak RSS of \`inflight\`, getrusage; the ring's own
accounting, most bytes held, and the events it let go):

| loader | peak RSS | ring's most | let go |
|---|---:|---:|---:|
EOF
	for cfg in live record ring16 ring64; do
		printf '| %s | %s KiB | %s | %s |\n' "$cfg" "$(cell ring_overhead "$cfg" memory maxrss_kib)" \
			"$(cell ring_overhead "$cfg" memory ring_bytes_max)" "$(cell ring_overhead "$cfg" memory let_go)"
	done
	notes_of ring_overhead
}

# rc_negative: rounds of the default ring buffer whose balance was below 0
rc_negative() {
	awk -F, '$1 == "record_ceiling" && $2 !~ /ring/ && $5 == "balance" && $6 < 0 { n++ }
		END { print n + 0 }' "$raw"
}

# rc_capacity: events/s one recorder CPU sustains, at its median ns per event (max, 2 threads)
rc_capacity() {
	local ns
	ns=$(median record_ceiling max 2 recorder_ns_per_event)
	[ -n "$ns" ] && num "$(calc "1e9 / $ns")"
}

rc_ceiling() {
	awk -F, -v clean="$1" '$1 == "record_ceiling" && $2 !~ /ring/ {
			k = $3 "," $2
			if ($5 == "lost" && $6 > 0) bad[k] = 1
			if (clean && $5 == "check_mismatches" && $6 > 0) bad[k] = 1
			if ($5 == "rate") { n[k]++; r[k, n[k]] = $6 }
		}
		END {
			best = 0
			for (k in n) {
				if (k in bad) continue
				m = n[k]
				for (i = 1; i <= m; i++) v[i] = r[k, i]
				for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
					if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
				med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
				if (med > best) best = med
			}
			print best
		}' "$raw"
}

section_cuda_cost() {
	cat <<EOF

## Breakdown: libcuda's memory calls

inflight attaches to the CUDA driver's memory functions, entry and return (docs/programs.md,
"GPU memory through libcuda"). \`cuda_loop\` calls cuMemAlloc_v2 and cuMemFree_v2 of the
stand-in libcuda.so.1 of tests/cuda/ (malloc and free underneath) in a loop, one thread;
wall nanoseconds per call (an alloc or a free), the added cost taken within a round:

| inflight | ns per call | added per call |
|---|---:|---:|
| not attached | $(cell cuda_cost none 1 ns_per_call) | |
| \`inflight -- cuda_loop\` | $(cell cuda_cost inflight 1 ns_per_call) | $(cell cuda_cost inflight 1 added_ns_per_call) |

A real driver's cuMemAlloc takes microseconds to milliseconds of its own; what the probes add
is per call, not per byte.
EOF
}

# the attach and teardown section's tables (bench/attach_teardown.sh)
source "$(dirname "$0")/attach_report.sh"

header
for s in probe_cost scaling scaling_vm sharing_cost lock_stall attach_latency prover_overhead loader_cost rss_cost \
	record_ceiling attach_teardown offline_memory ring_overhead cuda_cost; do
	if grep -q "^$s," "$raw" || grep -q "^$s:" "$dir/notes.txt" 2>/dev/null; then
		if declare -F "section_$s" >/dev/null; then
			"section_$s"
		fi
	fi
done
