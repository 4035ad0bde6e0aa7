#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fleet monitoring: the Prometheus rules of deploy/ pass `promtool check
# rules` and their unit tests (`promtool test rules`); then a real Prometheus (Debian's 2.42,
# on loopback in a private network namespace, a temporary directory, bounded waits) scrapes
# two `inflight serve -b` exporters, one per host, while the reference prover runs the traced
# incident on the first (--permit-release after-synth --chan-cap 1: permits go back before
# the send, partitions pile up in chan_send) and the fix on the second (after-send), with the
# same work. InflightQueuePileUp must fire for the incident and never for the fix, no other
# alert may fire, and every query of the Grafana dashboard must parse and return data.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

RULES=$ROOT/deploy/prometheus/inflight-rules.yml
DASH=$ROOT/deploy/grafana/inflight-dashboard.json

# --- the rules: lint and unit tests ------------------------------------------------------
check "promtool check rules deploy/prometheus/inflight-rules.yml" promtool check rules "$RULES"
out=$(cd "$ROOT/deploy/prometheus" && promtool test rules inflight-rules.test.yml 2>&1)
check_eq "promtool test rules: every unit test passes" "$(tail -n 1 <<<"$out" | tr -d ' ')" SUCCESS

# --- the dashboard: well-formed -----------------------------------------------------------------
check "the dashboard is JSON" jq -e . "$DASH"
check_eq "... with a uid and a title" "$(jq -r '.uid + " / " + .title' "$DASH")" \
	"inflight-buffers / inflight: buffers in flight"
check_eq "... every panel has a query, a Prometheus datasource and a description" \
	"$(jq '[.panels[] | select(.type != "row") | select((.targets | length) == 0 or
		.datasource.type != "prometheus" or (.description | length) == 0)] | length' "$DASH")" 0
check_eq "... no panel query uses a variable other than \$instance and \$__rate_interval" \
	"$(jq -r '.panels[] | select(.type != "row") | .targets[].expr' "$DASH" |
		grep -o '\$[a-z_]*' | sort -u | tr '\n' ' ')" "\$__rate_interval \$instance "

# --- a real Prometheus, two hosts: the incident and the fix -----------------------------------------
copy_bins inflight prover
mkdir "$TMP/incident" "$TMP/fix" "$TMP/tsdb"
cp "$TMP/prover" "$TMP/incident/prover"
cp "$TMP/prover" "$TMP/fix/prover"
netns_up || not_ok "a private network namespace"
for v in incident:9464 fix:9465; do
	"${IN_NS[@]}" "$TMP/inflight" serve --listen "127.0.0.1:${v#*:}" --keep-exited 10m \
		-b "$TMP/${v%:*}/prover" >"$TMP/${v%:*}.serve.out" 2>"$TMP/${v%:*}.serve.err" &
	bg_track $!
	eval "serve_${v%:*}=$!"
done
wait_until 10 file_has "$TMP/incident.serve.err" '^inflight: serving' &&
	wait_until 10 file_has "$TMP/fix.serve.err" '^inflight: serving' ||
	not_ok "both exporters serve" "$(cat "$TMP"/*.serve.err)"

cat >"$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: inflight
    static_configs:
      - targets: ['127.0.0.1:9464']
        labels: { host: prover-01, variant: incident }
      - targets: ['127.0.0.1:9465']
        labels: { host: prover-02, variant: fix }
YML
"${IN_NS[@]}" prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address=127.0.0.1:9090 --log.level=warn >"$TMP/prom.log" 2>&1 &
prom=$!
bg_track "$prom"

api() { in_ns curl -sS --max-time 5 "http://127.0.0.1:9090/api/v1/$1" "${@:2}" 2>/dev/null; }
query() { api query -G --data-urlencode "query=$1"; }
# values QUERY: the result's values, one per line
values() { query "$1" | jq -r '.data.result[].value[1]' 2>/dev/null; }
both_up() { [ "$(values 'sum(up{job="inflight"})')" = 2 ]; }
wait_until 30 both_up || not_ok "Prometheus scrapes both exporters" "$(tail -n 5 "$TMP/prom.log")"
# (every alert and recording rule of the file, counted there)
check_eq "Prometheus loaded the rules" \
	"$(api rules | jq '[.data.groups[].rules[]] | length')" \
	"$(grep -cE '^ *- (alert|record):' "$RULES")"

