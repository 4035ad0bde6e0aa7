#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# One process, several images, each with a contract and names note of its own and the same
# ids (tests/images: an application and libraries in C, C++ and Rust, linked or loaded with
# dlopen): each image's classes and stages are counted apart, in slots of their own, never
# merged by id. Proves, with exact numbers (tests/images/expect.sh, from gpu_lib.h's
# sequence):
#   - a library's class 0 is not the application's class 0: the peak and its composition,
#     the lifetime per class and the dwell per stage name every image's own classes and
#     stages, for a library linked (DT_NEEDED), loaded with dlopen, compiled as C++ (probe
#     sites in COMDAT groups) and built by Rust as a cdylib;
#   - an owner is the process's: the application's item, moved into a library's stage,
#     takes the application's buffers and the library's along (the peak lies in lib1's
#     `kernel`, or lib2's `upload`, holding input and output too);
#   - a name shown by two slots is qualified LABEL:NAME with the image's file name
#     (libgpu.so:kbuf, libaux.so:kbuf, ...), a unique declared name is not;
#   - an image without a names note claims the ids its sites pass as constants, named
#     LABEL:cls<ID> / LABEL:stage<ID> by its local ids (libplain.so:cls0, ...);
#   - entry and terminal flags are each image's own: every item starts at the app's `read`
#     and ends at its `done`, nothing unmatched, nothing left, exact;
# in the JSON summary (by both attach mechanisms), in the text summary, in a recording's
# report and in compare, in Prometheus labels, in `inflight list --json` of each image, and
# in `inflight list PID` of a process that maps them all.
# Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
source "$ROOT/tests/images/expect.sh"
INFLIGHT=$BUILD/inflight
I=$BUILD/tests/images
needs_root
command -v jq >/dev/null || skip_all "needs jq"
ROWS="c-linked c-dlopen cxx rust two-libs plain provider"
for r in $ROWS; do
	[ -x "$I/$r/app" ] || { not_ok "built: $I/$r/app" "run make tests"; finish; }
done

# the row's command line, 5 items, in ${cmd[@]}
row_cmd() { # ROW
	local d=$I/$1
	cmd=("$d/app" --items 5)
	case $1 in
	c-dlopen) cmd+=(--lib "$d/libgpu.so") ;;
	two-libs) cmd+=(--lib2 "$d/libaux.so") ;;
	plain) cmd+=(--lib2 "$d/libplain.so") ;;
	esac
}

# ROW: traced under --json; its projected summary in $got, its output in $out, exit in $rc
run_json() {
	rm -f "$TMP/json"
	row_cmd "$1"
	"$INFLIGHT" --json -o "$TMP/json" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(grep '"type":"summary"' "$TMP/json" | images_project)
	out=$(cat "$TMP/out")
}

# ROW: traced with the text summary; everything it printed in $text, exit in $rc
run_text() {
	row_cmd "$1"
	text=$("$INFLIGHT" -- "${cmd[@]}" 2>&1)
	rc=$?
}

declare -A what=(
	[c-linked]="a linked library (DT_NEEDED)"
	[c-dlopen]="a library loaded with dlopen"
	[cxx]="a C++ library (sites in COMDAT groups)"
	[rust]="a Rust cdylib"
	[two-libs]="two libraries with the same ids and colliding names"
	[plain]="a library without a names note beside one with"
	[provider]="a library of another provider (myapp) than the application's"
)
for r in $ROWS; do
	run_json "$r"
	check_eq "$r: ${what[$r]}: every image's classes and stages apart, counted exactly" \
		"$rc $got $out" "0 $(images_expect "$r" 5) $(images_output "$r" 5)"
done

# by the other attach mechanism too (perf-event uprobes: one per site, a cookie each)
for mech in multi perf; do
	INFLIGHT_ATTACH=$mech run_json two-libs
	check_eq "two-libs, attached by $mech: the same exact figures" "$rc $got" \
		"0 $(images_expect two-libs 5)"
done

# -b: the application and its libraries binary-wide, two processes started after the attach:
# each exact, the same slots for both (a claim is the image's, not the process's)
d=$I/two-libs
"$INFLIGHT" --json -o "$TMP/b.json" -b "$d/app" -b "$d/libgpu.so" -b "$d/libaux.so" \
	>/dev/null 2>"$TMP/b.err" &
