#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Containers and many processes: a process in another mount namespace
# whose binary exists only there (a tmpfs mounted in the namespace), traced by pid, listed and
# traced by binary through /proc/PID/root/...; -b across restarts, in the trace (the old
# process's final state in the summary, the new one picked up, with --max-procs 1 so the dead
# must make room) and in the exporter (the exited process served until --keep-exited passes).
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
printf 'stage 1 0\nalloc 16 1 4096 1\ngate\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/gate.txt"
printf 'stage 5 0\nalloc 32 2 65536 5\nalloc 33 0 512 5\nstage 5 2\nfree 33 0 512\n' >"$TMP/run.txt"
mkdir "$TMP/ctr"

# the loader drops its capabilities once attached; a loader that died will not attach
attached() { [ "$(cap_eff "$1")" = 0000000000000000 ] || gone "$1"; }

# --- a process in its own mount namespace, its binary only there -----------------------
unshare -m --propagation private sh -c "mount -t tmpfs ctr '$TMP/ctr' &&
	cp '$TMP/probegen' '$TMP/gate.txt' '$TMP/run.txt' '$TMP/ctr/' &&
	exec '$TMP/ctr/probegen' script '$TMP/ctr/gate.txt'" >"$TMP/ctr.out" 2>&1 &
app=$!
bg_track "$app"
wait_until 5 file_has "$TMP/ctr.out" '^gated' || not_ok "the namespaced process runs" "$(cat "$TMP/ctr.out")"
check "its binary's path does not exist outside the namespace" test ! -e "$TMP/ctr/probegen"
check "it runs in another mount namespace" \
	test "$(readlink "/proc/$app/ns/mnt")" != "$(readlink /proc/self/ns/mnt)"
inside=/proc/$app/root$TMP/ctr/probegen

out=$("$TMP/inflight" list "$inside" 2>&1)
check_match "list /proc/PID/root/...: the contract's probes" "$out" "buf_alloc"
check_match "list /proc/PID/root/...: its class names" "$out" "huge"

"$TMP/inflight" -p "$app" >"$TMP/p.out" 2>"$TMP/p.err" &
tr=$!
bg_track "$tr"
wait_until 10 attached "$tr" || not_ok "-p of the namespaced process attaches" "$(cat "$TMP/p.err")"
kill -USR1 "$app"
wait "$tr"
check_eq "-p of a process in another mount namespace: exit 0" "$?" 0
check_match "-p: its events after the attach, exactly" "$(cat "$TMP/p.out")" \
	"events: buf_alloc 0, buf_free 1, stage 2$"

# -b through /proc/HOLDER/root: a process started in the namespace after the attach
unshare -m --propagation private sh -c "mount -t tmpfs ctr '$TMP/ctr' &&
	cp '$TMP/probegen' '$TMP/run.txt' '$TMP/ctr/' && exec sleep 600" &
holder=$!
bg_track "$holder"
wait_until 5 test -e "/proc/$holder/root$TMP/ctr/probegen" || not_ok "the holder's namespace is ready"
"$TMP/inflight" --json -b "/proc/$holder/root$TMP/ctr/probegen" >"$TMP/b.out" 2>"$TMP/b.err" &
tr=$!
bg_track "$tr"
wait_until 10 attached "$tr"
check "-b /proc/PID/root/... attaches" kill -0 "$tr"
nsenter -t "$holder" -m "$TMP/ctr/probegen" script "$TMP/ctr/run.txt" &
run=$!
wait "$run"
check_eq "the process started in the namespace ran" "$?" 0
kill -INT "$tr" 2>/dev/null
wait "$tr"
check_eq "-b /proc/PID/root/...: exit 0 after Ctrl-C" "$?" 0
s=$(grep '"type":"summary"' "$TMP/b.out")
# of_pid PID FILTER: FILTER applied to process PID's object in the summary $s
of_pid() { jq -c --argjson p "$1" ".processes[] | select(.pid == \$p) | $2" <<<"$s"; }
check_eq "-b /proc/PID/root/...: the new process, by pid" "$(of_pid "$run" .pid)" "$run"
check_eq "-b /proc/PID/root/...: its events, exactly" "$(of_pid "$run" .events)" \
	'{"buf_alloc":2,"buf_free":1,"stage":2}'
