// Package testbin builds the cloudstic binary for the test packages that run
// it as a separate process (test/e2e, test/hostile, test/crash, test/tty).
package testbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Build compiles ./cmd/cloudstic of the module the current directory is in
// into dir and returns the binary's path. Build output goes to stderr.
func Build(dir string) (string, error) { return BuildPackage(dir, "./cmd/cloudstic") }

// BuildPackage is Build for another main package of the module (pkg is
// relative to the module's root, e.g. "./test/crash/faultbin"); the
// binary is still named cloudstic.
func BuildPackage(dir, pkg string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside the cloudstic module (%v)", err)
	}
	binary := filepath.Join(dir, "cloudstic")
	build := exec.Command("go", "build", "-o", binary, pkg)
	build.Dir = filepath.Dir(gomod)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building cloudstic: %w", err)
	}
	return binary, nil
}

// Main is the body of a TestMain: it builds the binary into a new temporary
// directory (world-readable, so tests may run it as another user), hands
// both to setup, runs the tests and removes the directory. It returns the
// exit code for os.Exit.
//
// The tests' runs inherit XDG_CACHE_HOME=<dir>/cache: the binary's
// metadata cache and its memory of encrypted repositories (see
// cache.DirFromEnv) would otherwise go to the developer's own
// ~/.cache/cloudstic, and runs of the suite would share what one left.
func Main(m *testing.M, setup func(dir, binary string)) int {
	return MainPackage(m, "./cmd/cloudstic", setup)
}

// MainPackage is Main with the binary built from another main package (see
// BuildPackage).
func MainPackage(m *testing.M, pkg string, setup func(dir, binary string)) int {
	dir, err := os.MkdirTemp("", "cloudstic-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, "removing the test binary:", err)
		}
	}()
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binary, err := BuildPackage(dir, pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	setup(dir, binary)
	return m.Run()
}

// Output runs c to the end and returns what it printed and its exit code.
// It fails t only when c could not be run at all (an exit code is a
// result, not a failure).
func Output(t testing.TB, c *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running %q: %v", c.Args, err)
	}
	return out.String(), errOut.String(), code
}
