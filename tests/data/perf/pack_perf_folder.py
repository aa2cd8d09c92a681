#!/usr/bin/env python3
"""Packs a perf record --threads folder into one perfdata_fuzzer input
(tests/fuzz/perfdata_fuzzer.cpp): b"PERFDIR1", a count byte, then per file a
u32 length and its bytes — `data` first, then data.0, data.1... in number order.

usage: pack_perf_folder.py FOLDER OUT
"""
import os
import struct
import sys


def main(folder, out):
    names = ["data"] + sorted((n for n in os.listdir(folder) if n.startswith("data.") and n[5:].isdigit()),
                              key=lambda n: int(n[5:]))
    blob = bytearray(b"PERFDIR1") + bytes([len(names)])
    for n in names:
        body = open(os.path.join(folder, n), "rb").read()
        blob += struct.pack("<I", len(body)) + body
    open(out, "wb").write(blob)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
