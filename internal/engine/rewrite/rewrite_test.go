package rewrite_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/rewrite"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// secret is the content of the file backed up by mistake.
var secret = []byte("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")

// secretRepo backs up a tree holding a secret file and a directory of
// keys twice (the second after a change elsewhere) and returns the store,
// the source directory and the snapshot ids.
func secretRepo(t *testing.T) (store.Store, string, []id.ID) {
	t.Helper()
	st := checktest.NewRepo(t, t.TempDir())
	dir := t.TempDir()
	checktest.WriteFile(t, dir, "docs/report", 1, 100<<10)
	checktest.WriteFile(t, dir, "keys/id_ed25519", 2, 3<<10)
	checktest.WriteFile(t, dir, "keys/deeper/other", 3, 40<<10)
	if err := os.WriteFile(filepath.Join(dir, "docs", ".env"), secret, 0o600); err != nil {
		t.Fatal(err)
	}
	first := checktest.Backup(t, st, dir)
	checktest.WriteFile(t, dir, "docs/later", 4, 20<<10)
	second := checktest.Backup(t, st, dir)
	return st, dir, []id.ID{first, second}
}

func run(t *testing.T, st store.Store, opts rewrite.Options) (*rewrite.Result, error) {
	t.Helper()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	if opts.DryRun {
		return rewrite.DryRun(context.Background(), r, opts)
	}
	var res *rewrite.Result
	var err error
	checktest.Locked(t, st, false, func(lease *lock.Lock) {
		var w *repo.Writer
		if w, err = r.Writer(lease); err == nil {
			res, err = rewrite.Run(context.Background(), w, opts)
		}
	})
	return res, err
}

// TestRewrite removes a file and a directory from both snapshots: a dry
// run reports them and changes nothing; the rewrite stores new snapshots
// recording their originals and the patterns, deletes the old ones, and
// restores everything else byte for byte; a second run changes nothing;
// after a prune the secret's blob is gone from the index and from every
// pack, and check -read-data is clean.
func TestRewrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dir, ids := secretRepo(t)
	opts := rewrite.Options{Excludes: []string{".env", "/keys/"}}
	wantRemoved := []string{"docs/.env", "keys/"}

	dry, err := run(t, st, rewrite.Options{Excludes: opts.Excludes, DryRun: true})
	if err != nil || len(dry.Changes) != 2 || !slices.Equal(dry.Changes[0].Removed, wantRemoved) ||
		dry.Changes[0].RemovedFiles != 3 || dry.Changes[0].RemovedBytes != int64(len(secret)+43<<10) || !dry.Changes[0].NewID.IsZero() {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if snaps, _, _ := checktest.Open(t, st).Snapshots(ctx); len(snaps) != 2 || snaps[0].ID != ids[0] {
		t.Fatalf("the dry run changed the snapshots: %v", snaps)
	}

	res, err := run(t, st, opts)
	if err != nil || len(res.Changes) != 2 || res.Unchanged != 0 {
		t.Fatalf("rewrite: %+v %v", res, err)
	}
	snaps, _, err := checktest.Open(t, st).Snapshots(ctx)
	if err != nil || len(snaps) != 2 {
		t.Fatalf("snapshots after the rewrite: %v %v", snaps, err)
	}
	for i, c := range res.Changes {
		s := snaps[i]
		if c.Old.ID != ids[i] || !c.OldDeleted || c.NewID != s.ID || s.Original != ids[i] ||
			s.Excludes == nil || !slices.Equal(s.Excludes.Patterns, opts.Excludes) || s.Root.Subtree != s.Tree {
			t.Errorf("change %d: %+v, snapshot %+v", i, c, s)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "docs", ".env")); err != nil {
		t.Fatal(err)
	}
	checktest.RestoreEqual(t, st, snaps[1].ID, dir)

	again, err := run(t, st, opts)
	if err != nil || len(again.Changes) != 0 || again.Unchanged != 2 {
		t.Fatalf("second rewrite: %+v %v", again, err)
	}

	secretID := checktest.Open(t, st).Key().ID(secret)
	if !indexHas(t, st, secretID) {
		t.Fatal("the secret's blob is not in the index before the prune")
	}
	if n := blobsContaining(t, st, secret); n != 1 {
		t.Fatalf("%d stored blobs hold the secret before the prune, want 1", n)
	}
	checktest.Locked(t, st, true, func(lease *lock.Lock) {
		w, err := checktest.Open(t, st).ExclusiveWriter(lease)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := prune.Run(ctx, w, prune.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if indexHas(t, st, secretID) {
		t.Error("the secret's blob is still indexed after the prune")
	}
	if n := blobsContaining(t, st, secret); n != 0 {
		t.Errorf("%d stored blobs still hold the secret", n)
	}
	cr, err := check.Run(ctx, checktest.Open(t, st), check.Options{ReadData: true})
	if err != nil || !cr.OK() {
		t.Fatalf("check: %v %+v", err, cr)
	}
}

func indexHas(t *testing.T, st store.Store, blob id.ID) bool {
	t.Helper()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.Index().Has(t.Context(), blob)
}

// blobsContaining reads every pack in the store, decrypts every blob its
// header lists (whether an index names it or not) and counts those whose
// plaintext contains needle.
func blobsContaining(t *testing.T, st store.Store, needle []byte) int {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	n := 0
	err := st.List(ctx, repo.DataPrefix, func(oi store.ObjectInfo) error {
		pid, err := repo.IDFromKey(oi.Key)
		if err != nil {
			return err
		}
		entries, err := r.ReadPackHeader(ctx, pid, oi.Size, 0)
		if err != nil {
			return err
		}
		data, err := st.Get(ctx, oi.Key, r.MaxPackSize())
		if err != nil {
			return err
		}
		for _, e := range entries {
			plain, err := r.DecodeBlobFromPack(data, e)
			if err != nil {
				return err
			}
			if bytes.Contains(plain, needle) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRewriteSelectsAndRefuses: snapshots are chosen by id, a snapshot the
// patterns match nothing in is left alone (counted), no pattern and bad
// patterns are refused before any I/O, and writing needs a lease.
func TestRewriteSelectsAndRefuses(t *testing.T) {
	t.Parallel()
	st, _, ids := secretRepo(t)
	res, err := run(t, st, rewrite.Options{Excludes: []string{"later"}, IDs: []string{ids[0].String()[:8], ids[1].String()[:8]}})
	if err != nil || len(res.Changes) != 1 || res.Changes[0].Old.ID != ids[1] || res.Unchanged != 1 ||
		!slices.Equal(res.Changes[0].Removed, []string{"docs/later"}) {
		t.Fatalf("rewrite of the second snapshot only: %+v %v", res, err)
	}
	if _, err := run(t, st, rewrite.Options{}); !errors.Is(err, rewrite.ErrNoExcludes) {
		t.Errorf("no pattern: %v", err)
	}
	if _, err := run(t, st, rewrite.Options{Excludes: []string{"[a-"}}); !errors.Is(err, exclude.ErrPattern) {
		t.Errorf("bad pattern: %v", err)
	}
	if _, err := checktest.Open(t, st).Writer(nil); !errors.Is(err, repo.ErrNoLease) {
		t.Errorf("a writer without a lease: %v", err)
	}
	if _, err := rewrite.Run(context.Background(), nil, rewrite.Options{Excludes: []string{"report"}}); !errors.Is(err, repo.ErrNoLease) {
		t.Errorf("without a writer: %v", err)
	}
}
