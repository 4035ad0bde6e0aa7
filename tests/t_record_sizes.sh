#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# One size formatter everywhere: the HTML report's own fmtBytes (the chart's axis, its peak
# label, the tooltip) gives the strings of util/fmt.c's fmt_bytes, which the text report,
# the HTML tables and the SVG use, for the same byte counts (ties, unit carries, every unit).
# The HTML's functions are run by node, taken from the page itself.
source "$(dirname "$0")/lib.sh"
command -v node >/dev/null || skip_all "node is not installed (scripts/install-deps.sh test)"
"$BUILD/tests/rec_synth" "$TMP/s.rec"
"$BUILD/inflight" report "$TMP/s.rec" -o "$TMP/s.html" 2>/dev/null
check "report --format html" test -s "$TMP/s.html"
python3 - "$TMP/s.html" >"$TMP/fmt.js" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
m = re.search(r"  function fixed\(v, d\) \{.*?\n  \}\n  function fmtBytes\(v\) \{.*?\n  \}\n", page, re.S)
print(m.group(0) if m else "throw new Error('no fmtBytes in the page')")
PY
# byte counts and fmt_bytes's strings for them (tests/loader/test_fmt.c holds the same)
while read -r n want; do
	got=$(node -e "$(cat "$TMP/fmt.js"); console.log(fmtBytes($n))" 2>&1)
	check_eq "HTML fmtBytes($n) = fmt_bytes's '$want'" "$got" "$want"
done <<'EOF2'
0 0 B
1023 1023 B
1024 1.00 KiB
10234 9.99 KiB
10235 10.0 KiB
14942208 14.2 MiB
14947328 14.3 MiB
1047552 1023 KiB
1048064 1.00 MiB
104805171 99.9 MiB
1073741823 1.00 GiB
5368709120 5.00 GiB
1125899906842624 1.00 PiB
EOF2
finish
