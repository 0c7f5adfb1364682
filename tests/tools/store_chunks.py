#!/usr/bin/env python3
"""The chunks of a store file (docs/STORE.md), for tests:
  store_chunks.py list FILE          one line per chunk: offset type n_records disk_len
  store_chunks.py flip FILE          flips 16 bytes in the payload of the middle
                                     block; prints its offset and record count"""
import struct
import sys

HDR = struct.Struct("<IHBBIIIIQQII")


def chunks(path):
    data = open(path, "rb").read()
    off = 0
    while off + HDR.size <= len(data):
        magic, _ver, typ, _codec, disk_len, _raw, n, _pcrc, _t0, _t1, _res, _hcrc = HDR.unpack_from(data, off)
        if magic != 0x4B435354:
            break
        yield off, typ, n, disk_len
        off += HDR.size + disk_len


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "list":
        for c in chunks(path):
            print(*c)
        return
    blocks = [c for c in chunks(path) if c[1] == 3]
    off, _, n, disk_len = blocks[len(blocks) // 2]
    with open(path, "r+b") as f:
        f.seek(off + HDR.size + disk_len // 2)
        b = bytearray(f.read(16))
        f.seek(off + HDR.size + disk_len // 2)
        f.write(bytes(x ^ 0xA5 for x in b))
    print(off, n)


main()
