package prune_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestPruneScratchIndex checks what prune's on-disk scratch index must
// keep of the in-memory index it replaced: of a blob's copies in several
// packs the one kept is in a pack on the store, the newest; a pack listed
// by two index files is listed once afterwards; and the scratch index
// leaves nothing behind.
func TestPruneScratchIndex(t *testing.T) {
	cases := []struct {
		name string
		// arrange changes the repository; gone is the pack expected to be
		// deleted (or dropped from the index) and kept the one expected
		// to stay, both zero when none.
		arrange    func(t *testing.T, dir string, st store.Store, r *repo.Repository) (gone, kept id.ID)
		wantStale  int
		wantDelete int
	}{
		{name: "first copy's pack gone", wantStale: 1, arrange: func(t *testing.T, dir string, st store.Store, r *repo.Repository) (id.ID, id.ID) {
			packs, files := checktest.Listings(t, r)
			i := checktest.FirstDataPack(t, packs)
			dup := checktest.CopyPack(t, dir, st, r, packs[i])
			checktest.ReplaceIndex(t, st, r, files, append([]index.PackBlobs{packs[i], dup}, append(packs[:i:i], packs[i+1:]...)...))
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(repo.PackKey(packs[i].ID)))); err != nil {
				t.Fatal(err)
			}
			return packs[i].ID, dup.ID
		}},
		{name: "older copy goes", wantDelete: 1, arrange: func(t *testing.T, dir string, st store.Store, r *repo.Repository) (id.ID, id.ID) {
			packs, files := checktest.Listings(t, r)
			i := checktest.FirstDataPack(t, packs)
			dup := checktest.CopyPack(t, dir, st, r, packs[i])
			checktest.ReplaceIndex(t, st, r, files, append([]index.PackBlobs{packs[i], dup}, append(packs[:i:i], packs[i+1:]...)...))
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(repo.PackKey(packs[i].ID))), old, old); err != nil {
				t.Fatal(err)
			}
			return packs[i].ID, dup.ID
		}},
		{name: "pack listed twice", arrange: func(t *testing.T, dir string, st store.Store, r *repo.Repository) (id.ID, id.ID) {
			packs, _ := checktest.Listings(t, r)
			checktest.Write(t, st, r, func(w *repo.Writer) {
				if _, err := w.WriteIndex(context.Background(), packs[:1]); err != nil {
					t.Fatal(err)
				}
			})
			return id.ID{}, packs[0].ID
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir, st, src, sid := checktest.BackedUp(t, 3, 300<<10)
			gone, kept := c.arrange(t, dir, st, checktest.Open(t, st))

			r := checktest.Open(t, st)
			indexDir := filepath.Join(t.TempDir(), "index")
			r.SetDiskIndex(repo.DiskIndex{Dir: indexDir})
			res, err := pruneLocked(t, st, r, prune.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.StalePacks != c.wantStale || res.PacksDeleted != c.wantDelete || res.PacksRepacked != 0 {
				t.Errorf("%d stale, %d deleted, %d repacked; want %d, %d, 0", res.StalePacks, res.PacksDeleted, res.PacksRepacked, c.wantStale, c.wantDelete)
			}
			listed := map[id.ID]int{}
			packs, _ := checktest.Listings(t, checktest.Open(t, st))
			for _, p := range packs {
				listed[p.ID]++
			}
			for pid, n := range listed {
				if n != 1 {
					t.Errorf("pack %s listed %d times after prune", pid.Short(), n)
				}
			}
			if !gone.IsZero() {
				if listed[gone] != 0 {
					t.Errorf("the copy that should go is still indexed")
				}
				if _, err := st.Stat(ctx, repo.PackKey(gone)); err == nil {
					t.Errorf("the copy that should go is still stored")
				}
			}
			if listed[kept] != 1 {
				t.Errorf("the pack to keep is not indexed")
			}
			if left, _ := os.ReadDir(indexDir); len(left) != 0 {
				t.Errorf("prune left files in the index directory: %v", left)
			}
			mustCheck(t, st)
			checktest.RestoreEqual(t, st, sid, src)
		})
	}
}