check_eq "-b /proc/PID/root/...: what it held at exit (64 KiB of huge, in wait)" \
	"$(of_pid "$run" '[.at_end.bytes, .at_end.bufs, .at_end.owners, (.at_end.stages | map(.stage))]')" \
	'[65536,1,1,["wait"]]'

# --- -b across restarts: the old process's final state kept, the new one picked up ---------
# (a restart within the loader's 100 ms bookkeeping could find --max-procs full: counted in
# procs_map_full, never silent; the exporter test below waits for the room to be made)
"$TMP/inflight" --json -b "$TMP/probegen" >"$TMP/r.out" 2>"$TMP/r.err" &
tr=$!
bg_track "$tr"
wait_until 10 attached "$tr" || not_ok "-b attaches" "$(cat "$TMP/r.err")"
"$TMP/probegen" script "$TMP/run.txt" &
first=$!
wait "$first"
rm -f "$TMP/second.out" # an earlier "gated" must not pass for this start
"$TMP/probegen" script "$TMP/gate.txt" >"$TMP/second.out" &
second=$!
bg_track "$second"
wait_until 5 file_has "$TMP/second.out" '^gated'
kill -USR1 "$second"
wait "$second"
kill -INT "$tr"
wait "$tr"
check_eq "-b across a restart: exit 0 after Ctrl-C" "$?" 0
s=$(grep '"type":"summary"' "$TMP/r.out")
check_eq "-b across a restart: both processes in the summary" \
	"$(jq -r '[.processes[].pid] | @text' <<<"$s")" "[$first,$second]"
check_eq "the old process: exited, its final state (64 KiB held)" \
	"$(of_pid "$first" '[.exited, .at_end.bytes, .at_end.bufs, .at_end.owners]')" '[true,65536,1,1]'
check_eq "the old process: its events" "$(of_pid "$first" .events)" \
	'{"buf_alloc":2,"buf_free":1,"stage":2}'
check_eq "the new process picked up: every event" "$(of_pid "$second" .events)" \
	'{"buf_alloc":1,"buf_free":1,"stage":3}'
check_eq "no event was left out for want of a slot" "$(jq -r .procs_map_full <<<"$s")" 0

# --- the exporter across restarts: the exited process served, then forgotten ---------------
netns_up || not_ok "a private network namespace"
"${IN_NS[@]}" "$TMP/inflight" serve --max-procs 1 --keep-exited 1s -b "$TMP/probegen" \
	>"$TMP/s.out" 2>"$TMP/s.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/s.err" '^inflight: serving' || not_ok "serve -b starts" "$(cat "$TMP/s.err")"
"$TMP/probegen" script "$TMP/run.txt" &
first=$!
wait "$first"
body=$(in_ns curl -s http://127.0.0.1:9464/metrics)
check_eq "serve -b: the exited process is still served" \
	"$(metric "$body" "inflight_process_exited{pid=\"$first\"}")" 1
check_eq "serve -b: with its final state" \
	"$(metric "$body" "inflight_buffer_bytes{pid=\"$first\",class=\"huge\",stage=\"wait\"}")" 65536
forgotten() { ! in_ns curl -s http://127.0.0.1:9464/metrics | grep -q "pid=\"$first\""; }
check "serve -b: forgotten once --keep-exited (1 s) has passed" wait_until 5 forgotten
rm -f "$TMP/second.out" # an earlier "gated" must not pass for this start
"$TMP/probegen" script "$TMP/gate.txt" >"$TMP/second.out" &
second=$!
bg_track "$second"
wait_until 5 file_has "$TMP/second.out" '^gated'
body=$(in_ns curl -s http://127.0.0.1:9464/metrics)
check_eq "serve -b: the restarted process is picked up (--max-procs 1)" \
	"$(metric "$body" "inflight_buffers{pid=\"$second\",class=\"big\",stage=\"born\"}")" 1
kill -USR1 "$second"
wait "$second"
kill -TERM "$sv"
wait "$sv"
check_eq "serve -b: exit 0 on SIGTERM" "$?" 0
finish
