package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// backedUpInto initialises an encrypted repository on st, backs src up
// into it under a shared lock held for the rest of the test, and returns
// the repository, the lock and the backup's result.
func backedUpInto(t *testing.T, st store.Store, src string) (*repo.Repository, *lock.Lock, *backup.Result) {
	t.Helper()
	return backedUpWith(t, st, src, repo.InitOptions{})
}

// backedUpWith is backedUpInto with a repository initialised with opts
// (their credentials are the test's).
func backedUpWith(t *testing.T, st store.Store, src string, opts repo.InitOptions) (*repo.Repository, *lock.Lock, *backup.Result) {
	t.Helper()
	ctx := context.Background()
	opts.Credentials = repo.Credentials{PlatformKey: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}
	r, _, err := repo.Init(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.AcquireShared(ctx, st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	w, err := r.Writer(l)
	if err != nil {
		t.Fatal(err)
	}
	res, err := backup.Run(ctx, w, nil, backup.Options{Path: src, Hostname: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return r, l, res
}

// TestBatchedRestoreIsolatesDamage corrupts one small file's blob inside a
// pack that batched reads cover: that file alone is reported damaged and
// left out; its neighbours in the same read are restored intact.
func TestBatchedRestoreIsolatesDamage(t *testing.T) {
	ctx := context.Background()
	storeDir, src := t.TempDir(), t.TempDir()
	const n = 20
	for i := 0; i < n; i++ {
		data := []byte(fmt.Sprintf("small file %d %0100d", i, i))
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, l, res := backedUpInto(t, local.New(storeDir), src)
	victim, err := os.ReadFile(filepath.Join(src, "f07"))
	if err != nil {
		t.Fatal(err)
	}
	loc, ok := r.Index().Lookup(t.Context(), r.Key().ID(victim))
	if !ok {
		t.Fatal("victim blob not indexed")
	}
	packFile := filepath.Join(storeDir, filepath.FromSlash(repo.PackKey(loc.Pack)))
	raw, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	raw[loc.Offset+loc.Length/2] ^= 0xff
	if err := os.WriteFile(packFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "out")
	got, err := Run(ctx, r, l, res.Snapshot.Tree, Options{Output: out})
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Run = %v, want ErrDamaged", err)
	}
	if len(got.Damaged) != 1 || got.Damaged[0] != "f07" || got.Files != n-1 {
		t.Fatalf("damaged %v, files %d; want [f07] and %d", got.Damaged, got.Files, n-1)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f%02d", i)
		data, err := os.ReadFile(filepath.Join(out, name))
		if name == "f07" {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("damaged file left behind: %v", err)
			}
			continue
		}
		want, _ := os.ReadFile(filepath.Join(src, name)) // written above
		if err != nil || string(data) != string(want) {
			t.Errorf("%s: %v, content ok=%v", name, err, string(data) == string(want))
		}
	}
}
