#!/usr/bin/env bash
# seaweedfs-server.sh: start a small SeaweedFS cluster (Apache-2.0,
# github.com/seaweedfs/seaweedfs) on loopback: the second S3 server the tests
# run against, a distributed one (versitygw, scripts/s3-server.sh, is a single
# process in front of a directory).
#
# Cluster, every process on 127.0.0.1 and recorded by its pid:
#   master   one, replication 001 by default: every object is stored on two
#            volume servers (one more copy on another server of the same rack)
#   volume1..3  three volume servers, each on its own data directory
#   filer    one, keeping the namespace in its embedded LevelDB store
#   s3       the S3 gateway in front of the filer, with one access key
# A dead volume server can be killed with `kill -9 $pid` (the node-failure
# test does); running this script again restarts whatever is not running, on
# its old data directory and port, and reuses the rest.
#
# Usage:
#   eval "$(scripts/seaweedfs-server.sh [DATA_DIR])"  build if missing, start (or
#                                                  reuse) the cluster, create the
#                                                  bucket, print export lines
#   scripts/seaweedfs-server.sh --stop               stop the processes this script
#                                                  started (by their recorded pids)
# Everything but the export lines goes to stderr.
#
# Settings (environment, all optional):
#   SEAWEED_TEST_PORT        S3 port on 127.0.0.1; the master listens on PORT+1, the
#                            filer on PORT+2, the volume servers on PORT+3..PORT+5,
#                            each gRPC port 10000 above          (default 8533)
#   SEAWEED_TEST_BUCKET      bucket to create                    (default backup-test)
#   SEAWEED_TEST_ACCESS_KEY  / SEAWEED_TEST_SECRET_KEY           (default fixed test values)
#   SEAWEED_TEST_STATE       state dir (pids, logs, S3 config)   (default /tmp/seaweedfs-test-$PORT)
#   SEAWEEDFS_VERSION        module version to build             (default below)
#   SEAWEEDFS_BIN            binary path (default $(go env GOPATH)/bin/weed-VERSION-GOVERSION)
#
# Build: `go install github.com/seaweedfs/seaweedfs/weed@VERSION` is refused
# (the module has replace directives), so the module is downloaded with
# `go mod download` and `go build ./weed` runs inside it. The binary is cached
# under a name holding the module version and the Go version; a cached start
# takes a few seconds. The uncached build takes about 9 minutes on 2 idle
# cores (14 minutes on this shared machine), a 200 MB binary.
# Clients must use path-style addressing (s3.Options.UsePathStyle = true).
set -euo pipefail

PORT="${SEAWEED_TEST_PORT:-8533}"
BUCKET="${SEAWEED_TEST_BUCKET:-backup-test}"
AK="${SEAWEED_TEST_ACCESS_KEY:-seaweedaccesskey}"
SK="${SEAWEED_TEST_SECRET_KEY:-seaweedsecretkey0123456789}"
REGION=us-east-1
VERSION="${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
STATE="${SEAWEED_TEST_STATE:-/tmp/seaweedfs-test-$PORT}"
REPLICATION=001
MASTER_PORT=$((PORT + 1))
FILER_PORT=$((PORT + 2))
VOLUME_PORTS=($((PORT + 3)) $((PORT + 4)) $((PORT + 5)))
ENDPOINT="http://127.0.0.1:$PORT"
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

log() { echo "seaweedfs-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/server.sh"

# The processes, in start order. Each is started as `weed ... NAME -port=P ...`
# and recorded in $STATE/NAME.pid.
PROCS=(master volume1 volume2 volume3 filer s3)
proc_port() { # name -> its HTTP port
	case "$1" in
	master) echo "$MASTER_PORT" ;;
	volume[123]) echo "${VOLUME_PORTS[$((${1#volume} - 1))]}" ;;
	filer) echo "$FILER_PORT" ;;
	s3) echo "$PORT" ;;
	esac
}
proc_cmd() { # name -> the weed subcommand
	case "$1" in volume*) echo volume ;; *) echo "$1" ;; esac
}
# running_pid NAME: the pid recorded for NAME, if it is still that process.
running_pid() { recorded_pid_in "$STATE/$1.pid" "weed.* $(proc_cmd "$1") -port=$(proc_port "$1") "; }

