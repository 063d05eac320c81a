//go:build unix

package e2e

import (
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// compareZip checks the zip archive at zpath holds the entries of src:
// directories (name/), regular files with their content, permission bits
// and mtime (to the second), symlinks with their target as content. FIFOs
// cannot be stored in a zip and must be absent.
func compareZip(t *testing.T, src, zpath string) {
	t.Helper()
	zr, err := zip.OpenReader(zpath)
	if err != nil {
		t.Fatalf("opening the restored zip: %v", err)
	}
	defer zr.Close() //nolint:errcheck // read-only
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		if _, dup := files[f.Name]; dup {
			t.Errorf("zip: entry %q appears twice", f.Name)
		}
		files[f.Name] = f
	}
	want := scanTree(t, src)
	names := map[string]bool{}
	for _, rel := range sortedKeys(want) {
		w := want[rel]
		name := filepath.ToSlash(rel)
		switch w.typ() {
		case unix.S_IFDIR:
			name += "/"
		case unix.S_IFIFO:
			if files[name] != nil {
				t.Errorf("zip: FIFO %q stored", name)
			}
			continue
		}
		names[name] = true
		f := files[name]
		if f == nil {
			t.Errorf("zip: %q missing", name)
			continue
		}
		compareZipEntry(t, src, w, f)
	}
	for name := range files {
		if !names[name] {
			t.Errorf("zip: %q is not in the source", name)
		}
	}
}

func compareZipEntry(t *testing.T, src string, w entryInfo, f *zip.File) {
	t.Helper()
	mode := f.Mode()
	switch w.typ() {
	case unix.S_IFDIR:
		if !mode.IsDir() {
			t.Errorf("zip: %q: mode %v, want a directory", f.Name, mode)
		}
		return
	case unix.S_IFLNK:
		if mode&fs.ModeSymlink == 0 {
			t.Errorf("zip: %q: mode %v, want a symlink", f.Name, mode)
		}
		if got := readZip(t, f); string(got) != w.link {
			t.Errorf("zip: %q: symlink target %q, want %q", f.Name, got, w.link)
		}
		return
	}
	if !mode.IsRegular() || uint32(mode.Perm()) != uint32(w.st.Mode)&0o777 { //nolint:unconvert // Mode is a uint16 on the BSDs
		t.Errorf("zip: %q: mode %v, want a regular file %04o", f.Name, mode, w.st.Mode&0o777)
	}
	if f.Modified.Unix() != w.st.Mtim.Sec {
		t.Errorf("zip: %q: modified %v, want unix time %d", f.Name, f.Modified, w.st.Mtim.Sec)
	}
	data, err := os.ReadFile(filepath.Join(src, w.rel))
	if err != nil {
		t.Fatal(err)
	}
	if got := readZip(t, f); !bytes.Equal(got, data) {
		t.Errorf("zip: %q: content differs (%d bytes, want %d)", f.Name, len(got), len(data))
	}
}

func readZip(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatalf("zip: %s: %v", f.Name, err)
	}
	defer rc.Close() //nolint:errcheck // read-only; ReadAll reports read errors
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Errorf("zip: %s: %v", f.Name, err)
	}
	return data
}
