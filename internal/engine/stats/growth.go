package stats

import (
	"context"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// GrowthRow is one snapshot of the repository's growth: what it added to
// the snapshots before it, and the totals after it.
type GrowthRow struct {
	SnapshotID string    `json:"snapshot_id"`
	Time       time.Time `json:"time"`
	Files      int64     `json:"files"`
	Size       int64     `json:"size"`
	Added      int64     `json:"added"`
	StoredSize int64     `json:"stored_size"`
	// Totals are the totals of this snapshot and every one before it
	// (deduplication ratio over time).
	Totals Totals `json:"-"`
}

// Growth counts snaps in the order given (oldest first for a growth
// curve) and returns one row per snapshot. r's index must be loaded.
func Growth(ctx context.Context, r *repo.Repository, snaps []snapshot.WithID) ([]GrowthRow, error) {
	c := NewCounter(r)
	rows := []GrowthRow{}
	var prev Totals
	for _, s := range snaps {
		if err := c.Add(ctx, s); err != nil {
			return nil, err
		}
		t := c.Totals()
		rows = append(rows, GrowthRow{SnapshotID: s.ID.String(), Time: s.Time, Files: t.RestoreFiles - prev.RestoreFiles,
			Size: t.RestoreSize - prev.RestoreSize, Added: t.StoredSize - prev.StoredSize, StoredSize: t.StoredSize, Totals: t})
		prev = t
	}
	return rows, nil
}
