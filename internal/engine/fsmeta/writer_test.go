//go:build linux

package fsmeta

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// escapeFixture is an output directory holding symlinks that point at a
// directory outside it, and that outside directory with one victim file.
type escapeFixture struct {
	out, outside, victim string
	w                    *Writer
}

func newEscapeFixture(t *testing.T) *escapeFixture {
	t.Helper()
	base := t.TempDir()
	f := &escapeFixture{out: filepath.Join(base, "out"), outside: filepath.Join(base, "outside")}
	f.victim = filepath.Join(f.outside, "victim")
	if err := os.Mkdir(f.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f.out, WriterOptions{Owners: os.Geteuid() == 0, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	f.w = w
	links := map[string]string{
		"link":  f.outside,           // absolute, to a directory outside
		"rlink": "../outside",        // relative, climbing out
		"lfile": f.victim,            // to the victim file itself
		"loop":  "loop",              // to itself
		"inner": "dir",               // harmless: stays inside
		"ldev":  "/dev/null",         // to a device outside
		"dir/u": "../../outside/x",   // nested, climbing out
		"dir/d": "../link/victim",    // through another symlink
		"dir/a": "/" + f.outside[1:], // absolute again, from a subdirectory
	}
	if err := os.Mkdir(filepath.Join(f.out, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.out, "inside"), []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.out, name)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// checkOutsideUntouched fails unless the outside directory still holds
// exactly the victim, with its content and mode.
func (f *escapeFixture) checkOutsideUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"victim"}) {
		t.Fatalf("outside directory now holds %v", names)
	}
	fi, err := os.Lstat(f.victim)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.victim)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "keep" || fi.Mode() != 0o644 || fi.ModTime().Unix() == 1 {
		t.Fatalf("victim changed: %q %v %v", data, fi.Mode(), fi.ModTime())
	}
	var st unix.Stat_t
	if err := unix.Lstat(f.victim, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid == 4242 || st.Gid == 4242 {
		t.Fatalf("victim owner changed to %d:%d", st.Uid, st.Gid)
	}
}

func TestWriterEscapes(t *testing.T) {
	evil := &tree.Node{Type: tree.TypeFile, Mode: 0o777, MTime: 1e9, UID: 4242, GID: 4242,
		LinkTarget: "x", Xattrs: []tree.Xattr{{Name: "user.evil", Value: []byte("1")}}}
	fifo := &tree.Node{Type: tree.TypeFIFO, Mode: 0o666}
	ops := []struct {
		name string
		do   func(w *Writer, rel string) error
	}{
		{"Mkdir", func(w *Writer, rel string) error { return w.Mkdir(rel, evil) }},
		{"CreateFile", func(w *Writer, rel string) error {
			f, err := w.CreateFile(rel, evil)
			if err == nil {
				err = errors.Join(errors.New("created"), f.Close())
			}
			return err
		}},
		{"Symlink", func(w *Writer, rel string) error { return w.Symlink(rel, evil) }},
		{"Special", func(w *Writer, rel string) error { return w.Special(rel, fifo) }},
		{"HardlinkTo", func(w *Writer, rel string) error { return w.Hardlink("inside", rel) }},
		{"HardlinkFrom", func(w *Writer, rel string) error { return w.Hardlink(rel, "new") }},
		{"ApplyMeta", func(w *Writer, rel string) error { return w.ApplyMeta(rel, evil) }},
	}
	rows := []struct {
		rel    string
		unsafe bool // rejected by name checks, before any system call
	}{
		{"..", true},
		{"../x", true},
		{"../outside/victim", true},
		{"/abs", true},
		{"OUTSIDE", true}, // replaced by the absolute path of the victim
		{"a/../../b", true},
		{"dir/../../outside/victim", true},
		{"a\x00b", true},
		{"", true},
		{".", true},
		{"./x", true},
		{"a//b", true},
		{"a/", true},
		{"link/evil", false},
		{"link/victim", false},
		{"rlink/evil", false},
		{"rlink/victim", false},
		{"dir/u/evil", false},
		{"dir/d/x", false},
		{"dir/a/victim", false},
		{"loop/x", false},
	}
	for _, row := range rows {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%q/%s", row.rel, op.name), func(t *testing.T) {
				f := newEscapeFixture(t)
				rel := row.rel
				if rel == "OUTSIDE" {
					rel = f.victim
				}
				err := op.do(f.w, rel)
				if err == nil {
					t.Fatalf("%s(%q) succeeded", op.name, rel)
				}
				if row.unsafe && !errors.Is(err, ErrUnsafeName) {
					t.Fatalf("%s(%q) = %v, want ErrUnsafeName", op.name, rel, err)
				}
				f.checkOutsideUntouched(t)
			})
		}
	}
}

