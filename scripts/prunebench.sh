#!/usr/bin/env bash
# prunebench.sh: issue #31's "S3 prune that deletes 5,000 unused packs":
# store requests per deleted object and wall time, before (a lease check
# before every delete, one at a time: DeleteBatch 1) and after (batches of
# 64 per check, 8 in flight: the default), by BenchmarkPruneDeletes in
# internal/engine/prune.
#
# Usage: scripts/prunebench.sh
# Settings (environment, all optional):
#   PRUNEBENCH_PACKS          packs on the loopback S3 server (default 5000)
#   PRUNEBENCH_REMOTE_PACKS   packs over the remote profile: the loopback
#                             server behind Toxiproxy, 25 ms each way, as
#                             scripts/lib/bench-remote.sh (default 500: one at
#                             a time, 5,000 take about 15 minutes; 0 skips it)
#   BENCH_S3_PORT, BENCH_TOXIPROXY_PORT, BENCH_REMOTE_PORT   ports (7174, 8576, 7175)
#   BENCH_OUT                 the report (default bench/results/<date>-<host>-prune-deletes.md)
# Reported, not asserted: it fails only if a prune leaves a pack.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
W="$(mktemp -d /tmp/cloudstic-prunebench.XXXXXX)"
export S3_TEST_PORT="${BENCH_S3_PORT:-7174}" S3_TEST_STATE="$W/s3state"
TX_PORT="${BENCH_TOXIPROXY_PORT:-8576}"
stop() {
	TOXIPROXY_TEST_PORT="$TX_PORT" "$ROOT/scripts/toxiproxy-server.sh" --stop >/dev/null 2>&1 || true
	"$ROOT/scripts/s3-server.sh" --stop >/dev/null 2>&1 || true
	rm -rf -- "$W"
}
trap stop EXIT
eval "$("$ROOT/scripts/s3-server.sh" "$W/s3data")"
OUT="${BENCH_OUT:-$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S)-$(hostname -s)-prune-deletes.md}"
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"

# bench PACKS: run the benchmark against S3_TEST_ENDPOINT, print its lines.
bench() {
	local raw
	raw="$(cd "$ROOT" && PRUNEBENCH_PACKS="$1" go test -run '^$' -bench BenchmarkPruneDeletes -benchtime 1x -timeout 60m ./internal/engine/prune/ 2>&1)" ||
		{ echo "$raw" >&2; return 1; }
	echo "$raw" | grep '^BenchmarkPruneDeletes' | tee /dev/stderr
}

# rows WHERE PACKS LINES: one table row per variant.
rows() {
	echo "$3" | awk -v where="$1" -v n="$2" '{
		v = ($1 ~ /batch1/) ? "before: check, delete, one at a time" : "after: 64 per check, 8 in flight"
		for (i = 2; i <= NF; i++) { if ($i == "requests/object") r = $(i-1); if ($i == "requests") t = $(i-1); if ($i == "wall-s") s = $(i-1) }
		printf "| %s | %d | %s | %d | %.2f | %.1f s |\n", where, n, v, t, r, s
	}'
}

local_lines="$(bench "${PRUNEBENCH_PACKS:-5000}")"
remote_lines=""
REMOTE_PACKS="${PRUNEBENCH_REMOTE_PACKS:-500}"
if [ "$REMOTE_PACKS" -gt 0 ]; then
	eval "$(TOXIPROXY_TEST_PORT="$TX_PORT" "$ROOT/scripts/toxiproxy-server.sh")"
	die() { echo "prunebench: $*" >&2; exit 1; }
	. "$ROOT/scripts/lib/bench-remote.sh"
	listen="127.0.0.1:${BENCH_REMOTE_PORT:-7175}"
	remote_proxy "${S3_TEST_ENDPOINT#http://}" "$listen"
	remote_lines="$(S3_TEST_ENDPOINT="http://$listen" bench "$REMOTE_PACKS")"
fi
{
	echo "# Prune deletes on S3: before and after batching $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "Produced by \`scripts/prunebench.sh\` at commit $(cd "$ROOT" && git rev-parse --short HEAD) on $(nproc) cores."
	echo "The machine is shared with other engineers' builds and tests (load average $LOAD0 before, $(cut -d' ' -f1-3 /proc/loadavg) after):"
	echo "compare the two rows of one store; wall times are of one run each."
	echo
	echo "A prune (no margin) of a repository whose only objects are N packs no index file names, written straight"
	echo "to the store (a crashed backup's orphans; packs of forgotten snapshots are deleted the same way, plus a few"
	echo "index requests). Requests are the store requests of the prune itself (listing, deletes, lease checks), not"
	echo "of the lock's acquire and release; per object is that divided by N. \"Before\" is \`prune.Options.DeleteBatch\`"
	echo "1: a lease check (2 requests: the exclusive key and the intent) before every delete, one delete at a time,"
	echo "as prune deleted before issue 31. Loopback: versitygw on 127.0.0.1; remote: the same server behind"
	echo "Toxiproxy, 25 ms each way, 1 Gbit/s (the remote profile of scripts/bench.sh)."
	echo
	echo "| store | packs | prune | requests | per object | wall time |"
	echo "|---|---|---|---|---|---|"
	rows loopback "${PRUNEBENCH_PACKS:-5000}" "$local_lines"
	[ -z "$remote_lines" ] || rows remote "$REMOTE_PACKS" "$remote_lines"
	echo
	echo '```'
	echo "$local_lines"
	echo "$remote_lines"
	echo '```'
} >"$W/report.md"
mv -- "$W/report.md" "$OUT"
cat "$OUT"
