# SPDX-License-Identifier: BSD-2-Clause
# Replays bpftrace's event lines (tests/tracer/events.bt), sorted by time, and prints what
# inflight must report: events per probe, bytes allocated per class, the peak and its
# composition by stage, and what is left at the end. Independent of inflight's code.
#   A ns tid buf cls bytes owner | F ns tid buf cls bytes | S ns tid owner stage
$1 == "A" {
	n_alloc++
	buf = $4; cls = $5; bytes = $6; owner = $7
	live_cls[buf] = cls; live_bytes[buf] = bytes; live_owner[buf] = owner
	alloc_bytes[cls] += bytes
	st = (owner in stage_of) ? stage_of[owner] : 16
	if (owner == 0) st = 16
	held[owner, cls] += bytes; held_n[owner, cls]++
	cur[st] += bytes
	total += bytes; nbufs++
	if (total > peak) {
		peak = total; peak_bufs = nbufs
		delete peak_stage
		for (s in cur) peak_stage[s] = cur[s]
	}
	next
}
$1 == "F" {
	n_free++
	buf = $4
	if (!(buf in live_cls)) { unmatched++; next }
	owner = live_owner[buf]; cls = live_cls[buf]; bytes = live_bytes[buf]
	st = (owner != 0 && (owner in stage_of)) ? stage_of[owner] : 16
	held[owner, cls] -= bytes; held_n[owner, cls]--
	cur[st] -= bytes
	total -= bytes; nbufs--
	delete live_cls[buf]; delete live_bytes[buf]; delete live_owner[buf]
	next
}
$1 == "S" {
	n_stage++
	owner = $4; to = $5
	from = (owner in stage_of) ? stage_of[owner] : 16
	for (k in held) {
		split(k, parts, SUBSEP)
		if (parts[1] == owner && held[k]) { cur[from] -= held[k]; cur[to] += held[k] }
	}
	stage_of[owner] = to
	next
}
END {
	printf "events %d %d %d\n", n_alloc, n_free, n_stage
	printf "peak %d %d\n", peak, peak_bufs
	for (s in peak_stage) if (peak_stage[s]) printf "peak_stage %s %d\n", s, peak_stage[s]
	for (c in alloc_bytes) printf "alloc_bytes %d %d\n", c, alloc_bytes[c]
	printf "final %d %d\n", total, nbufs
	printf "unmatched %d\n", unmatched + 0
}
