# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/t_prod_*.sh, sourced after tests/lib.sh: private copies of the binaries
# (other sessions may run build/prover: -b must attach to a copy), processes that are always
# killed at exit, and bounded waits. Nothing here sleeps for a fixed time to "let things
# settle": every wait polls for a condition with a deadline.

INFLIGHT_BIN=$BUILD/inflight
PROBEGEN_BIN=$BUILD/tests/probegen
PROVER_BIN=$BUILD/prover
_bg_pids=()

_prod_cleanup() {
	local p
	for p in "${_bg_pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	# mounts made by a test (unshare keeps its own; these are belt and braces)
	rm -rf "$TMP"
}
trap _prod_cleanup EXIT
chmod 755 "$TMP" # other users (nobody) must reach the copies

# bg_track PID: kill PID at exit whatever happens
bg_track() { _bg_pids+=("$1"); }

# copy_bins NAME...: $TMP/NAME for inflight, probegen, prover
copy_bins() {
	local b
	for b in "$@"; do
		case $b in
		inflight) cp "$INFLIGHT_BIN" "$TMP/inflight" ;;
		probegen) cp "$PROBEGEN_BIN" "$TMP/probegen" ;;
		prover) cp "$PROVER_BIN" "$TMP/prover" ;;
		*) echo "copy_bins: unknown $b" >&2; return 1 ;;
		esac
		chmod 755 "$TMP/$b"
	done
}

# wait_until SECONDS COMMAND...: polls every 50 ms; fails after SECONDS
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@"; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.05
	done
}

# file_has FILE REGEX
file_has() { [ -f "$1" ] && grep -Eq -- "$2" "$1"; }

# gone PID: the process no longer exists (reaped or never was)
gone() { ! kill -0 "$1" 2>/dev/null; }

# free_port: a TCP port nothing listens on now (from /proc/net/tcp{,6})
free_port() {
	local used="" hex p
	for hex in $(awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null); do
		used="$used $((16#$hex)) "
	done
	for p in $(seq 20000 37 60000); do
		p=$((p + RANDOM % 37))
		[[ $used == *" $p "* ]] || { echo "$p"; return 0; }
	done
	return 1
}

# serve_port ERRFILE: the port of "inflight: serving http://ADDR:PORT/metrics"
serve_port() { sed -n 's|^inflight: serving http://.*:\([0-9]*\)/metrics.*|\1|p' "$1" | head -n 1; }


# metric BODY LINE-PREFIX: the value of the sample that starts with LINE-PREFIX
metric() { grep -F -- "$2" <<<"$1" | head -n 1 | awk '{ print $NF }'; }

# cap_eff PID: the effective capability set, hex, from /proc
cap_eff() { awk '/^CapEff:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# The capabilities attaching needs on this kernel: since Linux 6.16 (and the July 2025 stable
# kernels, commit ba677dbe77af "perf: Revert to requiring CAP_SYS_ADMIN for uprobes"),
# creating a uprobe needs CAP_SYS_ADMIN; CAP_BPF and CAP_PERFMON cover the rest.
ATTACH_CAPS=+bpf,+perfmon,+sys_admin

# nobody_argv CAPS: NOBODY=(setpriv ...) runs a command as nobody:nogroup with exactly CAPS
# (e.g. +bpf,+perfmon; "" for none). Start background processes as "${NOBODY[@]}" CMD & so
# that $! is the process itself (setpriv execs it), not a subshell.
nobody_argv() {
	if [ -n "$1" ]; then
		NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps="-all,$1"
			--ambient-caps="$1" --bounding-set="-all,$1")
	else
		NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all
			--bounding-set=-all)
	fi
}

# as_nobody CAPS CMD...: runs CMD that way, in the foreground
as_nobody() {
	local caps=$1
	shift
	nobody_argv "$caps"
	"${NOBODY[@]}" "$@"
}

# netns_up: a private network namespace with lo up (so fixed ports such as the default 9464
# or 80 are free whatever else runs on the host), held by a sleeping process. in_ns CMD...
# runs CMD in it in the foreground; for a background process use "${IN_NS[@]}" CMD & (nsenter
# execs CMD, so $! is CMD's pid; a backgrounded shell function would be a subshell).
netns_up() {
	unshare -n sleep 600 &
	NETNS_PID=$!
	bg_track "$NETNS_PID"
	IN_NS=(nsenter -t "$NETNS_PID" -n)
	wait_until 5 _netns_differs || return 1
	in_ns ip link set lo up
}
_netns_differs() { [ "$(readlink "/proc/$NETNS_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }
in_ns() { "${IN_NS[@]}" "$@"; }

# probegen's exporter state (tests/production/scripts/exporter_state.txt), gated
EXPORTER_STATE=$ROOT/tests/production/scripts/exporter_state.txt

# --- reading a traced process's memory: USDT semaphores and probe sites ---------------------
# note_addrs BINARY Location|Semaphore: the distinct addresses of the prover probes in the
# binary's stapsdt notes (link-time virtual addresses, hex)
note_addrs() {
	readelf -n "$1" | awk -v want="$2:" '
		/Provider:/ { prov = $2 }
		/Name:/ { name = $2 }
		{ for (i = 1; i < NF; i++) if ($i == want && prov == "prover" &&
			(name == "buf_alloc" || name == "buf_free" || name == "stage")) { v = $(i + 1); sub(/,$/, "", v); print v } }' |
		sort -u
}
# load_bias PID PATH: where PATH's file offset 0 is mapped (a PIE's vaddrs start at 0), decimal
load_bias() {
	local start
	start=$(awk -v f="$2" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' \
		"/proc/$1/maps")
	[ -n "$start" ] && echo $((16#$start))
}
# peek PID ADDR(decimal) BYTES: little-endian unsigned value read from /proc/PID/mem
peek() {
	dd if="/proc/$1/mem" bs=1 skip="$2" count="$3" iflag=skip_bytes status=none 2>/dev/null |
		od -An -tu"$3" | tr -d ' '
}
# semaphores PID PATH: the sum of the prover probes' semaphores in PID
semaphores() {
	local bias sum=0 a
	bias=$(load_bias "$1" "$2") || return 1
	for a in $(note_addrs "$2" Semaphore); do
		sum=$((sum + $(peek "$1" $((bias + a)) 2)))
	done
	echo "$sum"
}
# site_bytes PID PATH: the first byte of every probe site, hex, sorted and unique
# (0x90 nop as built; 0xcc int3 while a uprobe sits there)
site_bytes() {
	local bias a
	bias=$(load_bias "$1" "$2") || return 1
	for a in $(note_addrs "$2" Location); do
		printf '%02x\n' "$(peek "$1" $((bias + a)) 1)"
	done | sort -u | tr '\n' ' '
}
