#!/usr/bin/env bash
# ports.sh: the platform checks of CI (docs/platforms.md), run by
# scripts/test.sh after its Linux tests.
#
#  1. cross-compiles cmd/cloudstic for every release target (linux, darwin
#     and windows on amd64 and arm64, and freebsd/amd64), runs go vet
#     (tests included) for each OS (VET_TARGETS), and links every
#     package's darwin/arm64 test binary;
#  2. runs golangci-lint (scripts/lint.sh) with GOOS=darwin, windows and
#     freebsd;
#  3. runs the Windows test binaries of the core packages under Wine
#     (scripts/wine-setup.sh installs Debian's wine64 and mingw-w64 with
#     apt-get when missing; a Wine that cannot be set up fails the run).
#     Test binaries are built with -tags winetest (see test/winetest) and
#     kept in Go's build cache, so a rerun with unchanged code only links;
#  4. runs scripts/release.sh for a test version (0.0.0-ci) into a
#     temporary directory: every target's archive, SHA256SUMS, the Homebrew
#     formula and winget manifest, and its check of each binary's version.
#
# Tests that need the S3, SFTP or KMS servers expect scripts/test.sh's
# environment (S3_TEST_ENDPOINT ...); of the Wine packages, internal/repo
# needs the KMS server (eval "$(scripts/kms-server.sh)") for its KMS slots.
#
# Usage: scripts/ports.sh [build|lint|wine|release]...   (default: all four)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

log() { echo "ports.sh: $*" >&2; }

TARGETS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64"

# WINE_PACKAGES pass under Wine 8 as a whole (tests that need what Windows
# lacks skip with their reason). internal/engine/restore runs the tests in
# WINE_RESTORE (the others make symbolic links); internal/repo/lock skips
# WINE_LOCK_SKIP: the long randomized runs (spin model, stress) and the
# backend matrix, which tests S3/SFTP stores and the fault wrapper, nothing
# of Windows, and takes minutes under Wine. test/wine runs cloudstic.exe
# itself (docs/platforms.md, "Tested under Wine").
WINE_PACKAGES="./internal/store/local ./internal/source/local ./internal/engine/exclude
./internal/engine/fsmeta ./internal/repo/chunker ./internal/repo/crypt ./internal/repo/index
./internal/repo/offheap ./internal/repo/pack ./internal/repo/tree ./internal/repo
./internal/engine/backup ./internal/winpath"
WINE_LOCK_SKIP='^(TestSpinModel|TestStress|TestStressHelper|TestBackendsConflictTable|TestBackendsContended)$'
WINE_RESTORE='^(TestRestoreHostNames|TestRestoreHostileNames|TestRestoreOverwrite|TestRestoreOverwriteTypes|TestRestoreIncludeExclude|TestRestoreBadOptions|TestRestoreDamagedData|TestRestoreLargeFileInSegments|TestBatchedRestoreDuplicates|TestBatcher|TestRestoreFoldingTarget|TestRestoreFoldingDelete|TestProbeFolding)$'

# VET_TARGETS are vetted (tests included) as well as built: every OS on
# amd64, and darwin/arm64, the Mac most users have. The other arm64 targets
# share their OS's code with amd64 (no file of ours is per architecture),
# so building them is the check that adds something.
VET_TARGETS="linux/amd64 darwin/amd64 darwin/arm64 windows/amd64 freebsd/amd64"

step_build() {
	for t in $TARGETS; do
		log "build $t"
		GOOS=${t%/*} GOARCH=${t#*/} go build -o /dev/null ./cmd/cloudstic
	done
	for t in $VET_TARGETS; do
		log "vet $t"
		GOOS=${t%/*} GOARCH=${t#*/} go vet ./...
	done
	log "vet windows/amd64 with the winetest tag"
	GOOS=windows go vet -tags winetest ./...
	darwin_test_binaries
}

# darwin_test_binaries links the test binary of every package with tests
# for darwin/arm64 (vet type-checks them; this also links them), two at a
# time, into a temporary directory. No Mac runs them here.
darwin_test_binaries() {
	local dir pkgs
	dir="$(mktemp -d)"
	pkgs="$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)"
	log "link the darwin/arm64 test binaries of $(echo "$pkgs" | wc -l) packages"
	# shellcheck disable=SC2016 # expanded by the inner shell
	echo "$pkgs" | GOOS=darwin GOARCH=arm64 xargs -P 2 -I{} sh -c \
		'go test -c -o "$1/$(echo "$2" | tr / _).test" "$2"' sh "$dir" {} || { rm -rf "$dir"; return 1; }
	rm -rf "$dir"
}

step_lint() {
	for os in darwin windows freebsd; do
		log "golangci-lint GOOS=$os"
		GOOS=$os scripts/lint.sh
	done
}

step_wine() {
	local env
	env="$(scripts/wine-setup.sh)" || { log "Wine could not be set up"; return 1; }
	eval "$env"
	local flags=(-tags winetest -ldflags=-checklinkname=0 -exec "$PWD/scripts/wine-exec.sh" -count=1 -timeout 10m)
	log "Windows tests under Wine: $(echo $WINE_PACKAGES)"
	# shellcheck disable=SC2086 # a list of packages
	GOOS=windows go test "${flags[@]}" $WINE_PACKAGES
	log "Windows tests under Wine: internal/engine/restore -run $WINE_RESTORE"
	GOOS=windows go test "${flags[@]}" -run "$WINE_RESTORE" ./internal/engine/restore
	log "Windows tests under Wine: internal/repo/lock -skip $WINE_LOCK_SKIP"
	GOOS=windows go test "${flags[@]}" -short -skip "$WINE_LOCK_SKIP" ./internal/repo/lock
	# The end-to-end test runs cloudstic.exe, built here, on Windows paths.
	local dir
	dir="$(mktemp -d)"
	GOOS=windows go build -o "$dir/cloudstic.exe" ./cmd/cloudstic || { rm -rf "$dir"; return 1; }
	log "Windows tests under Wine: test/wine (cloudstic.exe)"
	CLOUDSTIC_WINE_EXE="Z:${dir//\//\\}\\cloudstic.exe" GOOS=windows go test "${flags[@]}" ./test/wine \
		|| { rm -rf "$dir"; return 1; }
	rm -rf "$dir"
}

step_release() {
	local dist
	dist="$(mktemp -d)"
	RELEASE_DIST="$dist" scripts/release.sh 0.0.0-ci
	rm -rf "$dist"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build lint wine release)
for s in "${steps[@]}"; do
	t0=$(date +%s)
	case "$s" in
	build) step_build ;;
	lint) step_lint ;;
	wine) step_wine ;;
	release) step_release ;;
	*) log "unknown step $s (want build, lint, wine or release)"; exit 2 ;;
	esac
	log "$s took $(( $(date +%s) - t0 ))s"
done
