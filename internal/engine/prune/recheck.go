package prune

import (
	"context"
	"fmt"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// checkUnchanged stops the run before any delete when a snapshot or an
// index file appeared since the mark phase: another process wrote to the
// repository despite the lock (a backup whose lock was broken, say), and
// its new snapshot's blobs were not marked, or its index file names packs
// this run may think unused. written is what this run stored; an index
// file the repacking saver wrote is recognised by naming only packs of
// written.
func (p *plan) checkUnchanged(ctx context.Context, w *repo.ExclusiveWriter, written stored) error {
	if err := w.Lease().Check(ctx); err != nil {
		return err
	}
	ids, _, err := w.ListIDs(ctx, repo.SnapshotPrefix)
	if err != nil {
		return fmt.Errorf("listing snapshots: %w", err)
	}
	for _, s := range ids {
		if !p.snapshots[s] {
			return fmt.Errorf("%w: snapshot %s is new", ErrConcurrentChange, s.Short())
		}
	}
	seen := make(map[id.ID]bool, len(p.indexFiles))
	for _, f := range p.indexFiles {
		seen[f.ID] = true
	}
	files, _, err := w.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		return fmt.Errorf("listing index files: %w", err)
	}
	for _, fid := range files {
		if seen[fid] || written.indexFiles[fid] {
			continue
		}
		f, err := w.IndexFile(ctx, fid)
		if err != nil {
			return fmt.Errorf("reading new index file %s: %w", fid.Short(), err)
		}
		for _, pk := range f.Packs {
			if !written.packs[pk.ID] {
				return fmt.Errorf("%w: index file %s is new", ErrConcurrentChange, fid.Short())
			}
		}
	}
	return nil
}

// DefaultDeleteBatch is how many objects prune deletes after one check of
// its lease, deleteParallel at once. After a break-lock by hand, at most
// the rest of the batch goes through (and the run then fails with the
// lost lease); after the lease's safe end, nothing (the fence).
const DefaultDeleteBatch = 64

// deleteParallel is how many deletes of a batch are in flight at once.
const deleteParallel = 8

// deleteAll deletes objs through the writer in batches, the lease checked
// before each: a run that lost its lease deletes nothing more, since a
// backup may hold the repository by then.
func deleteAll(ctx context.Context, w *repo.ExclusiveWriter, opts Options, what string, objs []repo.ObjectEntry) error {
	var mu sync.Mutex // done runs on several goroutines; logf is not theirs
	deleted := 0
	done := func(repo.ObjectEntry) {
		if pr := opts.Progress; pr != nil {
			pr.Objects.Add(1)
		}
		mu.Lock()
		defer mu.Unlock()
		if deleted++; deleted%logEvery == 0 || deleted == len(objs) {
			opts.logf("deleted %d/%d %s", deleted, len(objs), what)
		}
	}
	for start := 0; start < len(objs); start += opts.DeleteBatch {
		batch := objs[start:min(start+opts.DeleteBatch, len(objs))]
		if err := w.DeleteUnusedBatch(ctx, batch, deleteParallel, done); err != nil {
			return err
		}
	}
	if len(objs) == 0 {
		return nil
	}
	// The last batch ran after the last check: a lock broken meanwhile
	// is reported, as it would have been before the next batch.
	if err := w.Lease().Check(ctx); err != nil {
		return fmt.Errorf("after deleting %s: %w", what, err)
	}
	return nil
}
