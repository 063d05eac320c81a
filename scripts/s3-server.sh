#!/usr/bin/env bash
# s3-server.sh: start a real S3-compatible server on loopback for tests of
# internal/store/s3 (and anything else that needs an S3 store).
#
# Server: versitygw (Apache-2.0, github.com/versity/versitygw), posix backend:
# buckets are directories under the data dir, objects are files. It supports
# conditional writes (If-None-Match: * and If-Match: <etag> -> 412) atomically.
# It is started with --versioning-dir so that tests can turn on versioning for
# a bucket of their own (PutBucketVersioning); the default bucket stays
# unversioned.
#
# Usage:
#   eval "$(scripts/s3-server.sh [DATA_DIR])"   install if missing, start (or reuse
#                                            the one already running), create the
#                                            bucket, print export lines on stdout
#   scripts/s3-server.sh --stop               stop the server this script started
#                                            (by its recorded pid)
# Everything but the export lines goes to stderr.
#
# Settings (environment, all optional):
#   S3_TEST_PORT        listen port on 127.0.0.1       (default 7070)
#   S3_TEST_BUCKET      bucket to create               (default backup-test)
#   S3_TEST_ACCESS_KEY  / S3_TEST_SECRET_KEY           (default fixed test values)
#   S3_TEST_STATE       state dir (pid, log)           (default /tmp/s3-test-$PORT)
#   VERSITYGW_VERSION   module version to install      (default v1.8.0)
#   VERSITYGW_BIN       binary path                    (default $(go env GOPATH)/bin/versitygw)
#
# Install: `go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`
# through the Go module proxy; about 3 minutes on a 2-core machine, 84 MB binary.
# Clients must use path-style addressing (s3.Options.UsePathStyle = true).
set -euo pipefail

PORT="${S3_TEST_PORT:-7070}"
BUCKET="${S3_TEST_BUCKET:-backup-test}"
AK="${S3_TEST_ACCESS_KEY:-testaccesskey}"
SK="${S3_TEST_SECRET_KEY:-testsecretkey0123456789}"
REGION=us-east-1
VERSION="${VERSITYGW_VERSION:-v1.8.0}"
STATE="${S3_TEST_STATE:-/tmp/s3-test-$PORT}"
ENDPOINT="http://127.0.0.1:$PORT"
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

log() { echo "s3-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/server.sh"

# The pid recorded in $STATE/pid, if that process is still our versitygw.
running_pid() { recorded_pid "versitygw .*--port 127.0.0.1:$PORT"; }

if [ "${1:-}" = "--stop" ]; then
	if pid="$(running_pid)"; then
		stop_pid "$pid" versitygw
	else
		log "no versitygw recorded in $STATE is running"
	fi
	if [ -f "$STATE/data_is_temp" ] && [ -f "$STATE/data_dir" ]; then
		rm -rf -- "$(cat "$STATE/data_dir")"
	fi
	if [ -f "$STATE/versions_dir" ]; then
		rm -rf -- "$(cat "$STATE/versions_dir")"
	fi
	rm -f "$STATE/pid" "$STATE/data_dir" "$STATE/data_is_temp" "$STATE/versions_dir"
	exit 0
fi

# --- tools ------------------------------------------------------------------
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go not found (expected /usr/local/go/bin/go)"
command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install -y curl)"
BIN="${VERSITYGW_BIN:-$(go env GOPATH)/bin/versitygw}"

installed_version() {
	[ -x "$BIN" ] || return 1
	go version -m "$BIN" 2>/dev/null | awk '$1=="mod" && $2=="github.com/versity/versitygw" {print $3}'
}

if [ "$(installed_version || true)" != "$VERSION" ]; then
	log "installing versitygw $VERSION into $(dirname "$BIN") (takes ~3 min on 2 cores)"
	t0=$(date +%s)
	mkdir -p "$(dirname "$BIN")"
	(cd / && env GOWORK=off GOFLAGS=-buildvcs=false GOBIN="$(dirname "$BIN")" \
		go install "github.com/versity/versitygw/cmd/versitygw@$VERSION") >&2 \
		|| die "go install github.com/versity/versitygw/cmd/versitygw@$VERSION failed"
	[ "$(installed_version || true)" = "$VERSION" ] || die "installed binary at $BIN is not $VERSION"
	log "installed in $(( $(date +%s) - t0 ))s"
fi

# --- start or reuse -----------------------------------------------------------
mkdir -p "$STATE"
# Two callers starting at once (parallel test runs) must not both start a
# server: hold a lock until the server is up or reused.
exec 9>"$STATE/start.lock"
flock 9
WANT_DATA=""
if [ -n "${1:-}" ]; then
	WANT_DATA="$(realpath -m -- "$1")"
