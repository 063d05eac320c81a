package repotest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Password is the password of the repositories NewLocal creates.
const Password = "pw"

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

// NewLocal creates an encrypted repository (password Password) in
// t.TempDir() and opens it through a Recorder.
func NewLocal(t testing.TB) (*repo.Repository, *Recorder) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	creds := repo.Credentials{Password: Password}
	if _, _, err := repo.Init(ctx, local.New(dir), repo.InitOptions{Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{Store: local.New(dir)}
	r, err := repo.Open(ctx, rec, creds)
	if err != nil {
		t.Fatal(err)
	}
	return r, rec
}
