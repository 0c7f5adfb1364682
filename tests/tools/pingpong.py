"""The inter-event trigger tests' workload (latency*.sh, run by lib.sh's
lat_pingpong under a copy of the interpreter named latw*): a ping-pong over
pipes between two processes, a byte each way per round, each read blocking
until the other's write wakes it; then a sleep of 50 us, woken by a timer
(from interrupt context, often out of idle). For SECS seconds; prints the
rounds.

  pingpong.py SECS"""
import os
import sys
import time

a_r, a_w = os.pipe()
b_r, b_w = os.pipe()
pid = os.fork()
if pid == 0:
    while os.read(a_r, 1) == b"p":
        os.write(b_w, b"p")
    os._exit(0)
end, n = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    os.write(a_w, b"p")
    os.read(b_r, 1)
    n += 1
    time.sleep(0.00005)
os.write(a_w, b"q")
os.waitpid(pid, 0)
print(n)
