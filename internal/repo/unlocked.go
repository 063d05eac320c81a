package repo

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
)

// Writes with no lock. The seed's lock table (docs/lock.md;
// repository-locking.md of the seed) has a few commands write while they
// hold no lock, and each is safe without one:
//
//   - forget and repair snapshots delete snapshot objects: a snapshot is
//     written whole and atomically after the data it names, so deleting
//     one takes nothing from a backup in progress, and the data it leaves
//     unreferenced is deleted only by a prune, under the exclusive lock;
//   - key add writes a new, uniquely named key slot (removing one takes the
//     exclusive lock: see KeyringWriter);
//   - init (Init) creates the repository, writing its config last and only
//     where none exists: there is no repository to lock before it.
//
// WithoutLock is the one way to these writes besides Init, deliberately
// named; internal/engine/operation's unlocked.go is its only caller
// outside tests (forbidigo in .golangci.yml).

// Unlocked is the write a repository allows with no lock held: deleting
// snapshot objects. The embedded Repository is for the reads of the same
// work.
type Unlocked struct {
	*Repository
}

// WithoutLock returns r's writes that need no lock (see above).
func (r *Repository) WithoutLock() *Unlocked { return &Unlocked{Repository: r} }

// DeleteSnapshot removes one snapshot object (the only write of forget
// and repair snapshots).
func (u *Unlocked) DeleteSnapshot(ctx context.Context, sid id.ID) error {
	return u.deleteSnapshot(ctx, sid)
}

// UnlockedKeyring is the write a keyring allows with no lock held: adding
// a key slot.
type UnlockedKeyring struct {
	k *Keyring
}

// WithoutLock returns k's writes that need no lock (see above).
func (k *Keyring) WithoutLock() *UnlockedKeyring { return &UnlockedKeyring{k: k} }

// Add stores a new slot of the given kind (crypt.SlotPassword,
// SlotPlatform or SlotRecovery) wrapping the master secret with secret.
// Labels are unique; an empty label becomes "<kind> N".
func (u *UnlockedKeyring) Add(ctx context.Context, kind, label string, secret []byte) (KeySlot, error) {
	return u.k.addSlot(ctx, kind, label, secret)
}

// AddKMS stores a new kms-platform slot: the master secret encrypted by
// c's key for this repository (checked to decrypt back first).
func (u *UnlockedKeyring) AddKMS(ctx context.Context, c *kms.Client, label string) (KeySlot, error) {
	return u.k.addKMS(ctx, c, label)
}
