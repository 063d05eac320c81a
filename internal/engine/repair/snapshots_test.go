package repair_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
)

// garbled returns the bytes of key with one flipped, the first time it
// is read only.
type garbled struct {
	store.Store
	key  string
	done bool
}

func (g *garbled) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	data, err := g.Store.Get(ctx, key, max)
	if err == nil && key == g.key && !g.done {
		g.done = true
		data[len(data)/2] ^= 0xff
	}
	return data, err
}

// TestRepairSnapshots removes a damaged snapshot (none on a dry run) and
// keeps every good one, for each kind of damage.
func TestRepairSnapshots(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	tests := []struct {
		name  string
		plant func(t *testing.T, f *fixture) string
	}{
		{"junk named by its hash", func(t *testing.T, f *fixture) string { return plantJunk(t, f.st, repo.SnapshotPrefix) }},
		{"a good snapshot with a flipped byte", func(t *testing.T, f *fixture) string {
			// A snapshot of its own (not one of the fixture's, which the
			// test restores), damaged on disk.
			r := checktest.Open(t, f.st)
			s, err := r.LoadSnapshot(context.Background(), f.ids[0])
			if err != nil {
				t.Fatal(err)
			}
			s.Hostname = "other"
			var sid id.ID
			checktest.Write(t, f.st, r, func(w *repo.Writer) {
				if sid, err = w.SaveSnapshot(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			})
			flip(t, filepath.Join(f.dir, filepath.FromSlash(repo.SnapshotKey(sid))), 30)
			return repo.SnapshotKey(sid)
		}},
		{"sealed with our key, not a snapshot", func(t *testing.T, f *fixture) string {
			r := checktest.Open(t, f.st)
			sealed, err := r.Codec().EncodeRaw([]byte(`{"time": "not a time"}`))
			if err != nil {
				t.Fatal(err)
			}
			key := repo.SnapshotPrefix + idOf(sealed)
			if _, err := f.st.Put(context.Background(), key, sealed, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			return key
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			bad := tc.plant(t, f)
			ctx := context.Background()
			for _, dry := range []bool{true, false} {
				res, err := repair.Snapshots(ctx, checktest.Open(t, f.st).WithoutLock(), repair.SnapshotsOptions{DryRun: dry})
				if err != nil {
					t.Fatal(err)
				}
				if res.Sound != len(f.ids) || len(res.Damaged) != 1 || res.Damaged[0].Key != bad || res.Damaged[0].Removed == dry {
					t.Fatalf("dry run %v: %+v, want %d sound and %s damaged, removed: %v", dry, res, len(f.ids), bad, !dry)
				}
				_, err = f.st.Stat(ctx, bad)
				if gone := errors.Is(err, store.ErrNotFound); gone == dry {
					t.Fatalf("dry run %v: the damaged snapshot is gone: %v", dry, gone)
				}
			}
			snaps, damaged, err := checktest.Open(t, f.st).Snapshots(ctx)
			if err != nil || len(snaps) != len(f.ids) || len(damaged) != 0 {
				t.Fatalf("after the repair: %d snapshots, damaged %v, error %v", len(snaps), damaged, err)
			}
			f.restoreAll(t)
		})
	}
}

// TestRepairSnapshotsSecondRead: a snapshot is removed only when a second
// read from the store proves it damaged again. One garbled on its first
// read only is kept; one whose second read fails for another reason is
// kept and stops the run.
func TestRepairSnapshotsSecondRead(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	t.Run("sound the second time", func(t *testing.T) {
		t.Parallel()
		f := template.copyOf(t)
		st := &garbled{Store: f.st, key: repo.SnapshotKey(f.ids[1])}
		res, err := repair.Snapshots(context.Background(), checktest.Open(t, st).WithoutLock(), repair.SnapshotsOptions{})
		if err != nil || !st.done {
			t.Fatalf("repair: %v (garbled: %v)", err, st.done)
		}
		if res.Sound != len(f.ids) || len(res.Damaged) != 0 {
			t.Errorf("%+v, want every snapshot sound", res)
		}
		f.restoreAll(t)
	})
	t.Run("second read fails", func(t *testing.T) {
		t.Parallel()
		f := template.copyOf(t)
		bad := plantJunk(t, f.st, repo.SnapshotPrefix)
		st := newFlaky(f.st, func(key string, n int) bool { return key == bad && n > 0 })
		res, err := repair.Snapshots(context.Background(), checktest.Open(t, st).WithoutLock(), repair.SnapshotsOptions{})
		if !errors.Is(err, errFlaky) || !strings.Contains(err.Error(), bad) {
			t.Fatalf("repair: %v, want the read failure naming %s", err, bad)
		}
		if res == nil || len(res.Damaged) != 0 {
			t.Errorf("result %+v, want nothing removed", res)
		}
		if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(bad))); err != nil {
			t.Errorf("the snapshot is gone: %v", err)
		}
	})
	t.Run("first read fails", func(t *testing.T) {
		t.Parallel()
		f := template.copyOf(t)
		bad := plantJunk(t, f.st, repo.SnapshotPrefix)
		st := newFlaky(f.st, func(key string, _ int) bool { return key == bad })
		if _, err := repair.Snapshots(context.Background(), checktest.Open(t, st).WithoutLock(), repair.SnapshotsOptions{}); !errors.Is(err, errFlaky) {
			t.Fatalf("repair: %v, want the read failure", err)
		}
		if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(bad))); err != nil {
			t.Errorf("the snapshot is gone: %v", err)
		}
	})
}

// TestRepairSnapshotsNoProof: when no snapshot, index file or pack header
// authenticates, repair snapshots removes nothing.
func TestRepairSnapshotsNoProof(t *testing.T) {
	t.Parallel()
	st := checktest.NewRepo(t, t.TempDir())
	bad := plantJunk(t, st, repo.SnapshotPrefix)
	plantJunk(t, st, repo.IndexPrefix)
	plantJunk(t, st, repo.DataPrefix)
	if _, err := repair.Snapshots(context.Background(), checktest.Open(t, st).WithoutLock(), repair.SnapshotsOptions{}); !errors.Is(err, repair.ErrNoProof) {
		t.Fatalf("repair: %v, want ErrNoProof", err)
	}
	if _, err := st.Stat(context.Background(), bad); err != nil {
		t.Errorf("the snapshot is gone: %v", err)
	}
}
