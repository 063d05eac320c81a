package repo_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// errFlaky is a read failure that says nothing about the object: what a
// reset connection or a timeout gives.
var errFlaky = errors.New("connection reset by peer")

// flakyGets fails every Get of the keys in keys with errFlaky.
type flakyGets struct {
	store.Store
	keys map[string]bool
}

func (f flakyGets) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if f.keys[key] {
		return nil, errFlaky
	}
	return f.Store.Get(ctx, key, max)
}

// putNamed stores data under prefix + its SHA-256, as every sealed object is
// named, and returns the key.
func putNamed(t *testing.T, st store.Store, prefix string, data []byte) string {
	t.Helper()
	key := prefix + id.ID(sha256.Sum256(data)).String()
	if _, err := st.Put(context.Background(), key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return key
}

// junk returns n random bytes.
func junk(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// damages are the ways a stored snapshot or index file can be wrong: each
// stores one damaged object under prefix and returns its key.
var damages = []struct {
	name  string
	plant func(t *testing.T, r *repo.Repository, st store.Store, dir, prefix string) string
}{
	{"junk named by its hash (fails authentication)", func(t *testing.T, r *repo.Repository, st store.Store, _, prefix string) string {
		return putNamed(t, st, prefix, junk(t, 300))
	}},
	{"sealed with our key, not decodable", func(t *testing.T, r *repo.Repository, st store.Store, _, prefix string) string {
		sealed, err := r.Codec().EncodeRaw([]byte("not a snapshot nor an index file"))
		if err != nil {
			t.Fatal(err)
		}
		return putNamed(t, st, prefix, sealed)
	}},
	{"content that does not hash to its name", func(t *testing.T, _ *repo.Repository, _ store.Store, dir, prefix string) string {
		key := prefix + strings.Repeat("ab", 32)
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("bit rot"), 0o600); err != nil {
			t.Fatal(err)
		}
		return key
	}},
	{"empty", func(t *testing.T, r *repo.Repository, st store.Store, _, prefix string) string {
		return putNamed(t, st, prefix, nil)
	}},
}

// TestSnapshotsSkipDamaged plants one damaged snapshot beside a good one:
// Snapshots and SnapshotHeads return the good one and the damaged one
// apart (the damage watcher hears of it once), and a read failure that is
// not damage still fails both.
func TestSnapshotsSkipDamaged(t *testing.T) {
	t.Parallel()
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir, st := newHostileRepo(t)
			r, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var heard []string
			r.WatchDamage(func(d repo.Damaged) {
				mu.Lock()
				heard = append(heard, d.Key)
				mu.Unlock()
			})
			good, err := sharedWriter(t, r, st).SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Unix(1, 0), Tree: id.ID{1}, Hostname: "h", Source: "local:/s"})
			if err != nil {
				t.Fatal(err)
			}
			bad := dm.plant(t, r, st, dir, repo.SnapshotPrefix)

			snaps, damaged, err := r.Snapshots(ctx)
			if err != nil || len(snaps) != 1 || snaps[0].ID != good {
				t.Fatalf("Snapshots: %d snapshots, error %v; want the good one alone", len(snaps), err)
			}
			wantDamaged(t, damaged, bad)
			heads, damaged, err := r.SnapshotHeads(ctx)
			if err != nil || len(heads) != 1 || heads[0].ID != good {
				t.Fatalf("SnapshotHeads: %v, error %v; want the good one alone", heads, err)
			}
			wantDamaged(t, damaged, bad)
			if len(heard) != 1 || heard[0] != bad {
				t.Errorf("the damage watcher heard %v, want %s once", heard, bad)
			}

			flaky, err := repo.Open(ctx, flakyGets{Store: st, keys: map[string]bool{bad: true}}, repo.Credentials{PlatformKey: hostileKey})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := flaky.Snapshots(ctx); !errors.Is(err, errFlaky) {
				t.Errorf("Snapshots with a failing read: %v, want the read's error", err)
			}
			if _, _, err := flaky.SnapshotHeads(ctx); !errors.Is(err, errFlaky) {
				t.Errorf("SnapshotHeads with a failing read: %v, want the read's error", err)
			}
		})
	}
}

// TestLoadIndexSkipsDamaged plants one damaged index file beside a good
// one: LoadIndex indexes the good one's blobs and returns the damaged one;
// a read failure that is not damage fails it.
func TestLoadIndexSkipsDamaged(t *testing.T) {
	t.Parallel()
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir, st := newHostileRepo(t)
			r, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey})
			if err != nil {
				t.Fatal(err)
			}
			blob := id.ID{9}
			if _, err := sharedWriter(t, r, st).WriteIndex(ctx, []index.PackBlobs{{ID: id.ID{7}, Blobs: []pack.Entry{{Type: pack.DataBlob, ID: blob, Length: 10}}}}); err != nil {
				t.Fatal(err)
			}
			bad := dm.plant(t, r, st, dir, repo.IndexPrefix)

			fresh := r.Fresh()
			damaged, err := fresh.LoadIndex(ctx)
			if err != nil {
				t.Fatalf("LoadIndex: %v", err)
			}
			wantDamaged(t, damaged, bad)
			if !fresh.Index().Has(t.Context(), blob) {
				t.Error("the good index file's blob is not indexed")
			}

			flaky, err := repo.Open(ctx, flakyGets{Store: st, keys: map[string]bool{bad: true}}, repo.Credentials{PlatformKey: hostileKey})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := flaky.LoadIndex(ctx); !errors.Is(err, errFlaky) {
				t.Errorf("LoadIndex with a failing read: %v, want the read's error", err)
			}
		})
	}
}

// wantDamaged checks that damaged is exactly key, as damage, on one line
// naming it.
func wantDamaged(t *testing.T, damaged []repo.Damaged, key string) {
	t.Helper()
	if len(damaged) != 1 || damaged[0].Key != key {
		t.Fatalf("damaged %v, want %s", damaged, key)
	}
	d := damaged[0]
	if !repo.IsDamage(d.Err) {
		t.Errorf("%s: %v is not damage", key, d.Err)
	}
	if msg := d.Err.Error(); !strings.Contains(msg, key) || strings.Contains(msg, "\n") || d.Reason() == "" || strings.Contains(d.Reason(), key) {
		t.Errorf("error %q (reason %q) does not name %s on one line", msg, d.Reason(), key)
	}
}
