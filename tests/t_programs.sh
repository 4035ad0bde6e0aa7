#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The program matrix: the example programs of probes/examples (C, C++, Rust; see
# docs/programs.md) built every way tests/programs/tests.mk builds them, each traced by the
# real inflight under `-- CMD`, `-p PID` (attached while the program holds its buffers, so
# the late-attach accounting applies) and `-b PATH` (started after the attach), its --json
# summary compared exactly with the known answers of tests/programs/expect.sh. Rows the
# tool must refuse are checked for a plain refusal. A row the tool cannot do today fails
# here, with what happened: that is the point. Ends with the matrix as a table. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/programs/expect.sh"
INFLIGHT=$BUILD/inflight
P=$BUILD/tests/programs
FACTS=$ROOT/tests/programs/elf_facts.py
WITNESS=$P/sema_witness
JOBS=${PROGRAMS_JOBS:-4} # rows at once: the kernel serializes uprobe (un)registration anyway
needs_root
command -v jq >/dev/null || skip_all "needs jq"

# ROW ELF ORIGIN N T W BUILD [PROVIDER]
#   ELF: where the probes are: example, or lib (libexample.so: -b traces it; `needs`: the
#   program links it, `dlopen`: loads it with --lib); ORIGIN: own (built with
#   probes/inflight_probes.h or probes/rust: its ELF facts are asserted) or foreign (the
#   dtrace path, a naive crate: its facts are evidence). N items, T threads, W workers.
#   BUILD: what the probes' ELF file must show of its build (tests/programs/elf_facts.py
#   build, spaces as ':'), so that a row tests what its name says. PROVIDER: the one its
#   names note declares and its probes use (default prover): inflight traces that one.
ROWS=(
	"c-bfd-O2 example own 6 1 0 pie:dynamic:symtab:bfd"
	"c-bfd-O0 example own 6 1 0 pie:dynamic:symtab:bfd"
	"c-inline-sites example own 6 1 0 pie:dynamic:symtab:bfd"
	"c-bfd-nopie example own 6 1 0 exec:dynamic:symtab:bfd"
	"c-gold example own 6 1 0 pie:dynamic:symtab:gold"
	"c-lld example own 6 1 0 pie:dynamic:symtab:lld"
	"c-mold example own 6 1 0 pie:dynamic:symtab:mold"
	"c-static example own 6 1 0 exec:static:symtab:bfd"
	"c-lld-static example own 6 1 0 exec:static:symtab:lld"
	"c-stripped example own 6 1 0 pie:dynamic:stripped:bfd"
	"c-clang example own 6 1 0 pie:dynamic:symtab:bfd"
	"cxx-g++ example own 6 1 0 pie:dynamic:symtab:bfd"
	"cxx-clang++ example own 6 1 0 pie:dynamic:symtab:bfd"
	"c-gc-bfd example own 6 1 0 pie:dynamic:symtab:bfd"
	"c-gc-gold example own 6 1 0 pie:dynamic:symtab:gold"
	"c-gc-lld example own 6 1 0 pie:dynamic:symtab:lld"
	"c-gc-mold example own 6 1 0 pie:dynamic:symtab:mold"
	"c-threads example own 8 3 0 pie:dynamic:symtab:bfd"
	"c-workers example own 6 2 2 pie:dynamic:symtab:bfd"
	"so-needed needs own 6 1 0 dyn:dynamic:symtab:bfd"
	"so-dlopen dlopen own 6 1 0 dyn:dynamic:symtab:bfd"
	"sdt example foreign 6 1 0 pie:dynamic:symtab:bfd"
	"sdt-lld example foreign 6 1 0 pie:dynamic:symtab:lld"
	"sdt-lld-gc example foreign 6 1 0 pie:dynamic:symtab:lld"
	"sdt-mold example foreign 6 1 0 pie:dynamic:symtab:mold"
	"rust163-release example own 6 1 0 pie:dynamic:symtab:bfd"
	"rust163-debug example own 6 1 0 pie:dynamic:symtab:bfd"
	"rust163-release-nogc example own 6 1 0 pie:dynamic:symtab:bfd"
	"rust163-debug-nogc example own 6 1 0 pie:dynamic:symtab:bfd"
	"rust195-release example own 6 1 0 pie:dynamic:symtab:lld"
	"rust195-debug example own 6 1 0 pie:dynamic:symtab:lld"
	"rust195-release-nogc example own 6 1 0 pie:dynamic:symtab:lld"
	"rust195-debug-nogc example own 6 1 0 pie:dynamic:symtab:lld"
	"rust195-threads example own 8 3 0 pie:dynamic:symtab:lld"
	"rust195-workers example own 6 2 2 pie:dynamic:symtab:lld"
	"rust195-naive example foreign 6 1 0 pie:dynamic:symtab:lld"
	"myapp example own 6 1 0 pie:dynamic:symtab:bfd myapp"
)
# ROW BUILD WHY: binaries the tool must refuse, in one line naming WHY (an extended regex),
# with exit 5 (the contract is not there in a form it can trace)
REFUSED=(
	"sdt-m32 elf32:pie:dynamic:symtab:bfd 32-bit"
	"sdt-note-myapp elf64:pie:dynamic:symtab:bfd provider myapp"
	"nosema elf64:pie:dynamic:symtab:bfd semaphore"
)

