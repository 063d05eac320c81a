package prune_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// pruneLocked runs prune on r, opened on st, holding the exclusive lock
// (none on a dry run), as the operation layer does.
func pruneLocked(t *testing.T, st store.Store, r *repo.Repository, opts prune.Options) (res *prune.Result, err error) {
	t.Helper()
	if opts.DryRun {
		return prune.DryRun(context.Background(), r, opts)
	}
	checktest.Locked(t, st, true, func(lease *lock.Lock) {
		var w *repo.ExclusiveWriter
		if w, err = r.ExclusiveWriter(lease); err == nil {
			res, err = prune.Run(context.Background(), w, opts)
		}
	})
	return res, err
}

// garbageRepo returns a repository of three packs whose snapshots were
// all forgotten: a prune with no margin deletes every pack.
func garbageRepo(t *testing.T) (dir string, st store.Store) {
	t.Helper()
	dir = t.TempDir()
	st = checktest.NewRepo(t, dir)
	// Each backup writes its own pack.
	for i := range 3 {
		src := t.TempDir()
		checktest.WriteFile(t, src, "f", uint64(i), 600<<10)
		sid := checktest.Backup(t, st, src)
		if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(context.Background(), sid); err != nil {
			t.Fatal(err)
		}
	}
	return dir, st
}

// breakingStore removes the exclusive lock when the first pack is deleted,
// as break-lock run by someone else would.
type breakingStore struct {
	store.Store
	packDeletes atomic.Int64
}

func (b *breakingStore) Delete(ctx context.Context, key string) error {
	if strings.HasPrefix(key, repo.DataPrefix) && b.packDeletes.Add(1) == 1 {
		if err := b.Store.Delete(ctx, lock.ExclusiveKey); err != nil {
			return err
		}
	}
	return b.Store.Delete(ctx, key)
}

// TestPruneStopsDeletingOnceTheLockIsBroken: the lock is broken (as
// break-lock by hand would) during the first pack delete. With a batch of
// one, prune deletes not one more object; with larger batches, the rest of
// the batch under way goes through, no other, and the run fails with the
// lost lease either way: it is not reported as a success.
func TestPruneStopsDeletingOnceTheLockIsBroken(t *testing.T) {
	tests := []struct {
		name  string
		batch int
		want  int64 // packs deleted; 0: all of them (they are fewer than a batch)
	}{
		{"batch of one", 1, 1},
		{"batch of two", 2, 2},
		{"default batch", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, inner := garbageRepo(t)
			st := &breakingStore{Store: inner}
			_, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{DeleteBatch: tt.batch})
			if !errors.Is(err, lock.ErrLeaseLost) {
				t.Fatalf("prune after its lock was broken: %v, want %v", err, lock.ErrLeaseLost)
			}
			n, left := st.packDeletes.Load(), checktest.DirSize(t, dir, "data")
			if tt.want == 0 && left != 0 {
				t.Fatalf("%d bytes of packs left after %d deletes, want none: the batch was under way", left, n)
			}
			if tt.want != 0 && (n != tt.want || left == 0) {
				t.Fatalf("%d packs deleted (%d bytes left), want %d: the batch under way, no other", n, left, tt.want)
			}
		})
	}
}
