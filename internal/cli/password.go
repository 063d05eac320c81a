package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cloudstic/cloudstic/internal/config"
)

// errNotExist is os.ErrNotExist, named for the profile code's checks.
var errNotExist = os.ErrNotExist

// errPasswordCommand marks a -password-command that failed or printed
// nothing.
var errPasswordCommand = errors.New("-password-command failed")

// runPasswordCommand runs cmd with sh -c and returns its output without
// the trailing newline (as restic's --password-command does). Its stderr
// goes to ours, so a password manager's prompt or complaint is seen. It
// runs in env (childEnv: none of our secrets).
func runPasswordCommand(ctx context.Context, cmd string, env []string, stdio IO) (string, error) {
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = env
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = stdio.Stderr
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("%w: %w", errPasswordCommand, err)
	}
	pw := config.TrimNewline(out.String())
	if pw == "" {
		return "", fmt.Errorf("%w: it printed no password", errPasswordCommand)
	}
	return pw, nil
}

// absPath makes a path absolute for a file:// reference.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
