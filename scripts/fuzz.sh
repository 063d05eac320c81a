#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the module briefly.
#
# Lists the targets with `go test -list '^Fuzz' ./...` and runs each one on
# its own (go test allows one -fuzz target per run) for FUZZTIME (default
# 10s). The checked-in corpora under each package's testdata/fuzz/ are the
# starting point. Exits non-zero when listing fails or any target finds a
# failure (the failing input is left in testdata/fuzz/<Name>/ by go test).
#
# Usage: FUZZTIME=30s scripts/fuzz.sh [packages, default ./...]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

FUZZTIME="${FUZZTIME:-10s}"
log() { echo "fuzz.sh: $*" >&2; }

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

listing="$(go test -vet=off -list '^Fuzz' "${pkgs[@]}")" || { log "listing fuzz targets failed"; echo "$listing" >&2; exit 1; }

# The listing prints a package's target names, then "ok  <import path> <time>".
targets=()
names=()
while IFS= read -r line; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok*)
		pkg="$(awk '{print $2}' <<<"$line")"
		for n in ${names[@]+"${names[@]}"}; do targets+=("$pkg $n"); done
		names=()
		;;
	*) names=() ;;
	esac
done <<<"$listing"

if [ ${#targets[@]} -eq 0 ]; then
	log "no fuzz targets found"
	exit 1
fi
log "${#targets[@]} targets, $FUZZTIME each"

# fuzz_once PKG NAME: one run of a target; its output goes to stderr and to
# $out.
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
fuzz_once() {
	go test -vet=off -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" "$1" 2>&1 | tee "$out" >&2
	return "${PIPESTATUS[0]}"
}

# corpus_files DIR: the inputs go test has written for a target.
corpus_files() { if [ -d "$1" ]; then ls -1 "$1"; fi; }

failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	log "$name ($pkg)"
	corpus="$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$name"
	before="$(corpus_files "$corpus")"
	if fuzz_once "$pkg" "$name"; then
		continue
	fi
	# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a
	# failure ("context deadline exceeded") with no failing input
	# (go.dev/issue/75804, fixed in Go 1.27). A real failure always writes
	# its input to testdata/fuzz/NAME; only without one is the target run
	# again, once.
	if [ "$(corpus_files "$corpus")" = "$before" ] && grep -q 'context deadline exceeded' "$out"; then
		log "$name: fuzz coordinator deadline race without a failing input (go.dev/issue/75804); running it again"
		fuzz_once "$pkg" "$name" && continue
	fi
	failed+=("$name ($pkg)")
done

if [ ${#failed[@]} -gt 0 ]; then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all ${#targets[@]} targets passed"
