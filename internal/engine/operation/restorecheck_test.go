package operation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/store"
)

// lockReads counts the reads of shared lock keys: after an acquire, those
// are the lease's checks.
type lockReads struct {
	store.Store
	n atomic.Int64
}

func (s *lockReads) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if strings.HasPrefix(key, sharedLockPrefix) {
		s.n.Add(1)
	}
	return s.Store.Stat(ctx, key)
}

func (s *lockReads) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if strings.HasPrefix(key, sharedLockPrefix) {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key, max)
}

// TestRestoreLeaseCheck: a restore that succeeded does not ask the store
// whether its lease still holds (everything it wrote was verified); one
// that found damage does, to tell a prune after a broken lock from damage.
func TestRestoreLeaseCheck(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		name := "succeeded"
		if damaged {
			name = "damaged"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			checktest.NewRepo(t, dir)
			backupAt(t, dir, t.TempDir())()
			if damaged {
				removeOnePack(t, dir)
			}
			o := options(dir)
			reads := &lockReads{}
			o.Store.TestWrapper = func(st store.Store) store.Store { reads.Store = st; return reads }
			r, err := operation.Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close() //nolint:errcheck // local store: nothing to flush
			_, err = operation.Restore(context.Background(), r, "latest", restore.Options{Output: t.TempDir()}, nil)
			if damaged != errors.Is(err, restore.ErrDamaged) {
				t.Fatalf("restore: %v, want damage: %v", err, damaged)
			}
			if got := reads.n.Load(); (got > 0) != damaged {
				t.Errorf("%d reads of the lock's key after a restore that %s", got, name)
			}
		})
	}
}

// removeOnePack deletes the largest pack of the repository in dir: one of
// file data (its trees are in a smaller one).
func removeOnePack(t *testing.T, dir string) {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, "data", "*", "*"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no pack found in %s: %v", dir, err)
	}
	largest, size := "", int64(-1)
	for _, p := range packs {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > size {
			largest, size = p, fi.Size()
		}
	}
	if err := os.Remove(largest); err != nil {
		t.Fatal(err)
	}
}
