//go:build unix

package dump_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/dump"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"golang.org/x/sys/unix"
)

var mtime = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(b) // ChaCha8.Read never fails
	return b
}

// source builds a tree with a multi-chunk file, a small file, a symlink, a
// hard-link pair, a fifo and an empty directory, all with known mtimes.
func source(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	src := t.TempDir()
	files := map[string][]byte{
		"big.bin":    randomBytes(6 << 20),
		"docs/a.txt": []byte("hello\n"),
		"docs/hard1": []byte("linked\n"),
		"docs/empty": nil,
	}
	for name, data := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Link(filepath.Join(src, "docs/hard1"), filepath.Join(src, "docs/hard2")))
	files["docs/hard2"] = files["docs/hard1"]
	must(t, os.Symlink("a.txt", filepath.Join(src, "docs/link")))
	must(t, unix.Mkfifo(filepath.Join(src, "docs/fifo"), 0o600))
	must(t, os.Mkdir(filepath.Join(src, "emptydir"), 0o700))
	for _, p := range []string{"big.bin", "docs/a.txt", "docs/hard1", "docs/empty", "docs/fifo", "emptydir", "docs"} {
		must(t, os.Chtimes(filepath.Join(src, p), mtime, mtime))
	}
	return src, files
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// streamCheck is a writer that records how many data packs had been read
// when its first Write came: a streaming dump writes after the first blob.
type streamCheck struct {
	rec        *repotest.Recorder
	firstReads int
	bytes.Buffer
}

func (s *streamCheck) Write(p []byte) (int, error) {
	if s.Len() == 0 {
		s.firstReads = 0
		for _, n := range s.rec.PackReads() {
			s.firstReads += n
		}
	}
	return s.Buffer.Write(p)
}

// TestDump backs up one tree and dumps it as contents, tar and zip.
func TestDump(t *testing.T) {
	r := walktest.New(t)
	src, files := source(t)
	snap := r.Backup(t, src, "h", time.Now())
	t.Run("contents", func(t *testing.T) { testContents(t, r, snap, files) })
	t.Run("tar", func(t *testing.T) { testTar(t, r, snap, files) })
	t.Run("zip", func(t *testing.T) { testZip(t, r, snap, files) })
}

func testContents(t *testing.T, r *walktest.Repo, snap snapshot.WithID, files map[string][]byte) {
	ctx := context.Background()
	tests := []struct {
		path    string
		wantErr error
	}{
		{"big.bin", nil},
		{"docs/a.txt", nil},
		{"docs/empty", nil},
		{"docs/link", dump.ErrNotFile},
		{"docs", dump.ErrNotFile},
		{"docs/missing", treewalk.ErrNotFound},
		{"docs/a.txt/x", treewalk.ErrNotDir},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			n, err := treewalk.Lookup(ctx, r.Repository, snap.Tree, tc.path)
			if err == nil {
				r.Rec.Reset()
				out := &streamCheck{rec: r.Rec}
				err = dump.Contents(ctx, r.Repository, &n, out)
				if err == nil && !bytes.Equal(out.Bytes(), files[tc.path]) {
					t.Fatalf("dumped %d bytes, want the %d of the file", out.Len(), len(files[tc.path]))
				}
				if tc.path == "big.bin" && len(n.Content) < 2 {
					t.Fatalf("big.bin has %d blobs; the test needs several", len(n.Content))
				}
				if tc.path == "big.bin" && out.firstReads != 1 {
					t.Errorf("first write after %d blob reads, want 1 (the file is buffered, not streamed)", out.firstReads)
				}
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func testTar(t *testing.T, r *walktest.Repo, snap snapshot.WithID, files map[string][]byte) {
	ctx := context.Background()
	root := treewalk.Root(snap.Tree, snap.Root)
	var buf bytes.Buffer
	must(t, dump.Archive(ctx, r.Repository, root, "/", dump.FormatTar, &buf))
	got := map[string]*tar.Header{}
	tr := tar.NewReader(&buf)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		got[hdr.Name] = hdr
		if hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			must(t, err)
			if !bytes.Equal(data, files[hdr.Name]) {
				t.Errorf("%s: %d bytes in the archive, want %d", hdr.Name, len(data), len(files[hdr.Name]))
			}
		}
	}
	want := []struct {
		name string
		typ  byte
		mode int64
		link string
	}{
		{"big.bin", tar.TypeReg, 0o640, ""},
		{"docs/", tar.TypeDir, 0o755, ""},
		{"docs/a.txt", tar.TypeReg, 0o640, ""},
		{"docs/empty", tar.TypeReg, 0o640, ""},
		{"docs/fifo", tar.TypeFifo, 0o600, ""},
		{"docs/hard1", tar.TypeReg, 0o640, ""},
		{"docs/hard2", tar.TypeLink, 0o640, "docs/hard1"},
		{"docs/link", tar.TypeSymlink, 0o777, "a.txt"},
		{"emptydir/", tar.TypeDir, 0o700, ""},
	}
	if len(got) != len(want) {
		t.Errorf("%d entries, want %d: %v", len(got), len(want), got)
	}
	for _, w := range want {
		hdr := got[w.name]
		switch {
		case hdr == nil:
			t.Errorf("%s missing", w.name)
		case hdr.Typeflag != w.typ || hdr.Mode != w.mode || hdr.Linkname != w.link:
			t.Errorf("%s: type %c mode %o link %q, want %c %o %q", w.name, hdr.Typeflag, hdr.Mode, hdr.Linkname, w.typ, w.mode, w.link)
		case w.typ != tar.TypeSymlink && w.typ != tar.TypeLink && !hdr.ModTime.Equal(mtime):
			t.Errorf("%s: mtime %v, want %v", w.name, hdr.ModTime, mtime)
		case hdr.Uid != os.Getuid():
			t.Errorf("%s: uid %d, want %d", w.name, hdr.Uid, os.Getuid())
		}
	}
	// A subdirectory: only its own entries, named from the snapshot root.
	buf.Reset()
	must(t, dump.Archive(ctx, r.Repository, root, "docs", dump.FormatTar, &buf))
	tr = tar.NewReader(&buf)
	first, err := tr.Next()
	must(t, err)
	if first.Name != "docs/" {
		t.Errorf("first entry %q, want docs/", first.Name)
	}
}

func testZip(t *testing.T, r *walktest.Repo, snap snapshot.WithID, files map[string][]byte) {
	ctx := context.Background()
	var buf bytes.Buffer
	must(t, dump.Archive(ctx, r.Repository, treewalk.Root(snap.Tree, snap.Root), "", dump.FormatZip, &buf))
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	must(t, err)
	seen := map[string]bool{}
	for _, f := range zr.File {
		seen[f.Name] = true
		if want, ok := files[f.Name]; ok {
			rc, err := f.Open()
			must(t, err)
			data, err := io.ReadAll(rc)
			must(t, err)
			if !bytes.Equal(data, want) || f.Mode().Perm() != 0o640 || !f.Modified.Equal(mtime.Truncate(time.Second)) {
				t.Errorf("%s: %d bytes, mode %v, time %v", f.Name, len(data), f.Mode(), f.Modified)
			}
		}
	}
	for _, name := range []string{"big.bin", "docs/", "docs/hard2", "docs/link", "emptydir/"} {
		if !seen[name] {
			t.Errorf("%s missing from the zip", name)
		}
	}
	if seen["docs/fifo"] {
		t.Error("the fifo was written to the zip")
	}
}
