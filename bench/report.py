#!/usr/bin/env python3
"""Summarise scripts/bench.sh measurements.

report.py RESULTS.tsv   prints a markdown report on stdout: medians per tool and
step (wall seconds, peak RSS, bytes added to the repository, store requests),
cloudstic's ratios to each peer (restic, borg, kopia, Cloudstic: whichever were
measured) and to the fastest of them, and whether each goal of issues #8, #19 and #37 is met.
TSV columns: run tool step seconds rss_kb bytes_added requests
"""
import statistics
import sys
from collections import defaultdict

STEPS = [
    # (step, label, reference peer, goal ratio): goals of issue #19 where it
    # sets one, else of issue #8.
    ("backup1g", "initial backup, 1 GB set (fresh copy)", "fastest", 0.4),
    ("incr1g-nochange", "no-change incremental, 1 GB set, right after", "fastest", 0.5),
    ("incr1g-onefile", "one-file-changed incremental, 1 GB set, right after", "fastest", 0.5),
    ("restore1g", "restore, 1 GB set", "fastest", 0.5),
    ("backup55k", "initial backup, 55,000 files", None, None),
    ("incr-nochange", "no-change incremental, 55,000 files", "restic", 0.2),
    ("incr-onefile", "one-file-changed incremental", "restic", 0.2),
    ("restore55k", "restore, 55,000 files", "fastest", 0.5),
    ("prune", "forget the 1 GB snapshots + prune", "restic", 1.0),
    ("check", "check", "restic", 1.0),
    ("prune+check", "prune + check (sum)", "restic", 1.0),
]


# Remote stores measured once each, by the prefix of their tool names.
SERVERS = [
    ("s3-", "Loopback S3 (versitygw, scripts/s3-server.sh), one run each; requests as the server logged them:"),
    ("seaweedfs-", "SeaweedFS cluster on this machine (scripts/seaweedfs-server.sh: a master, three volume servers "
                   "keeping every object on two, a filer, the S3 gateway), one run each; bytes added are the growth "
                   "of the cluster's data (two copies); requests are cloudstic's own count:"),
]
SERVERS.append(("remote-", "Remote profile: a loopback S3 server behind Toxiproxy adding 25 ms each way and limiting each "
                            "direction to 1 Gbit/s (issue #37; goal: each row <= 0.5 x restic and <= 0.8 x kopia), one run "
                            "each; requests as the server logged them:"))
SERVER_PREFIXES = tuple(p for p, _ in SERVERS)


def server_section(rows, prefix, title):
    """The rows of one remote store and cloudstic's ratios to restic on it."""
    steps = sorted({(t, s) for t, s in rows if t.startswith(prefix)})
    if not steps:
        return []
    out = ["", title, "", "| tool | step | seconds | peak RSS MB | bytes added | requests |", "|---|---|---|---|---|---|"]
    for t, s in steps:
        for x in rows[(t, s)]:
            out.append(f"| {t[len(prefix):]} | {s} | {x[0]:.2f} | {x[1] / 1024:.0f} | {human(x[2])} | {x[3]} |")
    peers = sorted({t[len(prefix):] for t, _ in steps} - {"cloudstic"})
    out += ["", "| step | " + " | ".join(f"cloudstic / {p} time" for p in peers) + " | requests cloudstic / " +
            " / ".join(peers) + " |", "|---" * (2 + len(peers)) + "|"]
    for step in sorted({s for t, s in steps}):
        c = rows.get((prefix + "cloudstic", step))
        if not c:
            continue
        ct = med([x[0] for x in c])
        ratios, reqs = [], [str(c[0][3])]
        for p in peers:
            r = rows.get((prefix + p, step))
            ratios.append(f"{ct / med([x[0] for x in r]):.2f}" if r else "-")
            reqs.append(str(r[0][3]) if r else "-")
        out.append(f"| {step} | " + " | ".join(ratios) + " | " + " / ".join(reqs) + " |")
    return out


def load(path):
    rows = defaultdict(list)
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7 or f[0] == "run":
            continue
        run, tool, step, sec, rss, added, reqs = f[:7]
        rows[(tool, step)].append((float(sec), int(rss), int(added), reqs))
    # prune+check: per-run sums
    for tool in {t for t, _ in rows}:
        p, c = rows.get((tool, "prune"), []), rows.get((tool, "check"), [])
        for a, b in zip(p, c):
            rows[(tool, "prune+check")].append((a[0] + b[0], max(a[1], b[1]), a[2] + b[2], "-"))
    return rows


