package prune_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// TestCrafted prunes a repository holding the crafted snapshots and one
// forgotten snapshot's packs: the mark phase visits each tree once (the
// 100,000-deep chain without recursing, the 2^40-way DAG in 41 reads),
// deletes the garbage and keeps every blob the crafted snapshots name.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := walktest.WriteHostile(t, r.Repository)
	c := walktest.NewCrafter(t, r.Repository)
	garbage := c.Snapshot(c.Tree(c.File("g", []byte("forgotten\n"))), time.Now())
	if err := r.DeleteSnapshot(context.Background(), garbage.ID); err != nil {
		t.Fatal(err)
	}
	res, err := pruneLocked(t, r.Reopen(t), prune.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshots != 3 || res.PacksDeleted != 2 {
		t.Errorf("%d snapshots, %d packs deleted; want 3 and 2 (the forgotten snapshot's tree and data packs)", res.Snapshots, res.PacksDeleted)
	}
	after, err := check.Run(walktest.Guard(t), r.Reopen(t), check.Options{ReadData: true})
	if err != nil {
		t.Fatal(err)
	}
	crafted := map[string]bool{repo.SnapshotKey(h.Deep.ID): true, repo.SnapshotKey(h.Shared.ID): true}
	for _, p := range after.Errors {
		if p.Kind != check.KindCorrupt || !crafted[p.Key] { // the crafted snapshots break the bounds
			t.Errorf("after prune: %+v", p)
		}
	}
}
