# lockbench-fairness.sh: the fairness run of scripts/lockbench.sh, which
# sources this file with the S3 server started and ROOT set.

# fairness_run: run BenchmarkLockFairness and print its report (markdown).
fairness_run() {
	local raw line secs="${LOCKBENCH_FAIR_SECONDS:-300}" load0
	load0="$(cut -d' ' -f1-3 /proc/loadavg)"
	raw="$(cd "$ROOT" && go test -run '^$' -bench BenchmarkLockFairness -benchtime 1x -timeout 60m ./internal/repo/lock/ 2>&1)" \
		|| { echo "$raw" >&2; return 1; }
	line="$(echo "$raw" | grep '^BenchmarkLockFairness')"
	metric() { echo "$line" | awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) printf "%d", $(i-1)}'; }
	secs_ms() { awk -v v="$1" 'BEGIN {if (v < 1000) printf "%d ms", v; else printf "%.1f s", v / 1000}'; }
	echo "# Lock fairness: a prune among ${LOCKBENCH_FAIR_HOSTS:-50} overlapping backups $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "Produced by \`scripts/lockbench.sh fairness\` at commit $(cd "$ROOT" && git rev-parse --short HEAD) on $(nproc) cores."
	echo "The machine is shared with other engineers' builds and tests (load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after):"
	echo "absolute times say as much about that load as about the lock; read the waits against the bound."
	echo
	echo "${LOCKBENCH_FAIR_HOSTS:-50} hosts (goroutines of one process, each with its own S3 client and connections, named host01...)"
	echo "back up in overlapping loops for $secs s: each round takes the shared lock with -lock-wait, holds it 2-20 s, pauses 0-1 s,"
	echo "so some backup always holds the lock. A prune takes the exclusive lock with -lock-wait every ${LOCKBENCH_FAIR_PRUNE_EVERY:-60} s"
	echo "(the first at half of that) and holds it 5 s. Loopback S3 (versitygw), conditional writes, default lock timings"
	echo "(TTL 60 s, refresh every 10 s)."
	echo
	echo "Bound (docs/lock.md, \"Bound for a prune\"): the longest hold, counted from the prune's start, of the shared"
	echo "holders it waited for (every one that held the lock while it waited, whether it began to acquire before the"
	echo "prune or after it), plus one refresh period (10 s). \"Late entrants\" are those of them that began after the"
	echo "prune: queued before it all the same by the store's clock (each host's estimate of it is a lower bound, up to"
	echo "its 1 s resolution apart), or in before the prune's queue entry and intent were written. A prune overtaken by"
	echo "backups that began long after it would be starved whatever the bound says: see how long after they began."
	echo
	echo "| prune | wait | until the last shared holder it waited for released | bound | | to spare | late entrants |"
	echo "|---|---|---|---|---|---|---|"
	echo "$raw" | sed -n 's/.*row: //p'
	echo
	echo "Bound met by $(metric bound-met) of $(metric prunes) prunes."
	echo "Backups: $(metric backups) rounds; wait to acquire median $(secs_ms "$(metric backup-median-ms)"), 95th percentile $(secs_ms "$(metric backup-p95-ms)"), worst $(secs_ms "$(metric backup-worst-ms)")."
	echo "Store requests in all: $(metric requests); failed acquisitions or releases: $(metric failed); leases lost: $(metric leases-lost); violations of mutual exclusion: $(metric violations)."
	echo
	echo '```'
	echo "$raw" | grep -E '^(goos|goarch|cpu|Benchmark)|failed: '
	echo '```'
}
