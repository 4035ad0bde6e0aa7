# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# The known answers of the example pipeline (probes/examples/pipeline.h; C and Rust alike),
# as inflight's --json summary must give them (docs/json.md), computed from the run's
# parameters alone. Sourced by tests/t_programs.sh; needs jq.
#
#   expect_procs KIND N T W R   the projection (below) of every traced process, sorted
#     KIND full:   one process runs N items, T threads; every event seen
#          late:   the same, attached while round R (items R*T+1..) held its buffers in
#                  `compute` (-p during --hold-round R): frees of what it allocated before
#                  are unmatched, its owners are first seen at `write`
#          forked: a parent holding the table and W workers running N items each
#   project          jq filter: the fields compared, from a summary object
#   expect_names [P] the class and stage names of `inflight list --json` (provider P,
#                    default prover), projected alike
#   expect_output N  the program's one line of output

# What is compared: everything that does not depend on time or pids.
PROJECT='[.processes[] | {events, owners,
	peak: (.peak | {bytes, bufs, seq, stages, classes}),
	at_end: (.at_end | {bytes, bufs, owners, stages, classes, leak_candidates}),
	unmatched, anomalies, exact,
	dwell: [.dwell[] | {stage, count}]}] | sort_by(tojson)'

# shellcheck disable=SC2016
EXPECT_JQ='
def cell($n; $b): {bufs: $n, bytes: $b};
def item_classes($m):
	if $m == 0 then {} else
	{input: cell($m; $m * 4096), scratch: cell($m; $m * 16384),
	 result: cell($m; $m * 1024)} end;
def table: {table: cell(1; 65536)};
def compute_row($m):
	if $m == 0 then [] else
	[{stage: "compute", id: 1, owners: $m, bufs: (3 * $m), bytes: ($m * 21504),
	  classes: item_classes($m)}] end;
def none_row: [{stage: "(none)", id: null, owners: 0, bufs: 1, bytes: 65536, classes: table}];
def nothing: {bytes: 0, bufs: 0, owners: 0, stages: [], classes: {},
	leak_candidates: {owners: 0, bufs: 0, bytes: 0, classes: {}}};
def anomalies: $anomalies;
def dwell($r; $c; $w): [{stage: "read", count: $r}, {stage: "compute", count: $c},
	{stage: "write", count: $w}] | map(select(.count > 0));
def proc($ev; $own; $peak; $unm; $dw):
	{events: $ev, owners: $own, peak: $peak, at_end: nothing, unmatched: $unm,
	 anomalies: anomalies, exact: true, dwell: $dw};
def none_unmatched: {free: {}, stage: {}};
def min2($a; $b): if $a < $b then $a else $b end;

# one process running items 1..n, t at a time, every event seen, with or without the table
def items($n; $t; $with_table):
	min2($t; $n) as $m |
	(if $with_table then 1 else 0 end) as $tb |
	proc({buf_alloc: (3 * $n + $tb), buf_free: (3 * $n + $tb), stage: (4 * $n)};
	     {started: $n, done: $n};
	     {bytes: ($m * 21504 + $tb * 65536), bufs: (3 * $m + $tb), seq: (5 * $m + $tb),
	      stages: (compute_row($m) + (if $with_table then none_row else [] end)),
	      classes: (item_classes($m) + (if $with_table then table else {} end))};
	     none_unmatched; dwell($n; $n; $n));

# attached during the hold of round r: its m_r items then hold input, scratch and result
def late($n; $t; $r):
	min2($t; $n - $r * $t) as $mr |
	($n - $r * $t - $mr) as $rest |
	min2($t; $rest) as $m |
	proc({buf_alloc: (3 * $rest), buf_free: (3 * $mr + 3 * $rest + 1),
	      stage: (2 * $mr + 4 * $rest)};
	     {started: $rest, done: ($rest + $mr)};
	     {bytes: ($m * 21504), bufs: (3 * $m), seq: (5 * $mr + 5 * $m),
	      stages: compute_row($m), classes: item_classes($m)};
	     {free: (item_classes($mr) + table), stage: {write: $mr}};
	     dwell($rest; $rest; $rest + $mr));

def parent:
	proc({buf_alloc: 1, buf_free: 1, stage: 0}; {started: 0, done: 0};
	     {bytes: 65536, bufs: 1, seq: 1, stages: none_row, classes: table};
	     none_unmatched; []);

if $kind == "full" then [items($n; $t; true)]
elif $kind == "late" then [late($n; $t; $r)]
elif $kind == "forked" then [parent] + [range($w) | items($n; $t; false)]
else error("unknown kind " + $kind) end
| sort_by(tojson)'

# every anomaly counter at 0: the kernel's (INFL_ANOMALIES in bpf/inflight.h, the one table)
# and the loader's ring_lost
ANOMALIES=$(sed -nE 's/^[[:space:]]*X\(([a-z0-9_]+), [A-Z]+,.*/\1/p' \
	"$(dirname "${BASH_SOURCE[0]}")/../../bpf/inflight.h" | jq -Rn '[inputs] + ["ring_lost"] |
	map({(.): 0}) | add')

expect_procs() {
	jq -ncS --arg kind "$1" --argjson n "$2" --argjson t "$3" --argjson w "$4" \
		--argjson r "$5" --argjson anomalies "$ANOMALIES" "$EXPECT_JQ"
}

project() {
	jq -cS "$PROJECT"
}

# the names note as `inflight list --json` reports it
expect_names() { # [PROVIDER]
	jq -ncS --arg provider "${1:-prover}" '{provider: $provider,
		classes: [{id: 0, name: "input"}, {id: 1, name: "scratch"},
			  {id: 2, name: "result"}, {id: 3, name: "table"}],
		stages: [{id: 0, name: "read", entry: true, terminal: false},
			 {id: 1, name: "compute", entry: false, terminal: false},
			 {id: 2, name: "write", entry: false, terminal: false},
			 {id: 3, name: "done", entry: false, terminal: true}]}'
}

project_names() {
	jq -cS '.names | {provider, classes, stages}'
}

# checksums of the pipeline's results (C and Rust compute the same), by item count
expect_output() {
	case $1 in
	6) echo "done items=6 checksum=0x89d95b067de8b2de" ;;
	8) echo "done items=8 checksum=0x47a92220158b9928" ;;
	*) echo "expect_output: no known checksum for $1 items" >&2; return 1 ;;
	esac
}
