package snapcopy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// otherKey is the platform key of destination repositories: not the key of
// checktest's repositories, so blob ids differ between the two.
const otherKey = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

// newDest creates a repository with otherKey and the given chunker
// parameters in a fresh local store.
func newDest(t *testing.T, params repo.ChunkerParams) store.Store {
	t.Helper()
	ctx := context.Background()
	st := local.New(t.TempDir())
	opts := repo.InitOptions{Credentials: repo.Credentials{PlatformKey: otherKey}, Chunker: params, PackSize: 1 << 20}
	if _, _, err := repo.Init(ctx, st, opts); err != nil {
		t.Fatal(err)
	}
	return st
}

func openDest(t *testing.T, st store.Store) *repo.Repository {
	t.Helper()
	r, err := repo.Open(context.Background(), st, repo.Credentials{PlatformKey: otherKey})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runCopy copies from src to dst under shared locks on both.
func runCopy(ctx context.Context, t *testing.T, src, dst store.Store, opts snapcopy.Options) (*snapcopy.Result, error) {
	t.Helper()
	s, d := checktest.Open(t, src), openDest(t, dst)
	for _, r := range []*repo.Repository{s, d} {
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var res *snapcopy.Result
	var err error
	checktest.Locked(t, src, false, func(srcLease *lock.Lock) {
		checktest.Locked(t, dst, false, func(dstLease *lock.Lock) {
			var w *repo.Writer
			if w, err = d.Writer(dstLease); err == nil {
				res, err = snapcopy.Run(ctx, s, srcLease, w, opts)
			}
		})
	})
	return res, err
}

// sourceRepo backs up two versions of a tree (shared contents) and returns
// the store, the source directory and the snapshot ids.
func sourceRepo(t *testing.T) (store.Store, string, []id.ID) {
	t.Helper()
	st := checktest.NewRepo(t, t.TempDir())
	dir := t.TempDir()
	checktest.WriteFile(t, dir, "big", 1, 300<<10)
	checktest.WriteFile(t, dir, "sub/small", 2, 5<<10)
	checktest.WriteFile(t, dir, "sub/deeper/same-as-big", 1, 300<<10)
	first := checktest.Backup(t, st, dir)
	checktest.WriteFile(t, dir, "sub/new", 3, 120<<10)
	second := checktest.Backup(t, st, dir)
	return st, dir, []id.ID{first, second}
}

// destSnapshots maps the original ids of dst's snapshots to their ids.
func destSnapshots(t *testing.T, dst store.Store) map[id.ID]id.ID {
	t.Helper()
	snaps, _, err := openDest(t, dst).Snapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[id.ID]id.ID{}
	for _, s := range snaps {
		if _, dup := out[s.OriginalID(s.ID)]; dup {
			t.Errorf("two snapshots of original %s", s.OriginalID(s.ID).Short())
		}
		out[s.OriginalID(s.ID)] = s.ID
	}
	return out
}

// checkClean runs check -read-data on dst.
func checkClean(t *testing.T, dst store.Store) {
	t.Helper()
	res, err := check.Run(context.Background(), openDest(t, dst), check.Options{ReadData: true})
	if err != nil || !res.OK() {
		t.Fatalf("check: %v %+v", err, res)
	}
}

// TestCopy copies two snapshots into repositories with another key, with
// the same and with other chunker parameters: the copies restore byte for
// byte and check clean, only the differing parameters re-chunk, and a
// second run copies nothing and skips both (counted).
func TestCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dir, ids := sourceRepo(t)
	for _, tc := range []struct {
		name    string
		params  repo.ChunkerParams
		rechunk bool
	}{
		{"same chunker", repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10}, false},
		{"other chunker", repo.ChunkerParams{Min: 16 << 10, Avg: 64 << 10, Max: 256 << 10}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dst := newDest(t, tc.params)
			res, err := runCopy(ctx, t, src, dst, snapcopy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Copied) != 2 || len(res.Skipped) != 0 || res.Rechunked != tc.rechunk || res.BlobsAdded == 0 {
				t.Fatalf("first copy: %+v", res)
			}
			got := destSnapshots(t, dst)
			for i, c := range res.Copied {
				if c.Source.ID != ids[i] || got[ids[i]] != c.NewID {
					t.Fatalf("copy %d: %+v, destination has %v", i, c, got)
				}
			}
			checkClean(t, dst)
			// The latest source snapshot is the directory as it is now.
			restoreEqual(t, dst, got[ids[1]], dir)

			again, err := runCopy(ctx, t, src, dst, snapcopy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Copied) != 0 || len(again.Skipped) != 2 || again.BlobsAdded != 0 || again.BlobsRead != 0 {
				t.Fatalf("second copy: %+v", again)
			}
			if len(destSnapshots(t, dst)) != 2 {
				t.Fatal("the second copy added snapshots")
			}
		})
	}
}

