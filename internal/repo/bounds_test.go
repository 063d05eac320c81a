package repo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
)

// plantSparse makes the file of key in the local store at dir size bytes
// long without writing them (a sparse file): an attacker's object as large
// as it likes, at no cost to the test.
func plantSparse(t *testing.T, dir, key string, size int64) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func randomID(t *testing.T) id.ID {
	t.Helper()
	var i id.ID
	if _, err := rand.Read(i[:]); err != nil {
		t.Fatal(err)
	}
	return i
}

// onlyDamage is the error of the one damaged object a loader skipped, or
// an error saying what it did instead.
func onlyDamage(damaged []repo.Damaged, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("the loader failed instead of skipping the object: %w", err)
	case len(damaged) != 1:
		return fmt.Errorf("%d damaged objects reported, want 1: %v", len(damaged), damaged)
	}
	return damaged[0].Err
}

// TestOversizedObjects plants objects one byte over their kind's read
// bound (and a 3 GiB config, which the old code read whole): each read
// fails with store.ErrTooLarge without reading the object (the loaders of
// snapshots and index files skip it as damaged), and an oversized key
// slot only makes that slot unreadable.
func TestOversizedObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func(t *testing.T, st store.Store) *repo.Repository {
		t.Helper()
		r, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name string
		// plant returns the operation that reads the planted object.
		plant func(t *testing.T, dir string, st store.Store) func() error
	}{
		{"3 GiB config", func(t *testing.T, dir string, st store.Store) func() error {
			plantSparse(t, dir, repo.ConfigKey, 3<<30)
			return func() error { _, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey}); return err }
		}},
		{"config over its bound", func(t *testing.T, dir string, st store.Store) func() error {
			plantSparse(t, dir, repo.ConfigKey, repo.MaxConfigSize+1)
			return func() error { _, err := repo.ReadConfig(ctx, st); return err }
		}},
		{"snapshot", func(t *testing.T, dir string, st store.Store) func() error {
			r := open(t, st)
			sid := randomID(t)
			plantSparse(t, dir, repo.SnapshotKey(sid), repo.MaxSnapshotSize+1)
			return func() error { _, err := r.LoadSnapshot(ctx, sid); return err }
		}},
		{"snapshot in the list", func(t *testing.T, dir string, st store.Store) func() error {
			r := open(t, st)
			plantSparse(t, dir, repo.SnapshotKey(randomID(t)), repo.MaxSnapshotSize+1)
			return func() error { _, damaged, err := r.Snapshots(ctx); return onlyDamage(damaged, err) }
		}},
		{"index file", func(t *testing.T, dir string, st store.Store) func() error {
			r := open(t, st)
			fid := randomID(t)
			plantSparse(t, dir, repo.IndexKey(fid), repo.MaxIndexFileSize+1)
			return func() error { _, err := r.IndexFile(ctx, fid); return err }
		}},
		{"index file in the index", func(t *testing.T, dir string, st store.Store) func() error {
			r := open(t, st)
			plantSparse(t, dir, repo.IndexKey(randomID(t)), repo.MaxIndexFileSize+1)
			return func() error { return onlyDamage(r.LoadIndex(ctx)) }
		}},
		{"pack", func(t *testing.T, dir string, st store.Store) func() error {
			r := open(t, st)
			pid := randomID(t)
			plantSparse(t, dir, repo.PackKey(pid), r.MaxPackSize()+1)
			return func() error { _, err := r.ReadPack(ctx, pid); return err }
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, st := newHostileRepo(t)
			read := tc.plant(t, dir, st)
			if err := read(); !errors.Is(err, store.ErrTooLarge) {
				t.Fatalf("got %v, want store.ErrTooLarge", err)
			}
		})
	}
	t.Run("key slot", func(t *testing.T) {
		t.Parallel()
		dir, st := newHostileRepo(t)
		var name [16]byte
		if _, err := rand.Read(name[:]); err != nil {
			t.Fatal(err)
		}
		plantSparse(t, dir, repo.KeysPrefix+hex.EncodeToString(name[:]), 3<<30)
		open(t, st) // the real slot still opens
		slots, err := repo.ListKeys(ctx, st)
		if err != nil || len(slots) != 2 {
			t.Fatalf("ListKeys = %+v, %v; want two slots", slots, err)
		}
		bad := 0
		for _, s := range slots {
			if errors.Is(s.Err, store.ErrTooLarge) {
				bad++
			}
		}
		if bad != 1 {
			t.Fatalf("ListKeys = %+v: want one slot with store.ErrTooLarge", slots)
		}
	})
}
