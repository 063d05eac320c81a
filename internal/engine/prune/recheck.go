package prune

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

// checkUnchanged stops the run before any delete when a snapshot or an
// index file appeared since the mark phase: another process wrote to the
// repository despite the lock (a backup whose lock was broken, say), and
// its new snapshot's blobs were not marked, or its index file names packs
// this run may think unused. written holds the keys this run stored; an
// index file the repacking saver wrote is recognised by naming only packs
// of written.
func (p *plan) checkUnchanged(ctx context.Context, r *repo.Repository, opts Options, written map[string]bool) error {
	if opts.Lease != nil {
		if err := opts.Lease.Check(ctx); err != nil {
			return err
		}
	}
	ids, _, err := r.ListIDs(ctx, repo.SnapshotPrefix)
	if err != nil {
		return fmt.Errorf("listing snapshots: %w", err)
	}
	for _, s := range ids {
		if !p.snapshots[s] {
			return fmt.Errorf("%w: snapshot %s is new", ErrConcurrentChange, s.Short())
		}
	}
	seen := make(map[string]bool, len(p.indexFiles))
	for _, f := range p.indexFiles {
		seen[f.Key] = true
	}
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		return fmt.Errorf("listing index files: %w", err)
	}
	for _, fid := range files {
		key := repo.IndexKey(fid)
		if seen[key] || written[key] {
			continue
		}
		f, err := r.IndexFile(ctx, fid)
		if err != nil {
			return fmt.Errorf("reading new index file %s: %w", fid.Short(), err)
		}
		for _, pk := range f.Packs {
			if !written[repo.PackKey(pk.ID)] {
				return fmt.Errorf("%w: index file %s is new", ErrConcurrentChange, fid.Short())
			}
		}
	}
	return nil
}

// deleteAll deletes keys, checking the lease before each delete: a run
// that lost its lease deletes nothing more, since a backup may hold the
// repository by then.
func deleteAll(ctx context.Context, st store.Store, opts Options, what string, keys []string) error {
	for i, k := range keys {
		if opts.Lease != nil {
			if err := opts.Lease.Check(ctx); err != nil {
				return fmt.Errorf("before deleting %s: %w", what, err)
			}
		}
		if err := st.Delete(ctx, k); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("deleting %s: %w", k, err)
		}
		if pr := opts.Progress; pr != nil {
			pr.Objects.Add(1)
		}
		if n := i + 1; n%logEvery == 0 || n == len(keys) {
			opts.logf("deleted %d/%d %s", n, len(keys), what)
		}
	}
	return nil
}
