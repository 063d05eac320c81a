// Package readonly tries every write that must not compile: on the
// read-only repository, on a shared lease's writer (which deletes no pack
// or index file), on a keyring, and through the operation layer's Repo and
// Keyring. TestWritesNeedAWriter builds it: each line marked ERROR must
// fail with a message matching the quoted pattern, and nothing else may.
package readonly

import (
	"context"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func repository(ctx context.Context, r *repo.Repository) {
	r.NewSaver(ctx, 1, pack.Zstd)                         // ERROR "r.NewSaver undefined"
	r.SaveSnapshot(ctx, nil)                              // ERROR "r.SaveSnapshot undefined"
	r.WriteIndex(ctx, nil)                                // ERROR "r.WriteIndex undefined"
	r.DeleteSnapshot(ctx, id.ID{})                        // ERROR "r.DeleteSnapshot undefined"
	r.DeleteUnused(ctx, repo.ObjectEntry{})               // ERROR "r.DeleteUnused undefined"
	r.RemoveStaleTemp(ctx, time.Time{})                   // ERROR "r.RemoveStaleTemp undefined"
	r.BindConfig(ctx)                                     // ERROR "r.BindConfig undefined"
	r.Store()                                             // ERROR "r.Store undefined"
	r.Fresh().SaveSnapshot(ctx, nil)                      // ERROR "SaveSnapshot undefined"
	r.WithoutLock().SaveSnapshot(ctx, nil)                // ERROR "SaveSnapshot undefined"
	r.WithoutLock().DeleteUnused(ctx, repo.ObjectEntry{}) // ERROR "DeleteUnused undefined"
}

func sharedWriter(ctx context.Context, w *repo.Writer) {
	w.DeleteUnused(ctx, repo.ObjectEntry{}) // ERROR "w.DeleteUnused undefined"
	w.RemoveStaleTemp(ctx, time.Time{})     // ERROR "w.RemoveStaleTemp undefined"
	w.BindConfig(ctx)                       // ERROR "w.BindConfig undefined"
	w.Store()                               // ERROR "w.Store undefined"
}

func keyring(ctx context.Context, kr *repo.Keyring) {
	kr.Add(ctx, "password", "", nil)      // ERROR "kr.Add undefined"
	kr.Remove(ctx, nil, "id")             // ERROR "kr.Remove undefined"
	kr.ChangePassword(ctx, nil, "pw", "") // ERROR "kr.ChangePassword undefined"
	kr.Store()                            // ERROR "kr.Store undefined"
}

func operations(ctx context.Context, o *operation.Repo, k *operation.Keyring) {
	_ = o.Repository                        // ERROR "o.Repository undefined"
	o.Store()                               // ERROR "o.Store undefined"
	o.SaveSnapshot(ctx, nil)                // ERROR "o.SaveSnapshot undefined"
	o.Reader().SaveSnapshot(ctx, nil)       // ERROR "SaveSnapshot undefined"
	o.Reader().DeleteSnapshot(ctx, id.ID{}) // ERROR "DeleteSnapshot undefined"
	_ = k.Keyring                           // ERROR "k.Keyring undefined"
	k.Add(ctx, "password", "", nil)         // ERROR "k.Add undefined"
	k.Remove(ctx, nil, "id")                // ERROR "k.Remove undefined"
}
