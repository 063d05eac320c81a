package prune_test

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
)

// onlyBytes sums the sealed sizes of the blobs snapshot a uses and no
// other snapshot in others does.
func onlyBytes(t *testing.T, st store.Store, a id.ID, others ...id.ID) int64 {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	blobs := func(sid id.ID) map[id.ID]bool {
		s, err := r.LoadSnapshot(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		out := map[id.ID]bool{}
		stack := []id.ID{s.Tree}
		for len(stack) > 0 {
			tid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out[tid] = true
			tr, err := r.LoadTree(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tr.Nodes {
				for _, b := range n.Content {
					out[b] = true
				}
				if !n.Subtree.IsZero() {
					stack = append(stack, n.Subtree)
				}
			}
		}
		return out
	}
	used := map[id.ID]bool{}
	for _, o := range others {
		for b := range blobs(o) {
			used[b] = true
		}
	}
	var n int64
	for b := range blobs(a) {
		if !used[b] {
			loc, _ := r.Index().Lookup(t.Context(), b) // every blob of a loaded snapshot is indexed
			n += int64(loc.Length)
		}
	}
	return n
}

// mustCheck fails unless check finds no error, reading all data.
func mustCheck(t *testing.T, st store.Store) {
	t.Helper()
	res, err := check.Run(context.Background(), checktest.Open(t, st), check.Options{ReadData: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("check: %v", res.Errors)
	}
}

func TestPruneReclaims(t *testing.T) {
	cases := []struct {
		name        string
		forgetFirst bool    // forget the older snapshot (its packs mix shared and own blobs)
		maxUnused   float64 // repack threshold
	}{
		{name: "forget newer, default threshold", maxUnused: prune.DefaultMaxUnused},
		{name: "forget older, repack all garbage", forgetFirst: true, maxUnused: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			srcA, srcB := t.TempDir(), t.TempDir()
			for i := range 3 {
				checktest.WriteFile(t, srcA, "shared"+string(rune('0'+i)), uint64(i), 500<<10)
				checktest.WriteFile(t, srcB, "shared"+string(rune('0'+i)), uint64(i), 500<<10)
				checktest.WriteFile(t, srcB, "own"+string(rune('0'+i)), uint64(100+i), 700<<10)
			}
			checktest.WriteFile(t, srcA, "a-only", 77, 300<<10)
			a := checktest.Backup(t, st, srcA)
			b := checktest.Backup(t, st, srcB)
			gone, kept, keptSrc := b, a, srcA
			if c.forgetFirst {
				gone, kept, keptSrc = a, b, srcB
			}
			want := onlyBytes(t, st, gone, kept)
			if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(ctx, gone); err != nil {
				t.Fatal(err)
			}
			before := checktest.DirSize(t, dir, "data")
			dry, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: c.maxUnused, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if checktest.DirSize(t, dir, "data") != before || len(dry.WouldDelete) == 0 {
				t.Fatalf("dry run changed the store or planned nothing: %+v", dry)
			}
			res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: c.maxUnused})
			if err != nil {
				t.Fatal(err)
			}
			got := before - checktest.DirSize(t, dir, "data")
			t.Logf("reclaimed %d of %d bytes only the forgotten snapshot used; %+v", got, want, res)
			if float64(got) < 0.95*float64(want) {
				t.Fatalf("reclaimed %d bytes, want at least 95%% of %d", got, want)
			}
			if c.maxUnused == 0 && res.PacksRepacked == 0 {
				t.Fatal("no pack was repacked")
			}
			mustCheck(t, st)
			checktest.RestoreEqual(t, st, kept, keptSrc)
		})
	}
}

func TestRepackKeepsOthersRestorable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	srcs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for i, src := range srcs {
		checktest.WriteFile(t, src, "common", 1, 600<<10)
		checktest.WriteFile(t, src, "sub/own", uint64(10+i), 900<<10)
		checktest.WriteFile(t, src, "sub/next", uint64(20+i), 400<<10)
		if i > 0 {
			checktest.WriteFile(t, src, "prev", uint64(20+i-1), 400<<10)
		}
	}
	var ids []id.ID
	for _, src := range srcs {
		ids = append(ids, checktest.Backup(t, st, src))
	}
	if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if res.PacksRepacked == 0 || res.PacksWritten == 0 || res.IndexFilesDeleted == 0 {
		t.Fatalf("expected repacking: %+v", res)
	}
	mustCheck(t, st)
	checktest.RestoreEqual(t, st, ids[0], srcs[0])
	checktest.RestoreEqual(t, st, ids[2], srcs[2])
	// A second prune finds nothing more to do.
	again, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if again.PacksDeleted+again.PacksRepacked != 0 {
		t.Fatalf("second prune still deletes: %+v", again)
	}
}

// TestDamagedRefuses: a snapshot whose blobs are gone makes prune delete
// nothing.
func TestDamagedRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 800<<10)
	checktest.Backup(t, st, src)
	files, _, err := checktest.Open(t, st).ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := st.Delete(ctx, repo.IndexKey(f)); err != nil {
			t.Fatal(err)
		}
	}
	before := checktest.DirSize(t, dir, "data")
	if _, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{}); err == nil {
		t.Fatal("prune ran on a damaged repository")
	}
	if checktest.DirSize(t, dir, "data") != before {
		t.Fatal("prune deleted packs of a damaged repository")
	}
}
