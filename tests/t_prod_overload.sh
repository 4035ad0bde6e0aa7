#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults: a probe storm above a million events per second (no
# crash, counts exact or marked inexact, every ring-buffer drop counted), full maps (buffers,
# owners, processes: each overflow counted, totals marked INEXACT, never negative), and class
# and stage ids out of range from a foreign program (rejected, counted, shown, nothing else
# disturbed).
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
attached() { [ "$(cap_eff "$1")" = 0000000000000000 ] || gone "$1"; }
# jproc SUMMARY PID: the summary's object of process PID
jproc() { jq -c --argjson pid "$2" '.processes[] | select(.pid == $pid)' <<<"$1"; }
# jv JSON FILTER: FILTER's value in JSON (one document), as jq -r prints it
jv() { jq -r "$2" <<<"$1" 2>/dev/null; }
# events_sum PROC: buf_alloc + buf_free + stage of one process's object
events_sum() { jv "$1" '.events | .buf_alloc + .buf_free + .stage'; }
# exact_or_marked PROC FIRED TAG: every event accounted and "exact", or the shortfall counted
# in lock_timeouts (and not "exact")
exact_or_marked() {
	local sum timeouts
	sum=$(events_sum "$1")
	timeouts=$(jv "$1" .anomalies.lock_timeouts)
	if [ "$(jv "$1" .exact)" = true ]; then
		check_eq "$3: exact, every event accounted" "$sum" "$2"
	else
		check_eq "$3: marked inexact, accounted + lock timeouts = fired" "$((sum + timeouts))" "$2"
	fi
}

# --- storm: two processes of one binary, each 600000 rounds of 5 probes, as fast as they go --
# (the rate is printed for the reader; speed is measured by make bench, never asserted here)
N=600000
"$TMP/inflight" --json -b "$TMP/probegen" >"$TMP/storm.out" 2>"$TMP/storm.err" &
tr=$!
bg_track "$tr"
wait_until 15 attached "$tr"
start=$(date +%s%N)
"$TMP/probegen" storm "$N" &
s1=$!
"$TMP/probegen" storm "$N" &
s2=$!
wait "$s1"
r1=$?
wait "$s2"
r2=$?
end=$(date +%s%N)
kill -INT "$tr"
wait "$tr"
check_eq "storm: inflight survives and exits 0" "$?" 0
check_eq "storm: both storms finish" "$r1 $r2" "0 0"
s=$(grep '"type":"summary"' "$TMP/storm.out")
for p in "$s1" "$s2"; do
	exact_or_marked "$(jproc "$s" "$p")" $((5 * N)) "storm pid $p"
done
fired=$((10 * N))
echo "# storm: $((fired * 1000000000 / (end - start))) events/s, wall clock of both"
check_eq "storm: no process lost for want of a slot" "$(jv "$s" .procs_map_full)" 0

# --- contention: threads of one process on one lock ------------------------------------------
"$TMP/inflight" --json -o "$TMP/thr.out" -- "$TMP/probegen" threads 2 20000 >/dev/null \
	2>"$TMP/thr.err"
check_eq "threads: exit 0" "$?" 0
s=$(grep '"type":"summary"' "$TMP/thr.out")
exact_or_marked "$(jv "$s" '.processes[0]')" $((2 * (2 * 20000 + 3))) "threads 2 x 20000"

# --- record mode with a tiny ring buffer: every event recorded or counted as lost -------------
"$TMP/inflight" record --ring-size 4096 -o "$TMP/storm.rec" -- "$TMP/probegen" storm 200000 \
	>/dev/null 2>"$TMP/rec.err"
check_eq "record storm: exit 0" "$?" 0
line=$(grep -o 'recorded [0-9]* event records ([0-9]* lost)' "$TMP/rec.err")
rec=$(awk '{ print $2 }' <<<"$line")
lost=$(tr -d '(' <<<"$line" | awk '{ print $5 }')
check "record storm: the 4 KiB ring overflowed and says so ($line)" test "${lost:-0}" -gt 0
# 1000000 probe events, the exit record and an RSS record per MiB of change
check "record storm: recorded + lost covers every probe event, and no more than a few others" \
	test $((rec + lost)) -ge 1000000 -a $((rec + lost)) -le 1000016
check_match "report: the same loss, counted" "$("$TMP/inflight" report "$TMP/storm.rec" 2>&1)" \
	"lost +$lost events \($lost in the kernel"

# --- full maps --------------------------------------------------------------------------------
{
	for i in $(seq 1 20); do echo "alloc $((0x100 + i)) 1 1000 1"; done
	echo "stage 1 0"
	for i in $(seq 1 20); do echo "free $((0x100 + i)) 1 1000"; done
} >"$TMP/bufs.txt"
"$TMP/inflight" --json -o "$TMP/mb.out" --max-bufs 8 -- "$TMP/probegen" script "$TMP/bufs.txt" \
	>/dev/null 2>&1
