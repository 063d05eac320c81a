#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it on a fresh machine.
#
# Installs what the tests need (spin and chromium from Debian; versitygw, local-kms and
# Toxiproxy's server through the Go module proxy; SeaweedFS built from its module,
# cached after the first run; openssh-server from Debian), starts two real S3
# servers (versitygw, and a SeaweedFS cluster of a master, three volume servers,
# a filer and the S3 gateway), a real SFTP server, Toxiproxy (network faults) and a
# local KMS server, reached on 127.0.0.1, then runs go vet, golangci-lint
# (scripts/lint.sh installs it through the Go module proxy) and every Go test
# with the race detector, the platform checks (scripts/ports.sh: cross builds
# and vet for darwin, windows and freebsd, lint per GOOS, the Windows tests
# under Wine), and stops the servers again. Servers a test needs and
# cannot find make the test fail, never skip.
#
# Usage: scripts/test.sh [extra go test args, e.g. -run TestX ./internal/...]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

log() { echo "test.sh: $*" >&2; }

apt_install() { # packages...
	local missing=()
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]} with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
		|| { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
}
# dbus-daemon and gnome-keyring: the secret-service:// test runs a real
# session bus and keyring; systemd (systemd-analyze) and cron: the schedule
# tests verify generated units and crontabs with the real tools.
# chromium: test/browser drives the web dashboard in it (headless, through
# chromedp) and fails without it.
# e2fsprogs, mount and util-linux (mkfs.ext4, debugfs, mount -o loop, blkid): the
# portable-drive tests back up a loop-mounted ext4 image; util-linux's script also
# gives the -password warning test a terminal.
# zsh and fish: the completion tests run the generated scripts in them (and fail
# under CI=true without them).
# zip: scripts/release.sh (run by ports.sh) packs the Windows archives.
apt_install spin gcc tmux git fuse3 zip unzip dbus-daemon dbus-bin gnome-keyring systemd cron chromium e2fsprogs mount util-linux zsh fish
# The mount tests use FUSE for real. Some containers have the fuse module in
# the kernel but no device node: create it (10:229 is the FUSE device).
if [ ! -e /dev/fuse ]; then
	log "/dev/fuse is missing: creating it with mknod /dev/fuse c 10 229"
	mknod -m 0666 /dev/fuse c 10 229
fi

# Each script prints export lines; their own logs go to stderr.
s3env="$(scripts/s3-server.sh)" || { log "the S3 test server did not start"; exit 1; }
eval "$s3env"
# The first run builds SeaweedFS (about 9 minutes on 2 idle cores); later
# runs reuse the cached binary.
swenv="$(scripts/seaweedfs-server.sh)" || { log "the SeaweedFS test cluster did not start"; exit 1; }
eval "$swenv"
sftpenv="$(scripts/sftp-server.sh)" || { log "the SFTP test server did not start"; exit 1; }
eval "$sftpenv"
toxienv="$(scripts/toxiproxy-server.sh)" || { log "Toxiproxy did not start"; exit 1; }
eval "$toxienv"
kmsenv="$(scripts/kms-server.sh)" || { log "the KMS test server did not start"; exit 1; }
eval "$kmsenv"
cloudenv="$(scripts/cloud-server.sh)" || { log "the fake cloud drive server did not start"; exit 1; }
eval "$cloudenv"
# In CI the servers are stopped at the end; on a developer's machine they are
# left running so the next run (and other shells) reuse them.
cleanup() {
	scripts/s3-server.sh --stop || true
	scripts/seaweedfs-server.sh --stop || true
	scripts/sftp-server.sh --stop || true
	scripts/toxiproxy-server.sh --stop || true
	scripts/kms-server.sh --stop || true
	scripts/cloud-server.sh --stop || true
	# ports.sh's Windows tests leave a persistent wineserver for the next run.
	scripts/wine-setup.sh --stop || true
}
if [ -n "${CI:-}" ]; then trap cleanup EXIT; fi

log "go vet"
go vet ./...
log "golangci-lint (.golangci.yml)"
scripts/lint.sh
# -count=1: several packages test the built binary, which go test's result
# cache does not track, so cached results could hide a regression.
log "go test -race"
if [ $# -gt 0 ]; then
	go test -race -count=1 -timeout 40m "$@"
else
	go test -race -count=1 -timeout 40m ./...
	# Every other platform: cross builds, go vet and golangci-lint per GOOS,
	# and the Windows tests under Wine (installed from Debian when missing).
	log "platforms (scripts/ports.sh)"
	scripts/ports.sh
	log "fuzz targets, ${FUZZTIME:-10s} each"
	scripts/fuzz.sh
fi
