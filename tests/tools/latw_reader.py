"""latency_reload.sh's task to wake (run under lib.sh's LATWPY, its comm the
test's): opens the FIFO (read and write: no wait for a writer), prints its
pid, blocks in read() until a byte comes, then prints 'read' and exits.

  latw_reader.py FIFO"""
import os
import sys

fd = os.open(sys.argv[1], os.O_RDWR)
print(os.getpid(), flush=True)
os.read(fd, 1)
print("read", flush=True)
