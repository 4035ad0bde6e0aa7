#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# An OOM kill, for real: the reference prover in the incident's configuration runs in a
# memory cgroup far too small for it (cgroup v2 memory.max where the memory controller is
# there, else v1 memory.limit_in_bytes), traced live and recorded with -b. The kernel's OOM
# killer chooses it (oom:mark_victim, bpf/oom.bpf.h), and every output must say so, with
# what was in flight at the kill: the live summary (text and JSON), the report in each
# format, compare. Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
needs_root
cp "$BUILD/prover" "$TMP/prover"
LIMIT=$((40 << 20))
CG=""
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG=/sys/fs/cgroup/inflight-oom-$$
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir "$CG" && echo "$LIMIT" >"$CG/memory.max" && echo 0 >"$CG/memory.swap.max" 2>/dev/null
elif [ -d /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/inflight-oom-$$
	mkdir "$CG" && echo "$LIMIT" >"$CG/memory.limit_in_bytes"
fi
if [ -z "$CG" ] || [ ! -d "$CG" ]; then
	skip_all "no memory cgroup (v2 memory.max or v1 memory.limit_in_bytes) can be made here"
fi
cleanup() {
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
	rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ok "a memory cgroup limited to $((LIMIT >> 20)) MiB: $CG"

# wait_line FILE WORD: until the tracer says it is attached
wait_line() { for _ in $(seq 500); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done; return 1; }
"$I" record -o "$TMP/oom.rec" -b "$TMP/prover" 2>"$TMP/rec.err" &
rec=$!
"$I" -b "$TMP/prover" >"$TMP/live.txt" 2>"$TMP/live.err" &
live=$!
"$I" --json -i 100ms -o "$TMP/live.json" -b "$TMP/prover" 2>"$TMP/livej.err" &
livej=$!
check "the recorder attached" wait_line "$TMP/rec.err" recording
check "the live tracers attached" wait_line "$TMP/live.err" tracing
wait_line "$TMP/livej.err" tracing
# the incident's shape: partitions pile up until the cgroup's limit
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --pw 12 --jobs 4 --proofs 4 --log-n 17 \
	--gpu-rounds 3 --permit-release after-synth --chan-cap 1' _ "$CG" "$TMP/prover" \
	>"$TMP/prover.out" 2>&1
check_eq "the prover was killed by SIGKILL (137)" "$?" 137
sleep 0.5
kill -INT "$rec" "$live" "$livej"
wait "$rec" "$live" "$livej"
pid=$(tail -n 1 "$TMP/live.json" | jq -r '.processes[-1].pid')

# the live summary
check_match "live summary: OOM-KILLED, not a plain exit" "$(cat "$TMP/live.txt")" \
	"^  OOM-KILLED: killed by the kernel's OOM killer; tracing ended"
check_match "live summary: when, and what it held then" "$(cat "$TMP/live.txt")" \
	"^  the kernel's OOM killer chose it at \+[0-9.]+ s, holding [0-9.]+ [KM]iB tracked in [0-9]+ buffers, RSS [0-9.]+ MiB$"
sum=$(tail -n 1 "$TMP/live.json")
# a thread running on another CPU may still hit a probe between the kill's mark and its death:
# then what it held at the mark differs from the end by exactly those later events (seq)
check_eq "live JSON: the summary's oom_kill, what it held equals what was in flight at its end (or events came after the mark)" \
	"$(python3 -c '
import json, sys
p = json.loads(sys.argv[1])["processes"][-1]
k = p["oom_kill"]
later = sum(p["events"].values()) > k["seq"]
print(k is not None and k["tracked_bytes"] > 0, later or k["tracked_bytes"] == p["at_end"]["bytes"],
      later or k["tracked_bufs"] == p["at_end"]["bufs"], k["rss_bytes"] > 0, k["time_s"] <= p["end_s"])' "$sum")" \
	"True True True True True"
check_eq "live JSON: the intervals say it too, once it happened" \
	"$(jq -r 'select(.type == "interval") | .processes[] | select(.oom_kill != null) | .pid' \
		"$TMP/live.json" | sort -u)" "$pid"
# the recording and every report of it
"$I" report "$TMP/oom.rec" >"$TMP/r.txt" 2>&1
check_match "report text: OOM-KILLED, with the instant and what it held" "$(cat "$TMP/r.txt")" \
	"^  OOM-KILLED +the kernel's OOM killer chose it at \+[0-9.]+ s, holding [0-9.]+ [KM]iB"
"$I" report "$TMP/oom.rec" -f json -o "$TMP/r.json" 2>/dev/null
check_eq "report JSON: oom_kill equals the live tracer's (another BPF instance: within 1 ms)" \
	"$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["processes"][0]["oom_kill"]
l = [p for p in json.loads(sys.argv[2])["processes"] if p["oom_kill"]][0]["oom_kill"]
print(r["tracked_bytes"] == l["tracked_bytes"], abs(r["time_s"] - l["time_s"]) < 0.001)' \
		"$TMP/r.json" "$sum")" "True True"
"$I" report "$TMP/oom.rec" -o "$TMP/r.svg" 2>/dev/null
check_match "report svg: the kill marked on the timeline" \
	"$(xmlstarlet sel -N s=http://www.w3.org/2000/svg -t -v '//s:g[@class="oom"]/s:text' "$TMP/r.svg")" \
	'^OOM kill at [0-9.]+ s \([0-9.]+ [KM]iB tracked\)$'
"$I" report "$TMP/oom.rec" -f chrome -o "$TMP/r.trace.json" 2>/dev/null
check_eq "report chrome: an 'OOM kill' instant at the kill's microsecond" "$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = json.load(open(sys.argv[2]))["processes"][0]["oom_kill"]
o = [e for e in ev if e["name"] == "OOM kill"]
print(len(o), o[0]["ts"] == round(k["time_s"] * 1e6), o[0]["args"]["tracked_bytes"] == k["tracked_bytes"])' \
	"$TMP/r.trace.json" "$TMP/r.json")" "1 True True"
"$I" report "$TMP/oom.rec" -o "$TMP/r.html" 2>/dev/null
check_match "report html: OOM-KILLED in its facts" "$(grep -o '<div class="facts oom" id="oom">[^<]*' "$TMP/r.html")" \
	'OOM-KILLED: the kernel.s OOM killer chose it at'
# against a run that fits: compare names the kill
"$I" record -q -o "$TMP/ok.rec" -- "$TMP/prover" --pw 2 --jobs 1 --proofs 1 --log-n 12 >/dev/null 2>&1
out=$("$I" compare "$TMP/oom.rec" "$TMP/ok.rec" 2>&1)
check_match "compare: the verdict starts with the OOM kill" \
	"$(printf '%s\n' "$out" | sed -n '/^verdict/,/^  peak/p' | tr '\n' ' ' | tr -s ' ')" \
	"first probe event\\) OOM A: [^ ]*oom\.rec was killed by the kernel's OOM killer at [0-9.]+ s, holding [0-9.]+ [KM]iB tracked peak"
check_match "compare: a row for it" "$out" '^  killed by the OOM killer +1 +0 +0\.00$'
finish