// TestPruneUnindexedPacks checks the packs no index file lists, which
// prune keeps apart from the scratch index's numbered ones: an old one,
// stored by hand under a key of its own, is deleted at that key (and a
// dry run names it there, in id order with the others), and a young one
// is kept for the margin.
func TestPruneUnindexedPacks(t *testing.T) {
	ctx := context.Background()
	dir, st, src, sid := checktest.BackedUp(t, 3, 300<<10)
	r := checktest.Open(t, st)
	packs, _ := checktest.Listings(t, r)
	i := checktest.FirstDataPack(t, packs)
	oldPack, youngPack := checktest.CopyPack(t, dir, st, r, packs[i]), checktest.CopyPack(t, dir, st, r, packs[i])
	if oldPack.ID == youngPack.ID {
		t.Fatal("the two copies have the same id")
	}
	// The old copy moves to a key of its own, two hours back.
	misplaced := repo.DataPrefix + "zz/" + oldPack.ID.String()
	from, to := filepath.Join(dir, filepath.FromSlash(repo.PackKey(oldPack.ID))), filepath.Join(dir, filepath.FromSlash(misplaced))
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(to, old, old); err != nil {
		t.Fatal(err)
	}
	opts := prune.Options{Margin: time.Hour}

	dry, err := prune.DryRun(ctx, checktest.Open(t, st), opts)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Kept.UnindexedPacks != 1 || dry.PacksDeleted != 1 || dry.UnindexedPacksDeleted != 1 {
		t.Errorf("dry run: %d unindexed kept, %d deleted (%d unindexed); want 1, 1 (1)", dry.Kept.UnindexedPacks, dry.PacksDeleted, dry.UnindexedPacksDeleted)
	}
	if n := len(dry.WouldDelete); n == 0 || dry.WouldDelete[0] != misplaced {
		t.Errorf("dry run would delete %v, want %s first", dry.WouldDelete, misplaced)
	}
	res, err := pruneLocked(t, st, checktest.Open(t, st), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.PacksDeleted != 1 || res.UnindexedPacksDeleted != 1 || res.Kept.UnindexedPacks != 1 {
		t.Errorf("%d deleted (%d unindexed), %d unindexed kept; want 1 (1), 1", res.PacksDeleted, res.UnindexedPacksDeleted, res.Kept.UnindexedPacks)
	}
	if _, err := st.Stat(ctx, misplaced); err == nil {
		t.Errorf("the old unindexed pack is still stored at %s", misplaced)
	}
	if _, err := st.Stat(ctx, repo.PackKey(youngPack.ID)); err != nil {
		t.Errorf("the young unindexed pack is gone: %v", err)
	}
	checktest.RestoreEqual(t, st, sid, src)
}

// TestPruneLeavesMergedIndex checks that prune merges the index files of
// several backups into fewer, and that a prune with nothing to delete
// leaves an index it merged as it is: rewriting every index file would
// make every host rebuild its on-disk index for nothing.
func TestPruneLeavesMergedIndex(t *testing.T) {
	ctx := context.Background()
	st := checktest.NewRepo(t, t.TempDir())
	for i := range 5 {
		src := t.TempDir()
		checktest.WriteFile(t, src, "f", uint64(i), 100<<10)
		checktest.Backup(t, st, src)
	}
	opts := prune.WithMergeBatch(prune.Options{}, 4)
	indexFiles := func() []id.ID {
		ids, _, err := checktest.Open(t, st).ListIDs(ctx, repo.IndexPrefix)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if n := len(indexFiles()); n != 5 {
		t.Fatalf("%d index files after five backups", n)
	}
	first, err := pruneLocked(t, st, checktest.Open(t, st), opts)
	if err != nil {
		t.Fatal(err)
	}
	merged := indexFiles()
	if first.IndexFilesDeleted != 5 || len(merged) >= 5 || first.IndexFilesWritten != len(merged) {
		t.Fatalf("first prune: %d index files written, %d deleted; %d left; want fewer than 5", first.IndexFilesWritten, first.IndexFilesDeleted, len(merged))
	}
	second, err := pruneLocked(t, st, checktest.Open(t, st), opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.IndexFilesWritten != 0 || second.IndexFilesDeleted != 0 {
		t.Errorf("second prune: %d index files written, %d deleted; want the merged index left alone", second.IndexFilesWritten, second.IndexFilesDeleted)
	}
	if after := indexFiles(); !slices.Equal(after, merged) {
		t.Errorf("index files %v, want %v", after, merged)
	}
	mustCheck(t, st)
}
