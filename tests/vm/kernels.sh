# SPDX-License-Identifier: BSD-2-Clause
# The kernel matrix's rows and how their kernels are fetched. Sourced by tests/vm/run.sh and
# tests/t_kernels.sh (bash). Kernels come from Debian's mirror (the URI the system's own
# sources name) through a private apt configuration under build/vm/apt: its own source list,
# parts directory, lists, cache and an empty dpkg status, so the system's apt state is never
# touched. Each row names a series; the newest package of that series the mirror serves is
# resolved at fetch time, downloaded, unpacked with dpkg-deb -x and its boot files cached in
# build/vm/kernels/ROW/ (kept until the mirror has a newer one).

VM_ROWS="5.10 6.1 6.1-rt 6.12 6.12-rt host"
VM_DIR=${VM_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/vm}
VM_APT=$VM_DIR/apt
# the package lists are refreshed when older than this (seconds); VM_REFRESH=1 forces it
VM_LISTS_MAX_AGE=${VM_LISTS_MAX_AGE:-21600}

# vm_row_pattern ROW: extended regex of the row's package names (the ABI number varies)
vm_row_pattern() {
	case $1 in
	5.10) echo '^linux-image-5\.10\.0-[0-9]+-cloud-amd64-unsigned$' ;;
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
	6.1-rt) echo '^linux-image-6\.1\.0-[0-9]+-rt-amd64-unsigned$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb13-cloud-amd64-unsigned$' ;;
	6.12-rt) echo '^linux-image-6\.12\.[0-9]+\+deb13-rt-amd64-unsigned$' ;;
	*) return 1 ;;
	esac
}

# Debian's mirror, from the system's deb822 sources (first URI), without touching them;
# VM_MIRROR overrides it
vm_mirror() {
	local uri=${VM_MIRROR:-}
	[ -n "$uri" ] && { echo "$uri"; return; }
	uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null)
	echo "${uri:-http://deb.debian.org/debian}"
}

vm_apt_setup() {
	local m sec s key=/usr/share/keyrings/debian-archive-keyring.gpg
	m=$(vm_mirror)
	sec=${m%/debian}/debian-security
	mkdir -p "$VM_APT"/parts "$VM_APT"/prefs "$VM_APT"/lists/partial \
		"$VM_APT"/cache/archives/partial || return 1
	[ -f "$VM_APT/status" ] || : >"$VM_APT/status"
	{
		for s in bullseye bookworm bookworm-updates trixie trixie-updates; do
			echo "deb [signed-by=$key] $m $s main"
		done
		for s in bullseye-security bookworm-security trixie-security; do
			echo "deb [signed-by=$key] $sec $s main"
		done
	} >"$VM_APT/sources.new"
	# rewritten only when it changes: apt rebuilds its cache when the list is newer
	cmp -s "$VM_APT/sources.new" "$VM_APT/sources.list" || mv "$VM_APT/sources.new" "$VM_APT/sources.list"
	rm -f "$VM_APT/sources.new"
	VM_APT_OPTS=(-o "Dir::Etc::SourceList=$VM_APT/sources.list"
		-o "Dir::Etc::SourceParts=$VM_APT/parts"
		-o "Dir::Etc::Preferences=$VM_APT/prefs/none"
		-o "Dir::Etc::PreferencesParts=$VM_APT/prefs"
		-o "Dir::State::Lists=$VM_APT/lists"
		-o "Dir::Cache=$VM_APT/cache"
		-o "Dir::Cache::pkgcache=pkgcache.bin" -o "Dir::Cache::srcpkgcache="
		-o "Dir::State::status=$VM_APT/status"
		-o "APT::Architectures::=amd64" -o "Acquire::Languages=none"
		-o "APT::Sandbox::User=root")
}

# vm_apt_update: refreshes the private lists when stale. A failed refresh with lists at hand
# keeps them (said on stderr); without lists it fails.
vm_apt_update() {
	local stamp=$VM_APT/lists/.updated age
	if [ -f "$stamp" ] && [ "${VM_REFRESH:-0}" != 1 ]; then
		age=$(($(date +%s) - $(stat -c %Y "$stamp")))
		[ "$age" -lt "$VM_LISTS_MAX_AGE" ] && return 0
	fi
	if apt-get "${VM_APT_OPTS[@]}" -qq update >"$VM_APT/update.log" 2>&1 &&
		! grep -qE '^(E|W): ' "$VM_APT/update.log"; then
		touch "$stamp"
		rm -f "$VM_APT/not-served"
		return 0
	fi
	if [ -f "$stamp" ]; then
		echo "vm: apt-get update failed, using the lists of $(date -r "$stamp" '+%F %T'):" \
			"$(grep -E '^(E|W): ' "$VM_APT/update.log" | head -n 1)" >&2
		return 0
	fi
	VM_WHY="apt-get update of the private lists failed: $(grep -E '^(E|W): ' \
		"$VM_APT/update.log" | head -n 1)"
	return 1
}

