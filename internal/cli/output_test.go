package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// fullDisk accepts the first room bytes, then fails like a full disk.
type fullDisk struct{ room int }

func (w *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= w.room {
		w.room -= len(p)
		return len(p), nil
	}
	n := w.room
	w.room = 0
	return n, syscall.ENOSPC
}

// TestOutputWriteFailure checks that a command whose stdout cannot be
// written in full (cloudstic list > /full/disk) exits 1 with one line
// naming the failure, instead of succeeding with a truncated listing.
func TestOutputWriteFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + filepath.Join(dir, "repo"), "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	mustWrite(t, filepath.Join(dir, "src", "a.txt"), "a\n")
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "backup", "-source", "local:"+filepath.Join(dir, "src")).check(t, cli.ExitOK, nil, nil)

	tests := []struct {
		name string
		args []string
		room int
	}{
		{"version", []string{"version"}, 0},
		{"version -json", []string{"version", "-json"}, 3},
		{"command help", []string{"help", "list"}, 10},
		{"completion", []string{"completion", "bash"}, 100},
		{"list", []string{"list"}, 20},
		{"list -json", []string{"list", "-json"}, 20},
		{"ls", []string{"ls", "latest"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			code := cli.Main(context.Background(), tt.args, cli.IO{
				Stdin: strings.NewReader(""), Stdout: &fullDisk{room: tt.room}, Stderr: &stderr,
				Getenv: func(k string) string { return env[k] },
			})
			if code != cli.ExitError {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, cli.ExitError, stderr.String())
			}
			if !strings.Contains(stderr.String(), "no space left on device") {
				t.Errorf("stderr does not name the write failure:\n%s", stderr.String())
			}
		})
	}
}
