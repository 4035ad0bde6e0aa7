#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `serve -b` across restarts: processes retired by --keep-exited stay in
# the final summary (they vanished from it); thousands of restarts leave serve's memory and
# its exposition bounded, measured by exact counts (series in the scrape, processes in the
# summary, untraced events), not by timing; the map limits' preallocation is announced in
# one line whose size agrees with what the kernel says it charged for the maps.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

copy_bins inflight probegen
# each run: owner 5 holds 64 KiB of huge at its exit
printf 'stage 5 0\nalloc 32 2 65536 5\nalloc 33 0 512 5\nstage 5 2\nfree 33 0 512\n' >"$TMP/run.txt"
printf 'stage 1 0\nalloc 16 1 4096 1\ngate\nfree 16 1 4096\nstage 1 4\n' >"$TMP/gate.txt"
netns_up || not_ok "a private network namespace"

scrape() { in_ns curl -s --max-time 5 http://127.0.0.1:9464/metrics; }
# samples: the sample lines of a scrape (no comments), with pid= and in all
samples_with_pid() { scrape | grep -v '^#' | grep -c 'pid="'; }
samples_all() { scrape | grep -vc '^#'; }
serve_rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# --- a few restarts: every retired process in the final summary ---------------------------
"${IN_NS[@]}" "$TMP/inflight" serve --keep-exited 0 -b "$TMP/probegen" >"$TMP/a.out" 2>"$TMP/a.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/a.err" '^inflight: serving' || not_ok "serve -b starts" "$(cat "$TMP/a.err")"
pids=""
for i in 1 2 3; do
	"$TMP/probegen" script "$TMP/run.txt" &
	p=$!
	wait "$p"
	pids="$pids $p"
done
retired() { [ "$(samples_with_pid)" = 0 ]; }
check "the three exited processes left the exposition (--keep-exited 0)" wait_until 10 retired
kill -TERM "$sv"
wait "$sv"
check_eq "serve -b: exit 0 on SIGTERM" "$?" 0
for p in $pids; do
	check_match "final summary: retired pid $p is there" "$(cat "$TMP/a.out")" "^inflight summary: pid $p: "
done
check_eq "final summary: each with what it held at exit (64 KiB)" \
	"$(grep -c '^in flight at exit: 64.0 KiB in 1 buffer, 1 owner' "$TMP/a.out")" 3

# --- thousands of restarts: bounded, exactly -------------------------------------------------
N=2000
"${IN_NS[@]}" "$TMP/inflight" serve --keep-exited 0 --max-procs 256 -b "$TMP/probegen" \
	>"$TMP/b.out" 2>"$TMP/b.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/b.err" '^inflight: serving' || not_ok "serve -b starts" "$(cat "$TMP/b.err")"
empty_all=$(samples_all)
check_eq "before any process: no sample with a pid" "$(samples_with_pid)" 0
# run_batch COUNT: that many runs, 8 at a time; after every 64 the exporter is given the time
# to retire them (its 100 ms housekeeping may be late on a loaded machine), so that at most 64
# wait in the maps at once, well under --max-procs 256, however fast the runs go
run_batch() {
	local i batch
	for ((i = 0; i < $1; i += 8)); do
		batch=()
		for _ in 1 2 3 4 5 6 7 8; do
			"$TMP/probegen" script "$TMP/run.txt" &
			batch+=($!)
		done
		wait "${batch[@]}"
		if (((i + 8) % 64 == 0)); then
			wait_until 20 retired || return 1
		fi
	done
}
run_batch 200
wait_until 10 retired
rss1=$(serve_rss_kib "$sv")
run_batch $((N - 200))
check "after $N restarts every process left the exposition" wait_until 20 retired
rss2=$(serve_rss_kib "$sv")
echo "# serve's VmRSS: $rss1 KiB after 200 restarts, $rss2 KiB after $N"
check_eq "... the scrape has exactly as many samples as before the first ($empty_all)" \
	"$(samples_all)" "$empty_all"
check_eq "... no event went untraced for want of a slot" \
	"$(scrape | awk '$1 == "inflight_untraced_events_total" { print $2 }')" 0
# what serve keeps is fixed (identities of the living, the last 64 retired); what it allocates
# and frees meanwhile is at most a snapshot of --max-procs records of 13.5 KiB, twice over
# while the snapshot's array doubles: 6.75 MiB here, and the heap keeps its high-water mark.
# Keeping every retired process would take 2000 x 13.5 KiB, 26 MiB.
check "... serve's memory is bounded by the map size, not the restarts (VmRSS +$((rss2 - rss1)) KiB, under 7.75 MiB)" \
	test $((rss2 - rss1)) -lt $((256 * 27 + 1024))
kill -TERM "$sv"
wait "$sv"
check_eq "serve -b after $N restarts: exit 0" "$?" 0
check_eq "the final summary shows the last 64 processes in full" \
	"$(grep -c '^inflight summary: pid ' "$TMP/b.out")" 64
check_match "... and counts the $((N - 64)) before them, with their highest peak" "$(head -n 1 "$TMP/b.out")" \
	"^inflight summary: $((N - 64)) earlier processes not shown \(the last 64 that exited are\); the highest peak among them: 64.5 KiB \(pid [0-9]+\)$"
check_eq "... each shown one with what it held at exit" \
	"$(grep -c '^in flight at exit: 64.0 KiB in 1 buffer, 1 owner' "$TMP/b.out")" 64

# --- the maps' preallocation, announced ---------------------------------------------------------
"$TMP/inflight" --max-procs 65536 -- "$TMP/probegen" script "$TMP/gate.txt" >"$TMP/c.out" 2>"$TMP/c.err" &
tr=$!
bg_track "$tr"
wait_until 10 file_has "$TMP/c.out" '^gated' || not_ok "a trace with --max-procs 65536 starts" "$(cat "$TMP/c.err")"
check_eq "--max-procs 65536: one warning line" "$(grep -c 'warning: ' "$TMP/c.err")" 1
check_match "... with the size" "$(cat "$TMP/c.err")" \
	"^inflight: warning: --max-procs 65536, --max-bufs 65536, --max-owners 16384: the kernel preallocates about [0-9.]+ (MiB|GiB) for the maps, whether used or not$"
said=$(sed -n 's/.*preallocates about \([0-9.]*\) \([MG]\)iB.*/\1 \2/p' "$TMP/c.err" |
	awk '{ print $2 == "G" ? $1 * 1024 : $1 }') # MiB
# what the kernel charged: the memlock of the maps this inflight holds, by their ids
kernel=0
for id in $(awk '/^map_id:/ { print $2 }' /proc/$tr/fdinfo/* 2>/dev/null | sort -u); do
	name=$(bpftool map show id "$id" | sed -n 's/^[0-9]*: [a-z_]*  name \([a-z_]*\) .*/\1/p')
	case $name in procs | deferred | bufs | owners)
		kernel=$((kernel + $(bpftool map show id "$id" | sed -n 's/.*memlock \([0-9]*\)B.*/\1/p'))) ;;
	esac
done
echo "# the maps: the warning says $said MiB, the kernel charged $kernel bytes"
check "... within 2% of what the kernel charged for procs, their queues, bufs and owners ($kernel bytes)" \
	awk -v s="$said" -v k="$kernel" 'BEGIN { d = s * 1048576 - k; if (d < 0) d = -d; exit !(k > 0 && d / k < 0.02) }'
kill -USR1 "$(pgrep -P "$tr" | head -n 1)"
wait "$tr"
check_eq "... and the trace runs as usual" "$?" 0
"$TMP/inflight" -- "$TMP/probegen" script "$TMP/run.txt" >/dev/null 2>"$TMP/d.err"
check_eq "the default limits: no warning" "$(cat "$TMP/d.err")" ""
finish
