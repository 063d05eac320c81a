package operation

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/rewrite"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"golang.org/x/sync/errgroup"
)

// Backup stores one snapshot of opts.Path in r under a shared lock (none
// on a dry run): it loads the index and the snapshots' heads (see
// repo.SnapshotHeads), then runs backup.Run (backup.DryRun).
// begin, when set, is called with the options right before the engine
// runs, and the function it returns right after (progress rendering).
// The result is nil when no backup ran.
func Backup(ctx context.Context, r *Repo, opts backup.Options, begin func(*backup.Options) (end func())) (*BackupResult, error) {
	// Bad patterns fail before the lock is taken and the index loaded
	// (backup.Run checks them too, with the rest of its exclude rules).
	if _, err := exclude.NewMatcher(opts.Excludes); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = r.env.clock
	}
	var res *backup.Result
	heads := -1
	start := opts.Clock.Now()
	var lockWait time.Duration
	// run reads through rr and writes through w (nil on a dry run).
	run := func(ctx context.Context, rr *repo.Repository, w *repo.Writer) error {
		// run starts as soon as the lock is held: the time until then
		// is the wait for it.
		lockWait = opts.Clock.Now().Sub(start)
		// A damaged index file is skipped (Options.OnDamage reports it):
		// the blobs only it names are stored again, which is safe, and
		// nothing a backup writes makes prune delete them (prune refuses
		// while the file is damaged). A damaged snapshot is no parent.
		// The two are listed at once: on a remote store each listing is
		// a round trip the backup waits for.
		var hs []snapshot.Head
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error {
			_, err := rr.LoadIndex(gctx)
			return err
		})
		g.Go(func() (err error) {
			hs, _, err = rr.SnapshotHeads(gctx)
			return err
		})
		if err := g.Wait(); err != nil {
			return err
		}
		heads = len(hs)
		if begin != nil {
			defer begin(&opts)()
		}
		var err error
		if w == nil {
			res, err = backup.DryRun(ctx, rr, hs, opts)
		} else {
			res, err = backup.Run(ctx, w, hs, opts)
		}
		return err
	}
	var err error
	if opts.DryRun {
		err = run(ctx, r.r, nil)
	} else {
		err = withWriter(ctx, r, opBackup, func(ctx context.Context, w *repo.Writer) error {
			return run(ctx, w.Repository, w)
		})
	}
	if res == nil {
		return nil, err
	}
	out := &BackupResult{Result: res, LockWait: lockWait, Snapshots: heads}
	if heads >= 0 && !res.ID.IsZero() {
		out.Snapshots++
	}
	return out, err
}

// BackupResult is a backup's result with what the run around the engine
// measured.
type BackupResult struct {
	*backup.Result
	// LockWait is how long the backup waited for its lock (-lock-wait).
	LockWait time.Duration
	// Snapshots is how many readable snapshots the repository holds
	// after the backup (the one it wrote included); -1 when unknown.
	Snapshots int
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
	// Bad options fail before the lock is taken and the index loaded.
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var out *RestoreResult
	err := withLock(ctx, r.env, r.st, shared, opRestore, func(ctx context.Context, lease *lock.Lock) error {
		rr, err := r.r.Under(lease)
		if err != nil {
			return err
		}
		snaps, err := IndexedSnapshots(ctx, rr)
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
		res, err := restore.Run(ctx, r.r, lease, snap.Tree, opts)
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
		return prune.DryRun(ctx, r.r, opts)
	}
	var res *prune.Result
	err := withExclusiveWriter(ctx, r, "prune", func(ctx context.Context, w *repo.ExclusiveWriter) error {
		var err error
		res, err = prune.Run(ctx, w, opts)
		return err
	})
	return res, err
}

// Tag changes the tags of the snapshots opts selects under a shared lock
// (none on a dry run): it only adds immutable, uniquely named snapshot
// objects and deletes those they replace, and the lock keeps prune out
// meanwhile. The result is nil only when tag could not decide at all.
func Tag(ctx context.Context, r *Repo, opts tag.Options) (*tag.Result, error) {
	if opts.DryRun {
		return tag.DryRun(ctx, r.r, opts)
	}
	var res *tag.Result
	err := withWriter(ctx, r, "tag", func(ctx context.Context, w *repo.Writer) error {
		var err error
		res, err = tag.Run(ctx, w, opts)
		return err
	})
	return res, err
}

// IndexedSnapshots loads r's index and lists its snapshots, oldest first:
// what every reader of snapshot contents needs first. Damaged index files
// and snapshots are skipped (Options.OnDamage reports them): what they
// alone name is missing to the caller.
func (r *Repo) IndexedSnapshots(ctx context.Context) ([]snapshot.WithID, error) {
	return IndexedSnapshots(ctx, r.r)
}

// IndexedSnapshots is Repo.IndexedSnapshots for the repository a lock's
// callback was given. The snapshots are listed before the index files, one
// after the other: a backup writes its index files before its snapshot, so
// every snapshot listed has its index files in the listing that follows,
// while in the other order (or both at once) a backup ending between the
// two would be listed without them (TestReaderBesideBackup).
func IndexedSnapshots(ctx context.Context, r *repo.Repository) ([]snapshot.WithID, error) {
	snaps, _, err := r.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.LoadIndex(ctx); err != nil {
		return nil, err
	}
	return snaps, nil
}

// Copy copies the snapshots opts selects from src into dst, holding a
// shared lock on both (none on a dry run): the copy reads the source's
// data, which a prune there must not delete, and adds only immutable,
// uniquely named objects to the destination, whose blobs it reuses and a
// prune there must not delete either. The source is locked first. The
// result is nil only when copy could not decide at all.
func Copy(ctx context.Context, src, dst *Repo, opts snapcopy.Options) (*snapcopy.Result, error) {
	load := func(ctx context.Context, s, d *repo.Repository) error {
		if _, err := s.LoadIndex(ctx); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if _, err := d.LoadIndex(ctx); err != nil {
			return fmt.Errorf("destination: %w", err)
		}
		return nil
	}
	if opts.DryRun {
		if err := load(ctx, src.r, dst.r); err != nil {
			return nil, err
		}
		return snapcopy.DryRun(ctx, src.r, dst.r, opts)
	}
	var res *snapcopy.Result
	err := withLock(ctx, src.env, src.st, shared, "copy (source)", func(ctx context.Context, srcLease *lock.Lock) error {
		s, err := src.r.Under(srcLease)
		if err != nil {
			return err
		}
		return withWriter(ctx, dst, "copy", func(ctx context.Context, w *repo.Writer) error {
			if err := load(ctx, s, w.Repository); err != nil {
				return err
			}
			var err error
			res, err = snapcopy.Run(ctx, src.r, srcLease, w, opts)
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
	if opts.DryRun {
		if _, err := r.r.LoadIndex(ctx); err != nil {
			return nil, err
		}
		return rewrite.DryRun(ctx, r.r, opts)
	}
	var res *rewrite.Result
	err := withWriter(ctx, r, "rewrite", func(ctx context.Context, w *repo.Writer) error {
		if _, err := w.LoadIndex(ctx); err != nil {
			return err
		}
		var err error
		res, err = rewrite.Run(ctx, w, opts)
		return err
	})
	return res, err
}