def med(xs):
    return statistics.median(xs) if xs else None


def human(n):
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024 or unit == "GiB":
            return f"{sign}{n:.0f} {unit}" if unit == "B" else f"{sign}{n:.1f} {unit}"
        n /= 1024


def local_section(rows):
    """The local-disk tables: medians, bytes and requests, ratios and goals."""
    tools = ["cloudstic"] + sorted({t for t, _ in rows if t != "cloudstic" and not t.startswith(SERVER_PREFIXES)})
    out = []
    out.append("| step | " + " | ".join(f"{t} s (n)" for t in tools) + " | " +
               " | ".join(f"{t} peak RSS MB" for t in tools) + " |")
    out.append("|---" * (1 + 2 * len(tools)) + "|")
    for step, label, _, _ in STEPS:
        cells, rss = [], []
        for t in tools:
            r = rows.get((t, step), [])
            if r:
                cells.append(f"{med([x[0] for x in r]):.2f} ({len(r)})")
                rss.append(f"{med([x[1] for x in r]) / 1024:.0f}")
            else:
                cells.append("-")
                rss.append("-")
        out.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(rss) + " |")
    out.append("")
    out.append("Bytes added to the repository (median; negative = freed) and cloudstic store requests:")
    out.append("")
    out.append("| step | " + " | ".join(tools) + " | cloudstic requests |")
    out.append("|---" * (2 + len(tools)) + "|")
    for step, label, _, _ in STEPS:
        cells = []
        for t in tools:
            r = rows.get((t, step), [])
            cells.append(human(med([x[2] for x in r])) if r else "-")
        reqs = [x[3] for x in rows.get(("cloudstic", step), []) if x[3] not in ("", "-")]
        out.append(f"| {label} | " + " | ".join(cells) + f" | {', '.join(reqs) or '-'} |")
    out.append("")
    out.append("Ratios (cloudstic median time / peer median time; peak RSS ratio against restic):")
    out.append("")
    peer_names = tools[1:]
    out.append("| step | goal | " + " | ".join(f"vs {t}" for t in peer_names) +
               " | vs fastest peer | fastest peer | time goal met | ≤ 0.5 × fastest (#37) | RSS ≤ restic |")
    out.append("|---" * (7 + len(peer_names)) + "|")
    for step, label, ref, goal in STEPS:
        c = rows.get(("cloudstic", step), [])
        if not c:
            continue
        ct, crss = med([x[0] for x in c]), med([x[1] for x in c])
        peers = {t: med([x[0] for x in rows[(t, step)]]) for t in tools[1:] if rows.get((t, step))}
        ratio = {t: ct / v for t, v in peers.items() if v}
        fastest = min(peers.values()) if peers else None
        rf = ct / fastest if fastest else None
        met = "-"
        goal_s = "-"
        if ref and goal is not None:
            base = fastest if ref == "fastest" else peers.get("restic")
            goal_s = f"≤ {goal} × {ref}"
            if base:
                met = "yes" if ct <= goal * base else "no"
        rr = rows.get(("restic", step))
        rss_ok = "-"
        if rr:
            rss_ok = "yes" if crss <= med([x[1] for x in rr]) else f"no ({crss / med([x[1] for x in rr]):.2f}×)"
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        met37 = ("yes" if rf <= 0.5 else "no") if rf is not None else "-"
        fastest_name = min(peers, key=peers.get) if peers else "-"
        out.append(f"| {label} | {goal_s} | " + " | ".join(fmt(ratio.get(t)) for t in peer_names) +
                   f" | {fmt(rf)} | {fastest_name} | {met} | {met37} | {rss_ok} |")
    return out


def main():
    rows = load(sys.argv[1])
    out = []
    # BENCH_RUNS=0 measures only the S3 servers: no empty local tables.
    if any(not t.startswith(SERVER_PREFIXES) for t, _ in rows):
        out.extend(local_section(rows))
    for prefix, title in SERVERS:
        section = server_section(rows, prefix, title)
        out.extend(section[1:] if not out else section)  # no blank first line
    print("\n".join(out))


if __name__ == "__main__":
    main()
