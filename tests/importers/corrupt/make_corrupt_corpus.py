#!/usr/bin/env python3
"""Writes the corrupt-input corpus, tests/data/<format>/corrupt/, from this
repository's own fixtures (deterministic: run it again to regenerate; the
expected error of every file is in the table of corrupt_corpus_test.cpp). One file per kind of damage and
format: empty, truncated, flipped bits, wrong record sizes, huge declared
sizes, wrong versions. Files damaged in their header are cut to the first KiBs
(the importer must stop there anyway) to keep the corpus small.

usage: tests/importers/corrupt/make_corrupt_corpus.py   (from anywhere)
"""
import os
import shutil
import struct
import zlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracedat_layout import v6_layout  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")


def read(rel):
    return bytearray(open(os.path.join(DATA, rel), "rb").read())


def write(rel, data):
    path = os.path.join(DATA, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(bytes(data))


def flip(data, offset, mask):
    data[offset] ^= mask
    return data


# --- perf.data ---------------------------------------------------------------

def perf_records(f, start):
    """(offset, type, size) of each record from `start` (pipe layout: the
    tracing-data record is followed by its payload, not counted in size)."""
    out = []
    p = start
    while p + 8 <= len(f):
        rtype, _misc, size = struct.unpack_from("<IHH", f, p)
        if size < 8:
            break
        out.append((p, rtype, size))
        p += size
        if rtype == 66:  # PERF_RECORD_HEADER_TRACING_DATA
            (tsize,) = struct.unpack_from("<I", f, p - size + 8)
            p += (tsize + 7) // 8 * 8
    return out


def perf():
    fmode = read("perf/sleep-0.1.perf.data")
    pipe = read("perf/sleep-0.05.pipe.perf.data")
    d = "perf/corrupt/"
    recs = perf_records(pipe, 16)
    samples = [r for r in recs if r[1] == 9]
    mid = samples[len(samples) // 2]
    write(d + "empty.perf.data", b"")
    write(d + "truncated-header.perf.data", fmode[:60])
    # File layout cut inside the data section: the feature sections at the end
    # (tracing formats among them) are gone.
    data_off, data_size = struct.unpack_from("<QQ", fmode, 40)
    write(d + "truncated-data.perf.data", fmode[:data_off + data_size // 2 + 3])
    # Pipe layout cut inside a sample record: the samples before it are kept.
    write(d + "truncated-pipe.perf.data", pipe[:mid[0] + 13])
    # One bit of a sample's size flipped (0x40 more bytes): the next record
    # header is read from the middle of a record.
    write(d + "flipped-bit-record-size.perf.data", flip(pipe[:], mid[0] + 6, 0x40))
    # One bit of the pipe magic flipped: no importer claims it.
    write(d + "flipped-bit-magic.perf.data", flip(pipe[:4096], 3, 0x01))
    # A record shorter than its own header, and one of size zero (no progress).
    bad = pipe[:]
    struct.pack_into("<H", bad, mid[0] + 6, 4)
    write(d + "record-size-short.perf.data", bad)
    bad = pipe[:]
    struct.pack_into("<H", bad, mid[0] + 6, 0)
    write(d + "record-size-zero.perf.data", bad)
    # A record that declares more bytes than the file holds (the last one).
    last = recs[-1]
    bad = pipe[:]
    struct.pack_into("<H", bad, last[0] + 6, 0xfff8)
    write(d + "record-size-beyond-end.perf.data", bad)
    # Header sizes: a data section of 2^62 bytes, an attr_size of 2^40.
    bad = fmode[:]
    struct.pack_into("<Q", bad, 48, 1 << 62)
    write(d + "huge-data-size.perf.data", bad[:4096])
    bad = fmode[:]
    struct.pack_into("<Q", bad, 16, 1 << 40)
    write(d + "huge-attr-size.perf.data", bad[:4096])
    # Tracing data declaring 2^31 bytes in the pipe layout.
    td = [r for r in recs if r[1] == 66][0]
    bad = pipe[:]
    struct.pack_into("<I", bad, td[0] + 8, 0x7ffffff8)
    write(d + "huge-tracing-data-size.perf.data", bad)
    # perf.data version 1 ("PERFFILE"), and a header size of another version.
    bad = fmode[:4096]
    bad[0:8] = b"PERFFILE"
    write(d + "wrong-version.perf.data", bad)
    bad = fmode[:4096]
    struct.pack_into("<Q", bad, 8, 4096)
    write(d + "wrong-header-size.perf.data", bad)
    perf_compressed(d)
    perf_folder(d)


def file_records(f):
    data_off, data_size = struct.unpack_from("<QQ", f, 40)
    return [r for r in perf_records(f, data_off) if r[0] < data_off + data_size]


def perf_compressed(d):
    """perf record -z: damage inside and around the zstd data of a compressed record."""
    z = read("perf/hackbench-sched-z.perf.data")
    comp = [r for r in file_records(z) if r[1] == 81]  # PERF_RECORD_COMPRESSED
    mid = comp[len(comp) // 2]
    # Bits flipped in the zstd data (past its block header) of a record mid-file:
    # zstd rejects it there; the records before it are kept.
    bad = z[:]
    for at in range(mid[0] + 8 + 3, mid[0] + 8 + 35, 4):
        bad[at] ^= 0x5a
    write(d + "flipped-bits-compressed.perf.data", bad)
    # The same record as a COMPRESSED2 (perf 6.15) declaring 2^40 bytes of zstd data.
    bad = z[:]
    struct.pack_into("<I", bad, mid[0], 83)
    struct.pack_into("<Q", bad, mid[0] + 8, 1 << 40)
    write(d + "huge-compressed2-size.perf.data", bad)
    # The header declares another compression than zstd (HEADER_COMPRESSED's type).
    bad = z[:]
    at = feature_offset(z, 27)
    struct.pack_into("<I", bad, at + 4, 7)
    write(d + "wrong-compression-type.perf.data", bad)


def feature_offset(f, feat):
    """File offset of header feature `feat`'s section."""
    data_off, data_size = struct.unpack_from("<QQ", f, 40)
    bits = struct.unpack_from("<4Q", f, 72)
    pos = data_off + data_size
    for n in range(1, 256):
        if bits[n // 64] >> (n % 64) & 1:
            if n == feat:
                return struct.unpack_from("<Q", f, pos)[0]
            pos += 16
    raise KeyError(feat)


def perf_folder(d):
    """perf record --threads: a folder with its data.N files missing, and one cut short."""
    src = os.path.join(DATA, "perf", "hackbench-sched-threads.perf.data")
    header = open(os.path.join(src, "data"), "rb").read()
    part = bytearray(open(os.path.join(src, "data.1"), "rb").read())
    for name, files in (("threads-no-data-files.perf.data", {}),
                        ("threads-truncated-data-file.perf.data", {"data.1": part[:len(part) // 2 + 5]})):
        base = os.path.join(DATA, d + name)
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        open(os.path.join(base, "data"), "wb").write(header)
        for f, body in files.items():
            open(os.path.join(base, f), "wb").write(bytes(body))


# --- trace.dat -----------------------------------------------------------------

def tracedat():
    v6 = read("tracedat/tiny-v6.dat")
    zst = read("tracedat/tiny-v7-zstd.dat")
    lay = v6_layout(bytes(v6))
    d = "tracedat/corrupt/"
    write(d + "empty.dat", b"")
    write(d + "truncated-header.dat", v6[:200])
    # Cut inside CPU 1's ring-buffer pages.
    (_, off1, size1) = lay["cpu_data"][1]
    write(d + "truncated-data.dat", v6[:off1 + size1 // 2 + 100])
    write(d + "truncated-compressed.dat", zst[:len(zst) * 2 // 3])
    write(d + "wrong-version.dat", bytearray(v6[:4096]).replace(b"tracing6\0", b"tracing9\0", 1))
    bad = v6[:4096]
    struct.pack_into("<Q", bad, lay["header_page_size"], 1 << 60)
    write(d + "huge-header-page-size.dat", bad)
    # CPU 1's data declared 2^60 bytes long.
    bad = v6[:]
    struct.pack_into("<Q", bad, lay["cpu_data"][1][0] + 8, 1 << 60)
    write(d + "huge-cpu-data-size.dat", bad[:lay["cpu_data"][1][1] + 4096])
    # A ring-buffer page whose commit (bytes of records) exceeds the page.
    bad = v6[:]
    struct.pack_into("<Q", bad, off1 + 4096 + 8, 0xfffff)
    write(d + "page-commit-beyond-page.dat", bad)
    # Flipped bits inside the zstd frame of CPU 1's first chunk. The CPU data is
    # page-aligned in the flyrecord section: CPU 0 at 8192, CPU 1 at 12288, each
    # u32 chunk count, then per chunk u32 compressed and uncompressed sizes.
    bad = zst[:]
    assert bad[12288 + 12:12288 + 16] == b"\x28\xb5\x2f\xfd"  # zstd frame magic
    for at in range(12288 + 12 + 200, 12288 + 12 + 264, 8):
        bad[at] ^= 0x5a
    write(d + "flipped-bits-compressed.dat", bad)
    # Flipped bits in event records of CPU 1's first page (after the 16-byte page header).
    bad = v6[:]
    for at in range(off1 + 16, off1 + 16 + 256, 16):
        bad[at] ^= 0x80
    write(d + "flipped-bits-records.dat", bad)


# --- perf script and ftrace text ------------------------------------------------

def text_lines(rel):
    return open(os.path.join(DATA, rel), "rb").read().split(b"\n")


def perfscript():
    lines = text_lines("perf/sleep-0.05.pipe.perf-script.txt")
    d = "perfscript/corrupt/"
    body = b"\n".join(lines)
    write(d + "empty.txt", b"")
    # Cut in the middle of line 40 (no newline at the end).
    cut = sum(len(l) + 1 for l in lines[:39]) + 50
    write(d + "truncated-line.txt", body[:cut])
    # Bits flipped in line 30's timestamp ('.' -> 'n'): the sample cannot be read.
    l30 = bytearray(lines[29])
    l30[l30.index(b".")] ^= 0x40
    write(d + "flipped-bits.txt", b"\n".join(lines[:29] + [bytes(l30)] + lines[30:]))
    # A sched_switch with its fields cut short (a record of the wrong size).
    i = next(n for n, l in enumerate(lines) if b"sched_switch" in l and n > 20)
    short = lines[i][:lines[i].index(b"prev_state")]
    write(d + "short-fields.txt", b"\n".join(lines[:i] + [short] + lines[i + 1:]))
    # A CPU number and a pid far beyond anything a kernel has.
    i = 25
    huge = lines[i].replace(b"[000]", b"[99999999]").replace(b"[001]", b"[99999999]")
    write(d + "huge-cpu.txt", b"\n".join(lines[:i] + [huge] + lines[i + 1:]))
    # A timestamp of 18519591109 s, beyond int64 nanoseconds (found by
    # perfscript_fuzzer: signed overflow in the tokenizer).
    i = 12
    l = lines[i]
    at = l.index(b"1881.")
    huge = l[:at] + b"18519591109." + l[at + 5:]
    write(d + "huge-timestamp.txt", b"\n".join(lines[:i] + [huge] + lines[i + 1:]))
    # Not perf script text at all: `perf script -F` of another layout (no cpu, no time).
    other = [b"perf 637 sched:sched_switch:" for _ in range(1001)]
    write(d + "wrong-layout.txt", b"\n".join(other) + b"\n")


def ftrace():
    lines = text_lines("ftrace/good/tracefs_irq.txt")
    d = "ftrace/corrupt/"
    # Bits flipped in line 25's CPU field ('[' -> '{').
    l = bytearray(lines[24])
    l[l.index(b"[")] ^= 0x20
    write(d + "flipped-bits.txt", b"\n".join(lines[:24] + [bytes(l)] + lines[25:]))
    # A CPU number beyond the model's limit on line 30.
    i = 29
    huge = lines[i]
    at = huge.index(b"[")
    huge = huge[:at] + b"[99999]" + huge[huge.index(b"]", at) + 1:]
    write(d + "huge-cpu.txt", b"\n".join(lines[:i] + [huge] + lines[i + 1:]))
    # (No wrong-version case: ftrace text has no format version; the "version ="
    # line of trace-cmd report names the binary file it was printed from. Text
    # of another layout is ../bad/header_then_garbage.txt and random_bytes.bin.)
    # A timestamp of 999999999999 s (12 digits, as the tokenizer allows), beyond
    # int64 nanoseconds: signed overflow before the fix.
    i = 35
    l = lines[i]
    at = l.index(b" 902.") + 1
    huge = l[:at] + b"999999999999." + l[at + 4:]
    write(d + "huge-timestamp.txt", b"\n".join(lines[:i] + [huge] + lines[i + 1:]))
    # A sched_switch line cut after its first field (a record of the wrong size).
    i = next(n for n, l in enumerate(lines) if b"sched_switch:" in l and n > 20)
    short = lines[i][:lines[i].index(b"prev_pid")]
    write(d + "short-fields.txt", b"\n".join(lines[:i] + [short] + lines[i + 1:]))


# --- CTF --------------------------------------------------------------------------

def ctf():
    src = os.path.join(DATA, "ctf", "synthetic-lttng")
    meta = open(os.path.join(src, "metadata"), "rb").read()
    chan0 = bytearray(open(os.path.join(src, "chan_0"), "rb").read())
    d = "ctf/corrupt/"

    def folder(name, metadata=meta, stream=chan0):
        base = os.path.join(DATA, d + name)
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        open(os.path.join(base, "metadata"), "wb").write(metadata)
        if stream is not None:
            open(os.path.join(base, "chan_0"), "wb").write(bytes(stream))

    folder("empty-stream", stream=b"")
    folder("empty-metadata", metadata=b"")
    folder("truncated-stream", stream=chan0[:len(chan0) * 2 // 3])
    folder("truncated-metadata", metadata=meta[:len(meta) // 2])
    bad = chan0[:]
    for at in range(200, 260, 6):
        bad[at] ^= 0x24
    folder("flipped-bits", stream=bad)
    # Packet sizes: the first packet's header declares sizes the file does not
    # hold, or content larger than the packet. Offsets follow the synthetic
    # trace's packet context (make_synthetic_lttng.py: magic, uuid, stream_id,
    # then timestamp_begin/end, content_size, packet_size, all big-endian).
    ctx = 4 + 16 + 4 + 8 + 8  # content_size
    bad = chan0[:]
    struct.pack_into(">Q", bad, ctx, 0xfffffffffffffff8)
    folder("huge-content-size", stream=bad)
    bad = chan0[:]
    struct.pack_into(">Q", bad, ctx + 8, 1 << 40)
    folder("huge-packet-size", stream=bad)
    bad = chan0[:]
    struct.pack_into(">Q", bad, ctx, 64)
    struct.pack_into(">Q", bad, ctx + 8, 64)
    folder("packet-size-below-header", stream=bad)
    folder("wrong-version", metadata=meta.replace(b"major = 1;", b"major = 3;", 1))
    # Each stream file is also a fuzz seed for ctf_fuzzer (selector byte 1: this metadata).
    for name in ("flipped-bits", "huge-packet-size", "truncated-stream"):
        stream = open(os.path.join(DATA, d + name, "chan_0"), "rb").read()
        write(d + "seeds/" + name + ".stream", b"\x01" + stream)


# --- Perfetto -------------------------------------------------------------------

def pb_varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7f) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def pb_read_varint(b, i):
    n = s = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return n, i


def perfetto_packets(b):
    """(offset, payload_start, payload_end) of each Trace.packet."""
    out, i = [], 0
    while i < len(b):
        assert b[i] == 0x0a
        n, j = pb_read_varint(b, i + 1)
        out.append((i, j, j + n))
        i = j + n
    return out


def perfetto():
    good = read("perfetto/tiny.perfetto-trace")
    d = "perfetto/corrupt/"
    packets = perfetto_packets(good)
    last = packets[-1]
    write(d + "empty.perfetto-trace", b"")
    # Cut inside the last packet (the second CPU's bundle).
    write(d + "truncated.perfetto-trace", good[:last[1] + 20])
    # A packet declaring 2^40 bytes after the good ones.
    write(d + "huge-length.perfetto-trace", good + b"\x0a" + pb_varint(1 << 40) + b"\x08\x01")
    # A packet holding a field of wire type 7, after the good ones.
    write(d + "wrong-wire-type.perfetto-trace", good + b"\x0a\x02\x0f\x00")
    # A packet whose last byte starts a varint that never ends.
    write(d + "truncated-varint.perfetto-trace", good + b"\x0a\x01\x80")
    # Every packet deflated in compressed_packets (field 50), the last one with flipped bytes.
    comp = bytearray()
    for (_, a, b) in packets:
        z = zlib.compress(b"\x0a" + pb_varint(b - a) + good[a:b])
        if (a, b) == packets[-1][1:]:
            z = bytearray(z)
            for k in range(10, min(len(z), 40)):
                z[k] ^= 0x5a
            z = bytes(z)
        inner = b"\x92\x03" + pb_varint(len(z)) + z  # field 50, wire type 2
        deflated = len(comp) + 1 + len(pb_varint(len(inner))) + 2 + len(pb_varint(len(z)))
        comp += b"\x0a" + pb_varint(len(inner)) + inner
    write(d + "corrupt-deflate.perfetto-trace", bytes(comp))
    # Where each damage is: the packet's tag, the field inside the appended
    # packet, and the deflated bytes of the last packet.
    return [("truncated", last[0]), ("huge-length", len(good)), ("wrong-wire-type", len(good) + 2),
            ("truncated-varint", len(good) + 2), ("corrupt-deflate", deflated)]


if __name__ == "__main__":
    perf()
    tracedat()
    perfscript()
    ftrace()
    ctf()
    for name, offset in perfetto():
        print("perfetto/corrupt/%s: damage at byte offset %d" % (name, offset))
