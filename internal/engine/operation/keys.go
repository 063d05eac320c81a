package operation

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// KeyPasswd replaces the keyring's current slot with a password slot for
// newPassword (label names it; empty: "password N") under the exclusive
// lock: it removes the old slot.
func KeyPasswd(ctx context.Context, kr *Keyring, newPassword, label string) (repo.KeySlot, error) {
	var s repo.KeySlot
	err := withLock(ctx, kr.env, kr.st, exclusive, "key passwd", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		s, err = kr.ChangePassword(ctx, lease, newPassword, label)
		return err
	})
	return s, err
}

// KeyRemove removes the key slot ref names (a label, an id or an id
// prefix) under the exclusive lock: two removals at once could each see the
// other's slot and together delete the last key, and with it the
// repository. It returns the slot removed.
func KeyRemove(ctx context.Context, kr *Keyring, ref string) (repo.KeySlot, error) {
	var s repo.KeySlot
	err := withLock(ctx, kr.env, kr.st, exclusive, "key remove", func(ctx context.Context, lease *lock.Lock) error {
		var err error
		if s, err = kr.Find(ctx, ref); err != nil {
			return err
		}
		return kr.Remove(ctx, lease, s.ID)
	})
	return s, err
}

// BindConfig adds the MAC to r's config when it was written before configs
// had one (repo.Repository.BindConfig), under the exclusive lock and its
// fence: the config is a mutable key. repo.ErrNothingToBind when there is
// nothing to add.
func BindConfig(ctx context.Context, r *Repo) error {
	if !r.Config().Encrypted || r.ConfigAuthenticated() {
		return repo.ErrNothingToBind
	}
	return withLock(ctx, r.env, r.st, exclusive, "repair config", func(ctx context.Context, lease *lock.Lock) error {
		return r.BindConfig(ctx, lease)
	})
}
