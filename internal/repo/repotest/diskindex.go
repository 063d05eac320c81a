package repotest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// DamagedDiskIndex loads the index of r (freshly opened, index not
// loaded) into an on-disk index in dir (repo.DiskIndex), closes it, and
// damages the file past what opening it checks: a byte of its first
// record block (index.Disk's layout: a 4 KiB header block, then the
// record blocks). A repository given the same directory later opens the
// file and meets the damage at its first lookup. It returns the file's
// path.
func DamagedDiskIndex(t testing.TB, r *repo.Repository, dir string) string {
	t.Helper()
	r.SetDiskIndex(repo.DiskIndex{Dir: dir, Min: -1})
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := r.Index().Base()
	if d == nil {
		t.Fatal("no on-disk index")
	}
	path := d.Path()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[4096+700] ^= 0x20
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// CloseDiskIndex closes r's on-disk index, if any, when the test ends:
// Windows removes no file a handle is open on.
func CloseDiskIndex(t testing.TB, r *repo.Repository) {
	t.Cleanup(func() {
		if d := r.Index().Base(); d != nil {
			_ = d.Close() // read-only
		}
	})
}

// DiskIndexFiles lists the on-disk index files in dir.
func DiskIndexFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+index.DiskSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// OpenDamaged damages the on-disk index of the repository open returns
// (DamagedDiskIndex, in a new directory), and returns that repository
// opened again to use the damaged file (its index not loaded, the file
// closed when the test ends) and the file's path.
func OpenDamaged(t testing.TB, open func() *repo.Repository) (*repo.Repository, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	path := DamagedDiskIndex(t, open(), dir)
	r := open()
	r.SetDiskIndex(repo.DiskIndex{Dir: dir, Min: -1})
	CloseDiskIndex(t, r)
	return r, path
}

// DeleteIndexFiles deletes the index files r lists from the local store
// whose root is storeDir, so that a rebuild of the on-disk index fails.
func DeleteIndexFiles(t testing.TB, r *repo.Repository, storeDir string) {
	t.Helper()
	ids, _, err := r.ListIDs(context.Background(), repo.IndexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, fid := range ids {
		if err := os.Remove(filepath.Join(storeDir, filepath.FromSlash(repo.IndexKey(fid)))); err != nil {
			t.Fatal(err)
		}
	}
}
