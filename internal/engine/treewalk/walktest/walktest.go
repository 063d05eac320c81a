package walktest

import (
	"context"
	"strings"
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
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Recorder is a store that counts the reads (Get, GetRange) of each key.
type Recorder struct {
	store.Store
	mu    sync.Mutex
	reads map[string]int
}

// Get counts and forwards.
func (r *Recorder) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	r.count(key)
	return r.Store.Get(ctx, key, max)
}

// GetRange counts and forwards.
func (r *Recorder) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	r.count(key)
	return r.Store.GetRange(ctx, key, off, n)
}

func (r *Recorder) count(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads == nil {
		r.reads = map[string]int{}
	}
	r.reads[key]++
}

// Reset forgets the reads so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = nil
}

// PackReads returns the packs read since the last Reset, with their counts.
func (r *Recorder) PackReads() map[id.ID]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[id.ID]int{}
	for k, n := range r.reads {
		if !strings.HasPrefix(k, repo.DataPrefix) {
			continue
		}
		if p, err := repo.IDFromKey(k); err == nil {
			out[p] += n
		}
	}
	return out
}

// Repo is a repository on the local store in a temporary directory,
// opened through a Recorder, with its index loaded.
type Repo struct {
	*repo.Repository
	Rec *Recorder
	dir string
}

// New creates an encrypted repository in t.TempDir().
func New(t testing.TB) *Repo {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	creds := repo.Credentials{Password: "pw"}
	if _, _, err := repo.Init(ctx, local.New(dir), repo.InitOptions{Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{Store: local.New(dir)}
	r, err := repo.Open(ctx, rec, creds)
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{Repository: r, Rec: rec, dir: dir}
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
func DataPacks(r *repo.Repository) map[id.ID]bool {
	out := map[id.ID]bool{}
	r.Index().Each(func(_ id.ID, loc index.Location) {
		if loc.Type == pack.DataBlob {
			out[loc.Pack] = true
		}
	})
	return out
}

// Reopen opens the repository again through the Recorder, with an empty
// in-memory index (as check and prune want it).
func (r *Repo) Reopen(t testing.TB) *repo.Repository {
	t.Helper()
	rr, err := repo.Open(context.Background(), r.Rec, repo.Credentials{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	return rr
}
