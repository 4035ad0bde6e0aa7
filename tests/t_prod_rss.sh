#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# RSS truth: the prover holds N MiB that no probe reports (--untracked-mb);
# inflight's RSS, from the kernel's kmem:rss_stat, must show it as untracked memory in the
# summary (at the RSS peak: peak - tracked then >= N MiB), in the live timeline and in the
# exporter (untracked = RSS - tracked, from one scrape), and its RSS peak must agree with the
# prover's own getrusage peak. A run without --untracked-mb is the control.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight prover
N=64
MIB=1048576
work=(-n 2 -p 4 --log-n 14)

# rss_of UNTRACKED_MB FIELD: FIELD of the RSS block of that run's summary (its one process)
rss_of() {
	jq -r "select(.type == \"summary\") | .processes[0].rss.$2 // empty" "$TMP/sum-$1.json" \
		2>/dev/null
}

summary_of() { # UNTRACKED_MB -> $TMP/sum-N.json (inflight) and $TMP/prover-N.json (prover)
	"$TMP/inflight" --json -o "$TMP/sum-$1.json" -- "$TMP/prover" "${work[@]}" \
		--untracked-mb "$1" --json >"$TMP/out-$1" 2>"$TMP/err-$1"
	grep '"peak_rss_mib"' "$TMP/out-$1" >"$TMP/prover-$1.json"
}

for mb in 0 "$N"; do
	summary_of "$mb"
	peak=$(rss_of "$mb" peak_bytes)
	tracked=$(rss_of "$mb" tracked_at_peak)
	prover_mib=$(jq -r '.peak_rss_mib // empty' "$TMP/prover-$mb.json" 2>/dev/null)
	check "untracked $mb MiB: summary has the RSS peak and what was tracked then" \
		test -n "$peak" -a -n "$tracked" -a -n "$prover_mib"
	untracked=$((peak - tracked))
	if [ "$mb" = 0 ]; then
		check "control run: untracked at the RSS peak below $N MiB ($((untracked / MIB)) MiB)" \
			test "$untracked" -lt $((N * MIB))
	else
		check "--untracked-mb $N: untracked at the RSS peak >= $N MiB ($((untracked / MIB)) MiB)" \
			test "$untracked" -ge $((N * MIB))
		check "--untracked-mb $N: the RSS peak alone exceeds $N MiB" test "$peak" -gt $((N * MIB))
	fi
	# the prover's ru_maxrss (hiwater_rss, 0.1 MiB resolution) and the tracepoint's peak
	# count the same pages; the per-CPU counter batching allows a little slack
	diff_kib=$(awk -v a="$peak" -v b="$prover_mib" 'BEGIN { d = a / 1024 - b * 1024; print int(d < 0 ? -d : d) }')
	check "untracked $mb MiB: RSS peak within 1 MiB of the prover's own ($((peak / 1024)) KiB vs ${prover_mib} MiB)" \
		test "$diff_kib" -le 1024
done
check "the RSS peak grew by $N MiB (less 1 MiB of noise) with --untracked-mb $N" \
	test $(($(rss_of "$N" peak_bytes) - $(rss_of 0 peak_bytes))) -ge $(((N - 1) * MIB))

# the text summary says it in words
"$TMP/inflight" -- "$TMP/prover" "${work[@]}" --untracked-mb "$N" >"$TMP/text" 2>/dev/null
check_match "text summary: the RSS peak beside what was tracked then" "$(cat "$TMP/text")" \
	"rss peak [0-9.]+ MiB at \+[0-9.]+ s, with [0-9.]+ [KM]iB tracked then"

# live timeline (JSON): while the prover runs, untracked = rss - tracked >= N MiB
"$TMP/inflight" -i 50ms --json -o "$TMP/live" -- "$TMP/prover" -n 4 -p 4 --log-n 16 \
	--untracked-mb "$N" >/dev/null 2>&1
line=$(jq -c 'select(.type == "interval") | .processes[0] | select(.tracked_bytes > 0)' \
	"$TMP/live" 2>/dev/null | head -n 1)
check "live timeline: an interval while buffers were tracked" test -n "$line"
rss=$(jq -r .rss_bytes <<<"$line")
tracked=$(jq -r .tracked_bytes <<<"$line")
untracked=$(jq -r .untracked_bytes <<<"$line")
check_eq "live timeline: untracked = rss - tracked" "$untracked" "$((rss > tracked ? rss - tracked : 0))"
check "live timeline: untracked >= $N MiB" test "${untracked:-0}" -ge $((N * MIB))

# exporter: one scrape while the prover runs
netns_up || not_ok "a private network namespace"
"${IN_NS[@]}" "$TMP/inflight" serve -- "$TMP/prover" -n 16 -p 4 --log-n 16 --untracked-mb "$N" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
scrape_live() {
	local pid
	pid=$(pgrep -P "$sv" | head -n 1)
	[ -n "$pid" ] || return 1
	body=$(in_ns curl -s --max-time 2 http://127.0.0.1:9464/metrics)
	[ "$(metric "$body" "inflight_tracked_bytes{pid=\"$pid\"}")" -gt 0 ] 2>/dev/null &&
		[ -n "$(metric "$body" "inflight_untracked_bytes{pid=\"$pid\"}")" ]
}
if wait_until 20 scrape_live; then
	ok "exporter: a scrape while the prover holds buffers"
	pid=$(pgrep -P "$sv" | head -n 1)
	rss=$(metric "$body" "inflight_rss_bytes{pid=\"$pid\"}")
	tracked=$(metric "$body" "inflight_tracked_bytes{pid=\"$pid\"}")
	untracked=$(metric "$body" "inflight_untracked_bytes{pid=\"$pid\"}")
	check_eq "exporter: untracked = rss - tracked" "$untracked" "$((rss > tracked ? rss - tracked : 0))"
	check "exporter: untracked >= $N MiB ($((untracked / MIB)) MiB)" test "$untracked" -ge $((N * MIB))
else
	not_ok "exporter: a scrape while the prover holds buffers" "$(cat "$TMP/sv.err")"
	not_ok "exporter: untracked = rss - tracked"
	not_ok "exporter: untracked >= $N MiB"
fi
kill -TERM "$sv"
wait "$sv"
rc=$?
check "serve ended by SIGTERM passes it to the prover: exit 0 or 128+15 (got $rc)" \
	test "$rc" = 0 -o "$rc" = 143
finish
