package snapcopy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted copies the crafted snapshots: the one shared 2^40 ways is
// copied reading each of its 41 trees once, and keeps its shape (and the
// twins theirs); the one 100,000 levels deep is refused with the depth
// error, naming it.
func TestCrafted(t *testing.T) {
	ctx := walktest.Guard(t)
	r := walktest.New(t)
	h := r.WriteHostile(t)
	src := r.Reopen(t)
	dstStore := newDest(t, src.Config().Chunker)
	dst := openDest(t, dstStore)
	for _, rr := range []*repo.Repository{src, dst} {
		if _, err := rr.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run := func(ids ...string) (res *snapcopy.Result, err error) {
		srcLease, err := lock.AcquireShared(context.Background(), r.Rec.Store, "copy", lock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer srcLease.Release(context.Background()) //nolint:errcheck // the test is over either way
		dstLease, err := lock.AcquireShared(context.Background(), dstStore, "copy", lock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer dstLease.Release(context.Background()) //nolint:errcheck // as above
		w, err := dst.Writer(dstLease)
		if err != nil {
			t.Fatal(err)
		}
		return snapcopy.Run(ctx, src, srcLease, w, snapcopy.Options{IDs: ids})
	}

	r.Rec.Reset()
	res, err := run(h.Shared.ID.String(), h.Twins.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	treeReads := 0
	for _, n := range r.Rec.PackReads() {
		treeReads += n
	}
	// Each tree once, and the three data blobs.
	if want := walktest.SharedLevels + 1 + 3 + 3; treeReads > want {
		t.Errorf("%d reads from the source, want at most %d", treeReads, want)
	}
	c := stats.NewCounter(dst)
	for _, cp := range res.Copied {
		s, err := dst.LoadSnapshot(ctx, cp.NewID)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Add(ctx, snapshot.WithID{ID: cp.NewID, Snapshot: s}); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Totals(); got.RestoreFiles != 1<<walktest.SharedLevels+4 || got.TreeBlobs != walktest.SharedLevels+1+3 {
		t.Errorf("copies hold %d files in %d trees", got.RestoreFiles, got.TreeBlobs)
	}

	_, err = run(h.Deep.ID.String())
	if !errors.Is(err, tree.ErrTooDeep) || !strings.Contains(err.Error(), h.Deep.ID.Short()) {
		t.Errorf("copying the deep snapshot: %v, want the depth error naming it", err)
	}
}
