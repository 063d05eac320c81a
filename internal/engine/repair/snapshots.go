package repair

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// ErrNoProof means nothing in the repository authenticates under the key it
// was opened with, so every object looks damaged: a wrong key or a tampered
// config, not damage. The repairs then change nothing.
var ErrNoProof = errors.New("nothing in the repository authenticates under this key (a wrong key or a tampered config, not damage): nothing was changed")

// SnapshotsOptions configure Snapshots.
type SnapshotsOptions struct {
	// DryRun finds the damaged snapshots but deletes none.
	DryRun bool
	// Logf receives progress messages (nil: none).
	Logf func(format string, args ...any)
}

func (o SnapshotsOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// DamagedSnapshot is a snapshot Snapshots found damaged twice.
type DamagedSnapshot struct {
	repo.Damaged
	// Removed says it was deleted (never on a dry run).
	Removed bool
}

// SnapshotsResult is what Snapshots found and did.
type SnapshotsResult struct {
	DryRun bool
	// Sound counts the snapshots that read back sound.
	Sound int
	// Damaged lists the damaged snapshots, by key.
	Damaged []DamagedSnapshot
}

// Snapshots finds the snapshots that fail their hash check, authentication
// or decoding and deletes them, each only after a second read straight
// from the store proves the damage again; a snapshot that reads back sound
// the second time is kept. It needs no lock (see the package
// documentation): u is the repository's write that needs none. A failure
// to read a snapshot that is not damage stops the run: the result then
// holds what was removed so far. With opts.DryRun, Snapshots is
// SnapshotsDryRun.
func Snapshots(ctx context.Context, u *repo.Unlocked, opts SnapshotsOptions) (*SnapshotsResult, error) {
	if opts.DryRun {
		return SnapshotsDryRun(ctx, u.Repository, opts)
	}
	return snapshots(ctx, u.Repository, u, opts)
}

// SnapshotsDryRun finds what Snapshots would remove and deletes nothing
// (opts.DryRun is implied).
func SnapshotsDryRun(ctx context.Context, r *repo.Repository, opts SnapshotsOptions) (*SnapshotsResult, error) {
	opts.DryRun = true
	return snapshots(ctx, r, nil, opts)
}

// snapshots is Snapshots reading r, deleting through u (nil on a dry run).
func snapshots(ctx context.Context, r *repo.Repository, u *repo.Unlocked, opts SnapshotsOptions) (*SnapshotsResult, error) {
	good, damaged, err := r.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	res := &SnapshotsResult{DryRun: opts.DryRun, Sound: len(good)}
	if len(damaged) == 0 {
		return res, nil
	}
	if len(good) == 0 {
		if err := proveKey(ctx, r); err != nil {
			return res, err
		}
	}
	for _, d := range damaged {
		sid, err := repo.IDFromKey(d.Key)
		if err != nil {
			return res, err // the loader named it by its id
		}
		err = r.RereadSnapshot(ctx, sid)
		switch {
		case err == nil:
			opts.logf("%s read back sound the second time: kept", d.Key)
			res.Sound++
			continue
		case errors.Is(err, repo.ErrNotFound):
			continue // removed meanwhile
		case !repo.IsDamage(err):
			return res, fmt.Errorf("reading %s again before removing it failed (it is kept; run repair again): %w", d.Key, err)
		}
		ds := DamagedSnapshot{Damaged: repo.Damaged{Key: d.Key, Err: err}}
		if u != nil {
			if err := u.DeleteSnapshot(ctx, sid); err != nil && !errors.Is(err, repo.ErrNotFound) {
				return res, err
			}
			ds.Removed = true
		}
		res.Damaged = append(res.Damaged, ds)
	}
	return res, nil
}

// proveKey returns nil when some index file or pack header authenticates
// under r's key, ErrNoProof when none does.
func proveKey(ctx context.Context, r *repo.Repository) error {
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		return fmt.Errorf("listing index files: %w", err)
	}
	for _, fid := range files {
		_, err := r.IndexFile(ctx, fid)
		if err == nil {
			return nil
		}
		if !repo.IsDamage(err) && !errors.Is(err, repo.ErrNotFound) {
			return err
		}
	}
	packs, _, err := r.ListObjects(ctx, repo.DataPrefix)
	if err != nil {
		return fmt.Errorf("listing packs: %w", err)
	}
	for _, p := range packs {
		_, err := r.ReadPackHeader(ctx, p.ID, p.Size, 0)
		if err == nil {
			return nil
		}
		if !repo.IsDamage(err) && !errors.Is(err, repo.ErrNotFound) {
			return err
		}
	}
	return ErrNoProof
}
