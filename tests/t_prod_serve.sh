#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight serve` as a program: loopback by default, one line and
# exit 2 for a bad --listen, exit 11 for a port in use or a privileged port without the
# capability, a privileged port bound before the capabilities go, plain HTTP behaviour
# (/metrics, 404, 405, HEAD, OpenMetrics negotiation), libmicrohttpd loaded at run time with
# a line naming its package when it is missing, and build/inflight needing libc alone.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
cp "$EXPORTER_STATE" "$TMP/state.txt"
chmod 644 "$TMP/state.txt"

# --- libc alone -----------------------------------------------------------------------
check_eq "build/inflight needs libc alone (readelf NEEDED)" \
	"$(readelf -d "$INFLIGHT_BIN" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')" "libc.so.6 "
check_eq "ldd: libc, the loader and the vDSO, nothing else" \
	"$(ldd "$INFLIGHT_BIN" | awk '{print $1}' | grep -v -e linux-vdso -e ld-linux -e '^libc\.so\.6$' | wc -l)" 0

# --- bad --listen values ----------------------------------------------------------------
for v in 9464 localhost:9464 127.0.0.1:65536 127.0.0.1:-1 1.2.3.4.5:80 '[::1]9464' ::1:9464 ''; do
	"$TMP/inflight" serve --listen "$v" -p 1 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -qF -- "--listen '$v'" "$TMP/err"; then
		ok "--listen '$v': one line, exit 2"
	else
		not_ok "--listen '$v': one line, exit 2" "rc $rc: $(cat "$TMP/err")"
	fi
done

# --- in a private network namespace: the default address, HTTP, port in use --------------
netns_up || not_ok "a private network namespace"
"${IN_NS[@]}" "$TMP/inflight" serve -- "$TMP/probegen" script "$TMP/state.txt" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/sv.out" '^gated' || not_ok "serve started probegen" "$(cat "$TMP/sv.err")"
check_match "default address: loopback 127.0.0.1:9464" "$(cat "$TMP/sv.err")" \
	"^inflight: serving http://127\.0\.0\.1:9464/metrics"
check_eq "the only listening socket in the namespace is 127.0.0.1:9464" \
	"$(in_ns awk 'NR > 1 && $4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 | tr '\n' ' ')" \
	"0100007F:24F8 "
pg=$(pgrep -P "$sv" | head -n 1)
bg_track "$pg"

body=$(in_ns curl -sS -D "$TMP/hdr" http://127.0.0.1:9464/metrics)
check_match "GET /metrics: 200" "$(head -n 1 "$TMP/hdr")" "^HTTP/1.1 200"
check_match "GET /metrics: Prometheus 0.0.4 text" "$(cat "$TMP/hdr")" \
	"Content-Type: text/plain; version=0.0.4"
check_eq "big buffers waiting" "$(metric "$body" "inflight_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2
check_eq "their bytes" \
	"$(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2097152
check_eq "huge buffers at work" "$(metric "$body" "inflight_buffers{pid=\"$pg\",class=\"huge\",stage=\"work\"}")" 1
check_eq "small buffer of no owner" \
	"$(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"small\",stage=\"none\"}")" 100
