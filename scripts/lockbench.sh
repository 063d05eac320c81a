#!/usr/bin/env bash
# lockbench.sh: lock acquisition under contention on the loopback S3 server
# (issue #19): LOCKBENCH_SHARED clients (default 200) take the shared lock
# LOCKBENCH_ROUNDS times each (default 3) while LOCKBENCH_EXCLUSIVE clients
# (default 5, as prunes) take the exclusive lock twice each. Reports the
# median and worst time to acquire, the store requests and the violations
# (BenchmarkLockContention in internal/repo/lock), and writes them to
# bench/results/<date>-<host>-lock-contention.md. Reported, not asserted:
# only a violation fails it.
#
# `scripts/lockbench.sh fairness` runs issue #31's fairness run instead
# (BenchmarkLockFairness): LOCKBENCH_FAIR_HOSTS hosts (default 50) back up
# in overlapping loops (shared lock with -lock-wait, held 2-20 s, 0-1 s
# apart) for LOCKBENCH_FAIR_SECONDS (default 300), with a prune (exclusive
# lock with -lock-wait, held 5 s) every LOCKBENCH_FAIR_PRUNE_EVERY seconds
# (default 60); it reports each prune's wait against the bound of
# docs/lock.md, the backups' waits and the violations, in
# bench/results/<date>-<host>-lock-fairness.md.
#
# The clients are goroutines of one process, each with its own S3 client
# and connections (what separate processes would have); process start-up
# and key derivation are not part of what is measured.
set -euo pipefail

MODE="${1:-contention}"
case "$MODE" in
contention | fairness) ;;
*) echo "usage: lockbench.sh [contention|fairness]" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
W="$(mktemp -d /tmp/cloudstic-lockbench.XXXXXX)"
export S3_TEST_PORT="${BENCH_S3_PORT:-7172}" S3_TEST_STATE="$W/s3state"
stop() { "$ROOT/scripts/s3-server.sh" --stop >/dev/null 2>&1 || true; rm -rf -- "$W"; }
trap stop EXIT
eval "$("$ROOT/scripts/s3-server.sh" "$W/s3data")"
OUT="${BENCH_OUT:-$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S)-$(hostname -s)-lock-$MODE.md}"
if [ "$MODE" = fairness ]; then
	. "$ROOT/scripts/lib/lockbench-fairness.sh"
	fairness_run >"$W/report.md"
	mv -- "$W/report.md" "$OUT"
	cat "$OUT"
	exit 0
fi
raw="$(cd "$ROOT" && go test -run '^$' -bench BenchmarkLockContention -benchtime 1x -timeout 60m ./internal/repo/lock/ 2>&1)" \
	|| { echo "$raw" >&2; exit 1; }
line="$(echo "$raw" | grep '^BenchmarkLockContention')"
metric() { echo "$line" | awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}'; }
{
	echo "# Lock acquisition under contention $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "Produced by scripts/lockbench.sh at commit $(cd "$ROOT" && git rev-parse --short HEAD) on $(nproc) cores (shared with other work; load average $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "${LOCKBENCH_SHARED:-200} shared clients x ${LOCKBENCH_ROUNDS:-3} rounds (held 0-50 ms), ${LOCKBENCH_EXCLUSIVE:-5} exclusive clients x 2 rounds (held 100 ms), loopback S3 (versitygw), conditional writes."
	echo
	echo "| lock | median to acquire | worst |"
	echo "|---|---|---|"
	echo "| shared | $(metric shared-median-ms) ms | $(metric shared-worst-ms) ms |"
	echo "| exclusive | $(metric excl-median-ms) ms | $(metric excl-worst-ms) ms |"
	echo
	echo "Store requests in all: $(metric requests); failed acquisitions or releases: $(metric failed); violations: $(metric violations)."
	echo
	echo '```'
	echo "$raw" | grep -E '^(goos|goarch|cpu|Benchmark)|failed: '
	echo '```'
} >"$OUT"
cat "$OUT"