# The required kernel options, all built in (=y): the guest has no root file system to load
# modules from before init runs, and a row's check names any that is missing.
VM_REQUIRED_CONFIG="BLK_DEV_INITRD SERIAL_8250 SERIAL_8250_CONSOLE DEVTMPFS PROC_FS SYSFS
 TMPFS BPF_SYSCALL BPF_JIT BPF_EVENTS DEBUG_INFO_BTF UPROBES UPROBE_EVENTS PERF_EVENTS
 TRACING FTRACE DEBUG_FS MEMCG UNIX"

# vm_config_missing CONFIG-FILE: prints the required options that are not =y (with what they
# are instead: m or unset)
vm_config_missing() {
	local o v out=""
	for o in $VM_REQUIRED_CONFIG; do
		v=$(sed -n "s/^CONFIG_$o=//p" "$1")
		[ "$v" = y ] || out="$out CONFIG_$o=${v:-unset}"
	done
	echo "${out# }"
}

# vm_fetch ROW: the newest kernel of the row, cached. Sets VM_KDIR (vmlinuz, config, version),
# VM_KVER ("PACKAGE VERSION"), VM_KNOTE (what else the fetch has to say, e.g. a newer
# package listed but not served). On failure returns 1 with the reason in VM_WHY.
vm_fetch() {
	local row=$1 pat names name ver tmp deb tries=0 missing
	VM_KNOTE="" VM_WHY=""
	pat=$(vm_row_pattern "$row") || { VM_WHY="unknown row '$row' (rows: $VM_ROWS)"; return 1; }
	command -v apt-get >/dev/null || { VM_WHY="apt-get not found"; return 1; }
	vm_apt_setup || { VM_WHY="cannot create $VM_APT"; return 1; }
	vm_apt_update || return 1
	names=$(apt-cache "${VM_APT_OPTS[@]}" pkgnames linux-image- | grep -E "$pat" | sort -rV)
	[ -n "$names" ] || { VM_WHY="no package matching $pat on $(vm_mirror)"; return 1; }
	VM_KDIR=$VM_DIR/kernels/$row
	for name in $names; do
		[ $tries -lt 6 ] || break
		tries=$((tries + 1))
		ver=$(apt-cache "${VM_APT_OPTS[@]}" policy "$name" | awk '/Candidate:/ { print $2 }')
		if [ -f "$VM_KDIR/version" ] && [ "$(cat "$VM_KDIR/version")" = "$name $ver" ]; then
			VM_KVER="$name $ver"
			return 0
		fi
		# a package the mirror lists but did not serve is not asked for again until the
		# lists are refreshed
		if grep -qxF "$name $ver" "$VM_APT/not-served" 2>/dev/null; then
			VM_KNOTE="$VM_KNOTE$name $ver is listed but was not served; "
			continue
		fi
		tmp=$VM_DIR/dl.$row
		rm -rf "$tmp"
		mkdir -p "$tmp"
		if ! (cd "$tmp" && apt-get "${VM_APT_OPTS[@]}" -qq download "$name=$ver") \
			>"$tmp.log" 2>&1; then
			VM_KNOTE="$VM_KNOTE$name $ver is listed but not served ($(grep -oE \
				'[0-9]{3} +[A-Za-z ]+' "$tmp.log" | head -n 1 | tr -s ' ')); "
			echo "$name $ver" >>"$VM_APT/not-served"
			rm -rf "$tmp"
			continue
		fi
		deb=$(ls "$tmp"/*.deb)
		mkdir -p "$tmp/x"
		dpkg-deb -x "$deb" "$tmp/x" || { VM_WHY="dpkg-deb -x $deb failed"; return 1; }
		missing=$(vm_config_missing "$tmp"/x/boot/config-*)
		if [ -n "$missing" ]; then
			VM_WHY="$name $ver lacks built-in options the guest needs: $missing"
			rm -rf "$tmp"
			return 1
		fi
		# only the boot files are kept: every option the guest needs is built in (checked
		# above), so no module from the package's /lib/modules is loaded
		rm -rf "$VM_KDIR"
		mkdir -p "$VM_KDIR"
		mv "$tmp"/x/boot/vmlinuz-* "$VM_KDIR/vmlinuz"
		mv "$tmp"/x/boot/config-* "$VM_KDIR/config"
		echo "$name $ver" >"$VM_KDIR/version"
		rm -rf "$tmp" "$tmp.log"
		VM_KVER="$name $ver"
		return 0
	done
	VM_WHY="${VM_KNOTE}no package of the series could be downloaded"
	return 1
}
