package prune

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// Defaults the command line uses.
const (
	// DefaultMaxUnused: repack a pack when more than 30% of its blob bytes
	// are unused.
	DefaultMaxUnused = 0.30
	// DefaultMargin: never delete a pack that no index file names if the
	// store wrote it less than this long before prune began. It is derived
	// from the lock (see "Unindexed packs" in doc.go): one TTL (the lock's
	// staleness rule: the longest a holder's writes may follow its last
	// key write), plus the lease's SafetyMargin (requests sent before the
	// lease's safe end and landing late), plus MaxClockSkew (the error of
	// the store-time estimates prune's start is read from); 95 s with the
	// lock's defaults. Packs an index file names are judged by use alone,
	// whatever their age.
	DefaultMargin = lock.DefaultTTL + lock.DefaultSafetyMargin + lock.DefaultMaxClockSkew
	// logEvery is how many deletes go between two progress messages.
	logEvery = 100
)

// Options configure a prune run.
type Options struct {
	// MaxUnused is the unused share (0..1) above which a pack is repacked.
	MaxUnused float64
	// Margin: a pack no index file names is deleted only when the store
	// wrote it before the start of the run minus Margin (DefaultMargin
	// unless the user says otherwise). The start is the store's time as
	// our lock estimates it (never ahead of the store's clock); a dry run,
	// holding no lock, uses Clock.
	Margin time.Duration
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// DryRun plans and reports but writes and deletes nothing.
	DryRun bool
	// Workers is the number of packs repacked at once (default 2).
	Workers int
	// DeleteBatch is how many objects are deleted after one lease check
	// (default DefaultDeleteBatch; 1 checks before every delete), up to
	// 8 at once.
	DeleteBatch int
	// Logf receives progress messages (nil: none).
	Logf func(format string, args ...any)
	// Progress, when set, counts the objects repacked and deleted.
	Progress *Progress
	// mergeBatch is how many packs the merged index gives WriteIndex at
	// once (default mergedIndexBatch): tests make it small.
	mergeBatch int
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
	DryRun            bool `json:"dry_run"`
	Snapshots         int  `json:"snapshots"`
	BlobsUsed         int  `json:"blobs_used"`
	PacksScanned      int  `json:"packs_scanned"`
	IndexFilesScanned int  `json:"index_files_scanned"`
	PacksDeleted      int  `json:"packs_deleted"` // unused packs, unindexed ones included
	// UnindexedPacksDeleted counts the packs of PacksDeleted no index
	// file named (a crashed writer's leftovers older than the margin).
	UnindexedPacksDeleted int `json:"unindexed_packs_deleted"`
	PacksRepacked         int `json:"packs_repacked"` // deleted after copying their used blobs
	PacksWritten          int `json:"packs_written"`
	// StalePacks counts index entries of packs missing from the store,
	// dropped from the merged index.
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
	// Kept says what was left on the store on purpose, and why.
	Kept Kept `json:"kept"`
	// WouldDelete lists the keys a dry run would delete.
	WouldDelete []string `json:"would_delete,omitempty"`
}

// Kept is what prune leaves although no snapshot needs all of it.
type Kept struct {
	// UnindexedPacks are packs no index file names that the store wrote
	// less than Margin before prune began (or at a time it does not
	// report): a backup that lost its lock may still be writing them.
	UnindexedPacks int   `json:"unindexed_packs"`
	UnindexedBytes int64 `json:"unindexed_bytes"`
	// MarginSeconds is Options.Margin.
	MarginSeconds float64 `json:"margin_seconds"`
	// PartlyUsedPacks are packs holding unused blobs, but no more than
	// MaxUnused of their blob bytes: not worth rewriting. UnusedBytes is
	// the sum of those unused blob bytes.
	PartlyUsedPacks int   `json:"partly_used_packs"`
	UnusedBytes     int64 `json:"unused_bytes"`
	// MaxUnused is Options.MaxUnused (0..1).
	MaxUnused float64 `json:"max_unused"`
}

// Run prunes the repository w writes to, under w's lease, the exclusive
// lock. The lease is checked before every batch of deletes (see
// DefaultDeleteBatch) and after the last. The repository's
// in-memory index must not be loaded (prune reads the index files itself;
// the saver used for repacking must not mistake old copies for new ones).
// With opts.DryRun, Run is DryRun on w's view.
func Run(ctx context.Context, w *repo.ExclusiveWriter, opts Options) (*Result, error) {
	if w == nil {
		return nil, repo.ErrNoLease
	}
	if opts.DryRun {
		return DryRun(ctx, w.Repository, opts)
	}
	return run(ctx, w.Repository, w, opts)
}

// DryRun says what Run would delete and reclaim, reading r with no lock
// and changing nothing (opts.DryRun is implied).
func DryRun(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	opts.DryRun = true
	return run(ctx, r, nil, opts)
}

// run is Run reading r, writing through w (nil on a dry run).
func run(ctx context.Context, r *repo.Repository, w *repo.ExclusiveWriter, opts Options) (*Result, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.DeleteBatch <= 0 {
		opts.DeleteBatch = DefaultDeleteBatch
	}
	if opts.mergeBatch <= 0 {
		opts.mergeBatch = mergedIndexBatch
	}
	if r.Index().Len() != 0 {
		return nil, errIndexLoaded
	}
	start := markStart(w, opts.Clock)
	p, err := buildPlan(ctx, r, opts, start)
	if err != nil {
		return nil, err
	}
	defer p.close()
	res := p.summarize(opts)
	if w == nil {
		return res, nil
	}
	if p.needsWork() {
		if err := p.execute(ctx, w, opts, res); err != nil {
			return res, err
		}
		res.BytesReclaimed = res.BytesDeleted - res.BytesWritten
	} else {
		opts.logf("nothing to prune")
	}
	return res, cleanTemp(ctx, w, opts, start, res)
}

// markStart is the time the mark phase begins, by the store's clock (the
// clock object ages are compared with): a lower bound the lock keeps from
// its own writes. A dry run, which holds no lock, uses Clock.
func markStart(w *repo.ExclusiveWriter, clk clock.Clock) time.Time {
	if w == nil {
		return clk.Now()
	}
	return w.Lease().StoreNow()
}

// staleTempAge: temp files older than this (by the store's clock, before
// prune began) are leftovers of writers that crashed between writing and
// renaming; no write takes a day.
const staleTempAge = 24 * time.Hour

// cleanTemp removes stale temp files on stores that leave them behind.
func cleanTemp(ctx context.Context, w *repo.ExclusiveWriter, opts Options, start time.Time, res *Result) error {
	n, err := w.RemoveStaleTemp(ctx, start.Add(-staleTempAge))
	res.TempFilesRemoved = n
	if n > 0 {
		opts.logf("removed %d stale temp files", n)
	}
	return err
}
