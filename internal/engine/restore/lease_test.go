package restore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// lease holds a shared lock on r's store for the rest of the test, as the
// operation layer does around a restore.
func lease(t testing.TB, r *repo.Repository) *lock.Lock {
	t.Helper()
	l, err := lock.AcquireShared(context.Background(), r.Store(), "restore", lock.Options{})
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

// TestRestoreRefusedWithoutLease: a restore, even a dry run, reads nothing
// and writes nothing without a lock (a prune could delete what it reads).
func TestRestoreRefusedWithoutLease(t *testing.T) {
	ctx := context.Background()
	st := checktest.NewRepo(t, t.TempDir())
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 10<<10)
	sid := checktest.Backup(t, st, src)
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		for _, l := range []*lock.Lock{nil, {}} {
			out := filepath.Join(t.TempDir(), "out")
			_, err := restore.Run(ctx, r, l, s.Tree, restore.Options{Output: out, DryRun: dry})
			if !errors.Is(err, repo.ErrNoLease) {
				t.Fatalf("restore (dry run %v) with lease %v: %v, want %v", dry, l, err, repo.ErrNoLease)
			}
			if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("restore without a lease created its output: %v", err)
			}
		}
	}
	if _, err := restore.Run(ctx, r, lease(t, r), s.Tree, restore.Options{Output: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}
