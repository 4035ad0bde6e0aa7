#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What an ELF file's notes, sections and segments say about its USDT probes, read from the
file itself (no readelf parsing). The program matrix (tests/t_programs.sh) asserts these for
binaries built with probes/inflight_probes.h and probes/rust, and prints them as evidence
for the others.

  elf_facts.py dead ELF     the stapsdt notes whose site lies in no executable section
                            (code --gc-sections removed: the site then reads as the nop's
                            offset in the removed section), one line each
  elf_facts.py semas ELF    the semaphores the kernel cannot raise where the program reads
                            them: not file-backed, or their file page is mapped by more than
                            one writable PT_LOAD (lld's page shared by RELRO and RW), one line
                            each; also a probe without a semaphore
  elf_facts.py layout ELF   one line: where the semaphores are (section, file page, segments)
  elf_facts.py offsets ELF PROBE   "SITE SEMAPHORE": the file offsets of PROBE's first
                            site and its semaphore (what a uprobe is registered with)
  elf_facts.py sites ELF    "SITE:SEMAPHORE,...": the file offsets of every site that has a
                            semaphore and the semaphore's (what each uprobe is registered with)
  elf_facts.py state ELF PID   per probe, "PROBE sema=N int3=K": its semaphore where process
                            PID reads it, and the breakpoints at its sites over every private
                            mapping of the file in PID (what the kernel lowers it for once the
                            last tracer leaves)
  elf_facts.py build ELF    how it was built, as far as the file tells: "elf32|elf64
                            exec|pie|dyn static|dynamic symtab|stripped linker=lld|mold|gold|bfd"

Exits 0 in every case (the output is the answer), 2 when the file cannot be read as ELF.
"""
import os
import struct
import sys

PAGE = 4096
SHF_EXECINSTR = 0x4
PT_LOAD, PT_GNU_RELRO = 1, 0x6474E552
PF_W = 0x2
SHT_NOTE = 7


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ValueError("not an ELF file")
        self.is64 = d[4] == 2
        self.end = "<" if d[5] == 1 else ">"
        if self.is64:
            (self.phoff, self.shoff) = struct.unpack_from(self.end + "QQ", d, 0x20)
            (self.phentsize, self.phnum, self.shentsize, self.shnum,
             self.shstrndx) = struct.unpack_from(self.end + "HHHHH", d, 0x36)
        else:
            (self.phoff, self.shoff) = struct.unpack_from(self.end + "II", d, 0x1C)
            (self.phentsize, self.phnum, self.shentsize, self.shnum,
             self.shstrndx) = struct.unpack_from(self.end + "HHHHH", d, 0x2A)
        self.sections = [self._shdr(i) for i in range(self.shnum)]
        if self.sections and self.shstrndx < len(self.sections):
            strtab = self.sections[self.shstrndx]
            for s in self.sections:
                s["name"] = self._str(strtab["offset"] + s["name_off"])
        self.segments = [self._phdr(i) for i in range(self.phnum)]

    def _str(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("ascii", "replace")

    def _shdr(self, i):
        off = self.shoff + i * self.shentsize
        if self.is64:
            f = struct.unpack_from(self.end + "IIQQQQIIQQ", self.data, off)
        else:
            f = struct.unpack_from(self.end + "IIIIIIIIII", self.data, off)
        return {"name_off": f[0], "type": f[1], "flags": f[2], "addr": f[3], "offset": f[4],
                "size": f[5], "name": ""}

    def _phdr(self, i):
        off = self.phoff + i * self.phentsize
        if self.is64:
            t, fl, o, va, _, fsz, msz, _ = struct.unpack_from(self.end + "IIQQQQQQ",
                                                               self.data, off)
        else:
            t, o, va, _, fsz, msz, fl, _ = struct.unpack_from(self.end + "IIIIIIII",
                                                               self.data, off)
        return {"type": t, "flags": fl, "offset": o, "vaddr": va, "filesz": fsz,
                "memsz": msz}

    def stapsdt(self):
        """(provider, name, site, semaphore) per stapsdt note (type 3, owner "stapsdt")."""
        asz = 8 if self.is64 else 4
        out = []
        for s in self.sections:
            if s["type"] != SHT_NOTE:
                continue
            d = self.data[s["offset"]:s["offset"] + s["size"]]
            off = 0
            while off + 12 <= len(d):
                namesz, descsz, ntype = struct.unpack_from(self.end + "III", d, off)
                name = d[off + 12:off + 12 + namesz]
                desc = off + 12 + ((namesz + 3) & ~3)
                off = desc + ((descsz + 3) & ~3)
                if ntype != 3 or name != b"stapsdt\0":
                    continue
                fmt = self.end + ("QQQ" if self.is64 else "III")
                site, _, sema = struct.unpack_from(fmt, d, desc)
                strs = d[desc + 3 * asz:desc + descsz].split(b"\0")
                out.append((strs[0].decode(), strs[1].decode(), site, sema))
        return out


def dead(elf):
    text = [s for s in elf.sections if s["flags"] & SHF_EXECINSTR]
    for prov, name, site, _ in elf.stapsdt():
        if not any(s["addr"] <= site < s["addr"] + s["size"] for s in text):
            print("%s:%s site 0x%x lies in no executable section" % (prov, name, site))


def semas(elf):
    loads = [p for p in elf.segments if p["type"] == PT_LOAD]
    seen = set()
    for prov, name, _, sema in elf.stapsdt():
        if not sema:
            print("%s:%s has no semaphore" % (prov, name))
            continue
        if sema in seen:
            continue
        seen.add(sema)
        seg = [p for p in loads if p["vaddr"] <= sema < p["vaddr"] + p["memsz"]]
        if not seg:
            print("semaphore 0x%x lies in no PT_LOAD segment" % sema)
            continue
        p = seg[0]
        if sema >= p["vaddr"] + p["filesz"]:
            print("semaphore 0x%x is not file-backed (in its segment's bss)" % sema)
            continue
        page = (sema - p["vaddr"] + p["offset"]) // PAGE * PAGE
        maps = [q for q in loads if q["flags"] & PF_W and q["filesz"] and
                q["offset"] // PAGE * PAGE <= page < q["offset"] + q["filesz"]]
        if len(maps) != 1:
            print("semaphore 0x%x: its file page 0x%x is mapped by %d writable PT_LOADs: %s" %
                  (sema, page, len(maps), segs(maps)))


def segs(ps):
    return " ".join("[off 0x%x va 0x%x filesz 0x%x]" % (p["offset"], p["vaddr"], p["filesz"])
                    for p in ps)


def layout(elf):
    semas_ = sorted({s for _, _, _, s in elf.stapsdt()})
    secs = [s for s in elf.sections
            if s["name"] in (".probes", ".data.rel.ro", ".got", ".got.plt", ".data")]
    relro = [p for p in elf.segments if p["type"] == PT_GNU_RELRO]
    rw = [p for p in elf.segments if p["type"] == PT_LOAD and p["flags"] & PF_W]
    print("semaphores %s; sections %s; RELRO %s; RW PT_LOADs %s" % (
        " ".join("0x%x" % s for s in semas_),
        " ".join("%s@0x%x+0x%x(off 0x%x)" % (s["name"], s["addr"], s["size"], s["offset"])
                 for s in secs),
        segs(relro) or "none", segs(rw)))


def section_bytes(elf, name):
    for s in elf.sections:
        if s["name"] == name:
            return elf.data[s["offset"]:s["offset"] + s["size"]]
    return None


def build(elf):
    """What the file says of its build; the linker from the marks each leaves: lld and mold
    name themselves in .comment, gold adds .note.gnu.gold-version, GNU ld (bfd) neither."""
    e_type = struct.unpack_from(elf.end + "H", elf.data, 0x10)[0]
    interp = any(p["type"] == 3 for p in elf.segments)
    dynamic = any(p["type"] == 2 for p in elf.segments)
    kind = "exec" if e_type == 2 else ("pie" if interp else "dyn")
    comment = section_bytes(elf, ".comment") or b""
    if b"Linker: LLD" in comment or b"Linker: Debian LLD" in comment:
        linker = "lld"
    elif b"mold " in comment:
        linker = "mold"
    elif section_bytes(elf, ".note.gnu.gold-version") is not None:
        linker = "gold"
    else:
        linker = "bfd"
    print("%s %s %s %s linker=%s" % (
        "elf64" if elf.is64 else "elf32", kind, "dynamic" if dynamic else "static",
        "symtab" if any(s["type"] == 2 for s in elf.sections) else "stripped", linker))


def file_offset(elf, va):
    for p in elf.segments:
        if p["type"] == PT_LOAD and p["vaddr"] <= va < p["vaddr"] + p["filesz"]:
            return va - p["vaddr"] + p["offset"]
    return None


def offsets(elf, probe):
    for _, name, site, sema in elf.stapsdt():
        if name == probe and file_offset(elf, site) is not None and sema:
            print("0x%x 0x%x" % (file_offset(elf, site), file_offset(elf, sema)))
            return


def sites(elf):
    print(",".join("0x%x:0x%x" % (file_offset(elf, site), file_offset(elf, sema))
                   for _, _, site, sema in elf.stapsdt()
                   if sema and file_offset(elf, site) is not None))


def state(path, pid):
    elf = Elf(path)
    st = os.stat(path)
    maps = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            if int(fields[4]) == st.st_ino and os.makedev(major, minor) == st.st_dev:
                maps.append((start, end, int(fields[2], 16), fields[1]))
    first = min(p["vaddr"] for p in elf.segments if p["type"] == PT_LOAD)
    base = [m for m in maps if m[2] == 0][0][0] - (first & ~(PAGE - 1))
    probes = {}
    with open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for _, name, site, sema in elf.stapsdt():
            if not sema:
                continue
            mem.seek(base + sema)
            value = struct.unpack("<H", mem.read(2))[0]
            off = file_offset(elf, site)
            int3 = 0
            for start, end, moff, perms in maps:
                if perms[3] == "p" and moff <= off < moff + end - start:
                    mem.seek(start + off - moff)
                    int3 += mem.read(1) == b"\xcc"
            old = probes.get(name, (value, 0))
            probes[name] = (value, old[1] + int3)
    for name in sorted(probes):
        print("%s sema=%d int3=%d" % (name, probes[name][0], probes[name][1]))


def main():
    cmds = {"dead": dead, "semas": semas, "layout": layout, "build": build, "sites": sites}
    if len(sys.argv) == 4 and sys.argv[1] == "offsets":
        offsets(Elf(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) == 4 and sys.argv[1] == "state":
        state(sys.argv[2], int(sys.argv[3]))
        return
    if len(sys.argv) != 3 or sys.argv[1] not in cmds:
        sys.exit("usage: elf_facts.py dead|semas|layout|build|sites ELF | offsets ELF PROBE | "
                 "state ELF PID")
    try:
        elf = Elf(sys.argv[2])
    except (OSError, ValueError, struct.error, IndexError) as e:
        print("elf_facts.py: %s: %s" % (sys.argv[2], e), file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]](elf)


if __name__ == "__main__":
    main()
