#!/usr/bin/env python3
"""Shrinks a trace-cmd v7 (zstd) trace.dat to fixture size without touching its events.

trace-cmd saves every event format of the kernel (~120 KB compressed) and the
whole of kallsyms (~1 MB), so even a 50 ms recording is over a megabyte. This
rewrites the file section by section: event formats only for the systems asked
for (default: sched, task), an empty kallsyms, everything else (header page,
ftrace formats, printk formats, saved cmdlines, options, the per-CPU chunks,
strings) copied byte for byte, with the offsets that point at them updated;
saved cmdlines cut down to the tids `trace-cmd report` of the input mentions.
Check the result with `trace-cmd report`: it must print the same as for the input.

How the fixtures in this folder were made (Linux 6.18 guest, trace-cmd 3.1.6):
  record-sched-trace /tmp/tiny tracedat -- sleep 0.05
  reduce_tracedat.py /tmp/tiny/trace.dat tiny-v7-zstd.dat
  trace-cmd convert --compression none -i tiny-v7-zstd.dat -o tiny-v7-none.dat
  trace-cmd convert --file-version 6 -i tiny-v7-zstd.dat -o tiny-v6.dat

usage: reduce_tracedat.py IN OUT [SYSTEM...]
Needs the zstd command-line tool and trace-cmd.
"""
import re
import struct
import subprocess
import sys


