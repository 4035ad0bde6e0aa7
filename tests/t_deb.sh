#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Debian package (`make deb`, scripts/build-deb.sh): it builds, is named and versioned
# from git describe, holds what it must, passes lintian with no error or warning (its two
# overrides are explained in debian/inflight.lintian-overrides), its man page is the one its
# binary's --help gives and names every option of every subcommand, its bash completion
# completes, its unit passes systemd-analyze verify and security, the unit's privileges are
# enough to export on this kernel, and it installs into a scratch Debian 11 root (an overlay
# over the cached root of tests/roots.sh), traces exactly from /usr/bin/inflight there, and is
# removed and purged leaving nothing behind. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
source "$ROOT/tests/roots.sh"
needs_root
[ -x "$ROOT/build/static/inflight" ] || skip_all "build/static/inflight missing: make static"
for t in dpkg-buildpackage dh lintian systemd-analyze man unshare curl setpriv strace; do
	command -v "$t" >/dev/null || skip_all "$t not found (scripts/install-deps.sh test)"
done
[ -r /usr/share/bash-completion/bash_completion ] || skip_all "bash-completion not installed (scripts/install-deps.sh test)"

# --- build -------------------------------------------------------------------------------
version=$(cd "$ROOT" && scripts/deb-version.sh)
deb=$(cd "$ROOT" && scripts/build-deb.sh "$TMP/out" 2>"$TMP/build.err")
check_eq "the package builds: inflight_VERSION_amd64.deb" "$deb" "$TMP/out/inflight_${version}_amd64.deb"
[ -f "$deb" ] || { not_ok "package built" "$(cat "$TMP/build.err")"; finish; }
check_match "the version is git describe's, a valid Debian version" "$version" '^[0-9][A-Za-z0-9.+~]*$'
check_eq "control: Version" "$(dpkg-deb -f "$deb" Version)" "$version"
check_eq "control: Architecture" "$(dpkg-deb -f "$deb" Architecture)" amd64
check_eq "control: no Depends on any library" "$(dpkg-deb -f "$deb" Depends)" ""
check_match "control: Built-Using names the sources linked in" "$(dpkg-deb -f "$deb" Built-Using)" \
	'elfutils \(= .*libbpf \(= .*libmicrohttpd \(= .*libzstd \(= .*musl \(= .*zlib \(= '
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/files"
for f in /usr/bin/inflight /usr/share/man/man1/inflight.1.gz \
	/usr/share/bash-completion/completions/inflight /lib/systemd/system/inflight-serve@.service \
	/etc/default/inflight-serve /usr/share/inflight/prometheus/inflight-rules.yml \
	/usr/share/inflight/grafana/inflight-dashboard.json /usr/share/doc/inflight/copyright; do
	check "holds $f" grep -qxF "$f" "$TMP/files"
done
x=$TMP/x
dpkg-deb -x "$deb" "$x"
check_match "/usr/bin/inflight is the static binary" "$(file -b "$x/usr/bin/inflight")" "statically linked"
check_eq "... and the build's, stripped" "$("$x/usr/bin/inflight" --version)" "$("$ROOT/build/static/inflight" --version)"

# --- lintian -----------------------------------------------------------------------------
lintian -EvIL +pedantic "$deb" >"$TMP/lintian" 2>&1
rc=$?
check_eq "lintian: exit 0" "$rc" 0
check_eq "lintian: no error, warning, info or pedantic tag" \
	"$(grep -E '^[EWIPX]: ' "$TMP/lintian" | tr '\n' '|')" ""

# --- the man page: its binary's --help, every option ---------------------------------------
zcat "$x/usr/share/man/man1/inflight.1.gz" >"$TMP/inflight.1"
date=$(sed -n 's/^\.TH INFLIGHT 1 "\([^"]*\)".*/\1/p' "$TMP/inflight.1")
check_eq "man page: generated from the packaged binary's --help (scripts/gen-man.sh)" \
	"$(cd "$ROOT" && scripts/gen-man.sh "$x/usr/bin/inflight" "$date" | cmp - "$TMP/inflight.1" && echo same)" same