# ---- results: each row writes "ok|DESC", "not ok|DESC|WHY" or "skip|DESC|WHY" lines to
# its own file, then "#" lines of evidence; rows run in parallel, are reported in order ----
res() { printf '%s|%s|%s\n' "$1" "$2" "${3:-}" >>"$RES"; }
evidence() { sed 's/^/#   /' >>"$RES"; }
cell() { printf '%s\n' "$1" >>"$CELLS"; } # the row's entry in the final table

# waits up to 30 s for a line matching REGEX in FILE; gives up early when PID is gone
wait_line() {
	for _ in $(seq 3000); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && { grep -qE -- "$2" "$1"; return; }
		sleep 0.01
	done
	return 1
}

# what went wrong with a run that should have traced: one short reason for the table
diagnose() { # RC ERRFILE ACTUAL EXPECTED
	local rc=$1 err=$2 actual=$3 expected=$4
	if [ "$rc" != 0 ]; then # the message without "inflight: PATH: " and the hint
		echo "exit $rc: $(head -1 "$err" | sed -E 's/^inflight: ([^ ]*\/[^ ]*: )?//; s/;.*//' |
			cut -c1-70)"
	elif [ -z "$actual" ] || [ "$actual" = "[]" ]; then
		echo "no process traced"
	elif [ "$(jq length <<<"$actual")" != "$(jq length <<<"$expected")" ]; then
		echo "$(jq length <<<"$actual") of $(jq length <<<"$expected") processes traced"
	else
		echo "numbers differ"
	fi
}

