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
	err := withKeyringWriter(ctx, kr, "key passwd", func(ctx context.Context, w *repo.KeyringWriter) error {
		var err error
		s, err = w.ChangePassword(ctx, newPassword, label)
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
	err := withKeyringWriter(ctx, kr, "key remove", func(ctx context.Context, w *repo.KeyringWriter) error {
		var err error
		if s, err = w.Find(ctx, ref); err != nil {
			return err
		}
		return w.Remove(ctx, s.ID)
	})
	return s, err
}

// withKeyringWriter runs fn holding the exclusive lock on kr's store,
// named op, with a writer of the keyring under its lease.
func withKeyringWriter(ctx context.Context, kr *Keyring, op string, fn func(ctx context.Context, w *repo.KeyringWriter) error) error {
	return withLock(ctx, kr.env, kr.st, exclusive, op, func(ctx context.Context, lease *lock.Lock) error {
		w, err := kr.kr.ExclusiveWriter(lease)
		if err != nil {
			return err
		}
		return fn(ctx, w)
	})
}

// BindConfig adds the MAC to r's config when it was written before configs
// had one (repo.ExclusiveWriter.BindConfig), under the exclusive lock and
// its fence: the config is a mutable key. repo.ErrNothingToBind when there
// is nothing to add.
func BindConfig(ctx context.Context, r *Repo) error {
	if !r.r.Config().Encrypted || r.r.ConfigAuthenticated() {
		return repo.ErrNothingToBind
	}
	return withExclusiveWriter(ctx, r, "repair config", func(ctx context.Context, w *repo.ExclusiveWriter) error {
		return w.BindConfig(ctx)
	})
}
