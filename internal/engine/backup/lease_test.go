package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// lease holds a shared lock on r's store for the rest of the test, as the
// operation layer does around a backup.
func lease(t testing.TB, r *repo.Repository) *lock.Lock {
	t.Helper()
	l, err := lock.AcquireShared(context.Background(), r.Store(), "backup", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return l
}

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
	if _, err := backup.Run(ctx, r, l, nil, backup.Options{Path: src}); !errors.Is(err, lock.ErrLeaseLost) {
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
