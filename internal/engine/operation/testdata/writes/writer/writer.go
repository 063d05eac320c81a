// Package writer makes the writes TestWritesNeedAWriter's readonly package
// may not, each through the value that allows it: it must build, which
// shows that readonly fails for the reason its ERROR lines give.
package writer

import (
	"context"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func writes(ctx context.Context, r *repo.Repository, kr *repo.Keyring, lease *lock.Lock) error {
	w, err := r.Writer(lease)
	if err != nil {
		return err
	}
	w.NewSaver(ctx, 1, pack.Zstd).Abort()
	if _, err := w.SaveSnapshot(ctx, nil); err != nil {
		return err
	}
	if _, err := w.WriteIndex(ctx, nil); err != nil {
		return err
	}
	if err := w.DeleteSnapshot(ctx, id.ID{}); err != nil {
		return err
	}
	x, err := r.ExclusiveWriter(lease)
	if err != nil {
		return err
	}
	if err := x.DeleteUnused(ctx, repo.ObjectEntry{}); err != nil {
		return err
	}
	if _, err := x.RemoveStaleTemp(ctx, time.Time{}); err != nil {
		return err
	}
	if err := x.BindConfig(ctx); err != nil {
		return err
	}
	if err := r.WithoutLock().DeleteSnapshot(ctx, id.ID{}); err != nil {
		return err
	}
	if _, err := kr.WithoutLock().Add(ctx, "password", "", nil); err != nil {
		return err
	}
	kw, err := kr.ExclusiveWriter(lease)
	if err != nil {
		return err
	}
	if _, err := kw.ChangePassword(ctx, "pw", ""); err != nil {
		return err
	}
	return kw.Remove(ctx, "id")
}