# compares one run; DESC MODE RC ERR SUMMARY_FILE EXPECTED [OUTPUT WANT_OUTPUT]
judge() {
	local desc=$1 mode=$2 rc=$3 err=$4 sum=$5 expected=$6 out=${7:-} want=${8:-}
	local actual why
	actual=$(grep '"type":"summary"' "$sum" 2>/dev/null | tail -1 | project 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$actual" = "$expected" ] && [ "$out" = "$want" ]; then
		res ok "$desc"
		cell "$mode:pass"
		return
	fi
	why=$(diagnose "$rc" "$err" "$actual" "$expected")
	[ "$out" != "$want" ] && [ "$why" = "numbers differ" ] && why="program said '$out'"
	res "not ok" "$desc" "$why"
	cell "$mode:FAIL($why)"
	{
		[ -s "$err" ] && echo "stderr: $(head -3 "$err" | tr '\n' ' ')"
		if [ -n "$actual" ] && [ "$actual" != "[]" ] && [ "$actual" != "$expected" ]; then
			echo "want events $(jq -c 'map(.events)' <<<"$expected")"
			echo "got  events $(jq -c 'map(.events)' <<<"$actual")"
			[ "$(jq length <<<"$actual")" = "$(jq length <<<"$expected")" ] &&
				diff <(jq -S . <<<"$expected") <(jq -S . <<<"$actual") | grep '^[<>]' |
				head -12 | sed 's/^</want/; s/^>/got /'
		fi
		[ "$out" != "$want" ] && echo "program's output: $(tr '\n' ' ' <<<"$out")"
	} | evidence
}

prog_args() { # N T W ELF DIR: the program's options for a whole run
	local a=(--items "$1" --threads "$2")
	[ "$3" != 0 ] && a+=(--workers "$3")
	[ "$4" = dlopen ] && a+=(--lib "$5/libexample.so")
	echo "${a[@]}"
}

expected_of() { # N T W
	if [ "$3" != 0 ]; then expect_procs forked "$1" "$2" "$3" 0; else
		expect_procs full "$1" "$2" 0 0; fi
}

# -- CMD: traced from its first instruction; inflight's status is the command's
mode_cmd() {
	local row=$1 dir=$2 elf=$3 n=$4 t=$5 w=$6 rc out want=""
	# shellcheck disable=SC2046
	rm -f "$WD/cmd.json"
	timeout 60 "$INFLIGHT" --json -o "$WD/cmd.json" -- "$dir/example" \
		$(prog_args "$n" "$t" "$w" "$elf" "$dir") >"$WD/cmd.out" 2>"$WD/cmd.err"
	rc=$?
	out=$(cat "$WD/cmd.out")
	[ "$w" = 0 ] && want=$(expect_output "$n")
	judge "$row: inflight -- CMD counts every event exactly" -- "$rc" "$WD/cmd.err" \
		"$WD/cmd.json" "$(expected_of "$n" "$t" "$w")" "$out" "$want"
}

# -p PID: attached while the program holds (round R's items hold all their buffers; or
# before it starts, when workers or a library come later), released once attached
mode_pid() {
	local row=$1 dir=$2 elf=$3 n=$4 t=$5 w=$6 hold expected ppid ipid fd rc prc want=""
	local r=$((t > 1 ? 1 : 2))
	if [ "$w" != 0 ] || [ "$elf" = dlopen ]; then
		hold=(--hold-before)
		expected=$(expected_of "$n" "$t" "$w")
	else
		hold=(--hold-round "$r")
		expected=$(expect_procs late "$n" "$t" 0 "$r")
	fi
	mkfifo "$WD/in"
	# shellcheck disable=SC2046
	"$dir/example" $(prog_args "$n" "$t" "$w" "$elf" "$dir") "${hold[@]}" \
		<"$WD/in" >"$WD/pid.prog" 2>&1 &
	ppid=$!
	exec {fd}>"$WD/in"
	if ! wait_line "$WD/pid.prog" '^holding$' "$ppid"; then
		exec {fd}>&-
		wait "$ppid"
		res "not ok" "$row: -p: the program holds" "it did not: $(head -1 "$WD/pid.prog")"
		cell "-p:FAIL(no hold)"
		return
	fi
	timeout 60 "$INFLIGHT" --json -p "$ppid" >"$WD/pid.json" 2>"$WD/pid.err" &
	ipid=$!
	wait_line "$WD/pid.err" '^inflight: tracing' "$ipid"
	echo >&"$fd"
	exec {fd}>&-
	wait "$ppid"
	prc=$?
	wait "$ipid"
	rc=$?
	[ "$prc" != 0 ] && rc="$rc (program $prc)"
	# with workers the parent prints nothing after its hold (each worker, no line either)
	if [ "$w" = 0 ]; then want=$(printf 'holding\n%s' "$(expect_output "$n")"); else
		want=holding; fi
	judge "$row: inflight -p PID (attached during the hold) counts exactly" -p "$rc" \
		"$WD/pid.err" "$WD/pid.json" "$expected" "$(cat "$WD/pid.prog")" "$want"
	rm -f "$WD/in"
}

# -b PATH: attached first, the program started after it; Ctrl-C ends it. A binary whose
# semaphores share a page with RELRO (elf_facts.py semas) cannot have its probes enabled in
# processes started later: inflight must say so, in one line, exit 14 (docs/attach.md).
mode_bin() {
	local row=$1 dir=$2 elf=$3 n=$4 t=$5 w=$6 target=$2/example ipid rc prc=0 out want=""
	[ "$elf" != example ] && target=$dir/libexample.so
	if "$FACTS" semas "$target" | grep -q 'writable PT_LOADs'; then
		timeout 30 "$INFLIGHT" --json -b "$target" >"$WD/bin.json" 2>"$WD/bin.err"
		rc=$?
		if [ "$rc" = 14 ] && [ "$(grep -c . "$WD/bin.err")" = 1 ] &&
			grep -qE '^inflight: .*shares its page with RELRO .*-b cannot enable' "$WD/bin.err"; then
			res ok "$row: inflight -b $(basename "$target") refuses the RELRO-shared semaphores plainly (exit 14)"
			cell "-b:refused(14)"
		else
			res "not ok" "$row: inflight -b refuses the RELRO-shared semaphores plainly (exit 14)" \
				"exit $rc: $(head -2 "$WD/bin.err" | tr '\n' ' ')"
			cell "-b:FAIL(exit $rc)"
		fi
		return
	fi
	timeout 90 "$INFLIGHT" --json -b "$target" >"$WD/bin.json" 2>"$WD/bin.err" &
	ipid=$!
	if wait_line "$WD/bin.err" '^inflight: tracing' "$ipid"; then
		# shellcheck disable=SC2046
		timeout 60 "$dir/example" $(prog_args "$n" "$t" "$w" "$elf" "$dir") >"$WD/bin.prog" 2>&1
		prc=$?
		kill -INT "$ipid" 2>/dev/null
	fi
	wait "$ipid"
	rc=$?
	[ "$prc" != 0 ] && rc="$rc (program $prc)"
	out=$(cat "$WD/bin.prog" 2>/dev/null)
	[ "$w" = 0 ] && want=$(expect_output "$n")
	judge "$row: inflight -b $(basename "$target") (started after the attach) counts exactly" \
		-b "$rc" "$WD/bin.err" "$WD/bin.json" "$(expected_of "$n" "$t" "$w")" "$out" "$want"
}

# the ELF facts: notes that point into removed code, semaphores in a page RELRO shares
elf_checks() {
	local row=$1 file=$2 origin=$3 dead semas
	local d1="$row: every probe note's site is in an executable section"
	local d2="$row: every semaphore is file-backed, in a page no other writable segment maps"
	dead=$("$FACTS" dead "$file" 2>&1)
	semas=$("$FACTS" semas "$file" 2>&1)
	if [ "$origin" = own ]; then
		if [ -z "$dead" ]; then res ok "$d1"; else res "not ok" "$d1" "$(head -1 <<<"$dead")"; fi
		if [ -z "$semas" ]; then res ok "$d2"
		else res "not ok" "$d2" "$(head -1 <<<"$semas")"; fi
	else # a foreign build: its facts are shown, not judged
		{ echo "$row: ELF facts of $(basename "$file") (a foreign build: shown, not judged):"
		  printf '%s\n%s\n' "$dead" "$semas" | sed '/^$/d' | sort -u
		  "$FACTS" layout "$file"; } | evidence
		grep -q 'writable PT_LOADs' <<<"$semas" && witness "$row" "$file"
	fi
}

# where the kernel raises the `stage` semaphore when a tracer attaches at exec (`--`), at
# the entry point (after RELRO is read-only: a late -p) or before the start (-b)
witness() {
	local row=$1 file=$2 at
	for at in exec entry before; do
		# shellcheck disable=SC2046
		timeout 30 "$WITNESS" "$at" $("$FACTS" offsets "$file" stage) "$file" --items 6 2>&1 |
			grep -v '^done' | sed "s/^/$at: /"
	done | { echo "$row: the kernel and the stage semaphore (tests/programs/sema_witness.c):"
		 cat; } | evidence
}

# the row is built as its name says: ELF class, PIE or not, static, stripped, the linker;
# for Rust, the compiler (1.63: Debian's; rust195: rustup's stable, LLD by default since 1.90)
built_check() {
	local row=$1 file=$2 want=$3 got ver="" why=""
	got=$("$FACTS" build "$file" 2>&1 | sed 's/^elf64 //; s/linker=//; s/ /:/g')
	[ "$got" != "${want#elf64:}" ] && why="the file says $got, the row wants $want"
	if [ -f "$(dirname "$file")/rustc-version" ]; then
		ver=$(cat "$(dirname "$file")/rustc-version")
		case $row in
		rust163-*) [[ $ver == "rustc 1.63."* ]] || why="built by $ver" ;;
		rust195-*) [[ $ver =~ ^rustc\ 1\.(9[0-9]|[1-9][0-9][0-9])\. ]] ||
			why="built by $ver, not a rustc that links with LLD by default (>= 1.90)" ;;
		esac
	fi
	if [ -z "$why" ]; then res ok "$row: built as its name says (${ver:+$ver, }$got)"
	else res "not ok" "$row: built as its name says" "$why"; fi
}

