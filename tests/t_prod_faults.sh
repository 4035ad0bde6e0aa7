#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults: the traced program SIGKILLed mid-run (the summary is still
# printed, its live buffers reported as held at exit, exactly for a scripted run), and the
# loader SIGKILLed (the kernel detaches its probes: the prover's USDT semaphores, read from
# /proc/PID/mem at the addresses of its stapsdt notes, return to 0, every probe site is a
# plain nop again, and the prover finishes unharmed).
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen prover
cp "$EXPORTER_STATE" "$TMP/state.txt"

# --- a scripted program SIGKILLed while it holds buffers: exact state at exit ----------------
"$TMP/inflight" -- "$TMP/probegen" script "$TMP/state.txt" >"$TMP/a.out" 2>"$TMP/a.err" &
tr=$!
bg_track "$tr"
wait_until 10 file_has "$TMP/a.out" '^gated' || not_ok "probegen at its gate" "$(cat "$TMP/a.err")"
kill -KILL "$(pgrep -P "$tr" | head -n 1)"
wait "$tr"
check_eq "SIGKILLed command: inflight exits 128+9" "$?" 137
out=$(cat "$TMP/a.out")
check_match "the summary is printed, saying how it ended" "$out" "killed by SIGKILL; tracing ended: command exited"
check_match "its live buffers are reported as held at exit, exactly" "$out" \
	"in flight at exit: 2.00 MiB in 4 buffers, 2 owners"
check_match "... big in wait: 2 buffers, 2 MiB" "$out" "wait +1 +2 +2.00 MiB +big 2/2.00M"
check_match "... huge at work: 1 buffer, 4 KiB" "$out" "work +1 +1 +4.00 KiB +huge 1/4.00K"
check_match "... small, without an owner: 100 B" "$out" "\(none\) +0 +1 +100 B +small 1/100B"

# --- the prover SIGKILLed mid-run ----------------------------------------------------------
"$TMP/inflight" -i 50ms --json -o "$TMP/b.out" -- "$TMP/prover" -n 12 -p 4 --log-n 16 \
	>"$TMP/b.prover" 2>"$TMP/b.err" &
tr=$!
bg_track "$tr"
holding() {
	jq -e 'select(.type == "interval") | .processes[] | select(.tracked_bytes > 0)' \
		"$TMP/b.out" 2>/dev/null | grep -q .
}
wait_until 20 holding || not_ok "the prover holds buffers under inflight" "$(cat "$TMP/b.err")"
kill -KILL "$(pgrep -P "$tr" | head -n 1)"
wait "$tr"
check_eq "SIGKILLed prover: inflight exits 128+9" "$?" 137
s=$(grep '"type":"summary"' "$TMP/b.out")
check "the summary is printed" test -n "$s"
# jp FILTER: FILTER applied to the summary's (only) process
jp() { jq -r ".processes[0] | $1" <<<"$s" 2>/dev/null; }
check_eq "... the prover exited, by signal 9" "$(jp '[.exited, .exit_status, .exit_signal] | @text')" \
	'[true,null,9]'
at_end_bytes=$(jp .at_end.bytes)
check "... its buffers held at exit are reported (> 0: $(jp '.at_end | [.bytes, .bufs] | @text'))" \
	test "${at_end_bytes:-0}" -gt 0 -a "$(jp '.at_end.bufs // 0')" -gt 0
check_eq "... held at exit, class by class, adds up" \
	"$(jp '[.at_end.classes[].bytes] | add')" "$at_end_bytes"
check "... no more than the peak" test "${at_end_bytes:-0}" -le "$(jp '.peak.bytes // 0')"
check_eq "... the counts are exact" "$(jp .exact)" true

# --- the loader SIGKILLed: probes detach, the prover runs on unharmed ----------------------------
# the sessions above traced $TMP/prover binary-wide (-- follows forks): their detaching
# children must be done before an untraced prover can start without their probes
wait_detached "$TMP/inflight"
"$TMP/prover" -n 6 -p 4 --log-n 16 --json >"$TMP/c.out" 2>"$TMP/c.err" &
pv=$!
bg_track "$pv"
wait_until 5 test -n "$(load_bias "$pv" "$TMP/prover" 2>/dev/null)"
kill -STOP "$pv" # hold it while the tracer comes and goes; a stopped process keeps its probes
check_eq "untraced: every semaphore 0" "$(semaphores "$pv" "$TMP/prover")" 0
check_eq "untraced: every probe site a nop" "$(site_bytes "$pv" "$TMP/prover")" "90 "
"$TMP/inflight" -p "$pv" >"$TMP/d.out" 2>"$TMP/d.err" &
tr=$!
bg_track "$tr"
attached() { [ "$(cap_eff "$tr")" = 0000000000000000 ] || gone "$tr"; }
wait_until 15 attached
check "traced: the semaphores count the tracer" test "$(semaphores "$pv" "$TMP/prover")" -gt 0
check_eq "traced: every probe site is a breakpoint" "$(site_bytes "$pv" "$TMP/prover")" "cc "
kill -KILL "$tr"
wait "$tr" 2>/dev/null
detached() { [ "$(semaphores "$pv" "$TMP/prover")" = 0 ] && [ "$(site_bytes "$pv" "$TMP/prover")" = "90 " ]; }
# the kernel unregisters the uprobes as the dead loader's descriptors close (~0.15 s each)
check "loader SIGKILLed: within 15 s every semaphore is 0 and every site a nop again" \
	wait_until 15 detached
kill -CONT "$pv"
wait "$pv"
check_eq "the prover finishes unharmed: exit 0" "$?" 0
check_match "... every proof checked" "$(cat "$TMP/c.out")" '"proofs":6,.*"all_h_checks_passed":true'
finish
