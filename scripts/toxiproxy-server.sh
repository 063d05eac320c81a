#!/usr/bin/env bash
# toxiproxy-server.sh: start Toxiproxy (github.com/Shopify/toxiproxy, MIT) on
# loopback for the network-fault tests (test/jepsen): a TCP proxy whose REST
# API adds latency, partitions, slow bandwidth and connection resets per
# proxy.
#
# Usage:
#   eval "$(scripts/toxiproxy-server.sh)"   install if missing, start (or reuse the
#                                         one running), print export lines on stdout
#   scripts/toxiproxy-server.sh --stop      stop the server this script started
# Everything but the export lines goes to stderr.
#
# Settings (environment, all optional):
#   TOXIPROXY_TEST_PORT   API port on 127.0.0.1          (default 8474)
#   TOXIPROXY_VERSION     module version to install      (default v2.5.0)
#   TOXIPROXY_BIN         binary path                    (default $(go env GOPATH)/bin/toxiproxy-server)
#
# Install: built from github.com/Shopify/toxiproxy/v2/cmd/server through the Go
# module proxy (`go install` names it "server"; it is renamed).
set -euo pipefail

PORT="${TOXIPROXY_TEST_PORT:-8474}"
VERSION="${TOXIPROXY_VERSION:-v2.5.0}"
STATE="/tmp/toxiproxy-test-$PORT"

log() { echo "toxiproxy-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/server.sh"

# The pid recorded in $STATE/pid, if that process is still our toxiproxy.
running_pid() { recorded_pid "toxiproxy-server .*-port $PORT"; }

if [ "${1:-}" = "--stop" ]; then
	if pid="$(running_pid)"; then
		stop_pid "$pid" toxiproxy
	fi
	rm -f "$STATE/pid"
	exit 0
fi

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go not found (expected /usr/local/go/bin/go)"
command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install -y curl)"
GOBIN_DIR="$(go env GOPATH)/bin"
BIN="${TOXIPROXY_BIN:-$GOBIN_DIR/toxiproxy-server}"

# The binary reports its version as "git", so a file beside it records it.
if [ ! -x "$BIN" ] || [ "$(cat "$BIN.version" 2>/dev/null)" != "$VERSION" ]; then
	log "installing toxiproxy $VERSION with go install"
	tmp="$(mktemp -d)"
	GOBIN="$tmp" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$VERSION" >&2 || die "go install failed"
	mkdir -p "$(dirname "$BIN")"
	mv "$tmp/server" "$BIN"
	echo "$VERSION" >"$BIN.version"
	rm -rf "$tmp"
fi

mkdir -p "$STATE"
if pid="$(running_pid)"; then
	log "reusing toxiproxy pid $pid on port $PORT"
else
	"$BIN" -host 127.0.0.1 -port "$PORT" >"$STATE/server.log" 2>&1 &
	pid=$!
	echo "$pid" >"$STATE/pid"
	for _ in $(seq 1 100); do
		curl -fsS "http://127.0.0.1:$PORT/version" >/dev/null 2>&1 && break
		[ -e "/proc/$pid" ] || die "toxiproxy exited; log: $STATE/server.log"
		sleep 0.1
	done
	curl -fsS "http://127.0.0.1:$PORT/version" >/dev/null 2>&1 || die "toxiproxy did not answer on port $PORT"
	log "ready: pid $pid on 127.0.0.1:$PORT, log $STATE/server.log"
fi
echo "export TOXIPROXY_TEST_ADDR=127.0.0.1:$PORT"
