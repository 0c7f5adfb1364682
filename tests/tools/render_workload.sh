#!/usr/bin/env bash
# A mixed workload for the render differential test: processes, files on
# the ext4 mount $1 (fast_commit), sockets on loopback, signals, timers,
# memory pressure, file locks and writeback. $2: scratch directory.
mnt=$1 tmp=$2

for i in $(seq 1 40); do /bin/true; sh -c 'exit 3'; done
mkdir -p "$mnt/d"
for i in $(seq 1 200); do echo "file $i" >"$mnt/d/f$i"; done
python3 - "$mnt" <<'PY'
import fcntl, os, signal, socket, sys, threading, time
mnt = sys.argv[1]
# fsync on fast_commit ext4: ext4_fc_* and jbd2 events
for i in range(30):
    fd = os.open(f"{mnt}/d/s{i}", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"x" * 5000)
    os.fsync(fd)
    os.close(fd)
    os.rename(f"{mnt}/d/s{i}", f"{mnt}/d/r{i}")
# file locks: POSIX and flock
fd = os.open(f"{mnt}/lock", os.O_CREAT | os.O_RDWR, 0o644)
for i in range(20):
    fcntl.lockf(fd, fcntl.LOCK_EX); fcntl.lockf(fd, fcntl.LOCK_UN)
    fcntl.flock(fd, fcntl.LOCK_EX); fcntl.flock(fd, fcntl.LOCK_UN)
os.close(fd)
# sockets on loopback, v4 and v6
def serve(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr); s.listen()
    def run():
        for _ in range(5):
            c, _ = s.accept()
            while True:
                d = c.recv(65536)
                if not d:
                    break
                c.sendall(d)
            c.close()
    t = threading.Thread(target=run); t.start()
    return s, t
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s, t = serve(fam, (host, 0))
    port = s.getsockname()[1]
    for _ in range(5):
        c = socket.create_connection((host, port))
        for _ in range(20):
            c.sendall(b"y" * 3000); c.recv(65536)
        c.close()
    t.join(); s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
for _ in range(20):
    u.sendto(b"z" * 100, u.getsockname()); u.recv(200)
# syscalls of 0 to 6 arguments, some failing (negative returns)
import mmap
for i in range(100):
    os.getpid(); os.getppid()
    try:
        os.kill(999999999, 0)
    except OSError:
        pass
    try:
        os.close(os.open(f"{mnt}/nonexistent{i}", os.O_RDONLY))
    except OSError:
        pass
    fd = os.open(f"{mnt}/lock", os.O_RDONLY)
    os.lseek(fd, i * 4096, os.SEEK_SET)
    os.close(fd)
    mmap.mmap(-1, 4096 * (1 + i % 4)).close()
# timers and signals
signal.signal(signal.SIGUSR1, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)
signal.signal(signal.SIGALRM, lambda *a: None)
for _ in range(30):
    time.sleep(0.002)
    os.kill(os.getpid(), signal.SIGUSR1)
signal.setitimer(signal.ITIMER_REAL, 0)
# memory pressure: fault in and free 256 MiB
b = bytearray(256 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
del b
PY
sleep 2 & kill -TERM $! 2>/dev/null; wait
flock "$mnt/lock" true
# writeback: dirty pages, then flush them
dd if=/dev/zero of="$mnt/big" bs=1M count=32 status=none
sync -f "$mnt/big"
rm -f "$mnt"/d/f1* "$mnt/big"
sync
