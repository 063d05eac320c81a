#!/usr/bin/env bash
# bench-scale.sh: cloudstic against restic and borg (Debian packages) on one
# generated source of many small files (issue #19, "Scale nobody has
# measured"): wall time, CPU seconds and peak RSS of each step, each tool,
# side by side in one run.
#
# Usage: nice -n 19 ionice -c3 scripts/bench-scale.sh [FILES] [WORK_DIR]
#   FILES     number of files (default 20000; issue #19 asks for 1000000).
#             bench/gen.py scale makes them: 1-16 KiB each (half log-like
#             text that compresses ~4:1, half random bytes), 5 levels deep
#             (4 levels of directories, ~100 files per leaf). 1 M files are
#             ~10 GB; the repositories take about as much again each.
#   WORK_DIR  where the source, repositories and restores go (default a new
#             mktemp dir under /tmp); deleted at the end.
# Environment (optional):
#   BENCH_TOOLS="cloudstic restic borg"   tools to run, in this order
#   BENCH_OUT=FILE    TSV of the results (default /tmp/bench-scale-FILES.tsv)
#   CLOUDSTIC=BINARY  cloudstic binary (default: built from this checkout)
#
# Steps, interleaved (every tool does a step before any does the next), each
# under /usr/bin/time -v with the tool's cache kept between steps as a user's:
#   backup     initial backup of the source
#   nochange   second backup, nothing changed
#   incr5      every 20th file appended to (gen.py churn), third backup
#   restore    restore of the last snapshot; file count and bytes compared
#   prune      the first two snapshots forgotten (not timed), then prune
#              (cloudstic prune -margin 0s, restic prune, borg compact)
#   check      cloudstic check, restic check (no -read-data); borg check reads
#              and verifies every segment, so it does more than the others
# Prints one TSV line per step (files, tool, step, wall s, CPU s, peak RSS
# KiB, load average, status) and then each step's ratios against cloudstic.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${1:-20000}"
TOOLS="${BENCH_TOOLS:-cloudstic restic borg}"
OUT="${BENCH_OUT:-/tmp/bench-scale-$N.tsv}"
export PATH="$PATH:/usr/local/go/bin"

log() { echo "bench-scale: $(date -u +%H:%M:%S) $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if ! command -v restic >/dev/null || ! command -v borg >/dev/null; then
	log "installing restic and borgbackup from Debian"
	apt-get install -y restic borgbackup >&2 || die "apt-get install restic borgbackup failed"
fi
[ -x /usr/bin/time ] || apt-get install -y time >&2 || die "apt-get install time failed"

if [ -n "${2:-}" ]; then
	W="$(realpath -m -- "$2")/cloudstic-scale.$$"
else
	W="$(mktemp -d /tmp/cloudstic-scale.XXXXXX)"
fi
mkdir -p "$W"/{log,repos,cache}
trap 'rm -rf -- "$W"' EXIT

GOCACHE="$(go env GOCACHE 2>/dev/null || true)"; export GOCACHE
export XDG_CACHE_HOME="$W/cache" RESTIC_CACHE_DIR="$W/cache/restic" BORG_BASE_DIR="$W/borgbase"
export CLOUDSTIC_PASSWORD=bench RESTIC_PASSWORD=bench BORG_PASSPHRASE=bench
export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes

CS="${CLOUDSTIC:-}"
if [ -z "$CS" ]; then
	CS="$W/cloudstic"
	(cd "$ROOT" && go build -o "$CS" ./cmd/cloudstic) || die "go build failed"
fi

SRC="$W/src"
log "generating $N files in $SRC"
python3 "$ROOT/bench/gen.py" scale "$SRC" "$N"
log "source: $(find "$SRC" -type f | wc -l) files, $(du -sh "$SRC" | cut -f1), $(df -h --output=avail "$W" | tail -1) free"

printf 'files\ttool\tstep\twall_s\tcpu_s\trss_kb\tload1\tstatus\n' >"$OUT"

# measure TOOL STEP COMMAND...: run COMMAND under /usr/bin/time -v.
measure() {
	local tool=$1 step=$2 status=ok
	shift 2
	local logf="$W/log/$tool-$step.log"
	/usr/bin/time -v -o "$W/time.txt" "$@" >"$logf" 2>&1 ||
		status="failed:$(tail -1 "$logf" | tr '\t' ' ' | cut -c1-120)"
	local wall cpu rss load
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s}' "$W/time.txt")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$W/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
	load=$(cut -d' ' -f1 /proc/loadavg)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$N" "$tool" "$step" "$wall" "$cpu" "$rss" "$load" "$status" | tee -a "$OUT"
}

# Snapshot ids, in order, for forget.
declare -A SNAPS
snap_id() { # tool step
	case $1 in
	cloudstic) sed -n 's/^Snapshot \([0-9a-f]*\) saved.*/\1/p' "$W/log/$1-$2.log" ;;
	restic) sed -n 's/^snapshot \([0-9a-f]*\) saved.*/\1/p' "$W/log/$1-$2.log" ;;
	borg) echo "$2" ;;
	esac
}

