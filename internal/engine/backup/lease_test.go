package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// TestBackupFencedByItsLease: a backup whose lease has ended (here:
// released) stores nothing, not even a pack: every request goes through
// the lease's fence.
func TestBackupFencedByItsLease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 100<<10)
	r := checktest.Open(t, st)
	l, err := lock.AcquireShared(ctx, st, "backup", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A writer made from a lease that ended refuses every request.
	w, err := r.Writer(l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Run(ctx, w, nil, backup.Options{Path: src}); !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("backup under a released lease: %v, want %v", err, lock.ErrLeaseLost)
	}
	for _, sub := range []string{"data", "snapshots"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Fatalf("%s written after the lease ended: %v", sub, entries)
		}
	}
}
