package stats_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// TestStatsDamagedDiskIndex checks that a damaged on-disk index never
// counts as missing blobs: it is rebuilt and the counts are whole, or,
// when it cannot be rebuilt, counting fails with the damage.
func TestStatsDamagedDiskIndex(t *testing.T) {
	ctx := context.Background()
	storeDir, st, _, sid := checktest.BackedUp(t, 3, 200<<10)
	count := func(t *testing.T, dropIndexFiles bool) (stats.Totals, error) {
		r, _ := repotest.OpenDamaged(t, func() *repo.Repository { return checktest.Open(t, st) })
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := r.LoadSnapshot(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if dropIndexFiles {
			repotest.DeleteIndexFiles(t, r, storeDir)
		}
		c := stats.NewCounter(r)
		err = c.Add(ctx, snapshot.WithID{ID: sid, Snapshot: s})
		return c.Totals(), err
	}
	t.Run("rebuilt", func(t *testing.T) {
		tot, err := count(t, false)
		if err != nil || tot.MissingBlobs != 0 || tot.DataBlobs == 0 {
			t.Fatalf("%+v, %v; want every blob counted", tot, err)
		}
	})
	t.Run("rebuild fails", func(t *testing.T) { // last: it deletes the index files
		tot, err := count(t, true)
		if !errors.Is(err, index.ErrDiskCorrupt) {
			t.Fatalf("%+v, %v; want the damage, not missing blobs", tot, err)
		}
	})
}