LC_ALL=C.UTF-8 MANWIDTH=200 man --warnings -l "$TMP/inflight.1" >"$TMP/man.txt" 2>"$TMP/man.err"
check_eq "man page: renders without warnings" "$(cat "$TMP/man.err")" ""
missing=""
for c in "" trace serve list record report compare; do
	for o in $("$x/usr/bin/inflight" $c --help | grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]//' | sort -u); do
		grep -qF -- "$o" "$TMP/man.txt" || missing="$missing ${c:-main}:$o"
	done
done
check_eq "man page: every long option of every subcommand's --help" "$missing" ""
for c in TRACE SERVE LIST RECORD REPORT COMPARE; do
	check "man page: a section for inflight ${c,,}" grep -qx "INFLIGHT $c" "$TMP/man.txt"
done

# --- bash completion -----------------------------------------------------------------------
cat >"$TMP/comp.sh" <<EOF
source /usr/share/bash-completion/bash_completion
source "$x/usr/share/bash-completion/completions/inflight"
PATH="$x/usr/bin:\$PATH"
comp() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMP_LINE="\$*"
	COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _inflight 2>/dev/null
	printf '%s\n' "\${COMPREPLY[@]}" | sort | tr '\n' ' '; echo; }
echo "cmds: \$(comp inflight '')"
echo "formats: \$(comp inflight report --format '')"
echo "serve: \$(comp inflight serve --)"
echo "record: \$(comp inflight record --m)"
echo "dumpon: \$(comp inflight record --dump-on '')"
echo "pids: \$(comp inflight -p '')"
cd "$TMP" && echo "files: \$(comp inflight -b "$TMP/comp.")"
EOF
bash "$TMP/comp.sh" >"$TMP/comp.out" 2>&1
check_eq "completion: subcommands" "$(sed -n 's/^cmds: //p' "$TMP/comp.out")" \
	"compare list record report serve trace "
check_eq "completion: report formats" "$(sed -n 's/^formats: //p' "$TMP/comp.out")" \
	"chrome csv folded html json svg text "
check_match "completion: serve's options, from its --help" "$(sed -n 's/^serve: //p' "$TMP/comp.out")" \
	'--keep-exited .*--listen '
check_eq "completion: record's --max-* options" "$(sed -n 's/^record: //p' "$TMP/comp.out")" \
	"--max-bufs --max-dumps --max-owners --max-procs "
check_eq "completion: the flight recorder's triggers" "$(sed -n 's/^dumpon: //p' "$TMP/comp.out")" \
	"exit oom owners: rss> sigusr1 tracked> "
check_match "completion: -p offers running pids (this one)" "$(sed -n 's/^pids: //p' "$TMP/comp.out")" " $$ "
check_eq "completion: -b offers files" "$(sed -n 's/^files: //p' "$TMP/comp.out")" "$TMP/comp.out $TMP/comp.sh "

# --- the unit --------------------------------------------------------------------------------
unit=$x/lib/systemd/system/inflight-serve@.service
for s in 'CapabilityBoundingSet=CAP_BPF CAP_PERFMON' 'AmbientCapabilities=CAP_BPF CAP_PERFMON' \
	NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes \
	'RestrictAddressFamilies=AF_INET AF_INET6' DynamicUser=yes; do
	check "unit: $s" grep -qxF "$s" "$unit"
done
# verified in a root holding this host's units and the package's files
vroot=$TMP/vroot
mkdir -p "$vroot/lib/systemd"
cp -a /lib/systemd/system "$vroot/lib/systemd/"
cp -a "$x/." "$vroot/"
inst=inflight-serve@$(systemd-escape --path /usr/local/bin/prover).service
out=$(systemd-analyze verify --man=no --root="$vroot" "$inst" 2>&1)
check_eq "systemd-analyze verify $inst: exit 0, nothing said" "$?:$out" "0:"
score=$(systemd-analyze security --offline=true --root="$vroot" "$inst" 2>&1 |
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
check "systemd-analyze security: exposure ${score:-?} at most 2.5 (OK)" \
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.5) }'

