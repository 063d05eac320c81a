package operation

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/rewrite"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Backup stores one snapshot of opts.Path in r under a shared lock (none
// on a dry run): it loads the index and the snapshots' heads (see
// repo.SnapshotHeads), then runs backup.Run.
// begin, when set, is called with the options right before the engine
// runs, and the function it returns right after (progress rendering).
func Backup(ctx context.Context, r *Repo, opts backup.Options, begin func(*backup.Options) (end func())) (*backup.Result, error) {
	// Bad patterns fail before the lock is taken and the index loaded
	// (backup.Run checks them too, with the rest of its exclude rules).
	if _, err := exclude.NewMatcher(opts.Excludes); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = r.env.clock
	}
	var res *backup.Result
	run := func(ctx context.Context, lease *lock.Lock) error {
		// A damaged index file is skipped (Options.OnDamage reports it):
		// the blobs only it names are stored again, which is safe, and
		// nothing a backup writes makes prune delete them (prune refuses
		// while the file is damaged). A damaged snapshot is no parent.
		if _, err := r.LoadIndex(ctx); err != nil {
			return err
		}
		heads, _, err := r.SnapshotHeads(ctx)
		if err != nil {
			return err
		}
		if begin != nil {
			defer begin(&opts)()
		}
		res, err = backup.Run(ctx, r.Repository, lease, heads, opts)
		return err
	}
	if opts.DryRun {
		return res, run(ctx, nil)
	}
	err := WithSharedLock(ctx, r, "backup", run)
	return res, err
}

// RestoreResult is what Restore restored, and from which snapshot.
type RestoreResult struct {
	Snapshot snapshot.WithID
	*restore.Result
}

// Restore restores the snapshot ref names ("latest", an id or a prefix)
// under a shared lock, also on a dry run. begin, when set, is called with
// the snapshot and the options right before the engine runs, and the
// function it returns right after. The result is nil when nothing was
// restored; with restore.ErrDamaged it lists what could not be.
func Restore(ctx context.Context, r *Repo, ref string, opts restore.Options,
	begin func(snapshot.WithID, *restore.Options) (end func())) (*RestoreResult, error) {
	var out *RestoreResult
	err := WithSharedLock(ctx, r, "restore", func(ctx context.Context, lease *lock.Lock) error {
		snaps, err := indexedSnapshots(ctx, r)
		if err != nil {
			return err
		}
		snap, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return err
		}
		opts.RootMeta = snap.Root
		if begin != nil {
			defer begin(snap, &opts)()
		}
		res, err := restore.Run(ctx, r.Repository, lease, snap.Tree, opts)
		if res != nil {
			out = &RestoreResult{Snapshot: snap, Result: res}
		}
		if treewalk.IsBounds(err) {
			err = fmt.Errorf("snapshot %s: %w", snap.ID.Short(), err)
		}
		return err
	})
	return out, err
}

// Prune reclaims the space no snapshot uses, under the exclusive lock (none
// on a dry run). r's index must not be loaded.
func Prune(ctx context.Context, r *Repo, opts prune.Options) (*prune.Result, error) {
	if opts.Clock == nil {
		opts.Clock = r.env.clock
	}
	if opts.DryRun {
		return prune.Run(ctx, r.Repository, nil, opts)
	}
	var res *prune.Result
	err := withLock(ctx, r.env, r.st, exclusive, "prune", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		res, err = prune.Run(ctx, r.Repository, lease, opts)
		return err
	})
	return res, err
}

// Forget removes snapshots (no lock: deleting a snapshot object is its
// only write, seed rule), then, when pruneOpts is set and forget succeeded,
// prunes under the exclusive lock (a dry run forgets and prunes nothing).
// beginPrune, when set, is called with the prune options right before the
// prune step, and the function it returns right after it. The forget
// result is nil only when forget could not decide at all.
func Forget(ctx context.Context, r *Repo, opts forget.Options, pruneOpts *prune.Options,
	beginPrune func(*prune.Options) (end func())) (*forget.Result, *prune.Result, error) {
	res, err := forget.Run(ctx, r.Repository, opts)
	if err != nil || pruneOpts == nil {
		return res, nil, err
	}
	po := *pruneOpts
	po.DryRun = opts.DryRun
	if beginPrune != nil {
		defer beginPrune(&po)()
	}
	pres, err := Prune(ctx, r, po)
	return res, pres, err
}

