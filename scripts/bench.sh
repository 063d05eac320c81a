#!/usr/bin/env bash
# bench.sh: cloudstic against restic and borg (Debian packages), and kopia and
# Cloudstic when PEERS_DIR has their binaries, on this machine, side by side,
# interleaved in one run (issues #8 and #37). Prints medians, ratios and
# goals, and writes bench/results/<date>-<host>.md with machine info. Also
# issue #32's row: a 1 GB backup interrupted (SIGINT) at ~50 %, then re-run
# (every tool but borg; bytes the re-run stored over the source's).
#
# Usage: scripts/bench.sh [WORK_DIR]
#   WORK_DIR holds the generated data, the repositories and the restores
#   (default: a new mktemp dir under /tmp); it is deleted at the end. Each
#   run keeps its restores and repositories until it ends (~10 GB at scale 1).
# Environment (optional):
#   BENCH_RUNS=3      runs per tool (medians are reported); fewer when the
#                     time budget (BENCH_BUDGET seconds, default 1260) runs out
#   BENCH_SCALE=1     scale the data sets (0.1 for a quick trial)
#   BENCH_S3=1        also benchmark the loopback S3 server (scripts/s3-server.sh)
#   BENCH_SEAWEEDFS=1 also benchmark a SeaweedFS cluster (scripts/seaweedfs-server.sh)
#   BENCH_REMOTE=1    also the "remote" profile: the S3 server behind toxiproxy
#                     (scripts/toxiproxy-server.sh), 25 ms each way, 1 Gbit/s
#   BENCH_RUNS=0      skips the local runs (only the S3 servers are measured)
#   BENCH_OUT=FILE    result file (default bench/results/<date>-<host>.md)
#   PEERS_DIR=DIR     where the kopia and Cloudstic binaries are (default
#                     ../shared/peers beside the checkout); a peer that is not
#                     there is not measured, and the report says so
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${BENCH_RUNS:-3}"
BUDGET="${BENCH_BUDGET:-1260}"
S3="${BENCH_S3:-1}"
T_START=$(date +%s)
export PATH="$PATH:/usr/local/go/bin"

log() { echo "bench: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- peers ------------------------------------------------------------------------
if ! command -v restic >/dev/null || ! command -v borg >/dev/null; then
	log "installing restic and borgbackup from Debian"
	SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get install -y restic borgbackup >&2 || die "apt-get install restic borgbackup failed"
fi
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install -y time)"
# kopia and Cloudstic are in neither Debian nor the Go module proxy: they are
# measured when PEERS_DIR holds binaries that run here.
PEERS_DIR="$(realpath -m -- "${PEERS_DIR:-$ROOT/../shared/peers}")"
TOOLS=(cloudstic restic borg)
PEER_VERSIONS=""
if "$PEERS_DIR/kopia" --version >/dev/null 2>&1; then
	TOOLS+=(kopia)
	PEER_VERSIONS+="; kopia $("$PEERS_DIR/kopia" --version 2>&1 | head -1)"
else
	PEER_VERSIONS+="; kopia: not in $PEERS_DIR, not measured"
fi
if "$PEERS_DIR/cloudstic" version >/dev/null 2>&1; then
	TOOLS+=(Cloudstic)
	PEER_VERSIONS+="; Cloudstic $("$PEERS_DIR/cloudstic" version 2>&1 | head -1)"
else
	PEER_VERSIONS+="; Cloudstic: not in $PEERS_DIR, not measured"
fi

# --- work dir ---------------------------------------------------------------------
if [ -n "${1:-}" ]; then
	W="$(realpath -m -- "$1")/cloudstic-bench.$$"
else
	W="$(mktemp -d /tmp/cloudstic-bench.XXXXXX)"
fi
mkdir -p "$W"/{log,repos,restore,cache,kopia}
cleanup() { rm -rf -- "$W"; }
trap cleanup EXIT
TSV="$W/results.tsv"
printf 'run\ttool\tstep\tseconds\trss_kb\tbytes_added\trequests\n' >"$TSV"
ITSV="$W/interrupted.tsv"
: >"$ITSV"

