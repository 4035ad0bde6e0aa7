#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Processes ending while the loader walks the kernel's maps (attach/map_walk.c): under -b,
# short-lived processes of one binary start and end, 32 at a time, while inflight snapshots
# every 10 ms. No interval may show one process image twice (the pid of a running one, or of one
# just ended: no probegen execs, and 250 processes do not wrap the pids) (a walk that restarted when the key
# under its cursor was deleted counted some twice), and the summary holds every process,
# each with exactly the events it fired. Needs root.
source "$(dirname "$0")/lib.sh"
INFLIGHT=${INFLIGHT_BIN:-$BUILD/inflight}
GEN=$BUILD/tests/probegen
needs_root
[ -x "$INFLIGHT" ] && [ -x "$GEN" ] || { not_ok "built" "run make tests"; finish; }
N=${CHURN_PROCS:-250}   # processes in all (the summary keeps 256)
WIDTH=${CHURN_WIDTH:-32} # alive at once
ROUNDS=200              # storm rounds a process: 5 events each

cp "$GEN" "$TMP/probegen"
"$INFLIGHT" -b "$TMP/probegen" -i 10ms --json -o "$TMP/live.json" >"$TMP/out" 2>"$TMP/err" &
tracer=$!
for _ in $(seq 3000); do grep -q "tracing" "$TMP/err" && break; sleep 0.01; done
check_match "inflight is tracing the binary" "$(cat "$TMP/err")" "tracing .*probegen"
# a new process as soon as one ends, WIDTH at a time
seq "$N" | xargs -P "$WIDTH" -I{} "$TMP/probegen" storm "$ROUNDS"
sleep 0.1
kill -INT "$tracer"
wait "$tracer"
check_eq "inflight ended by Ctrl-C exits 0" "$?" 0

python3 - "$TMP/live.json" "$ROUNDS" >"$TMP/verdict" <<'PY'
import json, sys
# past 256 ended processes the oldest get summaries of their own (reason null)
frames, procs = [], []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["type"] == "interval":
        frames.append(d)
    elif d["type"] == "summary":
        procs += d["processes"]
dups = 0
for f in frames:
    seen = set()
    for p in f["processes"]:
        k = (p["pid"], p["exited"])  # an image that ended is shown once more, marked
        dups += k in seen
        seen.add(k)
r = int(sys.argv[2])
exact = sum(1 for p in procs if p["events"] == {"buf_alloc": r, "buf_free": r, "stage": 3 * r})
print(f"frames={len(frames)} dups={dups} procs={len(procs)} exact={exact}")
PY
v=$(cat "$TMP/verdict")
frames=$(sed -n 's/.*frames=\([0-9]*\).*/\1/p' <<<"$v")
[ "${frames:-0}" -ge 10 ] && ok "intervals during the churn ($v)" || not_ok "intervals during the churn" "$v"
check_match "no interval shows a process twice" "$v" " dups=0 "
check_match "the summary holds every process ($N)" "$v" " procs=$N "
check_match "each with exactly its $((5 * ROUNDS)) events" "$v" " exact=$N$"
finish
