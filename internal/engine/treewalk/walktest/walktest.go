package walktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Repo is a repository on the local store in a temporary directory,
// opened through a Recorder, with its index loaded.
type Repo struct {
	*repo.Repository
	Rec *repotest.Recorder
}

// New creates an encrypted repository in t.TempDir().
func New(t testing.TB) *Repo {
	t.Helper()
	r, rec := repotest.NewLocal(t)
	return &Repo{Repository: r, Rec: rec}
}

// Backup backs up src at time at, tagged, from host, and returns the
// snapshot.
func (r *Repo) Backup(t testing.TB, src, host string, at time.Time, tags ...string) snapshot.WithID {
	t.Helper()
	ctx := context.Background()
	heads, _, err := r.SnapshotHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, release := r.Writer(t)
	res, err := backup.Run(ctx, w, heads, backup.Options{Path: src, Hostname: host, Tags: tags, Clock: clock.NewFake(at)})
	release()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("backup of %s: %v", src, res.Errors)
	}
	return snapshot.WithID{ID: res.ID, Snapshot: res.Snapshot}
}

// Writer returns a writer on r under a shared lock, and the function
// that releases it (at the latest when the test ends). The lock goes to
// the store directly: the Recorder counts the engine's reads only.
func (r *Repo) Writer(t testing.TB) (w *repo.Writer, release func()) {
	t.Helper()
	ctx := context.Background()
	lease, err := lock.AcquireShared(ctx, r.Rec.Store, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := lease.Release(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	if w, err = r.Repository.Writer(lease); err != nil {
		t.Fatal(err)
	}
	return w, release
}

// WriteHostile writes Hostile's snapshots to r under a shared lock, which
// it releases.
func (r *Repo) WriteHostile(t testing.TB) Hostile {
	t.Helper()
	w, release := r.Writer(t)
	defer release()
	return WriteHostile(t, w)
}

// DataPacks returns the packs holding file contents.
func DataPacks(t testing.TB, r *repo.Repository) map[id.ID]bool {
	t.Helper()
	out := map[id.ID]bool{}
	err := r.Index().Each(func(_ id.ID, loc index.Location) {
		if loc.Type == pack.DataBlob {
			out[loc.Pack] = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Reopen opens the repository again through the Recorder, with an empty
// in-memory index (as check and prune want it).
func (r *Repo) Reopen(t testing.TB) *repo.Repository {
	t.Helper()
	rr, err := repo.Open(context.Background(), r.Rec, repo.Credentials{Password: repotest.Password})
	if err != nil {
		t.Fatal(err)
	}
	return rr
}
