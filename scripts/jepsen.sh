#!/usr/bin/env bash
# jepsen.sh: the lock under real network faults (issue 23), longer than the
# short run in CI: client processes loop over backup, forget -prune, prune
# and restore against each S3 server (versitygw, a SeaweedFS cluster) and the
# SFTP server, each through its own Toxiproxy proxy,
# while a nemesis injects partitions, latency, slow bandwidth, resets and
# SIGSTOPs; the recorded history is checked (test/jepsen).
#
# Usage: scripts/jepsen.sh [CLIENTS [OPS_PER_CLIENT [SEED]]]   (default 12 40)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
eval "$(scripts/s3-server.sh)"
eval "$(scripts/seaweedfs-server.sh)"
eval "$(scripts/sftp-server.sh)"
eval "$(scripts/toxiproxy-server.sh)"
export CLOUDSTIC_JEPSEN_CLIENTS="${1:-12}" CLOUDSTIC_JEPSEN_OPS="${2:-40}"
[ -n "${3:-}" ] && export CLOUDSTIC_JEPSEN_SEED="$3"
exec go test -count=1 -timeout 60m -run '^TestNetworkFaults$' -v ./test/jepsen/