check_eq "owners waiting" "$(metric "$body" "inflight_owners{pid=\"$pg\",stage=\"wait\"}")" 1
check_eq "owners born: an explicit 0" "$(metric "$body" "inflight_owners{pid=\"$pg\",stage=\"born\"}")" 0
check_eq "tracked bytes" "$(metric "$body" "inflight_tracked_bytes{pid=\"$pg\"}")" 2101348
check_eq "peak bytes" "$(metric "$body" "inflight_peak_bytes{pid=\"$pg\"}")" 2101348
check_eq "the peak's composition: big in wait" \
	"$(metric "$body" "inflight_peak_composition_bytes{pid=\"$pg\",class=\"big\",stage=\"wait\"}") $(metric "$body" "inflight_peak_composition_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" \
	"2097152 2"
check_eq "the peak's composition: small of no owner, owners in wait" \
	"$(metric "$body" "inflight_peak_composition_bytes{pid=\"$pg\",class=\"small\",stage=\"none\"}") $(metric "$body" "inflight_peak_owners{pid=\"$pg\",stage=\"wait\"}")" \
	"100 1"
# the libbpf linked in, not the headers of libbpf-dev (1.1) in /usr/include/bpf
pinned=$(sed -n 's/^LIBBPF_VERSION := \([0-9]*\.[0-9]*\).*/\1/p' "$ROOT/bpf/libbpf.mk")
check_match "inflight_build_info names the pinned libbpf it links ($pinned)" "$body" \
	"^inflight_build_info\{version=\"[0-9.]+\",contract=\"1\",libbpf=\"${pinned//./\\.}\"\} 1$"
check_match "inflight_process_info names the process's command line" "$body" \
	"^inflight_process_info\{pid=\"$pg\",binary=\"[^\"]*\",comm=\"probegen\",command=\"$TMP/probegen script $TMP/state\.txt\",start_time=\"[0-9]+\"\} 1$"
check_eq "alloc events" "$(metric "$body" "inflight_events_total{pid=\"$pg\",probe=\"buf_alloc\"}")" 5
check_eq "stage events" "$(metric "$body" "inflight_events_total{pid=\"$pg\",probe=\"stage\"}")" 5
check_eq "rejected class ids" \
	"$(metric "$body" "inflight_rejected_events_total{pid=\"$pg\",reason=\"bad_class\"}")" 1
check_eq "rejected stage ids" \
	"$(metric "$body" "inflight_rejected_events_total{pid=\"$pg\",reason=\"bad_stage\"}")" 1
check_eq "a free of a buffer never allocated: a violation (traced from its start)" \
	"$(metric "$body" "inflight_violation_events_total{pid=\"$pg\",reason=\"double_free\"}")" 1
check_eq "dwell: born left twice" \
	"$(metric "$body" "inflight_stage_dwell_seconds_count{pid=\"$pg\",stage=\"born\"}")" 2
check_eq "exact" "$(metric "$body" "inflight_counts_exact{pid=\"$pg\"}")" 1
rss=$(metric "$body" "inflight_rss_bytes{pid=\"$pg\"}")
untracked=$(metric "$body" "inflight_untracked_bytes{pid=\"$pg\"}")
check "RSS reported (> 0)" test "${rss:-0}" -gt 0
check_eq "untracked = RSS - tracked (or 0)" "$untracked" \
	"$(( rss > 2101348 ? rss - 2101348 : 0 ))"

in_ns curl -sS -o "$TMP/om" -D "$TMP/omhdr" \
	-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	http://127.0.0.1:9464/metrics
check_match "OpenMetrics when asked for" "$(cat "$TMP/omhdr")" \
	"Content-Type: application/openmetrics-text; version=1.0.0"
check_eq "OpenMetrics ends with # EOF" "$(tail -n 1 "$TMP/om")" "# EOF"
check_match "OpenMetrics counter family named without _total" "$(cat "$TMP/om")" \
	"^# TYPE inflight_events counter"
code() { in_ns curl -s -o /dev/null -w '%{http_code}' "$@"; }
check_eq "GET /: 200" "$(code http://127.0.0.1:9464/)" 200
check_eq "GET /nope: 404" "$(code http://127.0.0.1:9464/nope)" 404
check_eq "POST /metrics: 405" "$(code -X POST -d x=1 http://127.0.0.1:9464/metrics)" 405
check_eq "HEAD /metrics: 200, no body" "$(in_ns curl -s -I http://127.0.0.1:9464/metrics | head -n 1 | tr -d '\r')" "HTTP/1.1 200 OK"

# a second exporter on the same port
in_ns "$TMP/inflight" serve -p "$pg" >"$TMP/out2" 2>"$TMP/err2"
check_eq "port in use: exit 11" "$?" 11
check_eq "port in use: one line" "$(wc -l <"$TMP/err2")" 1
check_match "port in use: says so" "$(cat "$TMP/err2")" "127.0.0.1:9464: Address already in use"

kill -USR1 "$pg"
wait "$sv"
check_eq "serve ends with the command, with its status" "$?" 0
check_match "serve prints the final summary" "$(cat "$TMP/sv.out")" \
	"events: buf_alloc 5, buf_free 5, stage 7$"

# --- a privileged port: bound before the capabilities are dropped ---------------------------
"$TMP/probegen" spin 20000 >/dev/null &
spin=$!
bg_track "$spin"
nobody_argv "$ATTACH_CAPS"
in_ns "${NOBODY[@]}" "$TMP/inflight" serve --listen 127.0.0.1:80 -p "$spin" >"$TMP/out3" 2>"$TMP/err3"
check_eq "port 80 without CAP_NET_BIND_SERVICE: exit 11" "$?" 11
check_match "... one line naming CAP_NET_BIND_SERVICE" "$(cat "$TMP/err3")" \
	"127.0.0.1:80: Permission denied; .*CAP_NET_BIND_SERVICE"
nobody_argv "$ATTACH_CAPS,+net_bind_service,+sys_ptrace"
"${IN_NS[@]}" "${NOBODY[@]}" "$TMP/inflight" serve --listen 127.0.0.1:80 -p "$spin" \
	>"$TMP/out4" 2>"$TMP/err4" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/err4" "serving http://127.0.0.1:80/" || not_ok "serve on port 80" "$(cat "$TMP/err4")"
check_eq "serving port 80 with no capability left (CapEff 0)" "$(cap_eff "$sv")" 0000000000000000
body=$(in_ns curl -sS http://127.0.0.1:80/metrics)
check "port 80 answers with the spinning process's stage events" \
	test "$(metric "$body" "inflight_events_total{pid=\"$spin\",probe=\"stage\"}")" -gt 0
kill -TERM "$sv"
wait "$sv"
check_eq "SIGTERM ends serve -p with status 0" "$?" 0

# every interface: only when asked, and said out loud
"${IN_NS[@]}" "$TMP/inflight" serve --listen :9465 -p "$spin" >"$TMP/out6" 2>"$TMP/err6" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/err6" "serving http://" || not_ok "serve on :9465" "$(cat "$TMP/err6")"
check_match "--listen :PORT binds every IPv4 interface, with a warning" "$(cat "$TMP/err6")" \
	"warning: serving on 0\.0\.0\.0:9465: reachable from other hosts"
check_eq "... listening on 0.0.0.0:9465" \
	"$(in_ns awk 'NR > 1 && $4 == "0A" { print $2 }' /proc/net/tcp | grep -c '^00000000:24F9$')" 1
kill -TERM "$sv"
wait "$sv"
kill "$spin"

# --- libmicrohttpd missing: one line naming the package --------------------------------------
lib=$(ldconfig -p | awk '/libmicrohttpd\.so\.12 .*x86-64/ { print $NF; exit }')
check "libmicrohttpd.so.12 is installed here" test -n "$lib"
unshare -m sh -c "mount --bind /dev/null '$lib' && exec '$TMP/inflight' serve --listen 127.0.0.1:0 -p $$" \
	>"$TMP/out5" 2>"$TMP/err5"
rc=$?
check_eq "without libmicrohttpd: exit 1" "$rc" 1
check_eq "... one line" "$(wc -l <"$TMP/err5")" 1
check_match "... naming the package libmicrohttpd12" "$(cat "$TMP/err5")" \
	"cannot load libmicrohttpd\.so\.12: .*install the package libmicrohttpd12"

finish
