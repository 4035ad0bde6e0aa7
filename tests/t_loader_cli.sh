#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The inflight CLI's refusals and `inflight list`: exact exit codes, one error line in the
# house voice ("inflight: WHAT: WHY; HINT"), help texts within 80 columns and in step with
# docs/cli.md. Needs root only for the privilege and pid checks that reach the session.
source "$(dirname "$0")/lib.sh"
INFLIGHT=$BUILD/inflight
TARGET=$BUILD/tests/loader_probe_target

# expect DESCRIPTION RC STDERR-REGEX COMMAND...: exit code and the one stderr line
# (argp's own refusals add its standard "Try `inflight --help'" line: ERR_LINES=2)
expect() {
	local what=$1 rc=$2 re=$3 got err lines
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	err=$(cat "$TMP/err")
	lines=$(grep -c '' "$TMP/err")
	check_eq "$what: exit code" "$got" "$rc"
	check_match "$what: message" "$err" "$re"
	check_eq "$what: lines on stderr" "$lines" "${ERR_LINES:-1}"
}

# --- usage errors: exit 2 ---
ERR_LINES=2 expect "unknown option" 2 "^inflight: unrecognized option '--bogus'" "$INFLIGHT" --bogus
expect "no target" 2 '^inflight: nothing to trace; give -p PID, -b PATH or -- CMD ARGS' "$INFLIGHT"
expect "stray word" 2 "^inflight: unexpected argument 'stray'; put the command to trace after --" \
	"$INFLIGHT" stray
# a misspelt command or long option is named with the nearest right one
expect "misspelt command" 2 "^inflight: unknown command 'reprot'; did you mean \`inflight report\`\?$" \
	"$INFLIGHT" reprot run.infl
expect "misspelt long option" 2 "^inflight: unrecognized option '--jsno'; did you mean --json\?$" \
	"$INFLIGHT" -i 1s --jsno -p 1
expect "misspelt option with a value" 2 \
	"^inflight: unrecognized option '--outptu'; did you mean --output\?$" \
	"$INFLIGHT" --outptu=x -p 1
expect "misspelt option of a command" 2 \
	"^inflight: unrecognized option '--formt'; did you mean --format\?$" \
	"$INFLIGHT" report --formt svg run.infl
expect "interval 0" 2 "^inflight: -i '0': out of range: give 10ms to 1h$" "$INFLIGHT" -i 0 -p 1
expect "interval 2h" 2 "^inflight: -i '2h': out of range" "$INFLIGHT" -i 2h -p 1
expect "interval 5x" 2 "^inflight: -i '5x': not a duration; e.g. -i 500ms" "$INFLIGHT" -i 5x -p 1
expect "pid abc" 2 "^inflight: -p 'abc': not a process id: give 1 to 4194304$" "$INFLIGHT" -p abc
expect "pid 0" 2 "^inflight: -p '0': not a process id" "$INFLIGHT" -p 0
expect "two targets" 2 '^inflight: -b: more than one target; give one of -p PID, -b PATH or -- CMD ARGS$' \
	"$INFLIGHT" -p 1 -b /bin/true
expect "target and command" 2 '^inflight: --: more than one target' "$INFLIGHT" -p 1 -- /bin/true
expect "max-bufs 0" 2 "^inflight: --max-bufs '0': out of range: give 1 to 16777216$" \
	"$INFLIGHT" --max-bufs 0 -p 1
expect "max-owners huge" 2 "^inflight: --max-owners '99999999999999999999': out of range" \
	"$INFLIGHT" --max-owners 99999999999999999999 -p 1
expect "max-procs junk" 2 "^inflight: --max-procs '4k': not a number" "$INFLIGHT" --max-procs 4k -p 1
expect "list without argument" 2 '^inflight: no PATH or PID given' "$INFLIGHT" list
expect "list with two" 2 "^inflight: unexpected argument 'b'" "$INFLIGHT" list a b
expect "list with a bad pid" 2 "^inflight: '12x': not a process id" "$INFLIGHT" list 12x

