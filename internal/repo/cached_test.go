package repo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

const testPlatformKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// cachedRepo opens the repository in st through a counting wrapper, with a
// cache in dir.
func cachedRepo(t *testing.T, st *local.Store, dir string) (*Repository, *wrap.Logging) {
	t.Helper()
	return cachedRepoMode(t, st, dir, false)
}

// cachedRepoMode is cachedRepo, the cache used for its derived files only
// (SetDerivedCache, as a local store's) when derivedOnly.
func cachedRepoMode(t *testing.T, st *local.Store, dir string, derivedOnly bool) (*Repository, *wrap.Logging) {
	t.Helper()
	counted := wrap.NewLogging(st, nil)
	r, err := Open(context.Background(), counted, Credentials{PlatformKey: testPlatformKey})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cache() != nil {
		t.Fatal("a local store must not get a cache by default")
	}
	c, err := cache.Open(cache.Options{Dir: dir, MaxBytes: 64 << 20}, r.Config().ID)
	if err != nil {
		t.Fatal(err)
	}
	if derivedOnly {
		r.SetDerivedCache(c)
	} else {
		r.SetCache(c)
	}
	return r, counted
}

func TestCacheSavesDownloads(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}, Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	r, _ := cachedRepo(t, st, cacheDir)
	w := writerFor(t, r, st)
	var trees []id.ID
	s := w.NewSaver(ctx, 1, pack.Zstd)
	for i := 0; i < 20; i++ {
		data, err := tree.Encode(&tree.Tree{Nodes: []tree.Node{{Name: "f", Type: tree.TypeFile, Size: uint64(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		tid := r.Key().ID(data)
		if _, err := s.Save(ctx, pack.TreeBlob, tid, data); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, tid)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Unix(1, 0), Tree: trees[0], Nonce: []byte{1}}); err != nil {
		t.Fatal(err)
	}

	load := func(r *Repository) {
		t.Helper()
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Snapshots(ctx); err != nil {
			t.Fatal(err)
		}
		for _, tid := range trees {
			if _, err := r.LoadTree(ctx, tid); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		damage bool
		max    int64 // store requests after Open
	}{
		// cold: LIST + GET index, LIST + GET snapshot, one GET of the tree pack
		{"cold", false, 5},
		// warm: only the two listings
		{"warm", false, 2},
		// damaged cached pack: the bad blob is detected, the copy dropped and
		// the blob read from the store; the next tree fetches the pack again
		{"damaged", true, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, counted := cachedRepo(t, st, cacheDir)
			if tc.damage {
				if _, err := r.LoadIndex(ctx); err != nil {
					t.Fatal(err)
				}
				loc, _ := r.Index().Lookup(t.Context(), trees[0])
				p := filepath.Join(r.Cache().Dir(), filepath.FromSlash(PackKey(loc.Pack)))
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				b[loc.Offset+20] ^= 1
				if err := os.WriteFile(p, b, 0o600); err != nil {
					t.Fatal(err)
				}
				r, counted = cachedRepo(t, st, cacheDir)
			}
			before := counted.Counts().Requests
			load(r)
			if got := counted.Counts().Requests - before; got > tc.max {
				t.Fatalf("%d store requests, want at most %d", got, tc.max)
			}
		})
	}
}
