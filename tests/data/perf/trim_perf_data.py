#!/usr/bin/env python3
"""Shrinks a perf.data recording into a test fixture (<= 100 KB) without
changing what perf script prints: drops the MMAP/MMAP2 records (code mappings,
synthesized for every process on the machine; nothing in a schedule needs them)
and empties the printk-format and saved-cmdlines lists inside the tracing data
(the bulk of it, copied from tracefs; perf takes comms from COMM records and
sched tracepoints use no printk formats). Header, attrs, ids, samples,
COMM/FORK/EXIT/LOST records and every other feature section are kept; the
feature section offsets are moved to their new places.

Pipe-mode data (`perf record -o -`) is trimmed the same way, record by record.
A folder of `perf record --threads` is trimmed file by file: its `data` file as
above, each data.N (a bare record stream) by dropping its MMAP/MMAP2 records.
Records inside zstd-compressed ones (perf record -z) are kept as they are.

usage: trim_perf_data.py IN OUT   (little-endian files, or folders of them)
"""
import os
import struct
import sys

DROP = {1, 10}  # PERF_RECORD_MMAP, PERF_RECORD_MMAP2


def trim_tracing_data(t):
    """Returns the tracing data with empty printk-format and saved-cmdlines lists."""
    pos = 3 + 7
    pos = t.index(b"\0", pos) + 1  # version string
    version = float(t[10:pos - 1])
    pos += 2 + 4  # endianness, long size, page size
    for tag in (b"header_page\0", b"header_event\0"):
        assert t[pos:pos + len(tag)] == tag
        pos += len(tag)
        (n,) = struct.unpack_from("<Q", t, pos)
        pos += 8 + n
    (count,) = struct.unpack_from("<I", t, pos)
    pos += 4
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", t, pos)
        pos += 8 + n
    (systems,) = struct.unpack_from("<I", t, pos)
    pos += 4
    for _ in range(systems):
        pos = t.index(b"\0", pos) + 1
        (count,) = struct.unpack_from("<I", t, pos)
        pos += 4
        for _ in range(count):
            (n,) = struct.unpack_from("<Q", t, pos)
            pos += 8 + n
    (kallsyms,) = struct.unpack_from("<I", t, pos)
    pos += 4 + kallsyms
    printk_at = pos
    (printk,) = struct.unpack_from("<I", t, pos)
    pos += 4 + printk
    cmdlines = 0
    if version >= 0.6:
        (cmdlines,) = struct.unpack_from("<Q", t, pos)
        pos += 8 + cmdlines
    # Pipe mode pads the tracing data to 8 bytes.
    assert len(t) - pos < 8 and not any(t[pos:]), "unexpected bytes after the tracing data"
    out = t[:printk_at] + struct.pack("<I", 0) + (struct.pack("<Q", 0) if version >= 0.6 else b"")
    print(f"tracing data: printk formats ({printk} bytes) and saved cmdlines ({cmdlines} bytes) dropped",
          file=sys.stderr)
    return out


def trim_pipe(d):
    out = bytearray(d[:16])
    off = 16
    while off < len(d):
        t, _, s = struct.unpack_from("<IHH", d, off)
        if t == 66:  # PERF_RECORD_HEADER_TRACING_DATA: the formats follow the record
            (n,) = struct.unpack_from("<I", d, off + 8)
            body = trim_tracing_data(d[off + s:off + s + n])
            body += b"\0" * (-len(body) % 8)
            out += d[off:off + 8] + struct.pack("<I", len(body)) + d[off + 12:off + s] + body
            off += s + n
            continue
        if t not in DROP:
            out += d[off:off + s]
        off += s
    return out


def trim_records(d):
    out = bytearray()
    off = 0
    while off < len(d):
        t, _, s = struct.unpack_from("<IHH", d, off)
        if t not in DROP:
            out += d[off:off + s]
        off += s
    return out


def trim_folder(src, dst):
    os.makedirs(dst, exist_ok=True)
    main(os.path.join(src, "data"), os.path.join(dst, "data"))
    for name in sorted(os.listdir(src)):
        if name.startswith("data."):
            d = open(os.path.join(src, name), "rb").read()
            out = trim_records(d)
            open(os.path.join(dst, name), "wb").write(out)
            print(f"{src}/{name}: {len(d)} -> {len(out)} bytes", file=sys.stderr)


def main(src, dst):
    if os.path.isdir(src):
        trim_folder(src, dst)
        return
    d = open(src, "rb").read()
    assert d[:8] == b"PERFILE2", "not a little-endian perf.data file"
    if struct.unpack_from("<Q", d, 8)[0] == 16:
        out = trim_pipe(d)
        open(dst, "wb").write(out)
        print(f"{src}: {len(d)} -> {dst}: {len(out)} bytes (pipe layout)", file=sys.stderr)
        return
    hsize, attr_size, ao, asz, do, dsz = struct.unpack_from("<QQQQQQ", d, 8)
    feat = struct.unpack_from("<4Q", d, 72)
    data = trim_records(d[do:do + dsz])
    sections = []
    pos = do + dsz
    for f in range(1, 256):
        if feat[f // 64] >> (f % 64) & 1:
            o, s = struct.unpack_from("<QQ", d, pos)
            pos += 16
            body = d[o:o + s]
            if f == 1:
                body = trim_tracing_data(body)
            sections.append(body)
    out = bytearray(d[:do]) + data
    struct.pack_into("<Q", out, 48, len(data))
    table_at = len(out)
    out += b"\0" * (16 * len(sections))
    for i, body in enumerate(sections):
        struct.pack_into("<QQ", out, table_at + 16 * i, len(out), len(body))
        out += body
    open(dst, "wb").write(out)
    print(f"{src}: {len(d)} -> {dst}: {len(out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
