#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The Debian version of the package `make deb` builds, from `git describe`: on a tag vX.Y it
# is X.Y; N commits after it X.Y+N.gHASH; with no tag, the binary's own version
# (INFL_VERSION, bpf/loader/cmd/commands.h) +git.N.gHASH, N the commits in the history.
# Uncommitted changes add +dirty. A native package: no Debian revision.
set -eu
cd "$(dirname "$0")/.."
dirty=
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=+dirty
if d=$(git describe --tags --long --match 'v[0-9]*' 2>/dev/null); then
	# v0.2-5-gabc1234: tag, commits since, hash
	tag=${d%-*-g*}
	rest=${d#"$tag"-}
	n=${rest%%-*}
	if [ "$n" = 0 ]; then v=${tag#v}; else v=${tag#v}+$n.${rest#*-}; fi
else
	base=$(sed -n 's/^#define INFL_VERSION "\([^"]*\)".*/\1/p' bpf/loader/cmd/commands.h)
	v=$base+git.$(git rev-list --count HEAD).g$(git describe --always --abbrev=7)
fi
v=$v$dirty
# Debian's rule for a native version: a digit first, then letters, digits and . + ~
echo "$v" | grep -Eq '^[0-9][A-Za-z0-9.+~]*$' || { echo "deb-version: '$v' is not a valid Debian version" >&2; exit 1; }
echo "$v"