GOCACHE="$(go env GOCACHE)"; export GOCACHE  # before XDG_CACHE_HOME moves it
export XDG_CACHE_HOME="$W/cache"           # cloudstic metadata cache
export RESTIC_CACHE_DIR="$W/cache/restic"
export BORG_BASE_DIR="$W/borgbase"
export CLOUDSTIC_PASSWORD=bench RESTIC_PASSWORD=bench BORG_PASSPHRASE=bench KOPIA_PASSWORD=bench
export KOPIA_CHECK_FOR_UPDATES=false
export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes

log "building cloudstic"
CS="$W/cloudstic"
(cd "$ROOT" && go build -o "$CS" ./cmd/cloudstic) || die "go build failed"
COMMIT="$(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD -- internal cmd || echo ' + uncommitted changes')"

log "generating data in $W"
MIXED="$W/data/mixed"; SMALL="$W/data/small"
mkdir -p "$MIXED" "$SMALL"
python3 "$ROOT/bench/gen.py" mixed "$MIXED"
python3 "$ROOT/bench/gen.py" small "$SMALL"
log "data: mixed $(du -sh "$MIXED" | cut -f1), small $(find "$SMALL" -type f | wc -l) files $(du -sh "$SMALL" | cut -f1)"

# discard DIR: move DIR out of the way; empty_trash deletes what was discarded.
# Mass deletes are kept between runs: on ext4 without a journal (/tmp here)
# the inode allocator scans inodes freed in the last 30 s (recently_deleted)
# on every create, so a restore started soon after another tool's restore
# was deleted measured the file system, not the tool: 55,000 files took
# cloudstic 8-9 s right after a delete and 1-2 s otherwise.
discard() {
	if [ -e "$1" ]; then
		mkdir -p "$W/trash"
		mv -- "$1" "$(mktemp -d "$W/trash/XXXXXX")/"
	fi
}
empty_trash() {
	if [ -e "$W/trash" ]; then
		rm -rf -- "$W/trash"
		log "deleted this run's restores and repositories; waiting 35 s for ext4 to forget the freed inodes"
		sleep 35
	fi
}

dir_bytes() { if [ -e "$1" ]; then du -sb -- "$1" | cut -f1; else echo 0; fi; }

# measure RUN TOOL STEP SIZE_PATH CMD...: time CMD with /usr/bin/time -v and
# append one TSV line (wall seconds, peak RSS, bytes SIZE_PATH grew by,
# store requests printed by cloudstic -debug).
measure() {
	local run=$1 tool=$2 step=$3 sizepath=$4
	shift 4
	local lf="$W/log/$run-$tool-$step.log" before after t0 t1 rss reqs lines0=0
	before=$(dir_bytes "$sizepath")
	if [ -n "${S3LOG:-}" ]; then lines0=$(wc -l <"$S3LOG"); fi
	# Write back what earlier steps left dirty (a restore's gigabyte, kept
	# until the run ends) before the clock starts: otherwise a step that
	# syncs its files (cloudstic, borg) waits for the previous tool's
	# writeback, and one that does not (restic 0.14) does not.
	sync
	t0=$(date +%s.%N)
	if ! /usr/bin/time -v -o "$W/time.txt" "$@" >"$lf" 2>&1; then
		tail -20 "$lf" >&2
		die "$tool $step failed (command: $*)"
	fi
	t1=$(date +%s.%N)
	after=$(dir_bytes "$sizepath")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
	reqs=$(sed -n 's/.*store requests: \([0-9]*\).*/\1/p' "$lf" | tail -1)
	if [ -n "${S3LOG:-}" ]; then
		# Requests the S3 server logged during the step, the same count
		# for every tool (cloudstic's own count is in the step's log).
		reqs=$(($(wc -l <"$S3LOG") - lines0))
	fi
	printf '%s\t%s\t%s\t%.3f\t%s\t%s\t%s\n' "$run" "$tool" "$step" "$(echo "$t1 - $t0" | bc)" \
		"$rss" "$((after - before))" "${reqs:--}" >>"$TSV"
	log "$(tail -1 "$TSV" | tr '\t' ' ')"
}

# fresh_copy TOOL: copy the 1 GB set to a new directory just before a tool's
# initial backup (untimed) and print its path, as users back up fresh
# exports: every file was written seconds before the backup, so the
# incrementals right after it test the racy-clean margin (issue #19).
fresh_copy() {
	local dst="$W/data/mixed-$1"
	rm -rf -- "$dst"
	cp -r -- "$MIXED" "$dst"
	echo "$dst"
}

