#!/usr/bin/env python3
"""Generate the benchmark data sets (used by scripts/bench.sh).

gen.py mixed DIR   1 GB mixed set: 500 MB random (5 x 100 MB), 500 MB compressible
                   text (5 x 100 MB), 50 x 1 MB random, 100 x 1 KB random.
gen.py small DIR   55,000 files of 1-8 KB (random bytes) in nested directories
                   (10 top dirs x 10 subdirs x 550 files).
gen.py touch DIR   change one file of the small set (append 100 bytes).
gen.py touch1g DIR change one 1 MiB file of the mixed set (append 100 bytes).
gen.py scale DIR N N files of 1-16 KiB (half log-like text that compresses ~4:1,
                   half random bytes) in 5 levels: 4 levels of directories with
                   the same fan-out, about 100 files in each leaf (scripts/bench-scale.sh).
gen.py churn DIR   change every 20th file of a scale set (append 100 bytes).
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


def scale(d, n):
    """n files in d/aa/bb/cc/dd/fNNNN.dat; the fan-out f per level gives f**4 leaves."""
    rng = random.Random(3)
    fan = max(1, round((n / 100) ** 0.25))
    leaves = fan ** 4
    # Text files are slices of one pool at random offsets, each with a unique
    # first line, so they compress like logs but no two files are equal.
    pool = compressible(32 * MB, rng)
    for i in range(n):
        leaf = i % leaves
        sub = "%s/a%02d/b%02d/c%02d/d%02d" % (d, leaf // fan ** 3, leaf // fan ** 2 % fan, leaf // fan % fan, leaf % fan)
        if i < leaves:
            os.makedirs(sub, exist_ok=True)
        size = rng.randrange(1024, 16 * 1024 + 1)
        if i % 2:
            data = os.urandom(size)
        else:
            head = b"file %d seed %d\n" % (i, rng.randrange(1 << 62))
            off = rng.randrange(len(pool) - size)
            data = (head + pool[off:off + size])[:size]
        write("%s/f%07d.dat" % (sub, i // leaves), data)


def churn(d):
    """Append 100 bytes to every 20th file of a scale set (sorted walk)."""
    k = 0
    for root, dirs, files in os.walk(d):
        dirs.sort()
        for name in sorted(files):
            if k % 20 == 0:
                with open(os.path.join(root, name), "ab") as f:
                    f.write(os.urandom(100))
            k += 1


if __name__ == "__main__":
    if sys.argv[1] == "scale":
        scale(sys.argv[2], int(sys.argv[3]))
    else:
        {"mixed": mixed, "small": small, "touch": touch, "touch1g": touch1g, "churn": churn}[sys.argv[1]](sys.argv[2])
