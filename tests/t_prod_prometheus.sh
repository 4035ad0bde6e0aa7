#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The exporter against a real Prometheus server: Debian's prometheus,
# started here on loopback in a private network namespace with a temporary configuration
# and storage, scrapes `inflight serve` tracing probegen held at a known state; the values
# are read back through Prometheus's HTTP API, including the fleet query of docs/production.md
# ("waiting per host"). Bounded: every wait has a deadline and everything started is killed.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
cp "$EXPORTER_STATE" "$TMP/state.txt"
netns_up || not_ok "a private network namespace"

"${IN_NS[@]}" "$TMP/inflight" serve --listen 127.0.0.1:9464 -- "$TMP/probegen" script "$TMP/state.txt" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/sv.out" '^gated' || not_ok "probegen at its gate" "$(cat "$TMP/sv.err")"
pg=$(pgrep -P "$sv" | head -n 1)
bg_track "$pg"

mkdir -p "$TMP/tsdb"
cat >"$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: inflight
    static_configs:
      - targets: ['127.0.0.1:9464']
        labels:
          host: prover-host-1
YML
"${IN_NS[@]}" prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address=127.0.0.1:9090 --log.level=warn >"$TMP/prom.log" 2>&1 &
prom=$!
bg_track "$prom"

# query PROMQL: the values of the result vector, one per line ("" when empty)
raw_query() {
	in_ns curl -sS --max-time 5 -G http://127.0.0.1:9090/api/v1/query \
		--data-urlencode "query=$1" 2>/dev/null
}
query() {
	raw_query "$1" | jq -r '.data.result[].value[1]' 2>/dev/null
}
scraped() { [ "$(query "inflight_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" = 2 ]; }
if wait_until 30 scraped; then
	ok "Prometheus scraped the exporter"
else
	not_ok "Prometheus scraped the exporter" "$(tail -n 5 "$TMP/prom.log")"
fi

check_eq "up" "$(query 'up{job="inflight"}')" 1
check_eq "big buffers in wait, this pid" \
	"$(query "inflight_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2
check_eq "their bytes" "$(query "inflight_buffer_bytes{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2097152
check_eq "huge in work" "$(query "inflight_buffers{pid=\"$pg\",class=\"huge\",stage=\"work\"}")" 1
check_eq "owners waiting or working, per host (the fleet query)" \
	"$(query 'sum by (host) (inflight_owners{stage=~"wait|work"})')" 2
check_match "... labelled with the host of the scrape config" \
	"$(raw_query 'sum by (host) (inflight_owners{stage=~"wait|work"})')" '"metric":\{"host":"prover-host-1"\}'
check_eq "bytes held per stage, summed over classes" \
	"$(query "sum by (stage) (inflight_buffer_bytes{pid=\"$pg\",stage=\"wait\"})")" 2097152
check_eq "tracked bytes" "$(query "inflight_tracked_bytes{pid=\"$pg\"}")" 2101348
check_eq "peak bytes" "$(query "inflight_peak_bytes{pid=\"$pg\"}")" 2101348
check_eq "stage events (a counter)" "$(query "inflight_events_total{pid=\"$pg\",probe=\"stage\"}")" 5
check_eq "rejected stage ids" "$(query "inflight_rejected_events_total{pid=\"$pg\",reason=\"bad_stage\"}")" 1
check_eq "a free of a buffer never allocated" \
	"$(query "inflight_violation_events_total{pid=\"$pg\",reason=\"double_free\"}")" 1
check_eq "dwell histogram: born left twice" \
	"$(query "inflight_stage_dwell_seconds_count{pid=\"$pg\",stage=\"born\"}")" 2
check_eq "dwell histogram: +Inf bucket agrees" \
	"$(query "inflight_stage_dwell_seconds_bucket{pid=\"$pg\",stage=\"born\",le=\"+Inf\"}")" 2
check_eq "dwell histogram: every born dwell under 2147 s" \
	"$(query "inflight_stage_dwell_seconds_bucket{pid=\"$pg\",stage=\"born\",le=\"2147.483648\"}")" 2
check_eq "histogram_quantile works on it (a number comes back)" \
	"$(query "histogram_quantile(0.5, inflight_stage_dwell_seconds_bucket{pid=\"$pg\",stage=\"born\"}) >= 0" | grep -c .)" 1
check_eq "counts exact" "$(query "inflight_counts_exact{pid=\"$pg\"}")" 1

kill -USR1 "$pg"
wait "$sv"
check_eq "serve ends with its command" "$?" 0
kill "$prom"
wait "$prom" 2>/dev/null
finish