# interrupted RUN TOOL REPO SRC CMD...: issue #32's "backup interrupted at
# ~50 %, then re-run". CMD (a first backup of SRC into the empty REPO, whose
# init the caller did) is sent SIGINT, as Ctrl-C does, once REPO holds half
# the bytes this tool's backup1g of the same set added in this run; after it
# stops, CMD runs again (measured, step interrupted-rerun). One line per
# try goes to $ITSV: bytes stored at the interruption and by the re-run,
# and the re-run's bytes over the source's (the issue's goal: <= 0.55).
interrupted() {
	local run=$1 tool=$2 repo=$3 src=$4
	shift 4
	local full half pid at rerun srcb
	full=$(awk -F'\t' -v r="$run" -v t="$tool" '$1 == r && $2 == t && $3 == "backup1g" {print $6}' "$TSV")
	half=$((full / 2))
	"$@" >"$W/log/$run-$tool-interrupted.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ "$(dir_bytes "$repo")" -lt "$half" ]; do
		sleep 0.1
	done
	kill -INT "$pid" 2>/dev/null || log "$tool finished before the interruption"
	wait "$pid" || true
	at=$(dir_bytes "$repo")
	measure "$run" "$tool" interrupted-rerun "$repo" "$@"
	rerun=$(tail -1 "$TSV" | cut -f6)
	srcb=$(dir_bytes "$src")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%.2f\n' "$run" "$tool" "$full" "$at" "$rerun" "$srcb" \
		"$(echo "$rerun / $srcb" | bc -l)" >>"$ITSV"
	discard "$repo"
}

# --- one tool's sequence: seq_TOOL RUN, in scripts/lib/bench-seq.sh ----------------
# shellcheck source=lib/bench-seq.sh
. "$ROOT/scripts/lib/bench-seq.sh"

