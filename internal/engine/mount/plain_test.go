//go:build !windows

package mount_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/mount"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestWrongPlainSize mounts a repository whose index files record a wrong
// plain size for the first blob of a file: the sizes no longer add up to
// the file's, so the mount warns and places reads by reading the blobs,
// and returns the right bytes.
func TestWrongPlainSize(t *testing.T) {
	ctx := context.Background()
	r := walktest.New(t)
	src := t.TempDir()
	data := randomBytes(5555, 12<<20)
	must(t, os.WriteFile(filepath.Join(src, "big"), data, 0o644))
	snap := r.Backup(t, src, "h", time.Now())
	n, err := treewalk.Lookup(ctx, r.Repository, snap.Tree, "big")
	must(t, err)
	if len(n.Content) < 3 {
		t.Fatalf("%d blobs: the test needs several", len(n.Content))
	}
	w, release := r.Writer(t)
	lie(t, w, r.Rec, n.Content[0])
	release()
	// A fresh view of the repository reads the rewritten index files.
	hostile, err := repo.Open(ctx, r.Rec, repo.Credentials{Password: "pw"})
	must(t, err)
	var warned atomic.Int32
	warnf := func(format string, _ ...any) {
		if strings.Contains(format, "add up to") {
			warned.Add(1)
		}
	}
	dir := serve(t, &walktest.Repo{Repository: hostile, Rec: r.Rec}, mount.Options{Warnf: warnf})
	f, err := os.Open(filepath.Join(dir, "snapshots", "latest", "big"))
	must(t, err)
	defer f.Close() //nolint:errcheck // read-only
	off := int64(len(data)) / 2
	buf := make([]byte, 4096)
	_, err = f.ReadAt(buf, off)
	must(t, err)
	if !bytes.Equal(buf, data[off:off+4096]) {
		t.Error("the bytes read differ from the file's")
	}
	if warned.Load() != 1 {
		t.Errorf("%d warnings about the sizes, want 1", warned.Load())
	}
}

// lie rewrites every index file of the repository r writes to, in st, so
// that blob's plain size is 1000 bytes more than it is.
func lie(t *testing.T, r *repo.Writer, st store.Store, blob id.ID) {
	t.Helper()
	ctx := context.Background()
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	must(t, err)
	for _, fid := range files {
		f, err := r.IndexFile(ctx, fid)
		must(t, err)
		for _, p := range f.Packs {
			for i := range p.Blobs {
				if p.Blobs[i].ID == blob {
					p.Blobs[i].Plain += 1000
				}
			}
		}
		_, err = r.WriteIndex(ctx, f.Packs)
		must(t, err)
		must(t, st.Delete(ctx, repo.IndexKey(fid)))
	}
	var found bool
	fresh, err := repo.Open(ctx, st, repo.Credentials{Password: "pw"})
	must(t, err)
	_, err = fresh.LoadIndex(ctx)
	must(t, err)
	must(t, fresh.Index().Each(func(b id.ID, loc index.Location) { found = found || (b == blob && loc.Plain > 1000) }))
	if !found {
		t.Fatal("the rewritten index does not hold the wrong size")
	}
}