if [ "${1:-}" = "--stop" ]; then
	for ((i = ${#PROCS[@]} - 1; i >= 0; i--)); do
		name="${PROCS[$i]}"
		if pid="$(running_pid "$name")"; then
			stop_pid "$pid" "$name"
		fi
		rm -f "$STATE/$name.pid"
	done
	if [ -f "$STATE/data_is_temp" ] && [ -f "$STATE/data_dir" ]; then
		rm -rf -- "$(cat "$STATE/data_dir")"
	fi
	rm -f "$STATE/data_dir" "$STATE/data_is_temp"
	exit 0
fi

# --- tools ------------------------------------------------------------------
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go not found (expected /usr/local/go/bin/go)"
command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install -y curl)"
GOBIN_DIR="$(go env GOPATH)/bin"
BIN="${SEAWEEDFS_BIN:-$GOBIN_DIR/weed-$VERSION-$(go env GOVERSION)}"

if [ ! -x "$BIN" ]; then
	mkdir -p "$(dirname "$BIN")"
	# Two callers at once build once.
	exec 8>"$BIN.lock"
	flock 8
	if [ ! -x "$BIN" ]; then
		log "building SeaweedFS $VERSION into $BIN (about 9 min on 2 idle cores)"
		t0=$(date +%s)
		dir="$(cd / && GOWORK=off GOFLAGS=-mod=mod go mod download -json "github.com/seaweedfs/seaweedfs@$VERSION" \
			| sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" \
			|| die "go mod download github.com/seaweedfs/seaweedfs@$VERSION failed"
		[ -d "$dir/weed" ] || die "go mod download gave no module directory for $VERSION"
		(cd "$dir" && env GOWORK=off GOFLAGS=-buildvcs=false go build -o "$BIN.tmp" ./weed) >&2 \
			|| die "go build ./weed in $dir failed"
		mv -f "$BIN.tmp" "$BIN"
		log "built in $(( $(date +%s) - t0 ))s ($(du -m "$BIN" | cut -f1) MB)"
	fi
	exec 8>&-
fi

# --- start or reuse -------------------------------------------------------------
mkdir -p "$STATE"
# Two callers starting at once (parallel test runs) must not both start a
# cluster: hold a lock until it is up or reused.
exec 9>"$STATE/start.lock"
flock 9
WANT_DATA=""
if [ -n "${1:-}" ]; then
	WANT_DATA="$(realpath -m -- "$1")"
fi
if [ -f "$STATE/data_dir" ] && [ -d "$(cat "$STATE/data_dir")" ]; then
	DATA="$(cat "$STATE/data_dir")"
	if [ -n "$WANT_DATA" ] && [ "$WANT_DATA" != "$DATA" ]; then
		die "the cluster recorded in $STATE keeps its data in $DATA; run '$0 --stop' first"
	fi
else
	for name in "${PROCS[@]}"; do
		if running_pid "$name" >/dev/null; then
			die "$name is running but its data dir is unknown; run '$0 --stop' first"
		fi
	done
	rm -f "$STATE/data_is_temp"
	if [ -n "$WANT_DATA" ]; then
		DATA="$WANT_DATA"
	else
		DATA="$(mktemp -d /tmp/seaweedfs-test-data.XXXXXX)"
		touch "$STATE/data_is_temp"
	fi
	echo "$DATA" >"$STATE/data_dir"
fi
mkdir -p "$DATA"/{master,volume1,volume2,volume3,filer}

# The gateway's one identity (its access key may do everything).
cat >"$STATE/s3.json" <<EOF
{"identities": [{"name": "cloudstic-test",
  "credentials": [{"accessKey": "$AK", "secretKey": "$SK"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF

# args NAME: the command line of NAME after `weed -logtostderr`.
args() {
	local p
	p="$(proc_port "$1")"
	case "$1" in
	master)
		echo master -port="$p" -port.grpc=$((p + 10000)) -ip=127.0.0.1 -mdir="$DATA/master" \
			-peers=none -defaultReplication="$REPLICATION" -volumeSizeLimitMB=256 -telemetry=false ;;
	volume*)
		echo volume -port="$p" -port.grpc=$((p + 10000)) -ip=127.0.0.1 -dir="$DATA/$1" -max=64 \
			-master=127.0.0.1:"$MASTER_PORT" -dataCenter=dc1 -rack=rack1 -preStopSeconds=0 ;;
	filer)
		echo filer -port="$p" -port.grpc=$((p + 10000)) -ip=127.0.0.1 -master=127.0.0.1:"$MASTER_PORT" \
			-defaultStoreDir="$DATA/filer" -defaultReplicaPlacement="$REPLICATION" ;;
	s3)
		echo s3 -port="$p" -port.grpc=$((p + 10000)) -ip=127.0.0.1 -ip.bind=127.0.0.1 \
			-filer=127.0.0.1:"$FILER_PORT" -config="$STATE/s3.json" -port.iceberg=0 -port.lance=0 ;;
	esac
}

# ready NAME: whether NAME answers (and, for the master, leads).
ready() {
	local p
	p="$(proc_port "$1")"
	case "$1" in
	master) curl -fsS --max-time 2 "http://127.0.0.1:$p/cluster/status" 2>/dev/null | grep -q '"IsLeader":true' ;;
	volume*) curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$p/status" 2>/dev/null ;;
	filer) curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$p/" 2>/dev/null ;;
	s3) [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$p/" || true)" != 000 ] ;;
	esac
}