def zstd(data: bytes, decompress: bool) -> bytes:
    args = ["zstd", "-q", "-c"] + (["-d"] if decompress else ["-19"])
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    keep = set(sys.argv[3:] or ["sched", "task"])
    f = open(src, "rb").read()
    if f[:10] != b"\x17\x08\x44tracing":
        sys.exit("not a trace.dat")
    p = 10
    end = f.index(b"\0", p)
    if f[p:end] != b"7":
        sys.exit("only version 7 files")
    p = end + 1
    if f[p] != 0:
        sys.exit("only little-endian files")
    page = struct.unpack_from("<I", f, p + 2)[0]
    p += 6
    for _ in range(2):  # compression name and version
        p = f.index(b"\0", p) + 1
    if b"zstd" not in f[10:p]:
        sys.exit("only zstd-compressed files")
    header = bytearray(f[:p])
    p += 8  # first options section offset, rewritten below

    # Walk the sections in file order.
    sections = []
    while p + 16 <= len(f):
        sid, flags, desc, size = struct.unpack_from("<HHIQ", f, p)
        sections.append((p, sid, flags, desc, size, f[p + 16:p + 16 + size]))
        p += 16 + size

    def unpack(flags, payload):
        if not flags & 1:
            return payload
        csize, usize = struct.unpack_from("<II", payload, 0)
        out = zstd(payload[8:8 + csize], True)
        assert len(out) == usize
        return out

    def pack(flags, data):
        if not flags & 1:
            return data
        c = zstd(data, False)
        return struct.pack("<II", len(c), len(data)) + c

    def reduce_formats(data):
        q = 0
        (systems,) = struct.unpack_from("<I", data, q)
        q += 4
        kept = []
        for _ in range(systems):
            e = data.index(b"\0", q)
            name = data[q:e]
            q = e + 1
            (count,) = struct.unpack_from("<I", data, q)
            q += 4
            fmts = []
            for _ in range(count):
                (size,) = struct.unpack_from("<Q", data, q)
                fmts.append(data[q:q + 8 + size])
                q += 8 + size
            if name.decode() in keep:
                kept.append(name + b"\0" + struct.pack("<I", count) + b"".join(fmts))
        return struct.pack("<I", len(kept)) + b"".join(kept)

    # Where each CPU's data is, from the BUFFER option (in a later options section).
    cpu_data = {}
    for (_, sid, flags, _, _, payload) in sections:
        if sid != 0:
            continue
        payload = unpack(flags, payload)
        q = 0
        while q < len(payload):
            oid, osize = struct.unpack_from("<HI", payload, q)
            data = payload[q + 6:q + 6 + osize]
            if oid == 3:
                r = data.index(b"\0", 8) + 1
                r = data.index(b"\0", r) + 1
                r += 4  # page size
                (cpus,) = struct.unpack_from("<I", data, r)
                r += 4
                for _ in range(cpus):
                    cpu, off, _sz = struct.unpack_from("<IQQ", data, r)
                    r += 20
                    cpu_data[cpu] = off
            q += 6 + osize

    report = subprocess.run(["trace-cmd", "report", src], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            check=True).stdout
    mentioned = set(re.findall(rb"\d+", report))

    def reduce_cmdlines(data):
        (size,) = struct.unpack_from("<Q", data, 0)
        lines = data[8:8 + size].split(b"\n")
        kept = b"\n".join(l for l in lines if l and l.split(b" ", 1)[0] in mentioned) + b"\n"
        return struct.pack("<Q", len(kept)) + kept

    out = bytearray(header) + b"\0" * 8
    new_offset = {}  # old section offset -> new
    pending_options = []
    placed = {}
    for (old, sid, flags, desc, size, payload) in sections:
        new_offset[old] = len(out)
        if sid == 18:
            payload = pack(flags, reduce_formats(unpack(flags, payload)))
        elif sid == 19:
            payload = pack(flags, struct.pack("<I", 0))
        elif sid == 21:
            payload = pack(flags, reduce_cmdlines(unpack(flags, payload)))
        elif sid == 3:
            # The flyrecord section: each CPU's chunk stream, page-aligned, in CPU
            # order. (trace-cmd's declared sizes leave out the 4-byte chunk count.)
            at = len(out)
            out += b"\0" * 16
            for cpu in sorted(cpu_data):
                off = cpu_data[cpu]
                (chunks,) = struct.unpack_from("<I", f, off)
                e = off + 4
                for _ in range(chunks):
                    csize, _usize = struct.unpack_from("<II", f, e)
                    e += 8 + csize
                out += b"\0" * ((len(out) + page - 1) // page * page - len(out))
                placed[cpu] = len(out)
                out += f[off:e]
            struct.pack_into("<HHIQ", out, at, sid, flags, desc, len(out) - (at + 16))
            continue
        if sid == 0:
            assert not flags & 1, "compressed options sections are not handled"
            pending_options.append((len(out), flags, desc, payload))
        out += struct.pack("<HHIQ", sid, flags, desc, len(payload)) + payload

    # Rewrite the options sections at their new places, with the offsets updated.
    for (at, flags, desc, payload) in pending_options:
        q = 0
        new_payload = bytearray()
        while q < len(payload):
            oid, osize = struct.unpack_from("<HI", payload, q)
            data = bytearray(payload[q + 6:q + 6 + osize])
            if 16 <= oid <= 21:
                (old,) = struct.unpack_from("<Q", data, 0)
                struct.pack_into("<Q", data, 0, new_offset[old])
            elif oid == 0 and osize >= 8:
                (old,) = struct.unpack_from("<Q", data, 0)
                if old:
                    struct.pack_into("<Q", data, 0, new_offset[old])
            elif oid == 3:
                (old,) = struct.unpack_from("<Q", data, 0)
                struct.pack_into("<Q", data, 0, new_offset[old])
                r = 8
                r = data.index(b"\0", r) + 1
                r = data.index(b"\0", r) + 1
                r += 4
                (cpus,) = struct.unpack_from("<I", data, r)
                r += 4
                for _ in range(cpus):
                    (cpu,) = struct.unpack_from("<I", data, r)
                    struct.pack_into("<Q", data, r + 4, placed[cpu])
                    r += 20
            new_payload += struct.pack("<HI", oid, osize) + data
            q += 6 + osize
        struct.pack_into("<HHIQ", out, at, 0, flags, desc, len(new_payload))
        out[at + 16:at + 16 + len(new_payload)] = new_payload

    first_options = struct.unpack_from("<Q", f, len(header))[0]
    struct.pack_into("<Q", out, len(header), new_offset[first_options])
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