s=$(grep '"type":"summary"' "$TMP/mb.out")
s=$(jv "$s" '.processes[0]')
check_eq "--max-bufs 8, 20 live: 12 allocs counted as buffer-map-full" \
	"$(jv "$s" .anomalies.buf_map_full)" 12
check_eq "... and marked inexact" "$(jv "$s" .exact)" false
check_eq "... the 12 frees of untracked buffers counted as such, never negative" \
	"$(jv "$s" .anomalies.untracked_free)" 12
check_eq "... and not as late-attach frees (traced from its start)" \
	"$(jv "$s" '.unmatched.free | length')" 0
check_eq "... nothing left in flight" "$(jv "$s" '.at_end | [.bytes, .bufs] | @text')" '[0,0]'
text=$("$TMP/inflight" --max-bufs 8 -- "$TMP/probegen" script "$TMP/bufs.txt" 2>&1)
check_match "text summary: 12 buffers not tracked, the map full" "$text" \
	"anomalies: .*12 buffers not tracked: the buffer map was full"
check_match "text summary: INEXACT" "$text" "INEXACT"

printf 'stage 1 0\nstage 2 0\nstage 3 0\nstage 4 0\nalloc 1 0 64 3\nfree 1 0 64\n' >"$TMP/owners.txt"
"$TMP/inflight" --json -o "$TMP/mo.out" --max-owners 2 -- "$TMP/probegen" script \
	"$TMP/owners.txt" >/dev/null 2>&1
s=$(grep '"type":"summary"' "$TMP/mo.out")
s=$(jv "$s" '.processes[0]')
check_eq "--max-owners 2: two stage events and one alloc without their owner counted" \
	"$(jv "$s" .anomalies.owner_map_full)" 3
check_eq "... marked inexact" "$(jv "$s" .exact)" false
check_eq "... the unowned buffer came and went" \
	"$(jv "$s" '.at_end | [.bytes, .bufs, .owners] | @text')" '[0,0,2]'

printf 'stage 1 0\nalloc 1 0 64 1\ngate\n' >"$TMP/hold.txt"
printf 'stage 2 0\nalloc 2 0 64 2\nstage 2 1\n' >"$TMP/late.txt"
"$TMP/inflight" --json --max-procs 1 -b "$TMP/probegen" >"$TMP/mp.out" 2>"$TMP/mp.err" &
tr=$!
bg_track "$tr"
wait_until 15 attached "$tr"
"$TMP/probegen" script "$TMP/hold.txt" >"$TMP/hold.out" &
h=$!
bg_track "$h"
wait_until 5 file_has "$TMP/hold.out" '^gated'
"$TMP/probegen" script "$TMP/late.txt"
kill -USR1 "$h"
wait "$h"
kill -INT "$tr"
wait "$tr"
s=$(grep '"type":"summary"' "$TMP/mp.out")
check_eq "--max-procs 1: the second process's 3 events counted, not lost silently" \
	"$(jv "$s" .procs_map_full)" 3
check_eq "... the first process traced in full" "$(events_sum "$(jproc "$s" "$h")")" 2

# --- ids out of range from a foreign program ---------------------------------------------------
cat >"$TMP/bad.txt" <<'IDS'
stage 1 0
alloc 0x1 16 100 1
alloc 0x2 4294967295 100 1
free 0x3 200 10
stage 1 16
stage 2 99
alloc 0x4 1 4096 1
IDS
"$TMP/inflight" --json -o "$TMP/bad.out" -- "$TMP/probegen" script "$TMP/bad.txt" >/dev/null 2>&1
s=$(grep '"type":"summary"' "$TMP/bad.out")
s=$(jv "$s" '.processes[0]')
check_eq "bad class ids (16, 2^32-1, 200): 3 rejected" "$(jv "$s" .anomalies.bad_class)" 3
check_eq "bad stage ids (16, 99): 2 rejected" "$(jv "$s" .anomalies.bad_stage)" 2
check_eq "every event still counted as seen" "$(jv "$s" '.events | @text')" \
	'{"buf_alloc":3,"buf_free":1,"stage":3}'
check_eq "nothing else disturbed: only big in born, 4096 bytes" \
	"$(jv "$s" '.at_end | [.bytes, .bufs, .owners, .stages] | @text')" \
	'[4096,1,1,[{"stage":"born","id":0,"owners":1,"bufs":1,"bytes":4096,"classes":{"big":{"bufs":1,"bytes":4096}}}]]'
check_eq "rejections do not make the counts inexact" "$(jv "$s" .exact)" true
text=$("$TMP/inflight" -- "$TMP/probegen" script "$TMP/bad.txt" 2>&1)
check_match "the CLI shows them, the counts as counts" "$text" \
	"^anomalies: 3 events with a class id >= 16 \\(the latest: 200\\),\$"
check_match "... and the latest id each kind refused" "$text" \
	"^  2 events with a stage id >= 16 \\(the latest: 99\\)\$"
finish