# --- targets that do not exist or do not qualify ---
sleep 0 &
dead=$!
wait $dead
expect "no such pid" 6 "^inflight: no such process: $dead" "$INFLIGHT" -p "$dead"
expect "list: no such pid" 6 "^inflight: $dead: no such process" "$INFLIGHT" list "$dead"
printf 'not an ELF file\n' >"$TMP/text"
chmod +x "$TMP/text"
expect "not an ELF file" 12 "^inflight: $TMP/text: not an ELF file" "$INFLIGHT" -b "$TMP/text"
expect "list: not an ELF file" 12 "^inflight: $TMP/text: not an ELF file$" "$INFLIGHT" list "$TMP/text"
expect "no such binary" 12 "^inflight: /nonexistent/prover: No such file or directory" \
	"$INFLIGHT" -b /nonexistent/prover
expect "no such command" 12 "^inflight: cannot run /nonexistent/prover: No such file" \
	"$INFLIGHT" -- /nonexistent/prover
expect "list: no such file" 12 "^inflight: /nonexistent/prover: No such file or directory$" \
	"$INFLIGHT" list /nonexistent/prover
expect "binary without probes" 5 '^inflight: /bin/true: has no prover:buf_alloc/buf_free/stage' \
	"$INFLIGHT" -b /bin/true
expect "command without probes" 5 '^inflight: /bin/true: has no prover' "$INFLIGHT" -- /bin/true
expect "probe with wrong arguments" 5 'do not take the contract.s arguments' \
	"$INFLIGHT" -b "$BUILD/tests/loader_sdt_bad_args"
sleep 5 &
sleeper=$!
expect "process without probes" 5 'has no prover:buf_alloc/buf_free/stage' "$INFLIGHT" -p "$sleeper"
kill "$sleeper"
wait "$sleeper" 2>/dev/null
# a zombie: its parent (the subshell, now `sleep`) never reaps it
(
	sleep 0 &
	echo $! >"$TMP/zombie"
	exec sleep 3
) &
parent=$!
while [ ! -s "$TMP/zombie" ]; do sleep 0.01; done
zombie=$(cat "$TMP/zombie")
while ! grep -q '^State:.*Z' "/proc/$zombie/status" 2>/dev/null; do sleep 0.01; done
expect "zombie" 7 "^inflight: pid $zombie has exited" "$INFLIGHT" -p "$zombie"
kill "$parent"
wait "$parent" 2>/dev/null
# the hint names what this kernel's attach needs: uprobe_multi links (6.6+) no CAP_SYS_ADMIN
if grep -qa BPF_TRACE_UPROBE_MULTI /sys/kernel/btf/vmlinux 2>/dev/null; then
	hint='setcap cap_bpf,cap_perfmon\+ep inflight \(this kernel has uprobe_multi links, which need no CAP_SYS_ADMIN\)$'
else
	hint='setcap cap_bpf,cap_perfmon,cap_sys_admin\+ep inflight \(perf-event uprobes: '
fi
expect "not privileged" 3 "^inflight: not privileged: missing CAP_BPF and CAP_PERFMON .*; run as root, or grant them: $hint" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$INFLIGHT" -- "$TARGET" 1
expect "not privileged, perf-event uprobes forced" 3 \
	'; run as root, or grant them: setcap cap_bpf,cap_perfmon,cap_sys_admin\+ep inflight \(perf-event uprobes: Linux 6\.16\+ and the stables since July 2025 want CAP_SYS_ADMIN for them\)$' \
	env INFLIGHT_ATTACH=perf setpriv --reuid=65534 --regid=65534 --clear-groups "$INFLIGHT" -- "$TARGET" 1

# --- inflight list ---
out=$("$INFLIGHT" list "$TARGET")
check_eq "list: exit 0 for a complete contract" "$?" 0
check_match "list: contract line" "$out" \
	'^contract  buf_alloc: 1 site, buf_free: 1 site, stage: 1 site \(complete\)$'
check_match "list: names line" "$out" '^names     contract version 1, provider prover$'
check_match "list: buf_alloc with its semaphore and 4 arguments" "$out" \
	'^prover:buf_alloc +0x[0-9a-f]+ +0x[0-9a-f]+ +[-0-9]+@[^ ]+ [-0-9]+@[^ ]+ [-0-9]+@[^ ]+ [-0-9]+@[^ ]+$'
