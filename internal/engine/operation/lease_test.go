package operation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestEntryPointsRefuseWithoutLease runs each writing entry point of the
// engine directly, past this package, with the writer (for a restore, the
// reading view) of no lease, a zero one, a released one and (where the
// exclusive lock is needed) a shared one: no writer is made, or each
// request of the one made is refused, and no object of the repository
// changes and no restore output appears, though each had work to do. A
// dry run of backup, tag or prune needs no lease; a restore needs one even
// then (a prune must not delete what it reads).
func TestEntryPointsRefuseWithoutLease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "old", 1, 100<<10)
	checktest.Backup(t, st, src)
	if err := os.Remove(filepath.Join(src, "old")); err != nil {
		t.Fatal(err)
	}
	checktest.WriteFile(t, src, "new", 2, 100<<10)
	checktest.Backup(t, st, src)
	checktest.WriteFile(t, src, "newer", 3, 100<<10)
	// Forgetting the first snapshot leaves a pack for prune to delete.
	if _, err := forget.Run(ctx, checktest.Open(t, st).WithoutLock(), forget.Options{IDs: []string{firstSnapshot(t, st)}}); err != nil {
		t.Fatal(err)
	}
	var out string // the restore's output, new in each case

	shared, err := lock.AcquireShared(ctx, st, "other", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Release(ctx) }) // a second Release does nothing
	released, err := lock.AcquireShared(ctx, st, "other", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}

	entries := []struct {
		name      string
		exclusive bool
		run       func(r *repo.Repository, lease *lock.Lock, dryRun bool) error
	}{
		{"backup", false, func(r *repo.Repository, lease *lock.Lock, dryRun bool) error {
			if dryRun {
				_, err := backup.DryRun(ctx, r, nil, backup.Options{Path: src})
				return err
			}
			w, err := r.Writer(lease)
			if err == nil {
				_, err = backup.Run(ctx, w, nil, backup.Options{Path: src})
			}
			return err
		}},
		{"restore", false, func(r *repo.Repository, lease *lock.Lock, dryRun bool) error {
			snap := latest(t, r)
			_, err := restore.Run(ctx, r, lease, snap.Tree, restore.Options{Output: out, RootMeta: snap.Root, DryRun: dryRun})
			return err
		}},
		{"tag", false, func(r *repo.Repository, lease *lock.Lock, dryRun bool) error {
			opts := tag.Options{Add: []string{"x"}, IDs: []string{"latest"}}
			if dryRun {
				_, err := tag.DryRun(ctx, r, opts)
				return err
			}
			w, err := r.Writer(lease)
			if err == nil {
				_, err = tag.Run(ctx, w, opts)
			}
			return err
		}},
		{"prune", true, func(r *repo.Repository, lease *lock.Lock, dryRun bool) error {
			if dryRun {
				_, err := prune.DryRun(ctx, r, prune.Options{})
				return err
			}
			w, err := r.ExclusiveWriter(lease)
			if err == nil {
				_, err = prune.Run(ctx, w, prune.Options{})
			}
			return err
		}},
	}
	leases := []struct {
		name  string
		lease *lock.Lock
		want  error // nil: any error
	}{
		{"no lease", nil, repo.ErrNoLease},
		{"zero lease", &lock.Lock{}, repo.ErrNoLease},
		{"released lease", released, nil},
	}
	before := objects(t, st)
	defer func() {
		// With the lease it needs, each has work to do: the refusals
		// above were not for lack of it.
		if err := shared.Release(ctx); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out = filepath.Join(t.TempDir(), "out")
			checktest.Locked(t, st, e.exclusive, func(lease *lock.Lock) {
				if err := e.run(checktest.Open(t, st), lease, false); err != nil {
					t.Fatalf("%s with its lease: %v", e.name, err)
				}
			})
			if changed := !slices.Equal(objects(t, st), before) || len(restored(t, out)) > 0; !changed {
				t.Errorf("%s with its lease changed nothing", e.name)
			}
			before = objects(t, st)
		}
	}()
	for _, e := range entries {
		cases := leases
		if e.exclusive {
			cases = append(slices.Clip(cases), struct {
				name  string
				lease *lock.Lock
				want  error
			}{"shared lease", shared, repo.ErrSharedLease})
		}
		for _, l := range cases {
			t.Run(e.name+"/"+l.name, func(t *testing.T) {
				out = filepath.Join(t.TempDir(), "out")
				err := e.run(checktest.Open(t, st), l.lease, false)
				if err == nil || (l.want != nil && !errors.Is(err, l.want)) {
					t.Fatalf("got %v, want %v", err, l.want)
				}
				if after := objects(t, st); !slices.Equal(after, before) {
					t.Fatalf("objects changed:\nbefore %v\nafter  %v", before, after)
				}
				if files := restored(t, out); len(files) > 0 {
					t.Fatalf("restored %v", files)
				}
			})
		}
		t.Run(e.name+"/dry run without a lease", func(t *testing.T) {
			out = filepath.Join(t.TempDir(), "out")
			err := e.run(checktest.Open(t, st), nil, true)
			if e.name == "restore" != errors.Is(err, repo.ErrNoLease) || (e.name != "restore" && err != nil) {
				t.Fatalf("dry run without a lease: %v", err)
			}
		})
	}
}

// objects lists the repository's objects but its locks.
func objects(t *testing.T, st store.Store) []string {
	t.Helper()
	var keys []string
	err := st.List(context.Background(), "", func(o store.ObjectInfo) error {
		if !strings.HasPrefix(o.Key, "index/lock") {
			keys = append(keys, o.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// firstSnapshot returns the id of st's oldest snapshot.
func firstSnapshot(t *testing.T, st store.Store) string {
	t.Helper()
	snaps, _, err := checktest.Open(t, st).Snapshots(context.Background())
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots: %v %v", snaps, err)
	}
	return snaps[0].ID.String()
}

// latest loads r's index and returns its newest snapshot.
func latest(t *testing.T, r *repo.Repository) snapshot.WithID {
	t.Helper()
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	snaps, _, err := r.Snapshots(context.Background())
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots: %v %v", snaps, err)
	}
	return snaps[len(snaps)-1]
}

// restored lists the files a restore wrote under out (an empty
// directory left by a restore that lost its lease holds none).
func restored(t *testing.T, out string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