# start NAME: start NAME unless it runs, and wait until it answers.
start() {
	local name="$1" pid p t0
	if pid="$(running_pid "$name")"; then
		log "reusing $name pid $pid"
		return 0
	fi
	p="$(proc_port "$name")"
	if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$p/"; then
		die "port $p on 127.0.0.1 (for the $name) is taken by another process; set SEAWEED_TEST_PORT"
	fi
	# shellcheck disable=SC2046 # args prints words without spaces in them
	(cd "$STATE" && exec "$BIN" -logtostderr $(args "$name") </dev/null >>"$STATE/$name.log" 2>&1 9>&- 8>&-) &
	pid=$!
	echo "$pid" >"$STATE/$name.pid"
	t0=$(date +%s%N)
	for _ in $(seq 1 600); do
		[ -e "/proc/$pid" ] || { tail -20 "$STATE/$name.log" >&2; die "$name exited; log: $STATE/$name.log"; }
		if ready "$name"; then
			log "$name pid $pid on 127.0.0.1:$p answered after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
			return 0
		fi
		sleep 0.1
	done
	tail -20 "$STATE/$name.log" >&2
	die "$name did not answer on port $p within 60 s; log: $STATE/$name.log"
}

for name in master volume1 volume2 volume3; do start "$name"; done
# Replication needs the master to know the volume servers before the first
# write grows volumes.
for _ in $(seq 1 300); do
	status="$(curl -fsS --max-time 2 "http://127.0.0.1:$MASTER_PORT/dir/status" 2>/dev/null || true)"
	known=0
	for p in "${VOLUME_PORTS[@]}"; do
		if grep -q "\"Url\":\"127.0.0.1:$p\"" <<<"$status"; then known=$((known + 1)); fi
	done
	[ "$known" = 3 ] && break
	sleep 0.1
done
[ "$known" = 3 ] || die "the master knows $known of the 3 volume servers after 30 s"
start filer
start s3

# --- bucket -----------------------------------------------------------------
s3curl() { # method path [data-file] -> prints HTTP status
	local body=() sha="$EMPTY_SHA256"
	if [ -n "${3:-}" ]; then
		body=(--data-binary "@$3")
		sha="$(sha256sum "$3" | cut -d' ' -f1)"
	fi
	curl -s -o "$STATE/last_response" -w '%{http_code}' --max-time 30 -X "$1" "${body[@]}" \
		-H "x-amz-content-sha256: $sha" \
		--aws-sigv4 "aws:amz:$REGION:s3" --user "$AK:$SK" "$ENDPOINT/$2" || true
}
# The gateway may need a moment to load its identities from the filer.
for _ in $(seq 1 100); do
	code="$(s3curl PUT "$BUCKET")"
	[ "$code" != 403 ] && [ "$code" != 503 ] && break
	sleep 0.2
done
case "$code" in
200) log "created bucket $BUCKET" ;;
409) grep -q 'BucketAlreadyOwnedByYou\|BucketAlreadyExists' "$STATE/last_response" \
	|| { cat "$STATE/last_response" >&2; die "cannot create bucket $BUCKET (HTTP 409)"; } ;;
*) cat "$STATE/last_response" >&2; die "cannot create bucket $BUCKET (HTTP $code)" ;;
esac
# The first write to a bucket grows its volumes (on two servers each): do it
# here, so that the first test does not wait for it, and check that writes
# and reads work.
echo "seaweedfs-server warm-up" >"$STATE/warmup"
code="$(s3curl PUT "$BUCKET/warmup-$$" "$STATE/warmup")"
[ "$code" = 200 ] || { cat "$STATE/last_response" >&2; die "warm-up PUT gave HTTP $code"; }
code="$(s3curl GET "$BUCKET/warmup-$$")"
[ "$code" = 200 ] && cmp -s "$STATE/last_response" "$STATE/warmup" || die "warm-up GET gave HTTP $code"
code="$(s3curl DELETE "$BUCKET/warmup-$$")"
[ "$code" = 204 ] || [ "$code" = 200 ] || die "warm-up DELETE gave HTTP $code"

VOLUME_PIDS=""
for name in volume1 volume2 volume3; do VOLUME_PIDS="$VOLUME_PIDS $(running_pid "$name")"; done
log "ready: $ENDPOINT bucket $BUCKET, master 127.0.0.1:$MASTER_PORT, volume pids$VOLUME_PIDS, data $DATA, logs $STATE/*.log"

cat <<EOF
export SEAWEED_TEST_ENDPOINT=$ENDPOINT
export SEAWEED_TEST_BUCKET=$BUCKET
export SEAWEED_TEST_REGION=$REGION
export SEAWEED_TEST_ACCESS_KEY_ID=$AK
export SEAWEED_TEST_SECRET_ACCESS_KEY=$SK
export SEAWEED_TEST_VERSIONING=true
export SEAWEED_TEST_PORT=$PORT
export SEAWEED_TEST_MASTER=127.0.0.1:$MASTER_PORT
export SEAWEED_TEST_VOLUME_PIDS="${VOLUME_PIDS# }"
export SEAWEED_TEST_SCRIPT=$SCRIPT
EOF
