#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight record --ring`, the flight recorder, with real parts: scripted probegen runs with
# known answers (a threshold trigger whose dump must carry the state the window began in,
# re-arming and the rate limits, SIGUSR1 across a restart of the traced binary, a process
# killed by a signal, a full tmpfs as the dump directory, the ring's memory under a probe
# storm) and the reference prover OOM-killed in a memory cgroup (v2 memory.max where the
# machine has it, else v1), whose one dump must hold what was in flight at the kill. Every
# dump is checked against the independent decoder (tests/record/recdump.py). Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
D=$ROOT/tests/record/recdump.py
needs_root
cp "$BUILD/tests/probegen" "$TMP/probegen"
cp "$BUILD/prover" "$TMP/prover"
MNT=""
CG=""
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	if [ -n "$CG" ]; then
		for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		sleep 0.2
		rmdir "$CG" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
# wait_line FILE REGEX: until a tracer's stderr says it (10 s at most)
wait_line() { for _ in $(seq 500); do grep -Eq "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done; return 1; }
one_dump() { ls "$1"/inflight-*.infl 2>/dev/null | head -n 1; }

# ---- bad input: one line, exit 2 (usage) or 9 (the directory) ----
"$I" record --ring 5m -- "$TMP/probegen" spin 1 >/dev/null 2>"$TMP/e1"
check_eq "--ring without --dump-dir: exit 2" "$?" 2
check_eq "... one line that says so" "$(cat "$TMP/e1")" \
	"inflight: --ring needs --dump-dir DIR; e.g. --ring 5m --dump-dir /var/lib/inflight"
"$I" record --ring 5m --dump-dir "$TMP" --dump-on 'rss>lots' -- "$TMP/probegen" spin 1 \
	>/dev/null 2>"$TMP/e2"
check_eq "a bad trigger: exit 2" "$?" 2
check_match "... naming it" "$(cat "$TMP/e2")" "^inflight: --dump-on 'rss>lots': not a size or a percentage"
"$I" record --ring 5m --dump-dir "$TMP" --ring-size 1000 -- "$TMP/probegen" spin 1 >/dev/null 2>&1
check_eq "--ring-size below 1M with --ring: exit 2" "$?" 2
"$I" record --ring 5m --dump-dir "$TMP" -o "$TMP/x.rec" -- "$TMP/probegen" spin 1 >/dev/null 2>&1
check_eq "-o with --ring: exit 2" "$?" 2
"$I" record --dump-dir "$TMP" -o "$TMP/x.rec" -- "$TMP/probegen" spin 1 >/dev/null 2>&1
check_eq "--dump-dir without --ring: exit 2" "$?" 2
"$I" record --ring 5m --dump-dir "$TMP/none" -- "$TMP/probegen" spin 1 >/dev/null 2>"$TMP/e3"
check_eq "a dump directory that is not there: exit 9, before anything starts" "$?" 9
check_eq "... said" "$(cat "$TMP/e3")" \
	"inflight: --dump-dir $TMP/none: No such file or directory; create it first"
"$I" record --ring 5m --dump-dir "$TMP" --dump-on 'owners:nosuch>3' -- "$TMP/probegen" spin 1 \
	>/dev/null 2>"$TMP/e4"
check_eq "owners: of an unknown stage: exit 2" "$?" 2

# ---- a threshold: tracked>6M; what happened 2 s before is carried in ----
cat >"$TMP/thr.txt" <<'EOF'
alloc 0x10 1 1048576 0
stage 1 0
alloc 0x11 2 2097152 1
stage 1 1
stage 2 0
stage 2 2
pause 2000
stage 3 0
alloc 0x12 2 4194304 3
pause 1500
free 0x12 2 4194304
pause 400
alloc 0x13 2 4194304 3
pause 1200
free 0x13 2 4194304
stage 3 4
free 0x11 2 2097152
stage 1 4
stage 2 4
free 0x10 1 1048576
EOF
mkdir "$TMP/d1"
"$I" record --ring 1s --dump-after 500ms --dump-dir "$TMP/d1" --dump-on 'tracked>6M' \
	-- "$TMP/probegen" script "$TMP/thr.txt" >/dev/null 2>"$TMP/thr.err"
check_eq "the run ends with the command's status" "$?" 0
check_eq "one dump, named inflight-HOST-PID-UTCTIME-TRIGGER.infl" \
	"$(ls "$TMP/d1" | sed -E 's/^inflight-[A-Za-z0-9._]+-[0-9]+-[0-9]{8}T[0-9]{6}Z-/X-/')" "X-tracked.infl"
f=$(one_dump "$TMP/d1")
check_eq "mode 0640, nothing left under a temporary name" "$(stat -c %a "$f") $(ls -A "$TMP/d1" | wc -l)" "640 1"
check_match "the second crossing (after re-arming) is refused: too soon, said" "$(cat "$TMP/thr.err")" \
	"flight recorder: tracked \(pid [0-9]+ tracks 7.00 MiB, over 6.00 MiB\): no dump, [0-9.]+ [a-z]+ after the last one's trigger \(--dump-interval 1m00s\)"
check_match "the closing line counts it" "$(tail -n 1 "$TMP/thr.err")" \
	"1 dump written to $TMP/d1 \(1 refused: 1 too soon, 0 over --max-dumps; 0 rotated; 0 cut short; 0 failed; 0 joined a dump being made\)$"
"$I" report "$f" -f json -o "$TMP/thr.json" 2>/dev/null
check_eq "report: the trigger, the carried state, the window's exact figures" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r, p = d["recording"], d["processes"][0]
print(r["format_version"], r["dump"]["trigger"], r["dump"]["number"], r["dump"]["refused"], p["carried"],
      p["peak"]["bytes"], p["peak"]["seq"], p["events"], (p["at_end"]["bytes"], p["at_end"]["bufs"]),
      p["check"], p["replay_exact"])' "$TMP/thr.json")" \
	"1.6 tracked 1 0 {'after_seq': 6, 'bufs': 2, 'owners': 2} 7340032 8 {'buf_alloc': 1, 'buf_free': 0, 'stage': 1} (7340032, 3) {'mismatches': 0, 'first': ''} True"
check_eq "report: the peak's composition holds the carried owners in their stages" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print({s["stage"]: (s["owners"], s["bytes"]) for s in p["peak"]["stages"]})' "$TMP/thr.json")" \
	"{'born': (1, 4194304), 'work': (1, 2097152), 'wait': (1, 0), '(none)': (0, 1048576)}"
check_eq "the independent decoder: the same start, the same carried state" \
	"$(python3 "$D" "$f" dump | sed 1d | sed -E 's/^pid [0-9]+/pid P/')" "pid P after 6 carried 2 bufs 2 owners"
check_eq "... and the same peak" "$(python3 "$D" "$f" summary | cut -d' ' -f1,2)" "peak 7340032"
check_eq "... and the same memory x time" "$("$I" report "$f" --format folded | sort)" \
	"$(python3 "$D" "$f" folded | sort)"
out=$("$I" report "$f" 2>&1)
check_match "report text: the trigger, with what it saw" "$out" \
	"^trigger    dump 1 of a flight recorder: trigger tracked \(pid [0-9]+ tracks 7.00$"
check_match "report text: the carried state" "$out" \
	"^  carried  2 buffers and 2 owners in flight when the window began \(after event 6\)$"
check_match "report text: it matches the kernel" "$out" "^  check    the replay matches the kernel's final counters$"
for fmt in csv chrome svg html; do
	"$I" report "$f" -o "$TMP/thr.$fmt" 2>/dev/null
	check_eq "every renderer reads it: $fmt" "$?" 0
done

# ---- the rate limits: --max-dumps 1 refuses, --rotate replaces ----
mkdir "$TMP/d2" "$TMP/d3"
"$I" record -q --ring 1s --dump-after 500ms --dump-interval 0 --max-dumps 1 --dump-dir "$TMP/d2" \
	--dump-on 'tracked>6M' -- "$TMP/probegen" script "$TMP/thr.txt" >/dev/null 2>"$TMP/max.err"
check_match "--max-dumps 1: the second refused, said" "$(cat "$TMP/max.err")" \
	"no dump, 1 written already \(--max-dumps; --rotate replaces the oldest instead\)"
check_eq "... one file" "$(ls "$TMP/d2" | wc -l)" 1
"$I" record --ring 1s --dump-after 500ms --dump-interval 0 --max-dumps 1 --rotate \
	--dump-dir "$TMP/d3" --dump-on 'tracked>6M' -- "$TMP/probegen" script "$TMP/thr.txt" \
	>/dev/null 2>"$TMP/rot.err"
check_match "--rotate: two written, the oldest removed, counted" "$(tail -n 1 "$TMP/rot.err")" \
	"2 dumps written to $TMP/d3 \(0 refused: 0 too soon, 0 over --max-dumps; 1 rotated; 0 cut short"
f=$(one_dump "$TMP/d3")
check_eq "... one file left: the second dump, its window after the first one's free" "$(ls "$TMP/d3" | wc -l) $(python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], "report", sys.argv[2], "-f", "json"], capture_output=True).stdout)
p = d["processes"][0]
print(d["recording"]["dump"]["number"], p["carried"]["bufs"], p["peak"]["bytes"])' "$I" "$f")" "1 2 3 7340032"

# ---- SIGUSR1 and a restart of the traced binary inside the window (-b) ----
printf 'alloc 0x10 1 1000 0\npause 200\nfree 0x10 1 1000\nalloc 0x11 1 3000 0\n' >"$TMP/a.txt"
printf 'alloc 0x20 1 2000 0\nstage 5 0\nalloc 0x21 0 500 5\npause 4000\n' >"$TMP/b.txt"
mkdir "$TMP/d4"
"$I" record --ring 10s --dump-after 200ms --dump-dir "$TMP/d4" -b "$TMP/probegen" 2>"$TMP/usr.err" &
rec=$!
check "the recorder attached" wait_line "$TMP/usr.err" "recording .* into a ring of the last 10 s"
"$TMP/probegen" script "$TMP/a.txt" >/dev/null
"$TMP/probegen" script "$TMP/b.txt" >/dev/null &
pb=$!
sleep 1
kill -USR1 "$rec"
check "SIGUSR1: a dump" wait_line "$TMP/usr.err" "flight recorder: wrote .*-signal\.infl"
kill -INT "$rec"
wait "$rec"
check_eq "the recorder ends cleanly on SIGINT" "$?" 0
wait "$pb"
f=$(one_dump "$TMP/d4")
check_eq "the dump holds both processes: the one that ended (3000 bytes left), the running one" \
	"$("$I" report "$f" -f json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["recording"]["dump"]["trigger"], [(p["exited"], p["at_end"]["bytes"], p["events"]["buf_alloc"]) for p in d["processes"]])')" \
	"signal [(True, 3000, 2), (False, 2500, 2)]"
check_eq "... the decoder agrees on the running one's peak" \
	"$(python3 "$D" "$f" summary | cut -d' ' -f1,2)" "peak 3000"

# ---- a process that ended before the window: let go whole, in no dump ----
mkdir "$TMP/d12"
"$I" record --ring 1s --dump-after 0 --dump-dir "$TMP/d12" -b "$TMP/probegen" 2>"$TMP/gone.err" &
rec=$!
wait_line "$TMP/gone.err" "recording"
"$TMP/probegen" script "$TMP/a.txt" >/dev/null
sleep 1.6
"$TMP/probegen" script "$TMP/b.txt" >/dev/null &
pb=$!
sleep 0.5
kill -USR1 "$rec"
wait_line "$TMP/gone.err" "flight recorder: wrote"
kill -INT "$rec"
wait "$rec"
wait "$pb"
check_eq "the ended process is not in the dump: only the running one, from its start" \
	"$("$I" report "$(one_dump "$TMP/d12")" -f json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([(p["pid"] == int(sys.argv[1]), p["carried"], p["at_end"]["bytes"]) for p in d["processes"]])' "$pb")" \
	"[(True, None, 2500)]"

# ---- rss>SIZE: any RSS is over 1 KiB ----
mkdir "$TMP/d8"
"$I" record -q --ring 5s --dump-after 0 --dump-on 'rss>1K' --dump-dir "$TMP/d8" \
	-- "$TMP/probegen" spin 600 >/dev/null 2>"$TMP/rss.err"
check_eq "rss>1K: one dump (the condition stays true: it never re-arms)" \
	"$(ls "$TMP/d8" | sed -E 's/.*-//')" "rss.infl"
check_match "... that says what it saw" "$("$I" report "$(one_dump "$TMP/d8")" -f json 2>&1 |
	python3 -c 'import json, sys; d = json.load(sys.stdin)["recording"]["dump"]; print(d["trigger"], d["detail"])')" \
	"^rss pid [0-9]+ has RSS [0-9.]+ [KM]iB, over 1.00 KiB$"

