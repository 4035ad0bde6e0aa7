# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# The known answers of the images of tests/images (the sequence and its numbers:
# gpu_lib.h), as inflight's --json summary must give them (docs/json.md) when each image's
# classes and stages have slots of their own, computed from the row and the item count.
# Sourced by tests/t_attach_images.sh; needs jq.
#
#   images_expect ROW N   the projection (below) of the row's one process, N >= 1 items
#     ROW c-linked, c-dlopen, cxx, rust, provider: app + one library named weights, kbuf;
#              upload, kernel, fin: no name shown twice, all unqualified;
#         two-libs: + libaux.so (tiles, kbuf; upload, merge, fin): kbuf, upload and fin are
#              each shown by two slots, so those of both libraries are LABEL:NAME;
#         plain: + libplain.so (no names note, constant ids 0, 1): its ids are shown as
#              cls0, cls1, stage0, stage1, qualified (the app holds slots 0 and 1)
#   images_project   jq filter: the fields compared, from a summary object
#   images_names LIB the names note of `inflight list --json LIB` as images_project_names
#                    projects it (null for libplain.so)
#   images_output ROW N   the application's one line of output
#
# Stage rows and dwell entries are compared without their `id` and sorted by name: which
# number a slotted stage shows as its id is not the question here, its name is.

# What is compared: everything that does not depend on time or pids.
IMAGES_PROJECT='[.processes[] | {events, owners,
	peak: (.peak | {bytes, bufs, seq, classes,
		stages: ([.stages[] | del(.id)] | sort_by(.stage))}),
	at_end: (.at_end | {bytes, bufs, owners, classes, leak_candidates,
		stages: ([.stages[] | del(.id)] | sort_by(.stage))}),
	unmatched, anomalies, exact, lifetime,
	dwell: ([.dwell[] | {stage, count}] | sort_by(.stage))}] | sort_by(tojson)'

# shellcheck disable=SC2016
IMAGES_EXPECT_JQ='
def cell($b): {bufs: 1, bytes: $b};
# the names a library shows: classes 0 and 1, stages upload, kernel, fin (null: none)
def lib1:
	if $row == "two-libs" then
		{c0: "weights", c1: "libgpu.so:kbuf", up: "libgpu.so:upload", k: "kernel",
		 fin: "libgpu.so:fin"}
	else {c0: "weights", c1: "kbuf", up: "upload", k: "kernel", fin: "fin"} end;
def lib2:
	if $row == "two-libs" then
		{c0: "tiles", c1: "libaux.so:kbuf", up: "libaux.so:upload", k: "merge",
		 fin: "libaux.so:fin"}
	elif $row == "plain" then
		{c0: "libplain.so:cls0", c1: "libplain.so:cls1", up: "libplain.so:stage0",
		 k: "libplain.so:stage1", fin: null}
	else null end;
def nothing: {bytes: 0, bufs: 0, owners: 0, stages: [], classes: {},
	leak_candidates: {owners: 0, bufs: 0, bytes: 0, classes: {}}};

if ($row | IN("c-linked", "c-dlopen", "cxx", "rust", "two-libs", "plain", "provider") | not)
then error("unknown row " + $row) else . end |
lib1 as $l1 | lib2 as $l2 |
# what item 1 holds at the peak: everything of the app and of each library
({input: cell(4096), output: cell(1024), ($l1.c0): cell(307200), ($l1.c1): cell(71680)}
 + (if $l2 then {($l2.c0): cell(307200), ($l2.c1): cell(71680)} else {} end)) as $held |
($held | [.[].bytes] | add) as $bytes |
($held | length) as $bufs |
# the stages an item leaves (done ends it), each once per item
(["read", "gpu", $l1.up, $l1.k, $l1.fin]
 + (if $l2 then [$l2.up, $l2.k, $l2.fin] else [] end) | map(select(. != null))) as $left |
{events: {buf_alloc: ($n * $bufs), buf_free: ($n * $bufs), stage: ($n * ($left | length + 1))},
 owners: {started: $n, done: $n},
 peak: {bytes: $bytes, bufs: $bufs, seq: (if $l2 then 11 else 7 end), classes: $held,
	stages: [{stage: (if $l2 then $l2.up else $l1.k end), owners: 1, bufs: $bufs,
		  bytes: $bytes, classes: $held}]},
 at_end: nothing,
 unmatched: {free: {}, stage: {}},
 anomalies: $anomalies, exact: true,
 lifetime: ($held | map_values({allocs: $n, bytes_allocated: ($n * .bytes), frees: $n,
			       bytes_freed: ($n * .bytes)})),
 dwell: ($left | map({stage: ., count: $n}) | sort_by(.stage))}
| [.]'

# every anomaly counter at 0: the kernel's (INFL_ANOMALIES in bpf/inflight.h, the one table)
# and the loader's ring_lost
# (IMAGES_INFLIGHT_H: where the header is, when not in this tree: a guest of the kernel matrix)
IMAGES_ANOMALIES=$(sed -nE 's/^[[:space:]]*X\(([a-z0-9_]+), [A-Z]+,.*/\1/p' \
	"${IMAGES_INFLIGHT_H:-$(dirname "${BASH_SOURCE[0]}")/../../bpf/inflight.h}" | jq -Rn '[inputs] + ["ring_lost"] |
	map({(.): 0}) | add')

images_expect() { # ROW N
	jq -ncS --arg row "$1" --argjson n "$2" --argjson anomalies "$IMAGES_ANOMALIES" \
		"$IMAGES_EXPECT_JQ"
}

images_project() {
	jq -cS "$IMAGES_PROJECT"
}

# the names note of a library or of the app, as `inflight list --json` reports it
images_names() { # app|libgpu.so|libgpu_cxx.so|libgpu_rs.so|libaux.so|libplain.so
	local c0 k
	case $1 in
	app)
		jq -ncS '{provider: "prover",
			classes: [{id: 0, name: "input"}, {id: 1, name: "output"}],
			stages: [{id: 0, name: "read", entry: true, terminal: false},
				 {id: 1, name: "gpu", entry: false, terminal: false},
				 {id: 2, name: "done", entry: false, terminal: true}]}'
		return ;;
	libplain.so) echo null; return ;;
	libaux.so) c0=tiles k=merge ;;
	libgpu.so | libgpu_cxx.so | libgpu_rs.so) c0=weights k=kernel ;;
	*) echo "images_names: unknown image $1" >&2; return 1 ;;
	esac
	jq -ncS --arg c0 "$c0" --arg k "$k" '{provider: "prover",
		classes: [{id: 0, name: $c0}, {id: 1, name: "kbuf"}],
		stages: [{id: 0, name: "upload", entry: true, terminal: false},
			 {id: 1, name: $k, entry: false, terminal: false},
			 {id: 2, name: "fin", entry: false, terminal: false}]}'
}

images_project_names() {
	jq -cS '.names | if . then {provider, classes, stages} else null end'
}

# the application's line: every library computes alike (gpu_fill, gpu_digest)
images_output() { # ROW N
	local libs=1
	case $1 in two-libs | plain) libs=2 ;; esac
	case $libs-$2 in
	1-5) echo "done items=5 libs=1 checksum=0xdcbe600c0353ee64" ;;
	2-5) echo "done items=5 libs=2 checksum=0x383c94599d750665" ;;
	*) echo "images_output: no known checksum for $2 items, $libs libraries" >&2; return 1 ;;
	esac
}
