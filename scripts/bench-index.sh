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
	rm -rf "$W/cache"
	local status=ok
	XDG_CACHE_HOME="$W/cache" CLOUDSTIC_STORE="local:$dir" /usr/bin/time -v -o "$W/time.txt" "$@" >"$W/$step.log" 2>&1 ||
		status="failed:$(tail -1 "$W/$step.log" | cut -c1-100)"
	local wall cpu rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$W/time.txt")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$W/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$BLOBS" "$step" "$wall" "$cpu" "$rss" "$status"
}

measure check "$repo" "$CS" check
rm -rf "$repo.prune"
cp -a --sparse=always "$repo" "$repo.prune"
measure prune "$repo.prune" "$CS" prune -margin 0s
rm -rf "$repo.prune"
