package operation

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// RepairIndex rebuilds the index from the packs' own headers
// (repair.Index) under the exclusive lock, none on a dry run. r's index
// must not be loaded.
func RepairIndex(ctx context.Context, r *Repo, opts repair.IndexOptions) (*repair.IndexResult, error) {
	if opts.DryRun {
		return repair.IndexDryRun(ctx, r.r, opts)
	}
	var res *repair.IndexResult
	err := withExclusiveWriter(ctx, r, "repair index", func(ctx context.Context, w *repo.ExclusiveWriter) error {
		var err error
		res, err = repair.Index(ctx, w, opts)
		return err
	})
	return res, err
}
