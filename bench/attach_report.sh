# SPDX-License-Identifier: BSD-2-Clause
# The attach_teardown section of the results file (bench/attach_teardown.sh); sourced by
# bench/report.sh, whose stats/cell/median helpers it uses. Read with docs/attach.md.

AT_LABELS=(
	"spawn:perf:inline|usdt_attach: one perf-event uprobe per site, close, exit"
	"spawn:perf:fork|usdt_attach: perf-event uprobes, a forked child closes them"
	"spawn:multi:inline|usdt_attach: one uprobe_multi link, close, exit"
	"spawn:multi:fork|usdt_attach: uprobe_multi, a forked child closes it"
	"spawn:usdt:inline|usdt_attach: libbpf 1.5 USDT (3 links), close one by one"
	"spawn:usdt:threads|usdt_attach: libbpf 1.5 USDT, the 3 links closed from 3 threads"
	"spawn:usdt:fork|usdt_attach: libbpf 1.5 USDT, a forked child closes them"
	"spawn:usdt:sibling|usdt_attach: libbpf 1.5 USDT, a CLONE_PARENT child closes them"
	"spawn:empty|usdt_empty (the existing minimal loader, by pid; the loader's libbpf)"
	"spawn:empty_base|usdt_empty built against BENCH_USDT_EMPTY_BASELINE's libbpf"
	"spawn:inflight|inflight -- (as built)"
	"spawn:inflight_perf|inflight --, forced to perf-event uprobes (INFLIGHT_ATTACH=perf)"
	"spawn:baseline|baseline inflight -- (BENCH_INFLIGHT_BASELINE)"
	"spawn:bpftrace|bpftrace -c (count on prover:*)"
)

at_sites() { # the site counts measured, in order
	awk -F, '$1 == "attach_teardown" && $2 ~ /^spawn:/ { print $3 }' "$raw" | sort -un | tr '\n' ' '
}

# at_table METRIC: one row per config, one column per site count
at_table() {
	local entry cfg label n row any
	printf '| tool and mechanism |'
	for n in $(at_sites); do printf ' %s sites |' "$n"; done
	printf '\n|---|'
	for n in $(at_sites); do printf -- '---:|'; done
	printf '\n'
	for entry in "${AT_LABELS[@]}"; do
		cfg=${entry%%|*} label=${entry#*|} row="| $label |" any=
		for n in $(at_sites); do
			c=$(cell attach_teardown "$cfg" "$n" "$1")
			[ "$c" = n/a ] || any=1
			row="$row $c |"
		done
		[ -n "$any" ] && echo "$row"
	done
}

at_sum() { # CONFIG_PREFIX METRIC: "sum/count" of a 0/1 metric over every site count and round
	awk -F, -v p="$1" -v m="$2" '$1 == "attach_teardown" && index($2, p) == 1 && $5 == m { s += $6; n++ }
		END { printf "%d/%d", s, n }' "$raw"
}

section_attach_teardown() {
	cat <<EOF

## 7. Attach and teardown by mechanism

Targets \`build/bench/sites_N\` (bench/gen_sites.sh) carry N semaphore-guarded probe sites of
the contract; each fires every site once and exits. \`usdt_attach\` (bench/usdt_attach.c,
libbpf 1.5 static) attaches one program to all of them by the mechanism named, counts the hits
and detaches as named; the other rows are the tools as they are. Every figure from
CLOCK_MONOTONIC stamps, in milliseconds; $(env_of attach_reps) rounds, configurations alternated
within each. Read with [attach.md](attach.md).

**Target exit to the shell seeing the tool exit** (what a user waits for after the summary):

$(at_table exit_ms)

**Target exit to the tool's summary line** (usdt_attach: its "stopped" line):

$(at_table summary_ms)

**Target exit to the kernel done with the last link** (in the detaching child for fork and
sibling; the tool's own exit for the others):

$(at_table kernel_ms)

**Exec of the tool to the target seeing its semaphores set** (start, load, attach):

$(at_table live_ms)

**The attach calls alone** (the tool's own figure):

$(at_table attach_ms)

Hits counted = hits fired, runs: usdt_attach $(at_sum spawn:perf exact) perf,
$(at_sum spawn:multi exact) multi, $(at_sum spawn:usdt exact) libbpf USDT;
inflight $(at_sum spawn:inflight exact), baseline $(at_sum spawn:baseline exact),
bpftrace $(at_sum spawn:bpftrace exact). Detaching children still zombies half a second after
they finished (not yet reaped): fork $(at_sum spawn:perf:fork zombie) perf +
$(at_sum spawn:multi:fork zombie) multi + $(at_sum spawn:usdt:fork zombie) USDT, sibling
$(at_sum spawn:usdt:sibling zombie).

**A target that keeps running** (\`-p\`, $(awk -F, '$2 ~ /^pid:/ { print $3; exit }' "$raw") sites): from SIGINT to the tool
until the shell sees it gone, and until the target sees all three semaphores back at 0:

| usdt_attach | exit, ms | semaphores at 0, ms |
|---|---:|---:|
EOF
	local cfg n
	n=$(awk -F, '$2 ~ /^pid:/ { print $3; exit }' "$raw")
	for cfg in perf:inline perf:fork usdt:inline usdt:threads usdt:fork; do
		[ "$(cell attach_teardown "pid:$cfg" "$n" exit_ms)" = n/a ] && continue
		echo "| $cfg | $(cell attach_teardown "pid:$cfg" "$n" exit_ms) | $(cell attach_teardown "pid:$cfg" "$n" sema0_ms) |"
	done
	cat <<EOF

**Cost per hit** (section 1's method: \`probe_loop\`, CPU ns per event, an empty program on every
site of the three probes):

| mechanism | 1 thread | 2 threads |
|---|---:|---:|
| perf-event uprobes (usdt_attach -m perf) | $(cell attach_teardown hit:perf 1 ns_per_hit) | $(cell attach_teardown hit:perf 2 ns_per_hit) |
| one uprobe_multi link (usdt_attach -m multi) | $(cell attach_teardown hit:multi 1 ns_per_hit) | $(cell attach_teardown hit:multi 2 ns_per_hit) |
| libbpf 1.5 USDT (usdt_attach -m usdt) | $(cell attach_teardown hit:usdt 1 ns_per_hit) | $(cell attach_teardown hit:usdt 2 ns_per_hit) |
| usdt_empty (the loader's libbpf) | $(cell attach_teardown hit:empty 1 ns_per_hit) | $(cell attach_teardown hit:empty 2 ns_per_hit) |
| ratio multi / perf (per round) | $(cell attach_teardown hit:multi/perf 1 ratio) | $(cell attach_teardown hit:multi/perf 2 ratio) |
| ratio libbpf USDT / perf (per round) | $(cell attach_teardown hit:usdt/perf 1 ratio) | $(cell attach_teardown hit:usdt/perf 2 ratio) |

**Cost per hit with 400 sites attached** (\`sites_400\` firing its 400 sites round after round,
its CPU ns per hit, one thread):

| mechanism | ns per hit | ratio to perf-event uprobes (per round) |
|---|---:|---:|
| perf-event uprobes | $(cell attach_teardown hit400:perf 400 ns_per_hit) | |
| one uprobe_multi link | $(cell attach_teardown hit400:multi 400 ns_per_hit) | $(cell attach_teardown hit400:multi/perf 400 ratio) |
| libbpf 1.5 USDT | $(cell attach_teardown hit400:usdt 400 ns_per_hit) | $(cell attach_teardown hit400:usdt/perf 400 ratio) |
EOF
	notes_of attach_teardown
}
