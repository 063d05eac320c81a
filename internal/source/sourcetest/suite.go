package sourcetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
)

// Tree is a test's handle on the tree a source reads: it changes the tree
// through another way than the source (the file system, a drive's admin
// API). Paths are relative to the source's root, slash-separated.
type Tree interface {
	// Open returns a new source and the root name to give its Root; each
	// call is a new root, empty.
	Open(t *testing.T) (source.Source, string)
	MkdirAll(t *testing.T, rel string)
	Write(t *testing.T, rel string, data []byte)
	Rename(t *testing.T, from, to string)
	Remove(t *testing.T, rel string)
	// Unreadable makes the file rel one whose content the source cannot
	// read; false when this tree cannot make one.
	Unreadable(t *testing.T, rel string) bool
}

// DriveTree is the Tree of a cloud drive.
type DriveTree interface {
	Tree
	// Duplicate adds a second file named like rel to its folder.
	Duplicate(t *testing.T, rel string, data []byte)
	// ExpireTokens makes the drive refuse every change token issued so
	// far.
	ExpireTokens(t *testing.T)
}

// Run runs the suite on tr.
func Run(t *testing.T, tr Tree) {
	t.Run("ParentsBeforeChildren", func(t *testing.T) { testTree(t, tr) })
	t.Run("NamesAndDepth", func(t *testing.T) { testNames(t, tr) })
	t.Run("LargeFile", func(t *testing.T) { testLarge(t, tr) })
	t.Run("Unreadable", func(t *testing.T) { testUnreadable(t, tr) })
	if d, ok := tr.(DriveTree); ok {
		t.Run("DuplicateNames", func(t *testing.T) { testDuplicates(t, d) })
		t.Run("ChangeFeed", func(t *testing.T) { testChanges(t, d) })
		t.Run("ExpiredToken", func(t *testing.T) { testExpired(t, d) })
	}
}

// Entry is what Read found at a path: "dir", "link:TARGET", or a file's
// content.
type Entry = string

// open opens a source at a new root, with its tree listed.
func open(t *testing.T, tr Tree, build func(root Tree)) (source.Source, source.Root) {
	t.Helper()
	src, name := tr.Open(t)
	build(tr)
	root, err := src.Root(context.Background(), name)
	if err != nil {
		t.Fatalf("Root(%q): %v", name, err)
	}
	if d, ok := src.(source.Drive); ok {
		if _, err := d.Scan(context.Background(), nil); err != nil {
			t.Fatalf("Scan: %v", err)
		}
	}
	return src, root
}

// Read walks the source from its root: every directory is listed before
// its entries are, the listing is sorted by name, each entry's Lstat
// agrees with the listing. It returns what it found by relative path,
// and the paths that could not be read with their errors.
func Read(t *testing.T, src source.Source, root source.Root) (map[string]Entry, map[string]error) {
	t.Helper()
	ctx := context.Background()
	got, bad := map[string]Entry{}, map[string]error{}
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		entries, err := src.ReadDir(ctx, dir)
		if err != nil {
			t.Fatalf("ReadDir %s: %v", dir, err)
		}
		if !slices.IsSortedFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
			t.Errorf("ReadDir %s: not sorted by name", dir)
		}
		for _, e := range entries {
			p, r := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
			if _, seen := got[r]; seen {
				t.Errorf("%s listed twice", r)
			}
			if parent := path.Dir(r); parent != "." && got[parent] != "dir" {
				t.Errorf("%s came before its parent %s", r, parent)
			}
			fi, err := src.Lstat(ctx, p)
			if err != nil {
				t.Fatalf("Lstat %s: %v", p, err)
			}
			if fi.Mode().Type() != e.Type() {
				t.Errorf("%s: Lstat type %v, listed as %v", r, fi.Mode().Type(), e.Type())
			}
			switch {
			case e.IsDir():
				got[r] = "dir"
				walk(p, r)
			case e.Type() == fs.ModeSymlink:
				target, err := src.Readlink(ctx, p)
				if err != nil {
					t.Fatalf("Readlink %s: %v", p, err)
				}
				got[r] = "link:" + target
			default:
				data, err := readFile(ctx, src, p)
				if err != nil {
					bad[r] = err
					continue
				}
				got[r] = string(data)
			}
		}
	}
	walk(root.Real, "")
	return got, bad
}