# the same work on both hosts; the incident's partitions pile up for most of its run, well
# past the alert's 15 s (with 14 proofs the pile-up held above 16 for 13-14 s at a time)
common=(--pw 12 --jobs 4 --proofs 28 --log-n 16 --gpu-rounds 12 --chan-cap 1 --json)
"$TMP/incident/prover" "${common[@]}" --permit-release after-synth >"$TMP/incident.out" 2>&1 &
inc=$!
bg_track "$inc"
"$TMP/fix/prover" "${common[@]}" --permit-release after-send >"$TMP/fix.out" 2>&1 &
fix=$!
bg_track "$fix"
start=$SECONDS
firing() {
	api alerts | jq -e '[.data.alerts[] | select(.labels.alertname == "InflightQueuePileUp" and
		.labels.variant == "incident" and .state == "firing")] | length > 0' >/dev/null
}
if wait_until 120 firing; then
	ok "InflightQueuePileUp fires for the incident ($((SECONDS - start)) s into the run)"
else
	not_ok "InflightQueuePileUp fires for the incident" "$(api alerts)"
fi
alert=$(api alerts | jq -c '[.data.alerts[] | select(.labels.alertname == "InflightQueuePileUp")][0].labels')
check_eq "... naming the incident's binary and comm (joined from inflight_process_info)" \
	"$(jq -r '.binary + " " + .comm' <<<"$alert")" "$TMP/incident/prover prover"
check_eq "... for the incident's pid" "$(jq -r .pid <<<"$alert")" "$(pgrep -f "^$TMP/incident/prover" | head -n 1)"
wait "$inc"
check_eq "the incident's prover finishes (exit 0)" "$?" 0
wait "$fix"
check_eq "the fix's prover finishes (exit 0)" "$?" 0
summary() { grep '^{' "$TMP/$1.out" | jq -r "$2"; }
check_eq "same work on both: 28 proofs each, every H check passed" \
	"$(summary incident '"\(.proofs) \(.all_h_checks_passed)"') $(summary fix '"\(.proofs) \(.all_h_checks_passed)"')" \
	"28 true 28 true"
check_eq "... the same proofs (digest)" "$(summary incident .digest)" "$(summary fix .digest)"

# over the whole run (both exporters keep the exited processes for 10 minutes)
max_queue() { values "max_over_time(instance:inflight_queue_owners:sum{variant=\"$1\"}[10m])"; }
inc_max=$(max_queue incident)
fix_max=$(max_queue fix)
echo "# most work items waiting in chan_send + gpu_queue: incident $inc_max, fix $fix_max"
check "the incident piled up past the bound of 16 ($inc_max)" test "${inc_max:-0}" -gt 16
check "the fix never did ($fix_max: pw 12 + chan-cap 1)" test "${fix_max:-99}" -le 13
check_eq "InflightQueuePileUp was never pending or firing for the fix" \
	"$(query 'count_over_time(ALERTS{alertname="InflightQueuePileUp",variant="fix"}[10m])' |
		jq '.data.result | length')" 0
# (pending is allowed: on a loaded machine a scrape may miss its 1 s timeout, and
# InflightExporterDown waits 5 minutes before it fires)
check_eq "no other inflight alert ever fired" \
	"$(query 'count_over_time(ALERTS{alertname=~"Inflight.*",alertname!="InflightQueuePileUp",alertstate="firing"}[10m])' |
		jq -r '[.data.result[].metric.alertname] | unique | join(" ")')" ""
check "the incident's tracked peak is higher than the fix's" test \
	"$(values 'max(inflight_peak_bytes{variant="incident"})' | cut -d. -f1)" -gt \
	"$(values 'max(inflight_peak_bytes{variant="fix"})' | cut -d. -f1)"

# --- every query of the dashboard against this Prometheus ------------------------------------------
bad=""
n=0
while IFS= read -r expr; do
	q=${expr//\$instance/.*}
	q=${q//\$__rate_interval/1m}
	r=$(query "$q")
	n=$((n + 1))
	if [ "$(jq -r .status <<<"$r" 2>/dev/null)" != success ]; then
		bad="$bad [$expr: $(jq -r .error <<<"$r" 2>/dev/null)]"
	elif [ "$(jq '.data.result | length' <<<"$r")" = 0 ]; then
		bad="$bad [$expr: no data]"
	fi
done < <(jq -r '.panels[] | select(.type != "row") | .targets[].expr' "$DASH")
check_eq "all $n dashboard queries parse and return data" "$bad" ""
check_eq "the dashboard's host variable lists both exporters" \
	"$(api series -G --data-urlencode 'match[]=inflight_build_info' | jq -r '[.data[].instance] | sort | join(" ")')" \
	"127.0.0.1:9464 127.0.0.1:9465"
r=$(query "$(jq -r '.annotations.list[0].expr' "$DASH" | sed 's/\$instance/.*/')")
check_eq "the dashboard's alert annotations query parses" "$(jq -r .status <<<"$r")" success

kill -TERM "$serve_incident" "$serve_fix"
wait "$serve_incident"
check_eq "the incident's exporter ends cleanly" "$?" 0
wait "$serve_fix"
kill "$prom"
wait "$prom" 2>/dev/null
finish