# --- interleaved runs -------------------------------------------------------------
last=0
for run in $(seq 1 "$RUNS"); do
	now=$(date +%s)
	# Keep ~4 minutes for S3 and the report.
	if [ "$run" -gt 1 ] && [ $((now - T_START + last + 240)) -gt "$BUDGET" ]; then
		log "time budget: stopping after $((run - 1)) runs"
		break
	fi
	r0=$(date +%s)
	n=${#TOOLS[@]}
	for i in $(seq 0 $((n - 1))); do # rotate the order each run
		tool=${TOOLS[$(((i + run - 1) % n))]}
		log "run $run: $tool"
		"seq_$tool" "$run"
	done
	empty_trash
	last=$(($(date +%s) - r0))
done

# --- loopback S3 ------------------------------------------------------------------
# A private server (own port, state and data under $W), so that other test
# runs sharing the default one neither disturb the numbers nor block us.
export S3_TEST_PORT="${BENCH_S3_PORT:-7171}" S3_TEST_STATE="$W/s3state"
stop_s3() { "$ROOT/scripts/s3-server.sh" --stop >/dev/null 2>&1 || true; }
if [ "$S3" = 1 ]; then
	log "starting a private loopback S3 server on port $S3_TEST_PORT"
fi
if [ "$S3" = 1 ] && s3env="$(VGW_ACCESS_LOG="$W/s3access.log" timeout 300 "$ROOT/scripts/s3-server.sh" "$W/s3data")"; then
	trap 'stop_s3; cleanup' EXIT
	eval "$s3env"
	PREFIX="bench-$$"
	export AWS_ACCESS_KEY_ID="$S3_TEST_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$S3_TEST_SECRET_ACCESS_KEY"
	export CLOUDSTIC_S3_ENDPOINT="$S3_TEST_ENDPOINT" CLOUDSTIC_STORE="s3:$S3_TEST_BUCKET/$PREFIX/cloudstic"
	S3DIR="$S3_TEST_DATA_DIR/$S3_TEST_BUCKET/$PREFIX"
	S3LOG="$W/s3access.log"
	[ -f "$S3LOG" ] || die "the S3 server keeps no access log ($S3LOG)"
	"$CS" init >"$W/log/init.log" 2>&1 || die "cloudstic init on S3 failed"
	measure s3 s3-cloudstic backup1g "$S3DIR/cloudstic" "$CS" backup -debug -source "local:$MIXED"
	measure s3 s3-cloudstic incr1g-nochange "$S3DIR/cloudstic" "$CS" backup -debug -source "local:$MIXED"
	measure s3 s3-cloudstic restore1g "$W/restore/s3c" "$CS" restore -debug -output "$W/restore/s3c"
	discard "$W/restore/s3c"
	measure s3 s3-cloudstic backup55k "$S3DIR/cloudstic" "$CS" backup -debug -source "local:$SMALL"
	measure s3 s3-cloudstic incr-nochange "$S3DIR/cloudstic" "$CS" backup -debug -source "local:$SMALL"
	measure s3 s3-cloudstic incr-nochange-nocache "$S3DIR/cloudstic" env CLOUDSTIC_NO_CACHE=1 "$CS" backup -debug -source "local:$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure s3 s3-cloudstic incr-onefile "$S3DIR/cloudstic" "$CS" backup -debug -source "local:$SMALL"
	measure s3 s3-cloudstic restore55k "$W/restore/s3c" "$CS" restore -debug -output "$W/restore/s3c"
	discard "$W/restore/s3c"
	unset CLOUDSTIC_STORE
	RR="s3:$S3_TEST_ENDPOINT/$S3_TEST_BUCKET/$PREFIX/restic"
	restic -r "$RR" init >"$W/log/init.log" 2>&1 || die "restic init on S3 failed"
	measure s3 s3-restic backup1g "$S3DIR/restic" restic -r "$RR" backup "$MIXED"
	measure s3 s3-restic incr1g-nochange "$S3DIR/restic" restic -r "$RR" backup "$MIXED"
	measure s3 s3-restic restore1g "$W/restore/s3r" restic -r "$RR" restore latest --target "$W/restore/s3r"
	discard "$W/restore/s3r"
	measure s3 s3-restic backup55k "$S3DIR/restic" restic -r "$RR" backup "$SMALL"
	measure s3 s3-restic incr-nochange "$S3DIR/restic" restic -r "$RR" backup "$SMALL"
	S3LOG=""
	rm -rf -- "$S3DIR" "$W/trash"
	stop_s3
elif [ "$S3" = 1 ]; then
	log "could not start the S3 server: S3 steps skipped"
fi

# --- SeaweedFS cluster --------------------------------------------------------------
# A private cluster (own ports, state and data under $W): a master, three
# volume servers keeping every object on two of them, a filer and the S3
# gateway, all on this machine. The 1 GB set only: initial backup, no-change
# incremental and restore, cloudstic and restic. Bytes added are the growth
# of the cluster's data directories (every object stored twice); requests
# are cloudstic's own count (the gateway keeps no access log here).
SEAWEEDFS="${BENCH_SEAWEEDFS:-1}"
export SEAWEED_TEST_PORT="${BENCH_SEAWEEDFS_PORT:-8733}" SEAWEED_TEST_STATE="$W/swstate"
stop_sw() { "$ROOT/scripts/seaweedfs-server.sh" --stop >/dev/null 2>&1 || true; }
if [ "$SEAWEEDFS" = 1 ]; then
	log "starting a private SeaweedFS cluster on ports $SEAWEED_TEST_PORT-$((SEAWEED_TEST_PORT + 5))"
fi
if [ "$SEAWEEDFS" = 1 ] && swenv="$(timeout 1200 "$ROOT/scripts/seaweedfs-server.sh" "$W/swdata")"; then
	trap 'stop_sw; cleanup' EXIT
	eval "$swenv"
	PREFIX="bench-$$"
	export AWS_ACCESS_KEY_ID="$SEAWEED_TEST_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$SEAWEED_TEST_SECRET_ACCESS_KEY"
	export CLOUDSTIC_S3_ENDPOINT="$SEAWEED_TEST_ENDPOINT" CLOUDSTIC_STORE="s3:$SEAWEED_TEST_BUCKET/$PREFIX/cloudstic"
	SWDIR="$W/swdata"
	"$CS" init >"$W/log/init.log" 2>&1 || die "cloudstic init on SeaweedFS failed"
	measure seaweedfs seaweedfs-cloudstic backup1g "$SWDIR" "$CS" backup -debug -source "local:$MIXED"
	measure seaweedfs seaweedfs-cloudstic incr1g-nochange "$SWDIR" "$CS" backup -debug -source "local:$MIXED"
	measure seaweedfs seaweedfs-cloudstic restore1g "$W/restore/swc" "$CS" restore -debug -output "$W/restore/swc"
	discard "$W/restore/swc"
	unset CLOUDSTIC_STORE
	RR="s3:$SEAWEED_TEST_ENDPOINT/$SEAWEED_TEST_BUCKET/$PREFIX/restic"
	restic -r "$RR" init >"$W/log/init.log" 2>&1 || die "restic init on SeaweedFS failed"
	measure seaweedfs seaweedfs-restic backup1g "$SWDIR" restic -r "$RR" backup "$MIXED"
	measure seaweedfs seaweedfs-restic incr1g-nochange "$SWDIR" restic -r "$RR" backup "$MIXED"
	measure seaweedfs seaweedfs-restic restore1g "$W/restore/swr" restic -r "$RR" restore latest --target "$W/restore/swr"
	discard "$W/restore/swr"
	rm -rf -- "$W/trash"
	stop_sw
elif [ "$SEAWEEDFS" = 1 ]; then
	log "could not start the SeaweedFS cluster: SeaweedFS steps skipped"
fi

# --- remote profile: S3 behind 25 ms each way and 1 Gbit/s (issue #37) ---------------
if [ "${BENCH_REMOTE:-1}" = 1 ]; then
	# shellcheck source=lib/bench-remote.sh
	. "$ROOT/scripts/lib/bench-remote.sh"
	log "remote profile: a private S3 server behind toxiproxy (25 ms each way, 1 Gbit/s)"
	bench_remote
fi

# --- machine ceiling ----------------------------------------------------------------
log "measuring the machine's ceiling (one core)"
CEIL="$W/ceiling.txt"
{
	echo '```'
	openssl speed -seconds 1 -evp sha256 2>/dev/null | tail -2
	openssl speed -seconds 1 -evp aes-256-gcm 2>/dev/null | tail -2
	(cd "$ROOT" && go test -run '^$' -bench . -benchtime 1s -cpu 1 ./internal/repo/pack/ 2>&1 | grep -E '^Benchmark|^ok|FAIL')
	echo '```'
} >"$CEIL"

# --- report -----------------------------------------------------------------------
LOCAL_RUNS="$(awk -F'\t' '$1 ~ /^[0-9]+$/ {print $1}' "$TSV" | sort -n | tail -1)"
LOCAL_RUNS="${LOCAL_RUNS:-0}"
OUT="${BENCH_OUT:-$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S)-$(hostname -s).md}"
mkdir -p "$(dirname "$OUT")"
{
	echo "# cloudstic benchmark $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "Produced by scripts/bench.sh with cloudstic built at commit $COMMIT; local runs per tool: $LOCAL_RUNS (interleaved, order rotated each run); data scale ${BENCH_SCALE:-1}; total wall time $(( $(date +%s) - T_START )) s."
	echo
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo) RAM, $(lscpu | sed -n 's/^Model name: *//p'), $(uname -sr); shared with other test runs while measured."
	echo "Versions: $("$CS" version 2>&1 | head -1); $(restic version | head -1); $(borg --version)$PEER_VERSIONS."
	echo "Compression, each tool's default: cloudstic -compression auto (S2 on the local disk, zstd on S3); restic auto (zstd); borg lz4; kopia none; Cloudstic zstd."
	echo "Cloudstic (capital C) is the peer from PEERS_DIR; its prune row keeps one of the three 1 GB snapshots (its forget <id> fails on packed snapshots). kopia runs with its defaults, auto-maintenance included; its prune is full maintenance with --safety=none."
	echo
	python3 "$ROOT/bench/report.py" "$TSV"
	echo
	echo "Backup interrupted at ~50 %, then re-run (issue #32; SIGINT once the repository holds half of what the tool's"
	echo "full backup of the 1 GB set stored in the same run; borg not measured; goal: re-run <= 0.55 of the source):"
	echo
	echo "| run | tool | full backup stored | stored at the interruption | re-run stored | source | re-run / source |"
	echo "|---|---|---|---|---|---|---|"
	awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}' "$ITSV"
	echo
	echo "Machine ceiling (one core):"
	echo
	cat "$CEIL"
	echo
	echo "Raw measurements:"
	echo
	echo '```'
	column -t -s "$(printf '\t')" "$TSV"
	echo '```'
} >"$OUT"
cat "$OUT"
log "wrote $OUT in $(( $(date +%s) - T_START )) s"
