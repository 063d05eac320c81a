package operation

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/store"
)

// The operations that write with no lock, all in this file: the seed's
// lock table (docs/lock.md, whose first paragraph and the README's command
// table list every command's lock; repository-locking.md of the seed)
// gives these commands none, and repo's unlocked.go says why each is safe:
//
//	init              Init: creates the repository (its config last, only where none exists)
//	key add           KeyAdd, KeyAddKMS: a new, uniquely named key slot
//	forget            Forget: deletes snapshot objects (its prune step takes the exclusive lock)
//	repair snapshots  RepairSnapshots: deletes damaged snapshot objects, as forget
//
// Every other write of the engine needs a repo.Writer, which only a lease
// gives (lock.go). This file is the only caller of repo's WithoutLock and
// repo.Init outside tests: forbidigo in .golangci.yml refuses them
// elsewhere, so a new unlocked write is a deliberate edit here.

// Init creates a repository in the empty store st (repo.Init), and
// returns it and the recovery phrase when opts.AddRecoveryKey is set.
func Init(ctx context.Context, st store.Store, opts repo.InitOptions) (*repo.Repository, string, error) {
	return repo.Init(ctx, st, opts)
}

// KeyAdd stores a new key slot of kind (crypt.SlotPassword, SlotPlatform
// or SlotRecovery) wrapping the master secret with secret. Labels are
// unique; an empty label becomes "<kind> N".
func KeyAdd(ctx context.Context, kr *Keyring, kind, label string, secret []byte) (repo.KeySlot, error) {
	return kr.kr.WithoutLock().Add(ctx, kind, label, secret)
}

// KeyAddKMS stores a new kms-platform slot: the master secret encrypted by
// c's key for this repository (checked to decrypt back first).
func KeyAddKMS(ctx context.Context, kr *Keyring, c *kms.Client, label string) (repo.KeySlot, error) {
	return kr.kr.WithoutLock().AddKMS(ctx, c, label)
}

// Forget removes snapshots (no lock: deleting a snapshot object is its
// only write, seed rule), then, when pruneOpts is set and forget succeeded,
// prunes under the exclusive lock (a dry run forgets and prunes nothing).
// beginPrune, when set, is called with the prune options right before the
// prune step, and the function it returns right after it. The forget
// result is nil only when forget could not decide at all; a failed prune
// step wraps ErrPruneAfterForget.
func Forget(ctx context.Context, r *Repo, opts forget.Options, pruneOpts *prune.Options,
	beginPrune func(*prune.Options) (end func())) (*forget.Result, *prune.Result, error) {
	var res *forget.Result
	var err error
	if opts.DryRun {
		res, err = forget.DryRun(ctx, r.r, opts)
	} else {
		res, err = forget.Run(ctx, r.r.WithoutLock(), opts)
	}
	if err != nil || pruneOpts == nil {
		return res, nil, err
	}
	po := *pruneOpts
	po.DryRun = opts.DryRun
	if beginPrune != nil {
		defer beginPrune(&po)()
	}
	pres, err := Prune(ctx, r, po)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrPruneAfterForget, err)
	}
	return res, pres, err
}

// ErrPruneAfterForget marks a Forget whose snapshots were removed (its
// result says which) but whose prune step failed: the repository is
// changed, its space not yet reclaimed.
var ErrPruneAfterForget = errors.New("prune after forget failed")

// RepairSnapshots removes the snapshots that fail their hash check,
// authentication or decoding (repair.Snapshots), each on a second proof.
// It takes no lock, as forget, whose only write is the same: a snapshot is
// stored whole and atomically, so a damaged one is never a backup in
// progress.
func RepairSnapshots(ctx context.Context, r *Repo, opts repair.SnapshotsOptions) (*repair.SnapshotsResult, error) {
	if opts.DryRun {
		return repair.SnapshotsDryRun(ctx, r.r, opts)
	}
	return repair.Snapshots(ctx, r.r.WithoutLock(), opts)
}