func TestWriterSymlinkInPlace(t *testing.T) {
	file := &tree.Node{Type: tree.TypeFile, Mode: 0o777, MTime: 1e9, UID: 4242, GID: 4242}
	tests := []struct {
		name string
		do   func(w *Writer) error
		want error
	}{
		{"CreateFile over link to victim", func(w *Writer) error {
			_, err := w.CreateFile("lfile", file)
			return err
		}, ErrExists},
		{"CreateFile over dangling link out", func(w *Writer) error {
			_, err := w.CreateFile("dir/u", file)
			return err
		}, ErrExists},
		{"Mkdir over link to dir", func(w *Writer) error { return w.Mkdir("link", file) }, ErrExists},
		{"Mkdir over inner link", func(w *Writer) error { return w.Mkdir("inner", file) }, ErrExists},
		{"Special over link", func(w *Writer) error { return w.Special("lfile", &tree.Node{Type: tree.TypeFIFO}) }, ErrExists},
		{"Symlink over link", func(w *Writer) error { return w.Symlink("lfile", &tree.Node{LinkTarget: "x"}) }, ErrExists},
		{"Hardlink over link", func(w *Writer) error { return w.Hardlink("inside", "lfile") }, ErrExists},
		{"ApplyMeta file through link", func(w *Writer) error { return w.ApplyMeta("lfile", file) }, ErrTypeMismatch},
		{"ApplyMeta dir through link", func(w *Writer) error {
			return w.ApplyMeta("link", &tree.Node{Type: tree.TypeDir, Mode: 0o777, UID: 4242})
		}, ErrTypeMismatch},
		{"ApplyMeta device through link", func(w *Writer) error {
			return w.ApplyMeta("ldev", &tree.Node{Type: tree.TypeCharDev, Mode: 0o777})
		}, ErrTypeMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newEscapeFixture(t)
			if err := tt.do(f.w); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			f.checkOutsideUntouched(t)
		})
	}
}

func TestWriterHardlinkToSymlink(t *testing.T) {
	// Linking an existing symlink links the symlink itself, not its target.
	f := newEscapeFixture(t)
	if err := f.w.Hardlink("lfile", "copy"); err != nil {
		t.Fatal(err)
	}
	target, err := os.Readlink(filepath.Join(f.out, "copy"))
	if err != nil || target != f.victim {
		t.Fatalf("copy is %q, %v; want a symlink to %s", target, err, f.victim)
	}
	f.checkOutsideUntouched(t)
}

func TestCreateFileExisting(t *testing.T) {
	out := t.TempDir()
	w, err := NewWriter(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // test cleanup.
	path := filepath.Join(out, "f")
	if err := os.WriteFile(path, []byte("original"), 0o640); err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.CreateFile("f", &tree.Node{Type: tree.TypeFile})
	if !errors.Is(err, ErrExists) || f != nil {
		t.Fatalf("CreateFile on an existing file = %v, %v; want ErrExists", f, err)
	}
	after, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "original" || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("existing file changed: %q %v %v", data, after.Mode(), after.ModTime())
	}
}

