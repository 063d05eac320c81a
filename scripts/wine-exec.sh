#!/usr/bin/env bash
# wine-exec.sh: `go test -exec` wrapper that runs a Windows test binary
# under Wine (see scripts/wine-setup.sh, which must have run first).
#
# Usage: GOOS=windows go test -exec "$PWD/scripts/wine-exec.sh" PACKAGES
set -euo pipefail
: "${WINEPREFIX:?run eval \"\$(scripts/wine-setup.sh)\" first}"
export WINEDEBUG="${WINEDEBUG:--all}"
exec "${CLOUDSTIC_WINE:-/usr/lib/wine/wine64}" "$@"
