#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What a guest's recording says, decoded on the host by the suite's independent reader
(tests/record/recdump.py: nothing but the format's spec), for comparison with the live
session that watched the same run in the guest.

usage: check_rec.py FILE      prints "events ALLOCS FREES STAGES": the probe hits of the
                              traced process
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "record"))
import recdump  # noqa: E402


def main():
    rec = recdump.parse(sys.argv[1])
    pids = sorted({e[0] for e in rec["events"]})
    if not pids:
        print("events none")
        return
    pid = rec.get("target") if rec.get("target") in pids else pids[0]
    counts = [0, 0, 0]
    for e in rec["events"]:
        # 1.6: a free with flag 8 is the buffer a double alloc replaced, no probe hit
        if rec["minor"] >= 6 and e[4] == 1 and e[6] & 8:
            continue
        if e[0] == pid and e[4] < 3:  # 0 alloc, 1 free, 2 stage; above: RSS, exit
            counts[e[4]] += 1
    print("events %d %d %d" % tuple(counts))


if __name__ == "__main__":
    main()