# The unit's privileges on this kernel: an unprivileged user with CAP_BPF and CAP_PERFMON alone
# (ambient and bounding), NoNewPrivs, exports every process of a binary (-b).
copy_bins probegen
printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\ngate\nfree 17 2 8192\nstage 1 4\n' \
	>"$TMP/gate.txt"
chmod 644 "$TMP/gate.txt"
cp "$x/usr/bin/inflight" "$TMP/inflight-pkg"
# serve_port ERR: the port a starting `serve` says it listens on (up to 20 s); fails if it
# never says
serve_port() {
	wait_until 20 file_has "$1" '^inflight: serving http' &&
		sed -n 's|^inflight: serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$1"
}
# start_gated OUT: probegen's gated script in the background ($pg), once it waits at its gate
start_gated() {
	"$TMP/probegen" script "$TMP/gate.txt" >"$1" 2>&1 &
	pg=$!
	bg_track "$pg"
	wait_until 20 file_has "$1" '^gated'
}
nobody_argv +bpf,+perfmon
"${NOBODY[@]}" --no-new-privs "$TMP/inflight-pkg" serve --listen 127.0.0.1:0 -b "$TMP/probegen" \
	>"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
if port=$(serve_port "$TMP/sv.err"); then
	start_gated "$TMP/pg.out"
	body=
	for _ in $(seq 100); do
		body=$(curl -sS "http://127.0.0.1:$port/metrics")
		grep -qF "inflight_buffer_bytes{pid=\"$pg\",class=\"huge\",stage=\"work\"} 8192" <<<"$body" && break
		sleep 0.1
	done
	check_eq "unit's capabilities: serve -b exports the held buffer" \
		"$(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"huge\",stage=\"work\"}")" 8192
	kill -USR1 "$pg"
	wait "$pg"
	check_eq "... and every event" \
		"$(metric "$(curl -sS "http://127.0.0.1:$port/metrics")" "inflight_events_total{pid=\"$pg\",probe=\"buf_free\"}")" 2
	check_eq "... the exporter holds no capability once attached" "$(cap_eff "$sv")" 0000000000000000
	kill "$sv"
	wait "$sv"
else
	not_ok "unit's capabilities: serve -b started" "$(cat "$TMP/sv.err")"
fi

# The unit's system-call allow list holds every call `serve -b` makes here (strace, as root:
# the same calls but for the privileges it has to drop)
sc_expand() { # NAME|@GROUP...: the system calls, groups expanded
	local s
	for s in "$@"; do
		case $s in
		@*) sc_expand $(systemd-analyze syscall-filter "$s" | sed 's/^ *//' | grep -v '^#' | tail -n +2) ;;
		*) echo "$s" ;;
		esac
	done
}
sc_expand $(sed -n 's/^SystemCallFilter=//p' "$unit") | sort -u >"$TMP/allowed"
strace -f -qq -o "$TMP/strace" "$TMP/inflight-pkg" serve --listen 127.0.0.1:0 -b "$TMP/probegen" \
	>"$TMP/st.out" 2>"$TMP/st.err" &
st=$!
bg_track "$st"
if port=$(serve_port "$TMP/st.err"); then
	start_gated "$TMP/pg2.out"
	curl -sS -o /dev/null "http://127.0.0.1:$port/metrics"
	kill -USR1 "$pg"
	wait "$pg"
	kill -TERM "$(pgrep -x -P "$st" inflight-pkg)"
	wait "$st"
	sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$TMP/strace" | sort -u >"$TMP/called"
	check "strace saw serve -b's calls ($(wc -l <"$TMP/called"))" test "$(wc -l <"$TMP/called")" -gt 20
	check_eq "unit: SystemCallFilter allows every one" "$(comm -23 "$TMP/called" "$TMP/allowed" | tr '\n' ' ')" ""
else
	not_ok "serve -b under strace started" "$(cat "$TMP/st.err")"
fi

# --- installed into a scratch Debian 11 root, traced, removed --------------------------------
if bull=$(bullseye_root); then
	mkdir -p "$TMP/ov/up" "$TMP/ov/work" "$TMP/ov/root"
	cp "$deb" "$ROOT/build/static/probegen" "$TMP/"
	printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/run.txt"
	cat >"$TMP/inroot.sh" <<'EOF'
