package prune

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Defaults the command line uses.
const (
	// DefaultMaxUnused: repack a pack when more than 30% of its blob bytes
	// are unused.
	DefaultMaxUnused = 0.30
	// DefaultMargin: never delete what the store says was written in the
	// hour before prune began. A backup holds a shared lock, so under a
	// working lock no backup runs during prune; the margin protects the
	// packs of one that runs anyway (its lock broken by break-lock, its
	// host asleep past its lease) for as long as a typical backup runs,
	// at the cost of reclaiming the newest garbage one prune later.
	DefaultMargin = time.Hour
	// deleteBatch is how many objects are deleted between lease checks.
	deleteBatch = 100
)

// Lease is the part of the exclusive lock prune uses (lock.Lock has it).
type Lease interface {
	// Check returns an error when the lease can no longer be trusted.
	Check(ctx context.Context) error
}

// Options configure a prune run.
type Options struct {
	// MaxUnused is the unused share (0..1) above which a pack is repacked.
	MaxUnused float64
	// Margin: objects whose store time is not older than Start - Margin
	// are never deleted.
	Margin time.Duration
	// Start is the store's time when the mark phase began (e.g. the
	// ModTime of our lock object); zero means Clock.Now().
	Start time.Time
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Lease is checked before every batch of deletes (nil: none, for
	// dry runs and tests).
	Lease Lease
	// DryRun plans and reports but writes and deletes nothing.
	DryRun bool
	// Workers is the number of packs repacked at once (default 2).
	Workers int
	// Logf receives progress messages (nil: none).
	Logf func(format string, args ...any)
	// Progress, when set, counts the objects repacked and deleted.
	Progress *Progress
}

// Progress holds live counters of the repack and delete phases, updated
// atomically. Bytes count the packs repacked.
type Progress struct {
	Objects, ObjectsTotal atomic.Int64
	Bytes, BytesTotal     atomic.Int64
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Result reports what prune did (or, on a dry run, would do).
type Result struct {
	DryRun            bool  `json:"dry_run"`
	Snapshots         int   `json:"snapshots"`
	BlobsUsed         int   `json:"blobs_used"`
	PacksScanned      int   `json:"packs_scanned"`
	IndexFilesScanned int   `json:"index_files_scanned"`
	PacksDeleted      int   `json:"packs_deleted"`  // unused or unindexed packs
	PacksRepacked     int   `json:"packs_repacked"` // deleted after copying their used blobs
	PacksWritten      int   `json:"packs_written"`
	PacksProtected    int   `json:"packs_protected"` // too new to touch
	StalePacks        int   `json:"stale_index_packs"`
	IndexFilesWritten int   `json:"index_files_written"`
	IndexFilesDeleted int   `json:"index_files_deleted"`
	BytesDeleted      int64 `json:"bytes_deleted"`
	BytesWritten      int64 `json:"bytes_written"`
	// BytesReclaimed is BytesDeleted - BytesWritten (on a dry run, an
	// estimate from the blob sizes to be copied).
	BytesReclaimed int64 `json:"bytes_reclaimed"`
	// TempFilesRemoved counts temp files of crashed writers removed.
	TempFilesRemoved int `json:"temp_files_removed"`
	// WouldDelete lists the keys a dry run would delete.
	WouldDelete []string `json:"would_delete,omitempty"`
}

// Run prunes r. r's in-memory index must not be loaded (prune reads the
// index files itself; the saver used for repacking must not mistake old
// copies for new ones).
func Run(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if r.Index().Len() != 0 {
		return nil, errIndexLoaded
	}
	start := opts.Start
	if start.IsZero() {
		start = opts.Clock.Now()
	}
	p, err := buildPlan(ctx, r, opts, start)
	if err != nil {
		return nil, err
	}
	res := p.summarize(opts.DryRun)
	if opts.DryRun {
		return res, nil
	}
	if p.needsWork() {
		if err := p.execute(ctx, r, opts, res); err != nil {
			return res, err
		}
		res.BytesReclaimed = res.BytesDeleted - res.BytesWritten
	} else {
		opts.logf("nothing to prune")
	}
	return res, cleanTemp(ctx, r, opts, start, res)
}

// staleTempAge: temp files older than this (by the store's clock, before
// prune began) are leftovers of writers that crashed between writing and
// renaming; no write takes a day.
const staleTempAge = 24 * time.Hour

// cleanTemp removes stale temp files on stores that leave them behind.
func cleanTemp(ctx context.Context, r *repo.Repository, opts Options, start time.Time, res *Result) error {
	tc, ok := r.Store().(store.TempCleaner)
	if !ok {
		return nil
	}
	if opts.Lease != nil {
		if err := opts.Lease.Check(ctx); err != nil {
			return fmt.Errorf("before removing stale temp files: %w", err)
		}
	}
	n, err := tc.RemoveStaleTemp(ctx, start.Add(-staleTempAge))
	res.TempFilesRemoved = n
	if n > 0 {
		opts.logf("removed %d stale temp files", n)
	}
	if err != nil {
		return fmt.Errorf("removing stale temp files: %w", err)
	}
	return nil
}
