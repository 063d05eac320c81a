package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestSnapshotHeads: with a metadata cache, the heads of the snapshots a
// host has seen come from the cache's heads file: listing snapshots/ is
// the only request, and the cached snapshot objects are not read (they are
// removed here, so reading one would cost a GET). New snapshots are loaded,
// deleted ones dropped, and a damaged heads file is rebuilt. Every answer
// equals the heads of Snapshots. The same holds with a cache of derived
// files only, a local store's, which copies no snapshot.
func TestSnapshotHeads(t *testing.T) {
	for _, derivedOnly := range []bool{false, true} {
		name := "metadata cache"
		if derivedOnly {
			name = "derived files only"
		}
		t.Run(name, func(t *testing.T) { testSnapshotHeads(t, derivedOnly) })
	}
}

// testSnapshotHeads checks the store requests SnapshotHeads makes with a
// metadata cache, or with a cache of derived files only (a local store's,
// which never copies the snapshots themselves).
func testSnapshotHeads(t *testing.T, derivedOnly bool) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}, Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	other, _ := cachedRepo(t, st, t.TempDir())
	w := writerFor(t, other, st) // another host's writer
	save := func(i int) id.ID {
		t.Helper()
		sid, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Unix(int64(i%7), 0), Tree: id.ID{1},
			Hostname: "h", Source: "local:/" + string(rune('a'+i%5)), Nonce: []byte{byte(i)}})
		if err != nil {
			t.Fatal(err)
		}
		return sid
	}
	var ids []id.ID
	for i := range 20 {
		ids = append(ids, save(i))
	}
	dropCachedSnapshots := func(r *Repository) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(r.derivedCache().Dir(), "snapshots")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change func(r *Repository)
		want   int64 // store requests of SnapshotHeads
	}{
		{"fresh cache", func(*Repository) {}, 1 + 20},
		{"warm", dropCachedSnapshots, 1},
		{"one new snapshot", func(r *Repository) { dropCachedSnapshots(r); save(20) }, 1 + 1},
		{"one deleted", func(r *Repository) {
			dropCachedSnapshots(r)
			if err := w.DeleteSnapshot(ctx, ids[3]); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"after the deletion", dropCachedSnapshots, 1},
		{"damaged heads file", func(r *Repository) {
			dropCachedSnapshots(r)
			if err := r.derivedCache().PutDerived(headsFile, []byte("not sealed")); err != nil {
				t.Fatal(err)
			}
		}, 1 + 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, counted := cachedRepoMode(t, st, cacheDir, derivedOnly)
			tc.change(r)
			before := counted.Counts().Requests
			heads, _, err := r.SnapshotHeads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := counted.Counts().Requests - before; got != tc.want {
				t.Errorf("%d store requests, want %d", got, tc.want)
			}
			snaps, _, err := r.Snapshots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := snapshot.Heads(snaps); !reflect.DeepEqual(heads, want) {
				t.Errorf("heads differ from those of Snapshots:\n got %v\nwant %v", heads, want)
			}
			if _, err := os.Stat(filepath.Join(r.derivedCache().Dir(), "snapshots")); derivedOnly && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a cache of derived files only holds copies of snapshots (%v)", err)
			}
		})
	}
}

// TestSnapshotHeadsDamaged: with a metadata cache, a damaged snapshot never
// enters the heads file, so every listing reports it again (until repair
// snapshots removes it); it does not make each listing rewrite the file.
func TestSnapshotHeadsDamaged(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}, Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	other, _ := cachedRepo(t, st, t.TempDir())
	w := writerFor(t, other, st)
	good, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Unix(1, 0), Tree: id.ID{1}, Hostname: "h", Source: "local:/a"})
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte("not a sealed snapshot at all")
	key := SnapshotKey(id.ID(sha256.Sum256(junk)))
	if _, err := st.Put(ctx, key, junk, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var file []byte
	for i := range 3 {
		r, _ := cachedRepo(t, st, cacheDir)
		heads, damaged, err := r.SnapshotHeads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(heads) != 1 || heads[0].ID != good || len(damaged) != 1 || damaged[0].Key != key {
			t.Fatalf("run %d: heads %v, damaged %v; want %s and the junk %s", i, heads, damaged, good.Short(), key)
		}
		f, err := r.Cache().GetDerived(headsFile)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !bytes.Equal(f, file) {
			t.Errorf("run %d rewrote the heads file", i)
		}
		file = f
	}
}