func TestMkdir(t *testing.T) {
	out := t.TempDir()
	w, err := NewWriter(filepath.Join(out, "new", "out"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // test cleanup.
	dir := &tree.Node{Type: tree.TypeDir}
	tests := []struct {
		name string
		rel  string
		want error
	}{
		{"new", "d", nil},
		{"again", "d", nil},
		{"child", "d/e", nil},
		{"missing parent", "x/y", os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := w.Mkdir(tt.rel, dir); !errors.Is(err, tt.want) {
				t.Fatalf("Mkdir(%q) = %v, want %v", tt.rel, err, tt.want)
			}
		})
	}
	file, err := w.CreateFile("file", dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Mkdir("file", dir); !errors.Is(err, ErrExists) {
		t.Fatalf("Mkdir over a file = %v, want ErrExists", err)
	}
	if err := w.Mkdir("file/sub", dir); err == nil {
		t.Fatal("Mkdir below a file succeeded")
	}
}

func TestSpecial(t *testing.T) {
	tests := []struct {
		name    string
		node    tree.Node
		notRoot bool
		want    os.FileMode // type bits expected on disk; 0: nothing created
		warns   bool
	}{
		{"fifo", tree.Node{Type: tree.TypeFIFO}, false, os.ModeNamedPipe, false},
		{"socket", tree.Node{Type: tree.TypeSocket}, false, 0, true},
		{"chardev as non-root", tree.Node{Type: tree.TypeCharDev, Rdev: unix.Mkdev(1, 3)}, true, 0, true},
		{"blockdev as non-root", tree.Node{Type: tree.TypeBlkDev, Rdev: unix.Mkdev(7, 0)}, true, 0, true},
	}
	if os.Geteuid() == 0 {
		tests = append(tests,
			struct {
				name    string
				node    tree.Node
				notRoot bool
				want    os.FileMode
				warns   bool
			}{"chardev as root", tree.Node{Type: tree.TypeCharDev, Rdev: unix.Mkdev(1, 3)}, false, os.ModeDevice | os.ModeCharDevice, false})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			var mu sync.Mutex
			var warnings []string
			w, err := NewWriter(out, WriterOptions{Logf: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				warnings = append(warnings, fmt.Sprintf(format, args...))
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() //nolint:errcheck // test cleanup.
			if tt.notRoot {
				w.isRoot = false
			}
			if err := w.Special("x", &tt.node); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(filepath.Join(out, "x"))
			if tt.want == 0 || (len(warnings) > 0 && !tt.warns) {
				// Not created (or, as root in a container, refused with a warning).
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("entry created: %v %v", fi, err)
				}
				if len(warnings) == 0 {
					t.Fatal("no warning")
				}
				t.Logf("warned: %v", warnings)
			} else if err != nil || fi.Mode().Type() != tt.want {
				t.Fatalf("created %v, %v; want type %v", fi, err, tt.want)
			}
			// Metadata of what was skipped is nothing to apply.
			if err := w.ApplyMeta("x", &tt.node); err != nil {
				t.Fatalf("ApplyMeta: %v", err)
			}
			if err := w.Special("x", &tt.node); tt.want != 0 && len(warnings) == 0 && !errors.Is(err, ErrExists) {
				t.Fatalf("second Special = %v, want ErrExists", err)
			}
		})
	}
}

func TestWriterConcurrent(t *testing.T) {
	out := t.TempDir()
	w, err := NewWriter(out, WriterOptions{Owners: os.Geteuid() == 0})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // test cleanup.
	const workers = 8
	errs := make(chan error, workers)
	for i := range workers {
		go func() {
			dir := fmt.Sprintf("d%d", i)
			n := &tree.Node{Type: tree.TypeFile, Mode: 0o640, MTime: int64(i) * 1e9, User: "root", UID: 4242}
			err := w.Mkdir(dir, n)
			for j := 0; err == nil && j < 20; j++ {
				rel := fmt.Sprintf("%s/f%d", dir, j)
				var f *os.File
				if f, err = w.CreateFile(rel, n); err == nil {
					err = errors.Join(f.Close(), w.ApplyMeta(rel, n))
				}
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	fi, err := os.Lstat(filepath.Join(out, "d3", "f7"))
	if err != nil || fi.Mode() != 0o640 || fi.ModTime().Unix() != 3 {
		t.Fatalf("d3/f7: %v %v", fi, err)
	}
}
