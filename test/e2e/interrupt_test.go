//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// TestInterruptReleasesLock interrupts a backup (SIGINT, as Ctrl-C) while
// it holds its lock: it stops cleanly and exits 130 (128 + SIGINT), saves
// no snapshot and leaves no lock behind. The source has a large sparse file so the backup is still
// running when the signal comes; the test waits for the lock to appear
// (no timing assumptions).
func TestInterruptReleasesLock(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 11)
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	c := runOpts{}.cmd(r.with("backup", "-source", "local:"+src))
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	for signalled := false; !signalled; {
		select {
		case err := <-exited:
			t.Fatalf("backup ended before it could be interrupted (%v): %s", err, stderr.String())
		default:
		}
		var locks []any
		res := mustRun(t, r.with("locks", "-json")...)
		if err := json.Unmarshal([]byte(res.stdout), &locks); err != nil {
			t.Fatalf("locks -json: %v\n%v", err, res)
		}
		if len(locks) > 0 {
			if err := c.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = <-exited
	if code := c.ProcessState.ExitCode(); code != cli.ExitInterrupted || !strings.Contains(stderr.String(), "interrupted; the lock was released") {
		t.Errorf("interrupted backup exited %d (%v), want %d after a clean stop; stderr:\n%s", code, err, cli.ExitInterrupted, stderr.String())
	}
	var locks []any
	decodeJSON(t, mustRun(t, r.with("locks", "-json")...), &locks)
	if len(locks) != 0 {
		t.Errorf("interrupted backup left %d locks: %v; its stderr:\n%s", len(locks), locks, stderr.String())
	}
	if snaps := listJSON(t, r); len(snaps) != 0 {
		t.Errorf("interrupted backup saved %d snapshots", len(snaps))
	}
}
