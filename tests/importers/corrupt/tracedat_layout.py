"""Where things are in a trace-cmd v6 trace.dat (little-endian, 64-bit): used
by make_corrupt_corpus.py to aim its corruptions."""
import struct


def v6_layout(f: bytes) -> dict:
    out = {}
    p = 10
    e = f.index(b"\0", p)
    out["version"] = p
    p = e + 1
    p += 6  # endian, long size, page size
    assert f[p:p + 12] == b"header_page\0"
    out["header_page_size"] = p + 12
    p += 12
    p += 8 + struct.unpack_from("<Q", f, p)[0]
    assert f[p:p + 13] == b"header_event\0"
    p += 13
    p += 8 + struct.unpack_from("<Q", f, p)[0]
    out["ftrace_formats"] = p
    (n,) = struct.unpack_from("<I", f, p)
    p += 4
    for _ in range(n):
        p += 8 + struct.unpack_from("<Q", f, p)[0]
    (n,) = struct.unpack_from("<I", f, p)
    p += 4
    for _ in range(n):
        p = f.index(b"\0", p) + 1
        (c,) = struct.unpack_from("<I", f, p)
        p += 4
        for _ in range(c):
            p += 8 + struct.unpack_from("<Q", f, p)[0]
    p += 4 + struct.unpack_from("<I", f, p)[0]  # kallsyms
    p += 4 + struct.unpack_from("<I", f, p)[0]  # printk formats
    p += 8 + struct.unpack_from("<Q", f, p)[0]  # saved cmdlines
    (cpus,) = struct.unpack_from("<I", f, p)
    out["cpus"] = cpus
    p += 4
    if f[p:p + 10] == b"options  \0":
        p += 10
        while True:
            oid, osize = struct.unpack_from("<HI", f, p)
            if oid == 0:
                p += 2
                break
            p += 6 + osize
    assert f[p:p + 10] == b"flyrecord\0", f[p:p + 16]
    p += 10
    out["cpu_data"] = [(p + 16 * i, *struct.unpack_from("<QQ", f, p + 16 * i)) for i in range(cpus)]
    return out


if __name__ == "__main__":
    import sys
    print(v6_layout(open(sys.argv[1], "rb").read()))
