#!/usr/bin/env bash
# kms-server.sh: start a real AWS KMS-compatible server for tests of the
# kms-platform key slots (internal/repo/kms and the CLI's -kms-key-arn).
#
# Server: local-kms (MIT, github.com/nsmithuk/local-kms), which implements
# KMS's JSON API with real AES-GCM encryption: CreateKey, Encrypt and
# Decrypt with encryption contexts, DisableKey/EnableKey, aliases. Tests
# create their own keys through the API. Note: local-kms has no bind-address
# setting and listens on every interface of the port; clients use 127.0.0.1.
#
# Usage:
#   eval "$(scripts/kms-server.sh)"   install if missing, start (or reuse the one
#                                   already running), print export lines on stdout
#   scripts/kms-server.sh --stop      stop the server this script started (by its
#                                   recorded pid) and remove its data
# Everything but the export lines goes to stderr.
#
# Settings (environment, all optional):
#   KMS_TEST_PORT       listen port                    (default 4599)
#   KMS_TEST_REGION     the server's region (in ARNs)   (default eu-west-2)
#   KMS_TEST_STATE      state dir (pid, log, data)      (default /tmp/kms-test-$PORT)
#   LOCAL_KMS_VERSION   module version to install       (default below)
#   LOCAL_KMS_BIN       binary path                     (default $(go env GOPATH)/bin/local-kms)
#
# Install: `go install github.com/nsmithuk/local-kms@$LOCAL_KMS_VERSION` through
# the Go module proxy (the module has no release tags; the version is the
# pseudo-version of its newest commit); about 45 s on 2 cores, 19 MB binary.
set -euo pipefail

PORT="${KMS_TEST_PORT:-4599}"
REGION="${KMS_TEST_REGION:-eu-west-2}"
STATE="${KMS_TEST_STATE:-/tmp/kms-test-$PORT}"
VERSION="${LOCAL_KMS_VERSION:-v0.0.0-20260228092603-2a5e92d09ab6}"
ENDPOINT="http://127.0.0.1:$PORT"

log() { echo "kms-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/server.sh"

# The pid recorded in $STATE/pid, if that process is still our local-kms.
running_pid() { recorded_pid "local-kms" "PORT=$PORT"; }

if [ "${1:-}" = "--stop" ]; then
	if pid="$(running_pid)"; then
		stop_pid "$pid" local-kms
	else
		log "no local-kms recorded in $STATE is running"
	fi
	rm -rf -- "$STATE/data"
	rm -f "$STATE/pid"
	exit 0
fi

# --- tools ------------------------------------------------------------------
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go not found (expected /usr/local/go/bin/go)"
command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install -y curl)"
BIN="${LOCAL_KMS_BIN:-$(go env GOPATH)/bin/local-kms}"

installed_version() {
	[ -x "$BIN" ] || return 1
	go version -m "$BIN" 2>/dev/null | awk '$1=="mod" && $2=="github.com/nsmithuk/local-kms" {print $3}'
}

if [ "$(installed_version || true)" != "$VERSION" ]; then
	log "installing local-kms $VERSION into $(dirname "$BIN")"
	t0=$(date +%s)
	mkdir -p "$(dirname "$BIN")"
	(cd / && env GOWORK=off GOFLAGS=-buildvcs=false GOBIN="$(dirname "$BIN")" \
		go install "github.com/nsmithuk/local-kms@$VERSION") >&2 \
		|| die "go install github.com/nsmithuk/local-kms@$VERSION failed"
	[ "$(installed_version || true)" = "$VERSION" ] || die "installed binary at $BIN is not $VERSION"
	log "installed in $(( $(date +%s) - t0 ))s"
fi

# --- start or reuse -----------------------------------------------------------
mkdir -p "$STATE"
exec 9>"$STATE/start.lock"
flock 9

if pid="$(running_pid)"; then
	log "reusing running local-kms pid $pid"
else
	rm -f "$STATE/pid"
	if curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; then
		die "port $PORT is taken by another process; set KMS_TEST_PORT"
	fi
	rm -rf -- "$STATE/data"
	mkdir -p "$STATE/data"
	: >"$STATE/server.log"
	PORT="$PORT" KMS_REGION="$REGION" KMS_ACCOUNT_ID=111122223333 KMS_DATA_PATH="$STATE/data" \
		KMS_SEED_PATH="$STATE/no-seed.yaml" "$BIN" </dev/null >>"$STATE/server.log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$STATE/pid"
	ready=false
	for _ in $(seq 1 300); do
		[ -e "/proc/$pid" ] || break
		# Any HTTP answer (405 for a GET) means it is serving.
		code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$ENDPOINT/" || true)"
		if [ "$code" != "000" ]; then ready=true; break; fi
		sleep 0.1
	done
	if ! $ready; then
		[ -e "/proc/$pid" ] && kill "$pid"
		cat "$STATE/server.log" >&2
		die "local-kms did not start"
	fi
	log "local-kms pid $pid answered on $ENDPOINT"
fi

# A KMS call proves it works: ListKeys with a signed-looking request
# (local-kms does not check signatures).
code="$(curl -s -o "$STATE/last_response" -w '%{http_code}' --max-time 5 -X POST \
	-H 'Content-Type: application/x-amz-json-1.1' -H 'X-Amz-Target: TrentService.ListKeys' \
	-d '{}' "$ENDPOINT/" || true)"
[ "$code" = 200 ] || { cat "$STATE/last_response" >&2; die "ListKeys gave HTTP $code"; }
log "ready: $ENDPOINT region $REGION pid $pid log $STATE/server.log"

cat <<EOT
export KMS_TEST_ENDPOINT=$ENDPOINT
export KMS_TEST_REGION=$REGION
export KMS_TEST_PID=$pid
EOT