// restoreEqual restores sid of dst and compares it with dir.
func restoreEqual(t *testing.T, dst store.Store, sid id.ID, dir string) {
	t.Helper()
	checktest.RestoreEqualWith(t, dst, openDest(t, dst), sid, dir)
}

// TestCopyResumes interrupts copies (their context is cancelled at the
// destination's 2nd to 9th write: the lock, packs, index files, the first
// snapshot), then runs each again: every snapshot is copied exactly once,
// no blob is indexed twice, what the interrupted run indexed is reused, and
// the copies check clean and restore.
func TestCopyResumes(t *testing.T) {
	t.Parallel()
	src, dir, ids := sourceRepo(t)
	resumedAfterOne := false
	for _, killAt := range []int{2, 4, 6, 9} {
		dstInner := newDest(t, repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10})
		ctx, cancel := context.WithCancel(context.Background())
		faulty := fault.New(dstInner, fault.Config{KillAt: killAt, Kill: cancel})
		res, err := runCopy(ctx, t, src, faulty, snapcopy.Options{})
		cancel()
		if err == nil {
			t.Fatalf("kill at %d: the interrupted copy succeeded: %+v", killAt, res)
		}
		res, err = runCopy(context.Background(), t, src, dstInner, snapcopy.Options{})
		if err != nil {
			t.Fatalf("kill at %d: resumed copy: %v", killAt, err)
		}
		got := destSnapshots(t, dstInner)
		if len(got) != 2 || len(res.Copied)+len(res.Skipped) != 2 {
			t.Fatalf("kill at %d: after the resume %v, result %+v", killAt, got, res)
		}
		t.Logf("kill at %d: the resumed copy copied %d, skipped %d, added %d blobs", killAt, len(res.Copied), len(res.Skipped), res.BlobsAdded)
		resumedAfterOne = resumedAfterOne || len(res.Skipped) == 1
		noDuplicateBlobs(t, dstInner)
		checkClean(t, dstInner)
		restoreEqual(t, dstInner, got[ids[1]], dir)
	}
	if !resumedAfterOne {
		t.Error("no interruption fell after the first snapshot was stored")
	}
}

// noDuplicateBlobs fails when an index file names a blob another one
// already names.
func noDuplicateBlobs(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	r := openDest(t, st)
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[id.ID]bool{}
	for _, f := range files {
		idx, err := r.IndexFile(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range idx.Packs {
			for _, e := range p.Blobs {
				if seen[e.ID] {
					t.Errorf("blob %s indexed twice", e.ID.Short())
				}
				seen[e.ID] = true
			}
		}
	}
}

// TestCopyNeedsLeases: without a lease on the source or a writer on the
// destination nothing is copied; a dry run needs neither and writes
// nothing; a repository cannot be copied into itself.
func TestCopyNeedsLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, _, _ := sourceRepo(t)
	dst := newDest(t, repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10})
	s, d := checktest.Open(t, src), openDest(t, dst)
	if _, err := snapcopy.Run(ctx, s, nil, checktest.Writer(t, dst, d), snapcopy.Options{}); !errors.Is(err, repo.ErrNoLease) {
		t.Fatalf("copy without a lease on the source: %v", err)
	}
	if _, err := snapcopy.Run(ctx, s, checktest.Lease(t, src), nil, snapcopy.Options{}); !errors.Is(err, repo.ErrNoLease) {
		t.Fatalf("copy without a writer on the destination: %v", err)
	}
	res, err := snapcopy.DryRun(ctx, s, d, snapcopy.Options{IDs: []string{"latest"}})
	if err != nil || len(res.Copied) != 1 || !res.Copied[0].NewID.IsZero() {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if n := len(destSnapshots(t, dst)); n != 0 {
		t.Fatalf("the dry run stored %d snapshots", n)
	}
	if _, err := snapcopy.DryRun(ctx, s, checktest.Open(t, src), snapcopy.Options{}); !errors.Is(err, snapcopy.ErrSameRepository) {
		t.Fatalf("copy into itself: %v", err)
	}
}
