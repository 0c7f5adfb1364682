#!/usr/bin/env python3
"""A workload for tests/integration/stacks.sh: for SECONDS, POSIX locks
(filelock:fcntl_setlk), short sleeps (timers, wakeups, switches), signals to
itself (signal:signal_generate), files written and read (kmem:kmalloc) and a
socket pair (the net softirq)."""
import fcntl
import os
import signal
import socket
import sys
import time

with open('/proc/self/comm', 'w') as c:	# what stacks.sh filters on
    c.write('tracerd-stackwl')
end = time.monotonic() + float(sys.argv[1])
path = sys.argv[2]
signal.signal(signal.SIGUSR1, lambda *_: None)
a, b = socket.socketpair()
with open(path, 'w+b') as f:
    while time.monotonic() < end:
        fcntl.lockf(f, fcntl.LOCK_EX)
        fcntl.lockf(f, fcntl.LOCK_UN)
        os.kill(os.getpid(), signal.SIGUSR1)
        f.write(b'x' * 8192)
        f.flush()
        os.fsync(f.fileno())
        a.send(b'y' * 2048)
        b.recv(4096)
        time.sleep(0.002)