check_eq "list: classes" "$(printf '%s\n' "$out" | sed -n '/^CLASS/,/^$/p' | awk 'NR>1 && NF {print $1":"$2}' | tr '\n' ' ')" \
	"0:c1_data 1:srs 2:abc 3:aux 4:input 5:density 6:pending 7:proof 8:gpu_abc "
check_eq "list: stages and roles" "$(printf '%s\n' "$out" | sed -n '/^STAGE/,$p' | awk 'NR>1 {print $2":"$3}' | tr '\n' ' ')" \
	"parse:entry wait_permit:entry synth:- chan_send:- gpu_queue:- gpu:- finalize:- assemble:- done:terminal "
check_eq "list: probes agree with readelf" \
	"$(printf '%s\n' "$out" | grep -c '^prover:')" \
	"$(readelf -n "$TARGET" | grep -c 'Provider: prover')"

json=$("$INFLIGHT" list --json "$TARGET")
check_eq "list --json: one line" "$(printf '%s\n' "$json" | wc -l)" 1
check_match "list --json: contract complete" "$json" '"contract":\{"provider":"prover","complete":true,'
check_match "list --json: stage done terminal" "$json" '\{"id":8,"name":"done","entry":false,"terminal":true\}'

out=$("$INFLIGHT" list "$BUILD/tests/loader_sdt_partial" 2>"$TMP/err")
check_eq "list: incomplete contract: exit 5" "$?" 5
check_match "list: incomplete contract: still lists what is there" "$out" '^prover:buf_alloc '
check_match "list: incomplete contract: names the missing probes" "$(cat "$TMP/err")" \
	'no prover:buf_free, prover:stage probe'
check_match "list: malformed names note: a warning" "$(cat "$TMP/err")" \
	'^inflight: warning: .*\.note\.inflight: malformed; classes and stages are numbered$'

# list by pid: the probe target waits for a tracer that never comes; list only reads
"$TARGET" --wait-attach 0 &
tpid=$!
for _ in $(seq 500); do # until the forked shell has become the target
	[ "$(readlink "/proc/$tpid/exe")" = "$(readlink -f "$TARGET")" ] && break
	sleep 0.01
done
out=$("$INFLIGHT" list "$tpid")
check_eq "list PID: exit 0" "$?" 0
check_match "list PID: names the process's executable" "$out" "^binary    $(readlink -f "$TARGET")$"
kill "$tpid"
wait "$tpid" 2>/dev/null

if [ -x "$BUILD/prover" ]; then
	out=$("$INFLIGHT" list "$BUILD/prover")
	check_eq "list prover: exit 0" "$?" 0
	check_match "list prover: contract complete" "$out" '\(complete\)$'
	check_eq "list prover: every stapsdt note listed" "$(printf '%s\n' "$out" | grep -c '^prover:')" \
		"$(readelf -n "$BUILD/prover" | grep -c 'Provider: prover')"
	check_match "list prover: the reference stages" "$out" '^    3  chan_send +-$'
	# the width of what inflight writes, not of this checkout's path
	check_eq "list prover: within 80 columns" \
		"$(printf '%s\n' "$out" | grep -vF "$BUILD/prover" | awk 'length > 80' | wc -l)" 0
else
	not_ok "list prover" "$BUILD/prover missing: run make first"
fi

# --- help texts ---
for cmd in "" list; do
	help=$("$INFLIGHT" $cmd --help)
	check_eq "inflight $cmd --help: exit 0" "$?" 0
	check_match "inflight $cmd --help: usage" "$help" '^Usage: inflight'
	check_match "inflight $cmd --help: examples" "$help" '^EXAMPLES:$'
	check_match "inflight $cmd --help: exit status" "$help" '^EXIT STATUS:'
	check_eq "inflight $cmd --help: within 80 columns" \
		"$(printf '%s\n' "$help" | awk 'length > 80' | wc -l)" 0