ipid=$!
bg_track "$ipid"
if wait_until 30 file_has "$TMP/b.err" '^inflight: tracing'; then
	"$d/app" --items 5 --lib2 "$d/libaux.so" >/dev/null && "$d/app" --items 5 \
		--lib2 "$d/libaux.so" >/dev/null
	prc=$?
	kill -INT "$ipid"
	wait "$ipid"
	rc=$?
	got=$(grep '"type":"summary"' "$TMP/b.json" | images_project)
	check_eq "-b APP -b LIB -b LIB2: two later processes, each exact under the same names" \
		"$rc $prc $got" "0 0 $(images_expect two-libs 5 | jq -cS '. + .')"
else
	not_ok "-b APP -b LIB -b LIB2: inflight started" "$(cat "$TMP/b.err")"
fi
"$INFLIGHT" -b "$d/app" -b "$TMP/no-such.so" >"$TMP/out" 2>"$TMP/err"
check_eq "-b with a library that is not there: refused (exit 12), one line naming it" \
	"$? $(wc -l <"$TMP/err") $(grep -c "no-such.so: No such file" "$TMP/err")" "12 1 1"

# the text summary shows the same names: lines of $text matching an extended regex
lines() { printf '%s\n' "$text" | grep -cE -- "$1"; }
run_text two-libs
check_eq "two-libs text: the peak in libaux.so's upload, holding all 6 buffers" \
	"$rc $(lines '^  libaux\.so:upload +1 +6 +745 KiB')" "0 1"
check_eq "two-libs text: both libraries' kbuf, qualified" \
	"$(lines '^  libgpu\.so:kbuf +5 allocs') $(lines '^  libaux\.so:kbuf +5 allocs')" "1 1"
check_eq "two-libs text: both libraries' upload and fin, qualified" \
	"$(lines '^  lib(gpu|aux)\.so:(upload|fin): 5 left')" 4
check_eq "two-libs text: unique names unqualified (tiles, weights, merge, kernel)" \
	"$(lines '^  (tiles|weights) +5 allocs|^  (merge|kernel): 5 left')" 4
run_text plain
check_eq "plain text: the unnamed library's classes and stages by their local ids" \
	"$rc $(lines '^  libplain\.so:cls[01] +5 allocs') $(lines '^  libplain\.so:stage[01]: 5 left')" \
	"0 2 2"
run_text c-linked
check_eq "c-linked text: one library, no name qualified" \
	"$rc $(lines '^  (input|output|weights|kbuf) +5 allocs') $(lines 'libgpu\.so:')" "0 4 0"

# the live tables (to a pipe: plain lines; the last, once both libraries are attached): a
# qualified name cut to its column keeps its own name and what it can of the image's,
# without "lib" and ".so"
d=$I/two-libs
"$INFLIGHT" -i 10ms --wide -- "$d/app" --items 2000 --lib2 "$d/libaux.so" >"$TMP/live.out" 2>&1
rc=$?
check_eq "live tables: both libraries' kbuf told apart in 10 columns (gpu:kbuf, aux:kbuf)" \
	"$rc $(grep -E '^stage +owners +bufs +bytes' "$TMP/live.out" | tail -n 1 | grep -oE '(gpu|aux):kbuf' |
		sort | tr '\n' ' ')" "0 aux:kbuf gpu:kbuf "

# a recording's report names and counts the same (a report has no lifetime per class)
for r in two-libs plain; do
	rm -f "$TMP/rec.infl"
	row_cmd "$r"
	"$INFLIGHT" record -o "$TMP/rec.infl" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$("$INFLIGHT" report "$TMP/rec.infl" --format json | images_project |
		jq -cS 'map(del(.lifetime))')
	check_eq "$r recorded: the report's figures under the same names" "$rc $got" \
		"0 $(images_expect "$r" 5 | jq -cS 'map(del(.lifetime))')"
done

# compare matches two runs by the qualified names: every figure of each name equal
rec_two() { # FILE
	row_cmd two-libs
	"$INFLIGHT" record -o "$1" -- "${cmd[@]}" >/dev/null 2>&1
}
rec_two "$TMP/a.infl" && rec_two "$TMP/b.infl"
cmp=$("$INFLIGHT" compare --json "$TMP/a.infl" "$TMP/b.infl")
check_eq "compare: the qualified classes and stages, matched by name, peaks equal" \
	"$(jq -c '[.metrics[] | select(.group == "peak per class (each its own)" or
		.group == "at the peak, bytes by stage") | select(.name | test(":")) |
		"\(.name)=\(.a)/\(.b)"] | sort' <<<"$cmp")" \
	'["libaux.so:fin=0/0","libaux.so:kbuf=71680/71680","libaux.so:upload=762880/762880","libgpu.so:fin=0/0","libgpu.so:kbuf=71680/71680","libgpu.so:upload=0/0"]'