// Tag changes the tags of the snapshots opts selects under a shared lock
// (none on a dry run): it only adds immutable, uniquely named snapshot
// objects and deletes those they replace, and the lock keeps prune out
// meanwhile. The result is nil only when tag could not decide at all.
func Tag(ctx context.Context, r *Repo, opts tag.Options) (*tag.Result, error) {
	if opts.DryRun {
		return tag.Run(ctx, r.Repository, nil, opts)
	}
	var res *tag.Result
	err := WithSharedLock(ctx, r, "tag", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		res, err = tag.Run(ctx, r.Repository, lease, opts)
		return err
	})
	return res, err
}

// indexedSnapshots loads r's index and lists its snapshots, oldest first.
// Damaged index files and snapshots are skipped (Options.OnDamage reports
// them): what they alone name is missing to the caller.
func indexedSnapshots(ctx context.Context, r *Repo) ([]snapshot.WithID, error) {
	if _, err := r.LoadIndex(ctx); err != nil {
		return nil, err
	}
	snaps, _, err := r.Snapshots(ctx)
	return snaps, err
}

// Copy copies the snapshots opts selects from src into dst, holding a
// shared lock on both (none on a dry run): the copy reads the source's
// data, which a prune there must not delete, and adds only immutable,
// uniquely named objects to the destination, whose blobs it reuses and a
// prune there must not delete either. The source is locked first. The
// result is nil only when copy could not decide at all.
func Copy(ctx context.Context, src, dst *Repo, opts snapcopy.Options) (*snapcopy.Result, error) {
	run := func(ctx context.Context, srcLease, dstLease *lock.Lock) (*snapcopy.Result, error) {
		if _, err := src.LoadIndex(ctx); err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		if _, err := dst.LoadIndex(ctx); err != nil {
			return nil, fmt.Errorf("destination: %w", err)
		}
		return snapcopy.Run(ctx, src.Repository, dst.Repository, srcLease, dstLease, opts)
	}
	if opts.DryRun {
		return run(ctx, nil, nil)
	}
	var res *snapcopy.Result
	err := WithSharedLock(ctx, src, "copy (source)", func(ctx context.Context, srcLease *lock.Lock) error {
		return WithSharedLock(ctx, dst, "copy", func(ctx context.Context, dstLease *lock.Lock) error {
			var err error
			res, err = run(ctx, srcLease, dstLease)
			return err
		})
	})
	return res, err
}

// Rewrite removes the entries opts.Excludes match from the snapshots opts
// selects, under a shared lock (none on a dry run). Like tag it only adds
// immutable, uniquely named objects (tree packs, index files, the new
// snapshot) and deletes the snapshot objects they replace, which forget
// does without any lock; the shared lock keeps prune out while the new
// trees refer to data blobs a prune could otherwise delete. The exclusive
// lock restic's rewrite takes would add nothing here, and would stop
// every backup while it runs. The result is nil only when rewrite could not
// decide at all.
func Rewrite(ctx context.Context, r *Repo, opts rewrite.Options) (*rewrite.Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	run := func(ctx context.Context, lease *lock.Lock) (*rewrite.Result, error) {
		if _, err := r.LoadIndex(ctx); err != nil {
			return nil, err
		}
		return rewrite.Run(ctx, r.Repository, lease, opts)
	}
	if opts.DryRun {
		return run(ctx, nil)
	}
	var res *rewrite.Result
	err := WithSharedLock(ctx, r, "rewrite", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		res, err = run(ctx, lease)
		return err
	})
	return res, err
}