fi

if pid="$(running_pid)"; then
	DATA="$(cat "$STATE/data_dir")"
	if [ -n "$WANT_DATA" ] && [ "$WANT_DATA" != "$DATA" ]; then
		die "versitygw pid $pid already serves $DATA on port $PORT; run '$0 --stop' first"
	fi
	log "reusing running versitygw pid $pid (data $DATA)"
else
	rm -f "$STATE/pid" "$STATE/data_is_temp" "$STATE/versions_dir"
	if curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; then
		die "port $PORT on 127.0.0.1 is taken by another process; set S3_TEST_PORT"
	fi
	if [ -n "$WANT_DATA" ]; then
		DATA="$WANT_DATA"
		mkdir -p -- "$DATA"
	else
		DATA="$(mktemp -d /tmp/s3-test-data.XXXXXX)"
		touch "$STATE/data_is_temp"
	fi
	echo "$DATA" >"$STATE/data_dir"
	VERSIONS="$(mktemp -d /tmp/s3-test-versions.XXXXXX)"
	echo "$VERSIONS" >"$STATE/versions_dir"

	start_server() { # $@: extra posix options
		: >"$STATE/server.log"
		ROOT_ACCESS_KEY_ID="$AK" ROOT_SECRET_ACCESS_KEY="$SK" VGW_REGION="$REGION" \
			"$BIN" --port "127.0.0.1:$PORT" --quiet posix \
			--versioning-dir "$VERSIONS" "$@" "$DATA" \
			</dev/null >>"$STATE/server.log" 2>&1 9>&- &
		pid=$!
		echo "$pid" >"$STATE/pid"
	}
	wait_ready() {
		local t0 code
		t0=$(date +%s%N)
		for _ in $(seq 1 600); do
			[ -e "/proc/$pid" ] || return 1
			code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$ENDPOINT/" || true)"
			if [ "$code" != "000" ]; then
				log "versitygw pid $pid answered HTTP $code after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
				return 0
			fi
			sleep 0.1
		done
		return 1
	}
	start_server
	if ! wait_ready; then
		if grep -q "xattrs are not supported" "$STATE/server.log"; then
			log "no xattr support on $DATA; retrying with --sidecar $STATE/meta"
			mkdir -p "$STATE/meta"
			start_server --sidecar "$STATE/meta"
			wait_ready || { cat "$STATE/server.log" >&2; die "versitygw did not start"; }
		else
			[ -e "/proc/$pid" ] && kill "$pid"
			cat "$STATE/server.log" >&2
			die "versitygw did not start"
		fi
	fi
fi

# Versioning can be turned on for a bucket only if the server has a versions
# dir (a server started by another copy of this script may not).
VERSIONING=false
if [ -f "$STATE/versions_dir" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--versioning-dir"; then
	VERSIONING=true
fi

# --- bucket -----------------------------------------------------------------
s3curl() { # method path -> prints HTTP status
	curl -s -o "$STATE/last_response" -w '%{http_code}' --max-time 10 -X "$1" \
		-H "x-amz-content-sha256: $EMPTY_SHA256" \
		--aws-sigv4 "aws:amz:$REGION:s3" --user "$AK:$SK" "$ENDPOINT/$2" || true
}
code="$(s3curl PUT "$BUCKET")"
case "$code" in
200) log "created bucket $BUCKET" ;;
409) grep -q BucketAlreadyOwnedByYou "$STATE/last_response" \
	|| { cat "$STATE/last_response" >&2; die "cannot create bucket $BUCKET (HTTP 409)"; } ;;
*) cat "$STATE/last_response" >&2; die "cannot create bucket $BUCKET (HTTP $code)" ;;
esac
code="$(s3curl HEAD "$BUCKET")"
[ "$code" = 200 ] || die "HEAD bucket $BUCKET gave HTTP $code"
log "ready: $ENDPOINT bucket $BUCKET pid $pid data $DATA log $STATE/server.log"

cat <<EOF
export S3_TEST_ENDPOINT=$ENDPOINT
export S3_TEST_BUCKET=$BUCKET
export S3_TEST_REGION=$REGION
export S3_TEST_ACCESS_KEY_ID=$AK
export S3_TEST_SECRET_ACCESS_KEY=$SK
export S3_TEST_PATH_STYLE=true
export S3_TEST_PID=$pid
export S3_TEST_DATA_DIR=$DATA
export S3_TEST_VERSIONING=$VERSIONING
export AWS_ACCESS_KEY_ID=$AK
export AWS_SECRET_ACCESS_KEY=$SK
export AWS_REGION=$REGION
EOF
