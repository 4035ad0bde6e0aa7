#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The exporter under attack: bounded loopback attacks on `inflight serve`
# in a private network namespace, each with a scraper beside it that must keep getting whole
# answers. Before the guard (cmd/serve_guard.h), 40 idle connections made 38 of 38 scrapes
# fail (32 connections at most, a 10 s inactivity timeout any byte resets). Attacks, 8 s each:
# idle sockets, Slowloris drips, clients that never read, a reconnect flood, one client
# holding 500 drips while another scrapes, and all of them at once; bounds: at most 500
# attacking sockets and 20000 connects per attack, every wait with a deadline. A scrape
# fails when no whole 200 answer comes within 4 s. The latencies are printed as comments.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

copy_bins inflight probegen
cp "$BUILD/tests/http_attack" "$TMP/http_attack"
cp "$EXPORTER_STATE" "$TMP/state.txt"
netns_up || not_ok "a private network namespace"

"${IN_NS[@]}" "$TMP/inflight" serve --listen 127.0.0.1:9464 -- "$TMP/probegen" script "$TMP/state.txt" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/sv.out" '^gated' || not_ok "serve started probegen" "$(cat "$TMP/sv.err")"
pg=$(pgrep -P "$sv" | head -n 1)
bg_track "$pg"

SECS=8
# field NAME LINE: the number after NAME in an http_attack result line
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<<"$2"; }

# attack TAG CONNS ARGS...: runs http_attack ARGS in the namespace; checks every scrape
# succeeded, the scraper ran all along, and the attack held its sockets at full strength
attack_checks() {
	local tag=$1 conns=$2 secs=$3 r=$4
	echo "# $tag: $r"
	check_eq "$tag: every scrape answered whole within 4 s" "$(field failed "$r")" 0
	# one scrape every 200 ms, each waiting for the last: on a loaded machine they take longer,
	# but one a second at least shows the scraper ran all along
	check "$tag: the scraper ran all along ($(field scrapes "$r") scrapes)" \
		test "$(field scrapes "$r")" -ge "$secs"
	if [ "$conns" -gt 0 ]; then
		check "$tag: the attack ran at full strength (held $(field held_max "$r") of $conns)" \
			test "$(field held_max "$r")" -ge $((conns * 9 / 10))
	fi
	echo "# $tag: scrape latency p50 $(field p50_ms "$r") ms, p99 $(field p99_ms "$r") ms, max $(field max_ms "$r") ms"
}
attack() {
	local tag=$1 conns=$2 secs=${*: -1}
	shift 2
	attack_checks "$tag" "$conns" "$secs" "$(in_ns "$TMP/http_attack" -t 4000 "$@" 2>&1)"
}
# exporter_metric SERIES: its value in a fresh scrape (the whole series name, labels included)
exporter_metric() {
	in_ns curl -s --max-time 5 http://127.0.0.1:9464/metrics | awk -v s="$1" '$1 == s { print $2 }'
}

attack "no attack" 0 127.0.0.1 9464 idle 0 3
attack "300 idle sockets" 300 127.0.0.1 9464 idle 300 "$SECS"
attack "200 Slowloris drips (a header line a second)" 200 127.0.0.1 9464 drip 200 "$SECS"
check "... closed for the header deadline or the client's budget" \
	test "$(exporter_metric 'inflight_exporter_connections_closed_total{reason="client_limit"}')" -gt 0
attack "100 clients that never read" 100 127.0.0.1 9464 slowread 100 "$SECS"
attack "a flood of 300 reconnecting sockets" 300 -m 20000 127.0.0.1 9464 flood 300 "$SECS"

# the header deadline itself: one request line, then nothing; closed within 5 s (and the loop's
# 50 ms), counted once
before=$(exporter_metric 'inflight_exporter_connections_closed_total{reason="header_deadline"}')
t0=$(date +%s%N)
in_ns bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464 && printf "GET /metrics HTTP/1.1\r\n" >&3 &&
	timeout 15 cat <&3 >/dev/null'
ms=$((($(date +%s%N) - t0) / 1000000))
echo "# a connection that stopped after its request line was closed after $ms ms"
check "a half-sent request is closed at the header deadline (after $ms ms, 5 s to 9 s)" \
	test "$ms" -ge 5000 -a "$ms" -lt 9000
check_eq "... counted as header_deadline" \
	"$(exporter_metric 'inflight_exporter_connections_closed_total{reason="header_deadline"}')" $((before + 1))
attack "500 drips from 127.0.0.1, scrapes from 127.0.0.2" 500 -a 127.0.0.1 -s 127.0.0.2 \
	127.0.0.1 9464 drip 500 "$SECS"

# all at once, while serve's descriptors and memory are watched
fd0=$(ls "/proc/$sv/fd" | wc -l)
rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$sv/status")
i=0
for spec in "idle 300" "drip 200" "slowread 100" "flood 300"; do
	in_ns "$TMP/http_attack" -t 4000 -a 127.0.0.1 127.0.0.1 9464 $spec "$SECS" >"$TMP/all.$i" 2>&1 &
	bg_track $!
	i=$((i + 1))
done
fd_max=0
rss_max=0
for _ in $(seq $((SECS * 4))); do
	fd=$(ls "/proc/$sv/fd" 2>/dev/null | wc -l)
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$sv/status")
	[ "$fd" -gt "$fd_max" ] && fd_max=$fd
	[ "${rss:-0}" -gt "$rss_max" ] && rss_max=$rss
	sleep 0.25
done
all_done() { [ "$(cat "$TMP"/all.* 2>/dev/null | grep -c '^scrapes')" = 4 ]; }
wait_until 20 all_done || not_ok "the four attacks ended" "$(cat "$TMP"/all.*)"
for i in 0 1 2 3; do
	attack_checks "all at once, part $((i + 1))" 0 "$SECS" "$(cat "$TMP/all.$i")"
done
echo "# serve during the combined attack: descriptors $fd0 -> at most $fd_max, VmRSS $rss0 -> at most $rss_max KiB"
check "serve's descriptors stay bounded (at most $fd_max: 256 connections + its own $fd0)" \
	test "$fd_max" -le $((fd0 + 256 + 8))
check "serve's memory stays bounded (VmRSS grew by $((rss_max - rss0)) KiB, under 32 MiB)" \
	test $((rss_max - rss0)) -lt 32768
settled() { [ "$(exporter_metric inflight_exporter_connections)" -le 2 ]; }
check "once the attacks end, their connections are gone" wait_until 10 settled

body=$(in_ns curl -s --max-time 5 http://127.0.0.1:9464/metrics)
check_eq "the exposition is still exact after it all" \
	"$(metric "$body" "inflight_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2
kill -USR1 "$pg"
wait "$sv"
check_eq "serve ends with its command, status 0" "$?" 0
finish
