#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The reference prover traced end to end: inflight's numbers against an independent
# reconstruction of the same run (bpftrace printing every event, replayed by awk), nothing
# left in flight after a clean run, and owners per stage consistent with the scheduler.
source "$(dirname "$0")/lib.sh"
INFLIGHT=$BUILD/inflight

# inflight -b on a private copy (other tests may run build/prover meanwhile); waits until
# it says it is tracing. Sets INFL_PID; output in $1.json, stderr in $1.err.
start_inflight_b() {
	"$INFLIGHT" --json -b "$TMP/prover" >"$1.json" 2>"$1.err" &
	INFL_PID=$!
	for _ in $(seq 200); do
		grep -q "tracing" "$1.err" && return 0
		kill -0 $INFL_PID 2>/dev/null || break
		sleep 0.05
	done
	cat "$1.err" >&2
	return 1
}

stop_inflight() { kill -INT "$INFL_PID"; wait "$INFL_PID"; }

cp "$BUILD/prover" "$TMP/prover"
sed "s|BIN|$TMP/prover|g" "$ROOT/tests/tracer/events.bt" >"$TMP/events.bt"

# --- 1. the incident, seen by inflight and by bpftrace at once --------------------------
args="--proofs 2 --pw 6 --chan-cap 1 --permit-release after-synth --gpu-rounds 3 --log-n 14"
check "inflight attached to the prover binary" start_inflight_b "$TMP/incident"
bpftrace -q "$TMP/events.bt" -c "$TMP/prover $args" >"$TMP/events.txt" 2>"$TMP/bpftrace.err"
check_eq "the prover ran to completion under both tracers" "$?" 0
stop_inflight
grep '^[AFS] ' "$TMP/events.txt" | sort -k2,2n | awk -f "$ROOT/tests/tracer/replay.awk" >"$TMP/replay.txt"
summary=$(tail -n 1 "$TMP/incident.json")
proc='.procs[0]'
want() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$TMP/replay.txt"; }

check_eq "one process traced" "$(jq '.procs | length' <<<"$summary")" 1
check_eq "events per probe equal bpftrace's" \
	"$(jq -r "$proc.events | \"\(.buf_alloc) \(.buf_free) \(.stage)\"" <<<"$summary")" "$(want events)"
check_eq "peak bytes and buffers equal the reconstruction" \
	"$(jq -r "$proc.peak | \"\(.bytes) \(.bufs)\"" <<<"$summary")" "$(want peak)"
check_eq "peak composition by stage equals the reconstruction" \
	"$(jq -r "$proc.peak.stages[] | \"\(.id // 16) \(.bytes)\"" <<<"$summary" | sort -n)" \
	"$(want peak_stage | sort -n)"
check_eq "nothing in flight after a clean run (inflight)" \
	"$(jq -r "$proc.at_end | \"\(.bytes) \(.bufs) \(.owners)\"" <<<"$summary")" "0 0 0"
check_eq "nothing in flight after a clean run (reconstruction)" "$(want final)" "0 0"
check_eq "every owner that started is done" \
	"$(jq -r "$proc.owners | \"\(.started) \(.done)\"" <<<"$summary")" "22 22"
check_eq "no unmatched events, no anomalies" \
	"$(jq -r "[$proc.anomalies[]] | add" <<<"$summary") $(want unmatched)" "0 0"
check_eq "totals marked exact" "$(jq -r "$proc.exact" <<<"$summary")" "true"

# partitions holding a/b/c at the peak = abc buffers / 3
abc_holders() { jq -r "[$proc.peak.stages[].classes.abc.bufs // 0] | add / 3 | floor" <<<"$1"; }
pile=$(abc_holders "$summary")
check_eq "the pile-up sits in chan_send (the incident's diagnosis)" \
	"$(jq -r "$proc.peak.stages | max_by(.bytes) | .stage" <<<"$summary")" "chan_send"
if [ "$pile" -gt $((6 + 1 + 2)) ]; then ok "after-synth: $pile partitions hold a/b/c at the peak, above pw+cap+gw=9"
else not_ok "after-synth: partitions holding a/b/c at the peak" "$pile <= 9"; fi

# --- 2. the fix: the same work, bounded ---------------------------------------------------
fixed=$("$INFLIGHT" --json -- "$TMP/prover" --proofs 2 --pw 6 --chan-cap 1 \
	--permit-release after-send --gpu-rounds 3 --log-n 14 2>/dev/null | tail -n 1)
pile=$(abc_holders "$fixed")
if [ "$pile" -le $((6 + 1 + 2)) ]; then ok "after-send: $pile partitions hold a/b/c at the peak, within pw+cap+gw=9"
else not_ok "after-send: partitions holding a/b/c at the peak" "$pile > 9"; fi
check_eq "after-send: nothing in flight at the end" \
	"$(jq -r "$proc.at_end.bytes" <<<"$fixed")" 0
finish
