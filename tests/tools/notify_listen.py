#!/usr/bin/env python3
"""systemd's side of sd_notify(3), for the tests: binds the datagram socket
SOCKET (what NOTIFY_SOCKET names) and writes each message tracerd sends as
one line, "SECONDS<TAB>VAR=VALUE<TAB>VAR=VALUE...", SECONDS being
CLOCK_MONOTONIC. Ends after LIMIT seconds.

  notify_listen.py SOCKET LIMIT"""
import socket
import sys
import time

s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        m = s.recv(4096).decode(errors="replace")
    except socket.timeout:
        continue
    print("%.3f\t%s" % (time.monotonic(), "\t".join(l for l in m.split("\n") if l)), flush=True)
