package stats_test

import (
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted counts the crafted snapshots: the one 100,000 levels deep
// fails with the depth error; the one shared 2^40 ways is counted exactly
// (every mode's figures come from the same totals) reading each of its 41
// trees once; identical directories count once per path.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)

	t.Run("deep", func(t *testing.T) {
		err := stats.NewCounter(r.Repository).Add(walktest.Guard(t), h.Deep)
		if !errors.Is(err, tree.ErrTooDeep) {
			t.Fatalf("got %v, want the depth error", err)
		}
	})
	t.Run("shared 2^40 ways", func(t *testing.T) {
		r.Rec.Reset()
		c := stats.NewCounter(r.Repository)
		if err := c.Add(walktest.Guard(t), h.Shared); err != nil {
			t.Fatal(err)
		}
		got := c.Totals()
		const paths = int64(1) << walktest.SharedLevels
		tests := []struct {
			name      string
			got, want int64
		}{
			{"restore files", got.RestoreFiles, paths},
			{"restore size", got.RestoreSize, paths * int64(len("everywhere\n"))},
			{"dirs", got.Dirs, 2*paths - 2},
			{"unique files", got.UniqueFiles, 1},
			{"tree blobs", got.TreeBlobs, walktest.SharedLevels + 1},
			{"data blobs", got.DataBlobs, 1},
			{"tree reads", int64(reads(r)), walktest.SharedLevels + 1},
		}
		for _, tc := range tests {
			if tc.got != tc.want {
				t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
			}
		}
	})
	t.Run("twins", func(t *testing.T) {
		c := stats.NewCounter(r.Repository)
		if err := c.Add(walktest.Guard(t), h.Twins); err != nil {
			t.Fatal(err)
		}
		got := c.Totals()
		if got.RestoreFiles != 4 || got.Dirs != 4 || got.UniqueFiles != 2 || got.TreeBlobs != 3 {
			t.Errorf("%d files, %d dirs, %d distinct files, %d trees; want 4, 4, 2, 3",
				got.RestoreFiles, got.Dirs, got.UniqueFiles, got.TreeBlobs)
		}
	})
	t.Run("growth", func(t *testing.T) {
		rows, err := stats.Growth(walktest.Guard(t), r.Repository, []snapshot.WithID{h.Shared, h.Twins})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Files != 1<<walktest.SharedLevels || rows[1].Files != 4 {
			t.Errorf("rows %+v", rows)
		}
	})
}

// reads counts the pack reads since the Recorder's last reset: one per
// tree, the repository's store being local (no cache).
func reads(r *walktest.Repo) int {
	n := 0
	for _, c := range r.Rec.PackReads() {
		n += c
	}
	return n
}
