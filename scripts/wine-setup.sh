#!/usr/bin/env bash
# wine-setup.sh: prepare Wine to run Go's Windows test binaries on Linux.
#
# Installs Debian's wine64 and mingw-w64 (apt-get), creates a Wine prefix,
# puts a tiny bcryptprimitives.dll (scripts/wine/bcryptprimitives.c: Go 1.24+
# asks Windows for random bytes through ProcessPrng, which Wine 8 lacks)
# into its system32, and starts a persistent wineserver with the prefix's
# services, detached from our output: a Wine service started by the first
# test binary would otherwise inherit `go test`'s pipe and keep it open.
#
# Usage:
#   eval "$(scripts/wine-setup.sh)"   prepare (or reuse) the prefix and start the
#                                   server; print export lines (WINEPREFIX,
#                                   WINEDEBUG, CLOUDSTIC_WINE) on stdout
#   scripts/wine-setup.sh --stop      stop the wineserver of the prefix
# Then: GOOS=windows go test -exec scripts/wine-exec.sh ./internal/...
#
# Settings (environment, optional):
#   WINE_TEST_PREFIX   the Wine prefix (default /tmp/cloudstic-wine)
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX="${WINE_TEST_PREFIX:-/tmp/cloudstic-wine}"
WINE=/usr/lib/wine/wine64
WINESERVER=/usr/lib/wine/wineserver
log() { echo "wine-setup: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
export WINEPREFIX="$PREFIX" WINEDEBUG=-all

if [ "${1:-}" = "--stop" ]; then
	[ -x "$WINESERVER" ] && "$WINESERVER" -k 2>/dev/null || true
	log "stopped the wineserver of $PREFIX"
	exit 0
fi

missing=()
for p in wine64 gcc-mingw-w64-x86-64-win32; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]} with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
		|| { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; } \
		|| die "could not install ${missing[*]}"
fi
[ -x "$WINE" ] || die "$WINE is missing after installing wine64"

sys32="$PREFIX/drive_c/windows/system32"
if [ ! -d "$sys32" ]; then
	log "creating the Wine prefix $PREFIX"
	"$WINE" wineboot --init </dev/null >/dev/null 2>&1 || die "wineboot --init failed"
fi
dll="$sys32/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ scripts/wine/bcryptprimitives.c -nt "$dll" ]; then
	log "building bcryptprimitives.dll (ProcessPrng over RtlGenRandom)"
	x86_64-w64-mingw32-gcc -O2 -shared -o "$dll" scripts/wine/bcryptprimitives.c \
		scripts/wine/bcryptprimitives.def -ladvapi32 >&2 || die "building bcryptprimitives.dll failed"
fi

# A persistent server and the prefix's services, with no link to our
# output (setsid, stdio on /dev/null): later runs reuse them.
if ! pgrep -f "wineserver.* -p" >/dev/null 2>&1; then
	setsid "$WINESERVER" -p </dev/null >/dev/null 2>&1 &
fi
setsid "$WINE" wineboot </dev/null >/dev/null 2>&1 &
# wineboot returns once the services run; give it a bounded wait.
for _ in $(seq 1 60); do pgrep -f 'winedevice.exe' >/dev/null 2>&1 && break; sleep 1; done

echo "export WINEPREFIX=$PREFIX"
echo "export WINEDEBUG=-all"
echo "export CLOUDSTIC_WINE=$WINE"
log "Wine ready: GOOS=windows go test -exec scripts/wine-exec.sh PACKAGES"