# every renderer names them alike (and stays well-formed with a colon in a name)
for f in csv chrome folded svg html; do
	"$INFLIGHT" report "$TMP/a.infl" --format "$f" -o "$TMP/a.$f" >/dev/null 2>&1
	rc=$?
	check_eq "report --format $f: both libraries' kbuf under their qualified names" \
		"$rc $(grep -c 'libgpu\.so:kbuf' "$TMP/a.$f" | sed 's/^[1-9][0-9]*$/some/') $(grep -c 'libaux\.so:kbuf' "$TMP/a.$f" | sed 's/^[1-9][0-9]*$/some/')" \
		"0 some some"
done
check "svg: well-formed XML" xmllint --noout "$TMP/a.svg"
check_eq "chrome: a trace" "$(jq -e '.traceEvents | length > 0' "$TMP/a.chrome")" true

# a process holding all three images: serve labels by the qualified names, list PID shows
# every image's contract and the names they are traced under
d=$I/two-libs
port=$((20000 + RANDOM % 20000))
rm -f "$TMP/hold.fifo"
mkfifo "$TMP/hold.fifo"
"$INFLIGHT" serve --listen "127.0.0.1:$port" -- "$d/app" --items 5 --lib2 "$d/libaux.so" \
	--hold yes <"$TMP/hold.fifo" >"$TMP/serve.out" 2>"$TMP/serve.err" &
spid=$!
bg_track "$spid"
exec 7>"$TMP/hold.fifo"
if wait_until 30 file_has "$TMP/serve.out" '^holding'; then
	curl -s "http://127.0.0.1:$port/metrics" >"$TMP/metrics"
	check_eq "serve: allocations per class under the qualified names, exactly" \
		"$(grep -E '^inflight_allocs_total\{.*class="(libgpu\.so|libaux\.so):kbuf"' \
			"$TMP/metrics" | sed -E 's/.*class="([^"]+)".* ([0-9]+)$/\1=\2/' | sort | tr '\n' ' ')" \
		"libaux.so:kbuf=5 libgpu.so:kbuf=5 "
	apid=$(pgrep -f "^$d/app --items 5 --lib2" | head -n 1)
	listed=$("$INFLIGHT" list --json "$apid" 2>"$TMP/list.err")
	rc=$?
	check_eq "list PID: both libraries' contracts, each with its own names" \
		"$rc $(jq -c '[.libraries[] | (.binary | sub(".*/"; "")) + "=" +
			([.names.classes[].name] | join(","))] | sort' <<<"$listed")" \
		'0 ["libaux.so=tiles,kbuf","libgpu.so=weights,kbuf"]'
	# (in the order of the process's mappings, which may not be the order a trace saw them
	# loaded in: the slots may differ, the names do not)
	check_eq "list PID: the names traced together, as the trace shows them" \
		"$(jq -c '.traced_names | map_values(sort)' <<<"$listed")" \
		'{"classes":["input","libaux.so:kbuf","libgpu.so:kbuf","output","tiles","weights"],"stages":["done","gpu","kernel","libaux.so:fin","libaux.so:upload","libgpu.so:fin","libgpu.so:upload","merge","read"]}'
else
	not_ok "serve: the application holds under inflight" "$(cat "$TMP/serve.err")"
fi
echo >&7
exec 7>&-
wait "$spid"
check_eq "serve: ends with its command" "$?" 0

# each image's own names note, as list reports it
for img in c-linked/app c-linked/libgpu.so c-dlopen/libgpu.so cxx/libgpu_cxx.so \
	rust/libgpu_rs.so two-libs/libgpu.so two-libs/libaux.so plain/libgpu.so plain/libplain.so; do
	listed=$("$INFLIGHT" list --json "$I/$img" 2>"$TMP/err")
	rc=$?
	check_eq "list $img: its contract complete and its own names" \
		"$rc $(jq -c .contract.complete <<<"$listed") $(images_project_names <<<"$listed")" \
		"0 true $(images_names "$(basename "$img")")"
done
wait_detached
finish
