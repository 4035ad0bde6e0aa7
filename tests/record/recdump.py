#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""An independent reader of inflight recordings (docs/recording.md), for the tests: it
decodes the file with nothing but the spec and recomputes from the raw events what the
renderers claim, by a different method (buffer slots taken from the kernel's from_slot,
owners tracked by the owner ids the events carry).

usage: recdump.py FILE folded          memory x time per (stage, class), byte-ms, like
                                       `report --format folded` (names from the header,
                                       or the last NAMES record)
       recdump.py FILE summary         peak, its time (us after the start), owners done
       recdump.py FILE at SEQ          tracked bytes and buffers after event SEQ
       recdump.py FILE threads         the threads that hit the target's probes: how many,
                                       how many per probe (alloc, free, stage), tid 0 seen
       recdump.py FILE dump            a flight recorder's dump (1.3): its trigger, and per
                                       process the state carried in at the window's start
       recdump.py FILE atend           what is in flight at the end: "stage;class bufs bytes"
       recdump.py FILE order           how far the file strays from the kernel's order: the
                                       most accounting events of one process that came
                                       before one they follow in seq ("ahead N"; for a
                                       recording that lost none)
A dump (format 1.3) begins mid-run: its START records say after which event of a process it
begins, and the carried events (flag 64 on an alloc or a stage) that follow are that state;
replayed like any event, they make every figure of the window exact.
A double alloc (flag 8 on an alloc) replaces the buffer of its id at once up to format 1.5;
from 1.6 that buffer stays counted until the free with flag 8 that names it (its id, class,
bytes and owner) at a later seq.
"""
import struct
import sys
import zlib

SLOT_NONE = 16
# 1.3: the tracer's own classes (libcuda's), past the contract's 16, named by the format
CUDA_CLASSES = {16: "cuda_device", 17: "cuda_host", 18: "cuda_managed"}


def varint(buf, off):
    v, shift = 0, 0
    while True:
        b = buf[off]
        off += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, off


def string(buf, off):
    n, off = varint(buf, off)
    return buf[off:off + n].decode("utf-8", "replace"), off + n


def records(data):
    assert data[:8] == b"INFLREC\n", "bad magic"
    major, _minor = struct.unpack_from("<HH", data, 8)
    assert major == 1, "unknown major"
    off = 16
    while off < len(data):
        rtype, zero, plen = struct.unpack_from("<HHI", data, off)
        assert zero == 0
        payload = data[off + 8:off + 8 + plen]
        (crc,) = struct.unpack_from("<I", data, off + 8 + plen)
        assert crc == zlib.crc32(data[off:off + 8 + plen]), "bad crc"
        yield rtype, payload
        off += 12 + plen


def names(rec, p, off):
    """The names of the header, or of a NAMES record (1.4: qualified, and the last holds)."""
    rec["classes"], rec["stages"] = {}, {}
    _contract, off = varint(p, off)
    _provider, off = string(p, off)
    n, off = varint(p, off)
    for _ in range(n):
        i, off = varint(p, off)
        rec["classes"][i], off = string(p, off)
    n, off = varint(p, off)
    for _ in range(n):
        i, off = varint(p, off)
        rec["stages"][i], off = string(p, off)
    _entry, off = varint(p, off)
    rec["terminal"], off = varint(p, off)
    return off


def parse(path):
    data = open(path, "rb").read()
    rec = {"events": [], "classes": {}, "stages": {}, "terminal": 0}
    rec["minor"] = struct.unpack_from("<H", data, 10)[0] if len(data) >= 12 else 0
    for rtype, p in records(data):
        if rtype == 1:  # header
            off = names(rec, p, 0)
            _host, off = string(p, off)
            argc, off = varint(p, off)
            for _ in range(argc):
                _arg, off = string(p, off)
            _binary, off = string(p, off)
            _mode, off = varint(p, off)
            rec["target"], off = varint(p, off)
            _wall, off = varint(p, off)
            rec["t0"], off = varint(p, off)
        elif rtype == 3:  # events
            count, off = varint(p, 0)
            ts, off = varint(p, off)
            for _ in range(count):
                etype, eid, flags, slot = p[off:off + 4]
                off += 4
                z, off = varint(p, off)
                ts += (z >> 1) ^ -(z & 1)
                vals = []
                for _ in range(6):
                    v, off = varint(p, off)
                    vals.append(v)
                seq, pid, tid, a0, a1, a2 = vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
                rec["events"].append((pid, seq, etype > 2, ts, etype, eid, flags, slot, a0, a1, a2, tid))
        elif rtype == 11:  # names (1.4)
            names(rec, p, 0)
        elif rtype == 7:
            rec["end"], _ = varint(p, 0)
        elif rtype == 9:  # start: the state after event `seq` follows, carried
            off = 0
            vals = []
            for _ in range(5):
                v, off = varint(p, off)
                vals.append(v)
            rec.setdefault("starts", {})[vals[1]] = {"seq": vals[2], "bufs": vals[3], "owners": vals[4]}
        elif rtype == 10:  # dump
            trig, off = string(p, 0)
            detail, off = string(p, off)
            vals = []
            for _ in range(7):
                v, off = varint(p, off)
                vals.append(v)
            rec["dump"] = {"trigger": trig, "detail": detail, "trigger_ns": vals[0],
                           "window_ns": vals[1], "number": vals[5]}
    return rec


def replay(rec, pid, upto=None):
    """Memory x time per (slot, class) in byte-ns, the peak and owners done, of one pid;
    with `upto`, the tracked bytes and buffers after that event instead."""
    evs = sorted(e for e in rec["events"] if e[0] == pid)
    # 1.6: a double alloc's replaced buffer is counted until its own free (flag 8)
    dup_free = rec["minor"] >= 6
    if upto is not None:
        bufs, aside = {}, []
        for e in evs:
            _pid, seq, _late, _ts, etype, cid, flags, _slot, a0, a1, _a2, _tid = e
            if seq > upto:
                break
            if etype == 0 and not flags & 6:
                if dup_free and flags & 8 and a0 in bufs:
                    aside.append((a0, bufs[a0]))
                bufs[a0] = a1
            elif etype == 1 and not flags & 3:
                if dup_free and flags & 8 and (a0, a1) in aside:
                    aside.remove((a0, a1))
                else:
                    bufs.pop(a0)
        return sum(bufs.values()) + sum(b for _, b in aside), len(bufs) + len(aside)
    bufs, held, where = {}, {}, {}  # buf -> (cls, bytes, owner, staged); owner -> ...
    aside = {}  # 1.6: (buf, cls, bytes, owner) -> [staged]: replaced, counted until freed
    cells, area, counts = {}, {}, {}
    total = peak = peak_ts = done = 0
    last = None
    t_end = rec.get("end", 0)
    for e in evs:
        _pid, _seq, _late, ts, etype, cid, flags, slot, a0, a1, a2, _tid = e
        if etype == 4:
            t_end = ts
    for e in evs:
        _pid, _seq, _late, ts, etype, cid, flags, slot, a0, a1, a2, _tid = e
        # time never runs backwards (docs/recording.md): an event whose clock reading came
        # before the one of an event it follows in seq adds no time
        if last is not None and ts > last:
            for key, b in cells.items():
                area[key] = area.get(key, 0) + b * (ts - last)
        last = ts if last is None or ts > last else last
        ts = last  # the peak's time too, as the reports give it
        if flags & 2 or etype > 2:  # rejected, or RSS / exit
            continue
        # libcuda's pointers are not the program's buffer ids: a key space of their own
        key = (cid >= 16, a0)
        if etype == 0:  # alloc: the kernel says which slot
            if flags & 4:  # untracked: a kernel table was full, nothing counted
                continue
            staged = a2 != 0 and not flags & 32  # 32: owner table full, counted unstaged
            if key in bufs and dup_free and flags & 8:
                # double alloc, 1.6: the old buffer stays until the free that names it
                ocls, obytes, oowner, ostaged = bufs[key]
                aside.setdefault((key, ocls, obytes, oowner), []).append(ostaged)
            elif key in bufs:  # double alloc: the old record goes
                ocls, obytes, oowner, ostaged = bufs[key]
                oslot = where.get(oowner, SLOT_NONE) if ostaged else SLOT_NONE
                cells[(oslot, ocls)] = cells.get((oslot, ocls), 0) - obytes
                counts[(oslot, ocls)] = counts.get((oslot, ocls), 0) - 1
                total -= obytes
                if ostaged:
                    held.setdefault(oowner, {})[ocls] = \
                        held.get(oowner, {}).get(ocls, 0) - obytes
            if staged:
                where.setdefault(a2, SLOT_NONE)
                held.setdefault(a2, {})
                held[a2][cid] = held[a2].get(cid, 0) + a1
            bufs[key] = (cid, a1, a2, staged)
            cells[(slot, cid)] = cells.get((slot, cid), 0) + a1
            counts[(slot, cid)] = counts.get((slot, cid), 0) + 1
            total += a1
            if total > peak:
                peak, peak_ts = total, ts
        elif etype == 1:  # free
            if flags & 1:
                continue
            if dup_free and flags & 8 and aside.get((key, cid, a1, a2)):
                # 1.6: the buffer a double alloc replaced (else the live record is: the
                # alloc was not counted after all)
                cls, size, owner, staged = cid, a1, a2, aside[(key, cid, a1, a2)].pop()
            else:
                cls, size, owner, staged = bufs.pop(key)
            # .get: where two threads' hits on an owner raced (owner_races), the kernel's
            # slots follow the owner's own order, not this one; the total does not depend
            # on it
            cells[(slot, cls)] = cells.get((slot, cls), 0) - size
            counts[(slot, cls)] = counts.get((slot, cls), 0) - 1
            total -= size
            if staged:
                held.setdefault(owner, {})[cls] = held.get(owner, {}).get(cls, 0) - size
                if where.get(owner, SLOT_NONE) < 16 and rec["terminal"] >> where[owner] & 1 and \
                        not any(held[owner].values()):
                    del where[owner], held[owner]
                    done += 1
        elif etype == 2:  # stage: the owner's buffers move with it
            if flags & 4:
                continue
            where.setdefault(a0, SLOT_NONE)
            held.setdefault(a0, {})
            for cls, b in held[a0].items():
                n = sum(1 for v in bufs.values() if v[3] and v[2] == a0 and v[0] == cls)
                n += sum(sum(v) for k, v in aside.items() if k[3] == a0 and k[1] == cls)
                cells[(slot, cls)] = cells.get((slot, cls), 0) - b
                cells[(cid, cls)] = cells.get((cid, cls), 0) + b
                counts[(slot, cls)] = counts.get((slot, cls), 0) - n
                counts[(cid, cls)] = counts.get((cid, cls), 0) + n
            where[a0] = cid
            if rec["terminal"] >> cid & 1 and not any(held[a0].values()):
                del where[a0], held[a0]
                done += 1
    if last is not None and t_end > last:
        for key, b in cells.items():
            area[key] = area.get(key, 0) + b * (t_end - last)
    rec["at_end"] = {k: (counts.get(k, 0), v) for k, v in cells.items() if v or counts.get(k)}
    return area, peak, peak_ts, done


def ahead(rec, pid):
    """The most events of `pid` waiting, in file order, for one before them in seq."""
    seqs = [e[1] for e in rec["events"] if e[0] == pid and not e[2]]
    if not seqs:
        return 0
    waiting, want, most = set(), min(seqs), 0
    for s in seqs:
        waiting.add(s)
        while want in waiting:
            waiting.remove(want)
            want += 1
        most = max(most, len(waiting))
    return most


def name_of(rec, slot, cls):
    stage = rec["stages"].get(slot, "(none)" if slot == SLOT_NONE else f"stage{slot}")
    return f"{stage};{rec['classes'].get(cls, CUDA_CLASSES.get(cls, f'cls{cls}'))}"


def main():
    rec = parse(sys.argv[1])
    pids = sorted({e[0] for e in rec["events"]})
    pid = rec.get("target") if rec.get("target") in pids else pids[0]
    if sys.argv[2] == "at":
        print("tracked %d bufs %d" % replay(rec, pid, int(sys.argv[3])))
        return
    if sys.argv[2] == "threads":
        tids = {}
        for e in rec["events"]:
            if e[0] == pid and e[4] <= 2:
                tids.setdefault(e[4], set()).add(e[11])
        every = set().union(*tids.values())
        print("threads %d, by probe %s, tid 0 %s" % (len(every), [len(tids.get(t, ())) for t in range(3)], 0 in every))
        return
    if sys.argv[2] == "order":
        print("ahead %d" % max(ahead(rec, p) for p in pids))
        return
    if sys.argv[2] == "dump":
        d = rec["dump"]
        carried = {}
        for e in rec["events"]:
            if e[4] <= 2 and e[6] & 64 and e[4] != 1:
                c = carried.setdefault(e[0], [0, 0])
                c[e[4] // 2] += 1
        print("trigger %s window_after_trigger_ms %d" % (d["trigger"], (d["trigger_ns"] - d["window_ns"]) // 1000000))
        for p in sorted(rec.get("starts", {})):
            st = rec["starts"][p]
            print("pid %d after %d carried %d bufs %d owners" % (p, st["seq"], *carried.get(p, [0, 0])))
        return
    area, peak, peak_ts, done = replay(rec, pid)
    if sys.argv[2] == "folded":
        for (slot, cls), v in sorted(area.items()):
            if v // 1000000:
                print(f"{name_of(rec, slot, cls)} {v // 1000000}")
    elif sys.argv[2] == "atend":
        for (slot, cls), (n, b) in sorted(rec["at_end"].items()):
            print(f"{name_of(rec, slot, cls)} {n} {b}")
    else:
        # the reports' clock: time 0 is the run's first probe event (any process), each
        # process's first in its seq order (one after it with an earlier time adds none)
        firsts = {}
        for e in rec["events"]:
            if e[4] <= 2 and (e[0] not in firsts or e < firsts[e[0]]):
                firsts[e[0]] = e
        first = min(e[3] for e in firsts.values())
        print(f"peak {peak} at_us {(peak_ts - first) // 1000} done {done}")


if __name__ == "__main__":
    main()
