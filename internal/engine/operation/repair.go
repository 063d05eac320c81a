package operation

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// RepairSnapshots removes the snapshots that fail their hash check,
// authentication or decoding (repair.Snapshots), each on a second proof.
// It takes no lock, as forget, whose only write is the same: a snapshot is
// stored whole and atomically, so a damaged one is never a backup in
// progress.
func RepairSnapshots(ctx context.Context, r *Repo, opts repair.SnapshotsOptions) (*repair.SnapshotsResult, error) {
	return repair.Snapshots(ctx, r.Repository, opts)
}

// RepairIndex rebuilds the index from the packs' own headers
// (repair.Index) under the exclusive lock, none on a dry run. r's index
// must not be loaded.
func RepairIndex(ctx context.Context, r *Repo, opts repair.IndexOptions) (*repair.IndexResult, error) {
	if opts.DryRun {
		return repair.Index(ctx, r.Repository, nil, opts)
	}
	var res *repair.IndexResult
	err := withLock(ctx, r.env, r.st, exclusive, "repair index", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		res, err = repair.Index(ctx, r.Repository, lease, opts)
		return err
	})
	return res, err
}
