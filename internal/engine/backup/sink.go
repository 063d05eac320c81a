package backup

import (
	"context"
	"fmt"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// sink receives new blobs: the repository's Saver, or a dry-run stand-in
// that stores nothing.
type sink interface {
	Known(blob id.ID) bool
	Save(ctx context.Context, t pack.BlobType, blob id.ID, data []byte) (bool, error)
	// FlushWith stores the last packs and index file, running beside
	// (when not nil) with the index file's write once every pack is
	// stored (repo.Saver's FlushWith).
	FlushWith(ctx context.Context, beside func(context.Context) error) error
	// Interrupt ends a run that will not finish, indexing the packs
	// already stored so that the next run reuses them (repo.Saver's
	// Interrupt).
	Interrupt(ctx context.Context) error
	Stats() repo.SaverStats
}

// newSink returns wr's saver, or the dry-run stand-in when wr is nil (a
// dry run, reading r).
func newSink(ctx context.Context, r *repo.Repository, wr *repo.Writer, opts Options) sink {
	if wr == nil {
		return newDryRun(ctx, r)
	}
	return wr.NewSaverWith(ctx, repo.SaverOptions{Uploaders: opts.Uploaders, Compression: opts.Compression,
		CheckpointPacks: opts.CheckpointPacks, CheckpointAge: opts.CheckpointInterval, Clock: opts.Clock})
}

// dryRun counts what a real run would store.
type dryRun struct {
	// ctx is the run's, for Known's lookups, as repo.Saver's: a rebuild
	// of a damaged on-disk index they start runs under it.
	ctx   context.Context
	r     *repo.Repository
	mu    sync.Mutex
	seen  map[id.ID]bool
	stats repo.SaverStats
}

func newDryRun(ctx context.Context, r *repo.Repository) *dryRun {
	return &dryRun{ctx: ctx, r: r, seen: make(map[id.ID]bool)}
}

func (d *dryRun) Known(blob id.ID) bool {
	if d.r.Index().Has(d.ctx, blob) {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen[blob]
}

func (d *dryRun) Save(ctx context.Context, _ pack.BlobType, blob id.ID, data []byte) (bool, error) {
	// As repo.Saver: an on-disk index that cannot be read fails the run.
	if known, err := d.r.Index().Contains(ctx, blob); err != nil || known {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen[blob] {
		return false, nil
	}
	d.seen[blob] = true
	d.stats.BlobsAdded++
	d.stats.BytesAdded += int64(len(data))
	return true, nil
}

func (d *dryRun) Interrupt(context.Context) error { return nil }

// FlushWith stores nothing, and runs beside if set (a dry run passes none:
// it holds no lease).
func (d *dryRun) FlushWith(ctx context.Context, beside func(context.Context) error) error {
	if beside == nil {
		return nil
	}
	return beside(ctx)
}

func (d *dryRun) Stats() repo.SaverStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// interrupted ends a run that failed with err: the packs it stored are
// indexed (s.Interrupt) while the lease is still held, so a re-run
// uploads only what is missing. err stays the reason the run failed.
func interrupted(ctx context.Context, s sink, err error) error {
	if ierr := s.Interrupt(ctx); ierr != nil {
		return fmt.Errorf("%w (and %w)", err, ierr)
	}
	return err
}