# ---- owners:STAGE>N: a stage by name ----
mkdir "$TMP/d11"
printf 'stage 1 0\nstage 1 2\nstage 2 0\nstage 2 2\npause 400\nstage 1 4\nstage 2 4\n' >"$TMP/own.txt"
"$I" record -q --ring 5s --dump-after 0 --dump-on 'owners:wait>1' --dump-dir "$TMP/d11" \
	-- "$TMP/probegen" script "$TMP/own.txt" >/dev/null 2>&1
f=$(one_dump "$TMP/d11")
check_eq "owners:wait>1: one dump, that says what it saw" "$(ls "$TMP/d11" | wc -l) $("$I" report "$f" -f json 2>&1 |
	python3 -c 'import json, sys; d = json.load(sys.stdin)["recording"]["dump"]; print(d["trigger"], d["detail"].split(" ", 2)[2])')" \
	"1 owners has 2 owners in wait, over 1"

# ---- exit: a traced process killed by a signal ----
mkdir "$TMP/d5"
printf 'alloc 0x30 2 4096 0\npause 10000\n' >"$TMP/c.txt"
"$I" record --ring 10s --dump-after 0 --dump-on exit --dump-dir "$TMP/d5" -b "$TMP/probegen" \
	2>"$TMP/exit.err" &
