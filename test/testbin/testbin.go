// Package testbin builds the cloudstic binary for the test packages that run
// it as a separate process (test/e2e, test/hostile, test/crash, test/tty).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles ./cmd/cloudstic of the module the current directory is in
// into dir and returns the binary's path. Build output goes to stderr.
func Build(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside the cloudstic module (%v)", err)
	}
	binary := filepath.Join(dir, "cloudstic")
	build := exec.Command("go", "build", "-o", binary, "./cmd/cloudstic")
	build.Dir = filepath.Dir(gomod)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building cloudstic: %w", err)
	}
	return binary, nil
}
