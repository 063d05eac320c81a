#!/usr/bin/env python3
"""Generate the benchmark data sets (used by scripts/bench.sh).

gen.py mixed DIR   1 GB mixed set: 500 MB random (5 x 100 MB), 500 MB compressible
                   text (5 x 100 MB), 50 x 1 MB random, 100 x 1 KB random.
gen.py small DIR   55,000 files of 1-8 KB (random bytes) in nested directories
                   (10 top dirs x 10 subdirs x 550 files).
gen.py touch DIR   change one file of the small set (append 100 bytes).
gen.py touch1g DIR change one 1 MiB file of the mixed set (append 100 bytes).
Sizes can be scaled down with BENCH_SCALE (e.g. 0.1) for a quick trial.
"""
import os
import random
import sys

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
MB = 1 << 20


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def compressible(n, rng):
    words = [b"backup", b"restore", b"snapshot", b"chunk", b"pack", b"index", b"tree", b"blob",
             b"error", b"ok", b"latency", b"bytes", b"request", b"store", b"lock", b"prune"]
    out = bytearray()
    line = 0
    while len(out) < n:
        line += 1
        out += b"2026-01-01T00:00:%02d line %d " % (line % 60, line)
        out += b" ".join(rng.choice(words) for _ in range(8))
        out += b" value=%d\n" % rng.randrange(100000)
    return bytes(out[:n])


def mixed(d):
    rng = random.Random(1)
    os.makedirs(d + "/random", exist_ok=True)
    os.makedirs(d + "/text", exist_ok=True)
    os.makedirs(d + "/mb", exist_ok=True)
    os.makedirs(d + "/kb", exist_ok=True)
    big = int(100 * MB * SCALE)
    for i in range(5):
        write(f"{d}/random/r{i}.bin", os.urandom(big))
        write(f"{d}/text/t{i}.log", compressible(big, rng))
    for i in range(50):
        write(f"{d}/mb/m{i:02d}.bin", os.urandom(MB))
    for i in range(100):
        write(f"{d}/kb/k{i:03d}.bin", os.urandom(1024))


def small(d):
    rng = random.Random(2)
    per = max(1, int(550 * SCALE))
    for a in range(10):
        for b in range(10):
            sub = f"{d}/d{a}/s{b}"
            os.makedirs(sub, exist_ok=True)
            for i in range(per):
                write(f"{sub}/f{i:04d}.dat", os.urandom(rng.randrange(1024, 8193)))


def touch(d):
    with open(f"{d}/d5/s5/f0005.dat", "ab") as f:
        f.write(os.urandom(100))


def touch1g(d):
    """Change one 1 MiB file of the mixed set (append 100 bytes)."""
    with open(f"{d}/mb/m00.bin", "ab") as f:
        f.write(os.urandom(100))


if __name__ == "__main__":
    {"mixed": mixed, "small": small, "touch": touch, "touch1g": touch1g}[sys.argv[1]](sys.argv[2])