rec=$!
wait_line "$TMP/exit.err" "recording"
"$TMP/probegen" script "$TMP/c.txt" >/dev/null &
pc=$!
sleep 0.5
kill -TERM "$pc"
wait "$pc"
check "exit: the kill makes a dump" wait_line "$TMP/exit.err" "flight recorder: wrote .*-$pc-.*-exit\.infl"
check_match "... that says why" "$(cat "$TMP/exit.err")" "exit \(pid $pc killed by signal 15\): dumping"
kill -INT "$rec"
wait "$rec"

# ---- a full disk: a 128 KiB tmpfs as the dump directory ----
MNT=$TMP/full
mkdir "$MNT"
mount -t tmpfs -o size=128k tmpfs "$MNT"
python3 -c '
for i in range(8000):
    print("alloc %#x 0 %d 0" % (0x1000 + i, 4096 + i))
print("pause 3000")' >"$TMP/many.txt"
"$I" record --ring 10s --dump-after 0 --dump-dir "$MNT" -b "$TMP/probegen" 2>"$TMP/full.err" &
rec=$!
wait_line "$TMP/full.err" "recording"
"$TMP/probegen" script "$TMP/many.txt" >/dev/null &
pm=$!
sleep 1.5
kill -USR1 "$rec"
check "full disk: said, with the way to read what was written" wait_line "$TMP/full.err" \
	"flight recorder: dump $MNT/inflight-.*-signal\.infl cut short after [0-9.]+ [KM]iB: No space left on device; inflight report --partial reads what it holds"
