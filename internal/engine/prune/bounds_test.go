package prune_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// TestCrafted prunes a repository holding the crafted snapshots and one
// forgotten snapshot's packs: the mark phase visits each tree once (the
// 100,000-deep chain without recursing, the 2^40-way DAG in 41 reads),
// deletes the garbage and keeps every blob the crafted snapshots name.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	w, release := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	garbage := c.Snapshot(c.Tree(c.File("g", []byte("forgotten\n"))), time.Now())
	if err := w.DeleteSnapshot(context.Background(), garbage.ID); err != nil {
		t.Fatal(err)
	}
	release()
	res, err := pruneLocked(t, r.Rec, r.Reopen(t), prune.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshots != 3 || res.PacksDeleted != 2 {
		t.Errorf("%d snapshots, %d packs deleted; want 3 and 2 (the forgotten snapshot's tree and data packs)", res.Snapshots, res.PacksDeleted)
	}
	// Every blob of the crafted snapshots is kept: 100,001 trees and a
	// file deep, 41 trees and a file shared, 3 trees and 2 files of the
	// twins; the forgotten snapshot's tree and file are gone.
	after := r.Reopen(t)
	if _, err := after.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := walktest.DeepLevels + 1 + 1 + walktest.SharedLevels + 1 + 1 + 3 + 2
	if n := after.Index().Len(); n != want {
		t.Errorf("%d blobs indexed after prune, want %d", n, want)
	}
	for _, s := range []snapshot.WithID{h.Shared, h.Twins} {
		c := stats.NewCounter(after)
		if err := c.Add(walktest.Guard(t), s); err != nil || c.Totals().MissingBlobs != 0 {
			t.Errorf("snapshot %s after prune: %v, %d blobs missing", s.ID.Short(), err, c.Totals().MissingBlobs)
		}
	}
}
