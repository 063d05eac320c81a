package prune

import (
	"context"
	"fmt"

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

// deleteAll deletes objs through the writer, which checks the lease
// before each delete: a run that lost its lease deletes nothing more,
// since a backup may hold the repository by then.
func deleteAll(ctx context.Context, w *repo.ExclusiveWriter, opts Options, what string, objs []repo.ObjectEntry) error {
	for i, obj := range objs {
		if err := w.DeleteUnused(ctx, obj); err != nil {
			return err
		}
		if pr := opts.Progress; pr != nil {
			pr.Objects.Add(1)
		}
		if n := i + 1; n%logEvery == 0 || n == len(objs) {
			opts.logf("deleted %d/%d %s", n, len(objs), what)
		}
	}
	return nil
}