kill -INT "$rec"
wait "$rec"
wait "$pm"
check_match "... counted" "$(tail -n 1 "$TMP/full.err")" "0 dumps written to $MNT \(0 refused: .*; 1 cut short;"
f=$(one_dump "$MNT")
"$I" report "$f" >/dev/null 2>"$TMP/cut.err"
check_eq "... the file stays: report refuses it whole (exit 8)" "$?" 8
"$I" report --partial "$f" -f json -o "$TMP/cut.json" 2>"$TMP/cut.err"
check_eq "... report --partial reads it" "$?" 0
check_eq "... and says it was cut" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["recording"]
print(r["complete"], r["cut"] is not None, r["dump"]["trigger"])' "$TMP/cut.json")" "False True signal"

# ---- the ring's memory under a probe storm: bounded by --ring-size ----
mkdir "$TMP/d6"
"$I" record --ring 1h --ring-size 1M --dump-dir "$TMP/d6" -- "$TMP/probegen" storm 200000 \
	>/dev/null 2>"$TMP/storm.err"
check_eq "storm: the command's status" "$?" 0
line=$(tail -n 1 "$TMP/storm.err")
check_eq "storm: events let go, the ring's memory within 1 MiB, nothing written" "$(python3 -c '
import re, sys
m = re.search(r"nothing dumped .* held, (\d+) let go; memory .* at most \((\d+) bytes\), limit 1.00 MiB\); 0 dumps", sys.argv[1])
print(bool(m) and int(m.group(1)) > 500000, bool(m) and int(m.group(2)) <= 1 << 20, len(__import__("os").listdir(sys.argv[2])))' \
	"$line" "$TMP/d6")" "True True 0"

