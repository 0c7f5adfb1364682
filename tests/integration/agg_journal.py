#!/usr/bin/env python3
"""A stand-in for journald's native socket: receives the datagrams (and memfds)
that sd_journal_sendv() sends to PATH and writes one entry per line to OUT,
as a Python dict. Run inside a mount namespace with a tmpfs on /run/systemd."""
import array
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
f = open(out, "w")
while True:
    msg, anc, flags, addr = s.recvmsg(1 << 20, socket.CMSG_LEN(4))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fd = array.array("i", data[:4])[0]
            msg = os.pread(fd, 1 << 24, 0); os.close(fd)
    # native protocol: KEY=VALUE\n, or KEY\n<le64 len><data>\n
    i, ent = 0, {}
    while i < len(msg):
        nl = msg.index(b"\n", i)
        line = msg[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1); i = nl + 1
        else:
            n = int.from_bytes(msg[nl + 1:nl + 9], "little"); k = line
            v = msg[nl + 9:nl + 9 + n]; i = nl + 9 + n + 1
        ent[k.decode()] = v.decode(errors="replace")
    f.write(repr(ent) + "\n"); f.flush()