set -u
r=$1 deb=$2 tmp=$3
mount -t overlay overlay -o "lowerdir=$4,upperdir=$tmp/ov/up,workdir=$tmp/ov/work" "$r" || exit 125
for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
mkdir -p "$r/tmp/t" && cp "$tmp/$deb" "$tmp/probegen" "$tmp/run.txt" "$r/tmp/t/"
inr() { chroot "$r" "$@"; }
inr dpkg -i "/tmp/t/$deb" >/dev/null 2>"$tmp/dpkg.err"; echo "install=$?"
echo "status=$(inr dpkg-query -W -f='${Status} ${Version}' inflight)"
echo "which=$(inr sh -c 'command -v inflight')"
echo "version=$(inr inflight --version)"
inr inflight -- /tmp/t/probegen threads 4 50 >"$tmp/trace.out" 2>&1; echo "trace=$?"
inr inflight -- /tmp/t/probegen script /tmp/t/run.txt >"$tmp/trace2.out" 2>&1; echo "trace2=$?"
inr dpkg -L inflight >"$tmp/listed"
inr dpkg -r inflight >/dev/null 2>&1; echo "remove=$?"
echo "after-remove-bin=$(test -e "$r/usr/bin/inflight" && echo present || echo gone)"
echo "after-remove-conf=$(test -e "$r/etc/default/inflight-serve" && echo present || echo gone)"
inr dpkg -P inflight >/dev/null 2>&1; echo "purge=$?"
echo "after-purge-conf=$(test -e "$r/etc/default/inflight-serve" && echo present || echo gone)"
echo "after-purge-status=$(inr dpkg-query -W -f='${Status}' inflight 2>/dev/null || echo unknown)"
left=""
while read -r f; do
	# a directory other packages still fill is theirs too; anything else must be gone
	[ -d "$r$f" ] && [ -n "$(ls -A "$r$f/")" ] && continue
	[ -e "$r$f" ] || [ -L "$r$f" ] && left="$left $f"
done <"$tmp/listed"
echo "left=$left"
EOF
	unshare --mount --propagation private bash "$TMP/inroot.sh" "$TMP/ov/root" "$(basename "$deb")" \
		"$TMP" "$bull" >"$TMP/inroot.out" 2>&1
	res() { sed -n "s/^$1=//p" "$TMP/inroot.out"; }
	check_eq "Debian 11 root: dpkg -i" "$(res install)" 0
	[ "$(res install)" = 0 ] || echo "# $(cat "$TMP/dpkg.err" "$TMP/inroot.out")"
	check_eq "... installed, this version" "$(res status)" "install ok installed $version"
	check_eq "... inflight on PATH is /usr/bin/inflight" "$(res which)" /usr/bin/inflight
	check_eq "... it runs there (glibc 2.31 around it)" "$(res version)" "$("$ROOT/build/static/inflight" --version)"
	check_eq "... traces 4 threads: exit 0" "$(res trace)" 0
	has_line() { grep -qxF -- "$2" "$1"; }
	check "... exact: 200 allocs, 200 frees, 12 stage events" has_line "$TMP/trace.out" \
		"  events: buf_alloc 200, buf_free 200, stage 12"
	check "... exact: nothing in flight at exit" has_line "$TMP/trace.out" "in flight at exit: nothing"
	check "... a script: 2 allocs, 1 free, 3 stage events" has_line "$TMP/trace2.out" \
		"  events: buf_alloc 2, buf_free 1, stage 3"
	check_eq "dpkg -r: exit 0" "$(res remove)" 0
	check_eq "... /usr/bin/inflight gone" "$(res after-remove-bin)" gone
	check_eq "... the conffile stays until purge" "$(res after-remove-conf)" present
	check_eq "dpkg -P: exit 0" "$(res purge)" 0
	check_eq "... the conffile gone" "$(res after-purge-conf)" gone
	check_eq "... dpkg knows nothing of it" "$(res after-purge-status)" unknown
	check_eq "... none of its files left" "$(res left)" ""
else
	not_ok "a Debian 11 root (debootstrap bullseye into $INFLIGHT_CACHE)"
fi
finish
