# SPDX-License-Identifier: BSD-2-Clause
# Section offline_memory: the peak RSS and the time of `inflight report` (each
# format) and `inflight compare` on a multi-GiB recording, which the streaming reader must
# handle in memory bounded by the processes, not the events. The recording is synthetic
# (tests/record/rec_gen: a prover-like run, its kernel accounting modelled exactly), so the
# report's replay check must find no mismatch. BENCH_OFFLINE_GIB (default 4) sets its size.
OM_GIB=${BENCH_OFFLINE_GIB:-4}

# om_run CONFIG CMD...: runs CMD under measure, records its peak RSS and times
om_run() {
	local cfg=$1 line
	shift
	"$BENCH/measure" "$@" >"$TMPB/om.out" 2>"$TMPB/om.err"
	line=$(grep -m 1 '^measure ' "$TMPB/om.err")
	if [ -z "$line" ] || [ "$(kv status "$line")" != 0 ]; then
		note offline_memory "$cfg: failed ($(grep -v '^measure ' "$TMPB/om.err" | tail -n 2 | tr '\n' ' '))"
		return 1
	fi
	record offline_memory "$cfg" 1 1 maxrss_kib "$(kv maxrss_kib "$line")"
	record offline_memory "$cfg" 1 1 wall_s "$(kv wall_s "$line")"
	record offline_memory "$cfg" 1 1 cpu_s "$(calc "$(kv user_s "$line") + $(kv sys_s "$line")")"
}

offline_memory() {
	local rec=$TMPB/om.infl gen fmt out events
	if ! gen=$("$BUILD/tests/rec_gen" "$rec" "${OM_GIB}G" 2>&1); then
		note offline_memory "rec_gen failed: $gen"
		return 0
	fi
	events=$(printf '%s\n' "$gen" | sed -n 's/.* \([0-9]*\) events.*/\1/p')
	record offline_memory recording 1 1 file_bytes "$(stat -c %s "$rec")"
	record offline_memory recording 1 1 events "$events"
	for fmt in json text svg html chrome; do
		out=$TMPB/om.$fmt
		om_run "report_$fmt" "$INFLIGHT" report "$rec" --format "$fmt" -o "$out" &&
			record offline_memory "report_$fmt" 1 1 output_bytes "$(stat -c %s "$out")"
		if [ "$fmt" = json ]; then
			record offline_memory report_json 1 1 check_mismatches \
				"$(grep -o '"mismatches":[0-9]*' "$out" | head -n 1 | cut -d: -f2)"
		fi
		rm -f "$out"
	done
	# both sides read the whole file: the same recording twice
	om_run compare "$INFLIGHT" compare "$rec" "$rec" -o "$TMPB/om.cmp" &&
		record offline_memory compare 1 1 output_bytes "$(stat -c %s "$TMPB/om.cmp")"
	rm -f "$rec" "$TMPB/om.cmp"
}
