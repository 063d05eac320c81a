package checktest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Listings returns every pack listing of every index file of r, and the
// index files' ids.
func Listings(t testing.TB, r *repo.Repository) ([]index.PackBlobs, []id.ID) {
	t.Helper()
	ctx := context.Background()
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var packs []index.PackBlobs
	for _, f := range files {
		file, err := r.IndexFile(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		packs = append(packs, file.Packs...)
	}
	return packs, files
}

// CopyPack stores a second pack holding the same sealed blobs as p, read
// from the local store in dir (as two backups racing on the same data
// store them twice), and returns its listing.
func CopyPack(t testing.TB, dir string, st store.Store, r *repo.Repository, p index.PackBlobs) index.PackBlobs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(repo.PackKey(p.ID))))
	if err != nil {
		t.Fatal(err)
	}
	b := pack.NewBuilder(len(data))
	for _, e := range p.Blobs {
		b.Add(e.Type, e.ID, data[e.Offset:e.Offset+e.Length], int(e.Plain))
	}
	out, pid, entries, err := b.Finish(r.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), repo.PackKey(pid), out, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return index.PackBlobs{ID: pid, Blobs: entries}
}

// ReplaceIndex writes one index file of packs (in that order) and deletes
// the index files old.
func ReplaceIndex(t testing.TB, st store.Store, r *repo.Repository, old []id.ID, packs []index.PackBlobs) {
	t.Helper()
	ctx := context.Background()
	Write(t, st, r, func(w *repo.Writer) {
		if _, err := w.WriteIndex(ctx, packs); err != nil {
			t.Fatal(err)
		}
	})
	for _, f := range old {
		if err := st.Delete(ctx, repo.IndexKey(f)); err != nil {
			t.Fatal(err)
		}
	}
}

// FirstDataPack is the index of the first listing of a pack of data blobs
// in packs.
func FirstDataPack(t testing.TB, packs []index.PackBlobs) int {
	t.Helper()
	for i, p := range packs {
		if len(p.Blobs) > 0 && p.Blobs[0].Type == pack.DataBlob {
			return i
		}
	}
	t.Fatal("no data pack")
	return -1
}

// BackedUp is a repository in a new directory (dir, st) holding one
// snapshot (sid) of a new source directory (src) of n files of size
// bytes, named fa, fb, ...: the common start of the tests that then damage
// or rearrange the repository.
func BackedUp(t testing.TB, n, size int) (dir string, st store.Store, src string, sid id.ID) {
	t.Helper()
	dir = t.TempDir()
	st = NewRepo(t, dir)
	src = t.TempDir()
	for i := range n {
		WriteFile(t, src, "f"+string(rune('a'+i)), uint64(i), size)
	}
	return dir, st, src, Backup(t, st, src)
}