func readFile(ctx context.Context, src source.Source, p string) ([]byte, error) {
	f, err := src.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	return io.ReadAll(f)
}

// same compares a tree read with what it should hold.
func same(t *testing.T, got, want map[string]Entry) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s missing", p)
		case g != w:
			t.Errorf("%s: %s, want %s", p, short(g), short(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: not expected (%s)", p, short(got[p]))
		}
	}
}

func short(s string) string {
	if len(s) <= 40 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%d bytes, sha256 %x", len(s), sha256.Sum256([]byte(s)))
}

func testTree(t *testing.T, tr Tree) {
	want := map[string]Entry{"a": "dir", "a/b": "dir", "a/b/c.txt": "c", "a/d.txt": "dd", "e.txt": "", "z": "dir"}
	src, root := open(t, tr, func(tr Tree) {
		tr.MkdirAll(t, "a/b")
		tr.MkdirAll(t, "z")
		tr.Write(t, "a/b/c.txt", []byte("c"))
		tr.Write(t, "a/d.txt", []byte("dd"))
		tr.Write(t, "e.txt", nil)
	})
	got, bad := Read(t, src, root)
	if len(bad) > 0 {
		t.Errorf("unreadable: %v", bad)
	}
	same(t, got, want)
}

func testNames(t *testing.T, tr Tree) {
	names := []string{"é-composé", "日本語.txt", "emoji 🎉", "-dash", "a.b.c", "UPPER", "upper2"}
	if runtime.GOOS != "windows" {
		// Windows strips a trailing space from a name it is given, so
		// no tree on its file system can hold one (docs/platforms.md).
		names = append(names, "space at end ")
	}
	deep := strings.Repeat("d/", 40) + "leaf.txt"
	want := map[string]Entry{}
	for _, n := range names {
		want[n] = n
	}
	for p := path.Dir(deep); p != "."; p = path.Dir(p) {
		want[p] = "dir"
	}
	want[deep] = "deep"
	src, root := open(t, tr, func(tr Tree) {
		for _, n := range names {
			tr.Write(t, n, []byte(n))
		}
		tr.MkdirAll(t, path.Dir(deep))
		tr.Write(t, deep, []byte("deep"))
	})
	got, _ := Read(t, src, root)
	same(t, got, want)
}

func testLarge(t *testing.T, tr Tree) {
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	src, root := open(t, tr, func(tr Tree) { tr.Write(t, "big.bin", data) })
	ctx := context.Background()
	f, err := src.Open(ctx, filepath.Join(root.Real, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	head := make([]byte, 1000)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	// Backup reads a file's start, then rewinds to chunk it.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(all, data) {
		t.Fatalf("read %d bytes, not the %d written", len(all), len(data))
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf("Stat: %v, %v", fi, err)
	}
}

func testUnreadable(t *testing.T, tr Tree) {
	var can bool
	src, root := open(t, tr, func(tr Tree) {
		tr.Write(t, "ok.txt", []byte("fine"))
		tr.Write(t, "secret.txt", []byte("hidden"))
		can = tr.Unreadable(t, "secret.txt")
	})
	if !can {
		t.Skip("this tree cannot make a file its source cannot read (the local file system as root)")
	}
	got, bad := Read(t, src, root)
	if got["ok.txt"] != "fine" {
		t.Errorf("ok.txt: %q", got["ok.txt"])
	}
	if bad["secret.txt"] == nil {
		t.Errorf("secret.txt was read: %q", got["secret.txt"])
	}
}