done
help=$("$INFLIGHT" --help)
check_match "--help lists the commands" "$help" '^  inflight list \[--json\] PATH\|PID$'
check_match "--help lists html among the report formats" "$help" \
	'^      render: text csv json chrome folded svg html$'
# each heading of the help holds its own options: the heading a long option is listed under
heading_of() { printf '%s\n' "$help" | awk -v o="$1" '/^ [A-Z][^:]*:$/ { h = $0 }
	index($0, o) && $0 ~ /^  +-/ { sub(/^ +/, "", h); print h; exit }'; }
check_eq "--help: -i -j -o -w under Output" \
	"$(heading_of -i,) $(heading_of -j,) $(heading_of -o,) $(heading_of -w,)" \
	"Output: Output: Output: Output:"
check_eq "--help: --entry-stages and --terminal-stages under The contract" \
	"$(heading_of --entry-stages) $(heading_of --terminal-stages)" "The contract: The contract:"
check_eq "--help: no heading is empty" \
	"$(printf '%s\n' "$help" | awk '/^ [A-Z][^:]*:$/ { if (h) print h; h = $0; next }
		/^  +-/ { h = "" } END { if (h) print h }')" ""
check_match "README lists html among the report formats" "$(cat "$ROOT/README.md")" \
	'--format text\|csv\|json\|chrome\|folded\|svg\|html'
# every long option of the help is documented in docs/cli.md
missing=""
for opt in $(printf '%s\n' "$help" "$("$INFLIGHT" list --help)" |
	grep -oE '^ +(-., )?--[a-z][a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u); do
	case $opt in --help | --usage | --version) continue ;; esac
	grep -q -- "$opt" "$ROOT/docs/cli.md" || missing="$missing $opt"
done
check_eq "docs/cli.md documents every option" "$missing" ""
version=$("$INFLIGHT" --version)
check_match "--version names the contract" "$version" '^inflight [0-9.]+ \(probe contract 1\)$'

# --- docs/architecture.md stays true: every folder it names exists ---
has_code() { compgen -G "$1" >/dev/null; } # (a redirect on `check` would hide its line)
for d in $(grep -oE '`(attach|model|live|recording|render|analysis|contract|util|cmd)/`' "$ROOT/docs/architecture.md" |
	tr -d '`' | sort -u); do
	check "docs/architecture.md: bpf/loader/$d exists and holds code" \
		has_code "$ROOT/bpf/loader/$d*.c"
done
check_eq "docs/architecture.md names every folder of bpf/loader" \
	"$(ls -d "$ROOT"/bpf/loader/*/ | xargs -n1 basename | sort | tr '\n' ' ')" \
	"$(grep -oE '`[a-z]+/`' "$ROOT/docs/architecture.md" | tr -d '`/' | sort -u |
		while read -r d; do [ -d "$ROOT/bpf/loader/$d" ] && echo "$d"; done | tr '\n' ' ')"

# ... and its include table: each folder of bpf/loader includes only the folders it lists
include_graph_breaks() {
	python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
doc = open(os.path.join(root, "docs/architecture.md")).read()
table = doc.split("includes only folders above it here", 1)[1].split("```")[1]
allowed = {}
for line in table.strip().splitlines():
    words = line.split()
    allowed[words[0].rstrip("/")] = {w.rstrip("/") for w in words[1:] if w != "-"}
loader = os.path.join(root, "bpf/loader")
folders = sorted(d for d in os.listdir(loader) if os.path.isdir(os.path.join(loader, d)))
bad = [f"{d}/: not in the table" for d in folders if d not in allowed]
for d in folders:
    for name in sorted(os.listdir(os.path.join(loader, d))):
        for inc in re.findall(r'^#include "([a-z_]+)/', open(os.path.join(loader, d, name)).read(), re.M):
            if inc != d and inc in folders and "any" not in allowed.get(d, ()) and inc not in allowed.get(d, ()):
                bad.append(f"{d}/{name} includes {inc}/")
print("\n".join(bad))
PY
}
check_eq "every #include of bpf/loader keeps to docs/architecture.md's table" \
	"$(include_graph_breaks)" ""

finish
