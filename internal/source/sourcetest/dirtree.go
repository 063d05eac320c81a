package sourcetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
)

// DirTree is a Tree of a local directory that the source reads, locally
// or through a server (SFTP): every Open is a new directory below Base.
// Entries get modes others can read, as a server may read as another user.
type DirTree struct {
	Base string
	// NewSource opens the source under test; the root name given to its
	// Root is the directory's path (Rel maps it for a server).
	NewSource func(t *testing.T) source.Source
	// RootName maps the local directory to the name the source's Root
	// takes (nil: the path itself).
	RootName func(dir string) string
	dir      string
}

// Open makes a new directory.
func (d *DirTree) Open(t *testing.T) (source.Source, string) {
	dir, err := os.MkdirTemp(d.Base, "conformance-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // best effort
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d.dir = dir
	name := dir
	if d.RootName != nil {
		name = d.RootName(dir)
	}
	return d.NewSource(t), name
}

func (d *DirTree) path(rel string) string { return filepath.Join(d.dir, filepath.FromSlash(rel)) }

// MkdirAll creates directories.
func (d *DirTree) MkdirAll(t *testing.T, rel string) {
	if err := os.MkdirAll(d.path(rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Write writes a file.
func (d *DirTree) Write(t *testing.T, rel string, data []byte) {
	if err := os.WriteFile(d.path(rel), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Rename renames.
func (d *DirTree) Rename(t *testing.T, from, to string) {
	if err := os.Rename(d.path(from), d.path(to)); err != nil {
		t.Fatal(err)
	}
}

// Remove removes.
func (d *DirTree) Remove(t *testing.T, rel string) {
	if err := os.RemoveAll(d.path(rel)); err != nil {
		t.Fatal(err)
	}
}

// Unreadable takes every permission away from the file; as root (who
// reads it anyway) on a source reading as root, it cannot.
func (d *DirTree) Unreadable(t *testing.T, rel string) bool {
	if err := os.Chmod(d.path(rel), 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(d.path(rel))
	if err == nil {
		_ = f.Close() // only probing
	}
	return err != nil || d.RootName != nil // a server reads as its own user
}