# ---- serve --ring: the recorder inside the exporter, its dumps in /metrics ----
mkdir "$TMP/d9"
"$I" serve --listen 127.0.0.1:0 --ring 5s --dump-after 200ms --dump-dir "$TMP/d9" \
	-b "$TMP/probegen" >"$TMP/serve.out" 2>"$TMP/serve.err" &
srv=$!
check "serve --ring: serving" wait_line "$TMP/serve.err" "serving http://127.0.0.1:[0-9]+/metrics"
addr=$(grep -Eo '127\.0\.0\.1:[0-9]+' "$TMP/serve.err" | head -n 1)
metric() { curl -s "http://$addr/metrics" | grep -E "^$1 " | awk '{print $2}'; }
check_eq "no dump yet: counted 0, no time" \
	"$(metric 'inflight_dumps_total\{trigger="signal"\}') $(metric inflight_last_dump_timestamp_seconds)" "0 0.000"
printf 'alloc 0x10 1 1000 0\nstage 3 1\nalloc 0x11 2 4000 3\npause 2000\n' >"$TMP/s.txt"
"$TMP/probegen" script "$TMP/s.txt" >/dev/null &
ps_=$!
sleep 0.6
before=$(date +%s)
kill -USR1 "$srv"
check "serve: SIGUSR1 makes a dump" wait_line "$TMP/serve.err" "flight recorder: wrote .*-$ps_-.*-signal\.infl"
check_eq "serve: inflight_dumps_total{trigger=\"signal\"} 1, oom 0" \
	"$(metric 'inflight_dumps_total\{trigger="signal"\}') $(metric 'inflight_dumps_total\{trigger="oom"\}')" "1 0"