run_step() { # tool step
	local tool=$1 step=$2 repo="$W/repos/$1"
	case $tool-$step in
	cloudstic-init) CLOUDSTIC_STORE="local:$repo" "$CS" init >"$W/log/cloudstic-init.log" 2>&1 ;;
	restic-init) restic -r "$repo" init >"$W/log/restic-init.log" 2>&1 ;;
	borg-init) borg init -e repokey "$repo" >"$W/log/borg-init.log" 2>&1 ;;
	cloudstic-backup | cloudstic-nochange | cloudstic-incr5)
		CLOUDSTIC_STORE="local:$repo" measure "$tool" "$step" "$CS" backup -source "local:$SRC" ;;
	restic-backup | restic-nochange | restic-incr5)
		measure "$tool" "$step" restic -r "$repo" backup "$SRC" ;;
	borg-backup | borg-nochange | borg-incr5)
		measure "$tool" "$step" borg create "$repo::$step" "$SRC" ;;
	cloudstic-restore)
		CLOUDSTIC_STORE="local:$repo" measure "$tool" "$step" "$CS" restore -output "$W/restore" ;;
	restic-restore)
		measure "$tool" "$step" restic -r "$repo" restore latest --target "$W/restore" ;;
	borg-restore)
		mkdir -p "$W/restore"
		measure "$tool" "$step" env -C "$W/restore" borg extract "$repo::incr5" ;;
	cloudstic-prune)
		CLOUDSTIC_STORE="local:$repo" "$CS" forget ${SNAPS[cloudstic]} >"$W/log/cloudstic-forget.log" 2>&1 || die "cloudstic forget failed"
		CLOUDSTIC_STORE="local:$repo" measure "$tool" "$step" "$CS" prune -margin 0s ;;
	restic-prune)
		restic -r "$repo" forget ${SNAPS[restic]} >"$W/log/restic-forget.log" 2>&1 || die "restic forget failed"
		measure "$tool" "$step" restic -r "$repo" prune ;;
	borg-prune)
		for a in ${SNAPS[borg]}; do borg delete "$repo::$a" >>"$W/log/borg-forget.log" 2>&1 || die "borg delete failed"; done
		measure "$tool" "$step" borg compact "$repo" ;;
	cloudstic-check) CLOUDSTIC_STORE="local:$repo" measure "$tool" "$step" "$CS" check ;;
	restic-check) measure "$tool" "$step" restic -r "$repo" check ;;
	borg-check) measure "$tool" "$step" borg check "$repo" ;;
	esac
	case $step in
	backup | nochange) SNAPS[$tool]="${SNAPS[$tool]:-} $(snap_id "$tool" "$step")" ;;
	restore)
		# Same number of files and bytes as the source, then out of the way.
		# The next restore waits 40 s: ext4 scans inodes freed in the last
		# 30 s on every create, which would bill one tool's delete to the next.
		local got want
		got=$(find "$W/restore" -type f -printf '%s\n' | awk '{n++; s += $1} END {print n + 0, s + 0}')
		want=$(find "$SRC" -type f -printf '%s\n' | awk '{n++; s += $1} END {print n + 0, s + 0}')
		[ "$got" = "$want" ] || log "WARNING: $tool restored $got (files bytes), source has $want"
		rm -rf -- "$W/restore"
		sleep 40
		;;
	esac
}

for tool in $TOOLS; do run_step "$tool" init; done
for step in backup nochange incr5 restore prune check; do
	if [ "$step" = incr5 ]; then
		python3 "$ROOT/bench/gen.py" churn "$SRC"
	fi
	for tool in $TOOLS; do
		log "$tool $step"
		run_step "$tool" "$step"
	done
	log "repositories: $(du -sh "$W"/repos/* | tr '\t\n' ': ')"
done

# Ratios cloudstic ÷ peer of wall time and peak RSS, as the other result
# files report them (below 1: cloudstic is faster or smaller).
echo
awk -F'\t' 'NR > 1 {w[$3, $2] = $4; r[$3, $2] = $6; if (!($3 in seen)) {seen[$3] = 1; order[++n] = $3}}
END {
	printf "step\tpeer\twall cloudstic/peer\tpeak RSS cloudstic/peer\n"
	for (i = 1; i <= n; i++) for (p = 0; p < 2; p++) {
		peer = p ? "borg" : "restic"; s = order[i]
		if (((s, peer) in w) && ((s, "cloudstic") in w) && w[s, peer] > 0 && r[s, peer] > 0)
			printf "%s\t%s\t%.2f\t%.2f\n", s, peer, w[s, "cloudstic"] / w[s, peer], r[s, "cloudstic"] / r[s, peer]
	}
}' "$OUT"
log "results in $OUT"
