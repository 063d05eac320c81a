#!/usr/bin/env bash
# bench-index.sh: peak RSS and time of check and prune on a synthetic
# repository of N data blobs (bench/synthrepo: real index files, pack
# headers, trees and snapshot; data packs are sparse files).
#
# Usage: scripts/bench-index.sh BLOBS [CLOUDSTIC_BINARY] [WORKDIR]
# Prints one line per step: blobs, step, wall time, CPU seconds (user +
# system: on a shared machine wall time says more about the load than
# about the program), peak RSS (KiB), ok or why the step failed. The
# repository is generated once per BLOBS in WORKDIR (default
# /tmp/cloudstic-bench-index) and prune runs on a sparse copy of it.
#
# With BACKUP=1 it also backs up a 1 GB source (generated once in
# WORKDIR: 4 random files of 200 MiB and 3000 random files of 1-127 KiB,
# all incompressible) into a sparse copy of the repository and into an
# empty one, with an empty cache directory (a large repository's on-disk
# index is written first), then into a new copy of the repository with
# the cache directory the first left (backup-warm: the index is reused). Every step also reports the largest RssAnon and RssFile of
# the process, sampled from /proc/PID/status every 0.2 s (what it holds
# of its own against what it maps from files, KiB), and what of the
# metadata cache directory and of the store's index files sits in the
# page cache afterwards (fincore; the index files may have been cached
# before the step too, e.g. by the copy).
# Only the steps named in STEPS run (default "check prune", plus
# "backup" with BACKUP=1).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
[ -x /usr/bin/time ] || apt-get install -y time >/dev/null

BLOBS="${1:?usage: bench-index.sh BLOBS [BINARY] [WORKDIR]}"
W="${3:-/tmp/cloudstic-bench-index}"
mkdir -p "$W"
CS="${2:-}"
if [ -z "$CS" ]; then
	CS="$W/cloudstic"
	go build -o "$CS" ./cmd/cloudstic
fi
export CLOUDSTIC_PASSWORD=bench
repo="$W/repo-$BLOBS"
if [ ! -e "$repo/.generated" ]; then
	rm -rf "$repo"
	go build -o "$W/synthrepo" ./bench/synthrepo
	CLOUDSTIC_STORE="local:$repo" "$CS" init >/dev/null
	"$W/synthrepo" -repo "$repo" -password bench -blobs "$BLOBS" >&2
	touch "$repo/.generated"
fi

measure() { # step store-dir command...
	local step=$1 dir=$2
	shift 2
	[ -n "${KEEP_CACHE:-}" ] || rm -rf "$W/cache"
	local status=ok
	XDG_CACHE_HOME="$W/cache" CLOUDSTIC_STORE="local:$dir" /usr/bin/time -v -o "$W/time.txt" "$@" >"$W/$step.log" 2>&1 &
	local tpid=$! pid="" anon=0 file=0 a f
	while kill -0 "$tpid" 2>/dev/null; do
		[ -n "$pid" ] || pid=$(pgrep -P "$tpid" | head -1 || true)
		if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
			a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			f=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
			[ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
		fi
		sleep 0.2
	done
	wait "$tpid" || status="failed:$(tail -1 "$W/$step.log" | cut -c1-100)"
	local wall cpu rss cached=-
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$W/time.txt")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$W/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
	if command -v fincore >/dev/null && [ -d "$W/cache" ]; then
		cached=$(find "$W/cache" -type f -print0 | xargs -0r fincore -bn -o RES | awk '{s += $1} END {printf "%d", s / 1024}')
	fi
	local ixsize ixcached=-
	ixsize=$(du -sk "$dir/index" | cut -f1)
	if command -v fincore >/dev/null; then
		ixcached=$(find "$dir/index" -type f -print0 | xargs -0r fincore -bn -o RES | awk '{s += $1} END {printf "%d", s / 1024}')
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\tanon=%s\tfile=%s\tcache-dir-in-page-cache=%sKiB\tindex-files=%sKiB,in-page-cache=%sKiB\n' \
		"$BLOBS" "$step" "$wall" "$cpu" "$rss" "$status" "$anon" "$file" "$cached" "$ixsize" "$ixcached"
}

STEPS="${STEPS:-check prune${BACKUP:+ backup}}"
case " $STEPS " in *" backup "*)
	src="$W/src-1g"
	if [ ! -e "$src/.generated" ]; then
		rm -rf "$src"
		mkdir -p "$src/big" "$src/small"
		for i in 1 2 3 4; do head -c 200M /dev/urandom >"$src/big/f$i"; done
		for i in $(seq 1 3000); do
			d="$src/small/d$((i % 30))"
			mkdir -p "$d"
			head -c "$(((i * 7919) % 127 + 1))K" /dev/urandom >"$d/f$i"
		done
		touch "$src/.generated"
	fi
	empty="$W/repo-empty"
	rm -rf "$empty" "$repo.backup"
	CLOUDSTIC_STORE="local:$empty" "$CS" init >/dev/null
	cp -a --sparse=always "$repo" "$repo.backup"
	measure backup-empty "$empty" "$CS" backup -source "local:$src"
	measure backup "$repo.backup" "$CS" backup -source "local:$src"
	# Again into a fresh copy, keeping the cache directory: a large
	# repository's on-disk index, written by the run above, is reused.
	rm -rf "$repo.backup"
	cp -a --sparse=always "$repo" "$repo.backup"
	KEEP_CACHE=1 measure backup-warm "$repo.backup" "$CS" backup -source "local:$src"
	rm -rf "$empty" "$repo.backup"
	;;
esac

case " $STEPS " in *" check "*) measure check "$repo" "$CS" check ;; esac
case " $STEPS " in *" prune "*)
	rm -rf "$repo.prune"
	cp -a --sparse=always "$repo" "$repo.prune"
	measure prune "$repo.prune" "$CS" prune -margin 0s
	rm -rf "$repo.prune"
	;;
esac