check_eq "serve: the last dump's time is the trigger's (within 2 s)" "$(python3 -c '
import sys; print(abs(float(sys.argv[1]) - int(sys.argv[2])) < 2)' "$(metric inflight_last_dump_timestamp_seconds)" "$before")" "True"
wait "$ps_"
kill -INT "$srv"
wait "$srv"
check_eq "serve: ends cleanly" "$?" 0
f=$(one_dump "$TMP/d9")
check_eq "serve: the dump holds the process, its 5000 bytes in flight" "$("$I" report "$f" -f json 2>/dev/null |
	python3 -c 'import json, sys; p = json.load(sys.stdin)["processes"][0]; print(p["at_end"]["bytes"], p["check"]["mismatches"])')" "5000 0"

# ---- an OOM kill in a memory cgroup: exactly one dump, what was in flight at the kill ----
LIMIT=$((40 << 20))
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG=/sys/fs/cgroup/inflight-ring-$$
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir "$CG" && echo "$LIMIT" >"$CG/memory.max" && echo 0 >"$CG/memory.swap.max" 2>/dev/null
elif [ -d /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/inflight-ring-$$
	mkdir "$CG" && echo "$LIMIT" >"$CG/memory.limit_in_bytes"
fi
if [ -n "$CG" ] && [ -d "$CG" ]; then
	mkdir "$TMP/d7" "$TMP/d10"
	"$I" record --ring 30s --dump-after 1s --dump-dir "$TMP/d7" -b "$TMP/prover" \
		2>"$TMP/oom.err" &
	rec=$!
	# a second recorder: RSS over a quarter of the cgroup's limit, before the kill (the
	# prover fills the cgroup in about 100 ms: snapshots, and so the tests of levels, every
	# 10 ms; from half the limit the kill came first in 2 runs of 5, with two recorders on
	# 2 CPUs, the first snapshot to hold the prover often past 20 MiB already)
	"$I" record -i 10ms --ring 30s --dump-after 0 --dump-dir "$TMP/d10" --dump-on 'rss>25%' \
		-b "$TMP/prover" 2>"$TMP/pct.err" &
	rec2=$!
	wait_line "$TMP/oom.err" "recording"
	wait_line "$TMP/pct.err" "recording"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --pw 12 --jobs 4 --proofs 4 --log-n 17 \
		--gpu-rounds 3 --permit-release after-synth --chan-cap 1' _ "$CG" "$TMP/prover" \
		>/dev/null 2>&1
	check_eq "the prover was killed by SIGKILL (137)" "$?" 137
	check "a dump was written" wait_line "$TMP/oom.err" "flight recorder: wrote"
	sleep 0.5
	kill -INT "$rec" "$rec2"
	wait "$rec" "$rec2"
	check_match "rss>25%: a quarter of the cgroup's 40 MiB limit, read from the cgroup" \
		"$("$I" report "$(ls "$TMP"/d10/*-rss.infl | head -n 1)" -f json 2>&1 |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["recording"]["dump"]["detail"])')" \
		"^pid [0-9]+ has RSS [0-9.]+ MiB, over 10.0 MiB \(its memory limit's share\)$"
	check_eq "exactly one dump, of the OOM kill" \
		"$(ls "$TMP/d7" | sed -E 's/.*-//')" "oom.infl"
	f=$(one_dump "$TMP/d7")
	"$I" report "$f" -f json -o "$TMP/oom.json" 2>/dev/null
	seq=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["oom_kill"]["seq"])' "$TMP/oom.json")
	check_eq "the dump names the OOM kill, and what it held then is what the dump replays to at it" \
		"$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
k = p["oom_kill"]
print(k is not None and k["tracked_bytes"] > 0, "tracked %d bufs %d" % (k["tracked_bytes"], k["tracked_bufs"]),
      p["check"]["mismatches"])' "$TMP/oom.json")" \
		"True $(python3 "$D" "$f" at "$seq") 0"
	check_match "the OOM kill in the report" "$("$I" report "$f" 2>&1)" "^  OOM-KILLED +the kernel's OOM killer chose it"
else
	not_ok "no memory cgroup (v2 memory.max or v1 memory.limit_in_bytes) can be made here"
fi
finish
