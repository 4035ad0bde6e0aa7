# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# Foreign roots for the tests of the shipped binary (source it after tests/lib.sh):
#   bullseye_root        prints the path of a Debian 11 root (glibc 2.31), made once by
#                        `debootstrap --variant=minbase bullseye` from this host's mirror into
#                        INFLIGHT_CACHE (default /var/cache/inflight), outside the repository
#   in_root ROOT CMD...  runs CMD chrooted into ROOT with /proc, /sys and /dev bound in, in a
#                        mount namespace of its own: the mounts go with it, and a root shared
#                        by concurrent runs is never left mounted; killed after
#                        IN_ROOT_TIMEOUT seconds (120)
INFLIGHT_CACHE=${INFLIGHT_CACHE:-/var/cache/inflight}

# the system's Debian mirror (deb822 first, then the one-line format), as scripts/debian-source.sh
debian_mirror() {
	local f=/etc/apt/sources.list.d/debian.sources uri=${DEBIAN_MIRROR:-}
	[ -z "$uri" ] && [ -r "$f" ] && uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f")
	[ -z "$uri" ] && [ -r /etc/apt/sources.list ] &&
		uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
			if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
	echo "${uri:-http://deb.debian.org/debian}"
}

bullseye_root() {
	local root=$INFLIGHT_CACHE/bullseye
	mkdir -p "$INFLIGHT_CACHE"
	(
		# one debootstrap at a time; a half-made root is never taken for a finished one
		flock 9
		[ -x "$root/bin/bash" ] && [ -f "$root/.inflight-complete" ] && exit 0
		[ -x "$root/bin/bash" ] && [ -r "$root/etc/debian_version" ] &&
			grep -q '^11\.' "$root/etc/debian_version" && touch "$root/.inflight-complete" && exit 0
		command -v debootstrap >/dev/null || { echo "debootstrap not found (scripts/install-deps.sh test)" >&2; exit 1; }
		rm -rf "$root.tmp"
		debootstrap --variant=minbase bullseye "$root.tmp" "$(debian_mirror)" >"$INFLIGHT_CACHE/bullseye.log" 2>&1 ||
			{ tail -n 5 "$INFLIGHT_CACHE/bullseye.log" >&2; exit 1; }
		rm -rf "$root"
		mv "$root.tmp" "$root"
		touch "$root/.inflight-complete"
	) 9>"$INFLIGHT_CACHE/.bullseye.lock" || return 1
	echo "$root"
}

in_root() {
	local root=$1
	shift
	# shellcheck disable=SC2016
	unshare --mount --propagation private /bin/sh -c '
		root=$1; shift
		for d in proc sys dev; do
			mkdir -p "$root/$d" && mount --rbind "/$d" "$root/$d" || exit 125
		done
		exec timeout -k 5 "${IN_ROOT_TIMEOUT:-120}" chroot "$root" "$@"' in_root "$root" "$@"
}
