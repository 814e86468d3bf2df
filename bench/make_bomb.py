#!/usr/bin/env python3
"""Writes a gzip bomb of blanks inside "traceEvents" for the reader's bomb benchmark:
  {"traceEvents": [<one event>, <N MiB of spaces> <one event>]}  as a few MB of .gz
usage: make_bomb.py OUT.json.gz MIB   (8193 MiB: just past the default 8 GiB limit)"""
import struct
import sys
import zlib

out, mib = sys.argv[1], int(sys.argv[2])
ev = '{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}'
head = ('{"traceEvents": [' + ev + ",").encode()
tail = (ev + "]}").encode()
block = b" " * (1 << 20)
d = zlib.compressobj(9, zlib.DEFLATED, -15)
crc, size = 0, 0
with open(out, "wb") as f:
    f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
    f.write(d.compress(head) + d.flush(zlib.Z_FULL_FLUSH))
    crc, size = zlib.crc32(head, crc), size + len(head)
    z = d.compress(block) + d.flush(zlib.Z_FULL_FLUSH)
    z = d.compress(block) + d.flush(zlib.Z_FULL_FLUSH)  # steady state: the block refers back to itself
    for _ in range(mib):
        f.write(z)
        crc, size = zlib.crc32(block, crc), size + len(block)
    f.write(d.compress(tail) + d.flush(zlib.Z_FINISH))
    crc, size = zlib.crc32(tail, crc), size + len(tail)
    f.write(struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF))
