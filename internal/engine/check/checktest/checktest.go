package checktest

import (
	"bytes"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Key is the platform key of every test repository.
const Key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// NewRepo creates a repository in a local store at dir with 16 KiB average
// chunks and 1 MiB packs and returns the store.
func NewRepo(t testing.TB, dir string) store.Store {
	t.Helper()
	ctx := context.Background()
	st := local.New(dir)
	opts := repo.InitOptions{Credentials: repo.Credentials{PlatformKey: Key},
		Chunker: repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10}, PackSize: 1 << 20}
	if _, _, err := repo.Init(ctx, st, opts); err != nil {
		t.Fatal(err)
	}
	return st
}

// Open opens a fresh Repository (empty in-memory index) on st.
func Open(t testing.TB, st store.Store) *repo.Repository {
	t.Helper()
	r, err := repo.Open(context.Background(), st, repo.Credentials{PlatformKey: Key})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// WriteFile writes size pseudo-random bytes from seed to dir/name.
func WriteFile(t testing.TB, dir, name string, seed uint64, size int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Locked runs fn holding a shared (or exclusive) lock on st, as the
// engine's writing entry points require, and releases it afterwards.
func Locked(t testing.TB, st store.Store, exclusive bool, fn func(lease *lock.Lock)) {
	t.Helper()
	ctx := context.Background()
	take := lock.AcquireShared
	if exclusive {
		take = lock.AcquireExclusive
	}
	lease, err := take(ctx, st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fn(lease)
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Writer returns a writer on r, opened on st, under a shared lock held
// until the test ends.
func Writer(t testing.TB, st store.Store, r *repo.Repository) *repo.Writer {
	t.Helper()
	w, err := r.Writer(Lease(t, st))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Write runs fn with a writer on r, opened on st, under a shared lock it
// releases afterwards.
func Write(t testing.TB, st store.Store, r *repo.Repository, fn func(w *repo.Writer)) {
	t.Helper()
	Locked(t, st, false, func(lease *lock.Lock) {
		w, err := r.Writer(lease)
		if err != nil {
			t.Fatal(err)
		}
		fn(w)
	})
}

// ExclusiveWriter returns a writer on r, opened on st, under the exclusive
// lock held until the test ends.
func ExclusiveWriter(t testing.TB, st store.Store, r *repo.Repository) *repo.ExclusiveWriter {
	t.Helper()
	w, err := r.ExclusiveWriter(hold(t, st, true))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Lease takes a shared lock on st until the test ends, as the operation
// layer does around a restore.
func Lease(t testing.TB, st store.Store) *lock.Lock {
	t.Helper()
	return hold(t, st, false)
}

// hold takes a shared (or exclusive) lock on st until the test ends.
func hold(t testing.TB, st store.Store, exclusive bool) *lock.Lock {
	t.Helper()
	take := lock.AcquireShared
	if exclusive {
		take = lock.AcquireExclusive
	}
	lease, err := take(context.Background(), st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lease.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return lease
}

// Backup snapshots dir into st with the real backup engine.
func Backup(t testing.TB, st store.Store, dir string) id.ID {
	t.Helper()
	ctx := context.Background()
	r := Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	heads, _, err := r.SnapshotHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var res *backup.Result
	Locked(t, st, false, func(lease *lock.Lock) {
		var w *repo.Writer
		if w, err = r.Writer(lease); err == nil {
			res, err = backup.Run(ctx, w, heads, backup.Options{Path: dir, Hostname: "test"})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("backup errors: %v", res.Errors)
	}
	return res.ID
}

// RestoreEqual restores snapshot sid with the real restore engine and
// fails unless every regular file of src is restored byte for byte.
func RestoreEqual(t testing.TB, st store.Store, sid id.ID, src string) {
	t.Helper()
	RestoreEqualWith(t, st, Open(t, st), sid, src)
}

// RestoreEqualWith is RestoreEqual on a repository opened on st by the
// caller (with another key than Key); its index must not be loaded yet.
func RestoreEqualWith(t testing.TB, st store.Store, r *repo.Repository, sid id.ID, src string) {
	t.Helper()
	ctx := context.Background()
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, sid)
	if err != nil {
		t.Fatalf("snapshot %s: %v", sid.Short(), err)
	}
	out := t.TempDir()
	var res *restore.Result
	Locked(t, st, false, func(lease *lock.Lock) {
		res, err = restore.Run(ctx, r, lease, s.Tree, restore.Options{Output: out, Format: restore.FormatDir})
	})
	if err != nil {
		t.Fatalf("restore %s: %v", sid.Short(), err)
	}
	if len(res.Damaged) > 0 {
		t.Fatalf("restore %s: damaged %v", sid.Short(), res.Damaged)
	}
	n := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			t.Errorf("snapshot %s: %s differs after restore", sid.Short(), rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no files compared in %s", src)
	}
}

// DirSize sums the sizes of the files under dir/sub.
func DirSize(t testing.TB, dir, sub string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(dir, sub), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