list_check() {
	local row=$1 file=$2 prov=${3:-prover} rc names complete
	local desc="$row: inflight list: the contract is complete, the names are the example's"
	timeout 20 "$INFLIGHT" list --json "$file" >"$WD/list.json" 2>"$WD/list.err"
	rc=$?
	names=$(project_names <"$WD/list.json" 2>/dev/null)
	complete=$(jq .contract.complete "$WD/list.json" 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$complete" = true ] && [ "$names" = "$(expect_names "$prov")" ]; then
		res ok "$desc"
	else
		res "not ok" "$desc" "exit $rc, complete $complete, names $names"
	fi
}

run_row() {
	local row=$1 elf=$2 origin=$3 n=$4 t=$5 w=$6 dir=$P/$1 file
	file=$dir/example
	[ "$elf" != example ] && file=$dir/libexample.so
	if [ ! -x "$dir/example" ]; then
		if [[ $row == rust195-* ]] && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
			res skip "$row" "rustup's cargo is not in \$HOME/.cargo/bin"
		else res "not ok" "$row: built" "no $dir/example: run make tests"; fi
		cell "not built"
		return
	fi
	built_check "$row" "$file" "$7"
	list_check "$row" "$file" "$8"
	elf_checks "$row" "$file" "$origin"
	mode_cmd "$row" "$dir" "$elf" "$n" "$t" "$w"
	mode_pid "$row" "$dir" "$elf" "$n" "$t" "$w"
	mode_bin "$row" "$dir" "$elf" "$n" "$t" "$w"
}

# refused: one line "inflight: ...WHY...", exit 5, in every mode and from `list`
refusal() { # DESC MODE RC ERRFILE WHY
	local lines
	lines=$(grep -c . "$4")
	if [ "$3" = 5 ] && [ "$lines" = 1 ] && grep -qE "^inflight: .*($5)" "$4"; then
		res ok "$1"
		cell "$2:refused"
	else
		res "not ok" "$1" "exit $3, stderr: $(head -2 "$4" | tr '\n' ' ')"
		cell "$2:FAIL(exit $3$([ "$3" = 0 ] && echo ", traced"))"
	fi
}

run_refused() {
	local row=$1 build=$2 why=$3 dir=$P/$1 rc ppid ipid fd
	if [ ! -x "$dir/example" ]; then
		res "not ok" "$row: built" "no $dir/example: run make tests"
		cell "not built"
		return
	fi
	built_check "$row" "$dir/example" "$build"
	timeout 20 "$INFLIGHT" list "$dir/example" >"$WD/list.out" 2>"$WD/list.err"
	rc=$?
	if [ "$rc" = 5 ] && ! grep -q '(complete)' "$WD/list.out"; then
		res ok "$row: inflight list: not a complete contract (exit 5)"
		cell "list:refused"
	else
		res "not ok" "$row: inflight list: not a complete contract (exit 5)" \
			"exit $rc: $(grep '^contract' "$WD/list.out")"
		cell "list:FAIL(exit $rc)"
	fi
	timeout 60 "$INFLIGHT" --json -o "$WD/cmd.json" -- "$dir/example" --items 6 >"$WD/cmd.out" 2>"$WD/cmd.err"
	refusal "$row: inflight -- CMD refuses it plainly ($why)" -- $? "$WD/cmd.err" "$why"
	mkfifo "$WD/in"
	"$dir/example" --hold-before --items 6 <"$WD/in" >"$WD/pid.prog" 2>&1 &
	ppid=$!
	exec {fd}>"$WD/in"
	wait_line "$WD/pid.prog" '^holding$' "$ppid"
	timeout 60 "$INFLIGHT" --json -p "$ppid" >"$WD/pid.json" 2>"$WD/pid.err" &
	ipid=$!
	wait_line "$WD/pid.err" '^inflight: tracing' "$ipid"
	echo >&"$fd"
	exec {fd}>&-
	wait "$ppid"
	wait "$ipid"
	refusal "$row: inflight -p PID refuses it plainly ($why)" -p $? "$WD/pid.err" "$why"
	timeout 60 "$INFLIGHT" --json -b "$dir/example" >"$WD/bin.json" 2>"$WD/bin.err" &
	ipid=$!
	if wait_line "$WD/bin.err" '^inflight: tracing' "$ipid"; then
		timeout 60 "$dir/example" --items 6 >/dev/null 2>&1
		kill -INT "$ipid"
	fi
	wait "$ipid"
	refusal "$row: inflight -b PATH refuses it plainly ($why)" -b $? "$WD/bin.err" "$why"
	{ echo "ELF facts:"; "$FACTS" semas "$dir/example" | sort -u | head -3
	  "$FACTS" layout "$dir/example"; } | evidence
}

# one row in the background: its results in $TMP/ROW.res, its table cells in $TMP/ROW.cells
start_row() {
	local row=$1
	shift
	(
		RES=$TMP/$row.res CELLS=$TMP/$row.cells WD=$TMP/work/$row
		mkdir -p "$WD"
		t0=$SECONDS
		"$@"
		echo "$((SECONDS - t0))" >"$TMP/$row.time"
	) &
}

start=$SECONDS
order=()
for spec in "${ROWS[@]}"; do
	# shellcheck disable=SC2086
	set -- $spec
	while [ "$(jobs -pr | wc -l)" -ge "$JOBS" ]; do wait -n; done
	start_row "$1" run_row "$@"
	order+=("$1")
done
for spec in "${REFUSED[@]}"; do
	while [ "$(jobs -pr | wc -l)" -ge "$JOBS" ]; do wait -n; done
	# shellcheck disable=SC2086
	set -- $spec
	start_row "$1" run_refused "$1" "$2" "${spec#* * }"
	order+=("$1")
done
wait

for row in "${order[@]}"; do
	while IFS='|' read -r status desc why; do
		case $status in
		ok) ok "$desc" ;;
		"not ok") not_ok "$desc" "$why" ;;
		skip) if [ "${CI:-}" = true ]; then not_ok "$desc" "$why (CI=true: no skips)";
			else skip "$desc" "$why"; fi ;;
		*) echo "$status" ;; # evidence
		esac
	done <"$TMP/$row.res"
done

echo "# the matrix ($((SECONDS - start)) s; -p attaches during a hold, -b before the start):"
for row in "${order[@]}"; do
	printf '#   %-21s %3ss  %s\n' "$row" "$(cat "$TMP/$row.time" 2>/dev/null)" \
		"$(tr '\n' ' ' <"$TMP/$row.cells" 2>/dev/null)"
done
finish
