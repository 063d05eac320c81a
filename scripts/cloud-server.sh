#!/usr/bin/env bash
# cloud-server.sh: start the fake Google Drive and Microsoft Graph APIs
# (test/fakecloud, built from this repository: nothing is downloaded) on
# loopback for the cloud drive source tests.
#
# Usage:
#   eval "$(scripts/cloud-server.sh)"   build and start (or reuse the one
#                                       running), print the export line
#   scripts/cloud-server.sh --stop      stop the server this script started
#
# Exports CLOUDSTIC_TEST_FAKECLOUD=http://127.0.0.1:PORT. Settings:
#   CLOUD_TEST_PORT   listen port (default 4610)
#   CLOUD_TEST_STATE  state dir: binary, pid, log (default /tmp/cloud-test-$PORT)
set -euo pipefail

PORT="${CLOUD_TEST_PORT:-4610}"
STATE="${CLOUD_TEST_STATE:-/tmp/cloud-test-$PORT}"
ENDPOINT="http://127.0.0.1:$PORT"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { echo "cloud-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

. "$ROOT/scripts/lib/server.sh"

running_pid() { recorded_pid "$STATE/fakecloud -addr 127.0.0.1:$PORT"; }

if [ "${1:-}" = "--stop" ]; then
	if pid="$(running_pid)"; then
		stop_pid "$pid" fakecloud
	else
		log "no fakecloud recorded in $STATE is running"
	fi
	rm -f "$STATE/pid"
	exit 0
fi

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install -y curl)"
mkdir -p "$STATE"
exec 9>"$STATE/start.lock"
flock 9

# Rebuilt every time: a running server of older code is replaced.
(cd "$ROOT" && go build -o "$STATE/fakecloud.new" ./test/fakecloud/cmd/fakecloud) >&2 || die "go build failed"
if pid="$(running_pid)" && cmp -s "$STATE/fakecloud" "$STATE/fakecloud.new"; then
	rm -f "$STATE/fakecloud.new"
	log "reusing running fakecloud pid $pid"
else
	if pid="$(running_pid)"; then stop_pid "$pid" "fakecloud (older build)"; fi
	mv "$STATE/fakecloud.new" "$STATE/fakecloud"
	rm -f "$STATE/pid"
	if curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; then
		die "port $PORT is taken by another process; set CLOUD_TEST_PORT"
	fi
	"$STATE/fakecloud" -addr "127.0.0.1:$PORT" </dev/null >"$STATE/server.log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$STATE/pid"
	ready=false
	for _ in $(seq 1 100); do
		[ -e "/proc/$pid" ] || break
		code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$ENDPOINT/" || true)"
		if [ "$code" != "000" ]; then ready=true; break; fi
		sleep 0.1
	done
	if ! $ready; then
		[ -e "/proc/$pid" ] && kill "$pid"
		cat "$STATE/server.log" >&2
		die "fakecloud did not start"
	fi
	log "fakecloud pid $pid answered on $ENDPOINT"
fi
echo "export CLOUDSTIC_TEST_FAKECLOUD=$ENDPOINT"
