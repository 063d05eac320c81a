//go:build linux

package fsmeta

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// Inode flags of linux/fs.h.
const (
	flImmutable = 0x10
	flAppend    = 0x20
	flNodump    = 0x40
	flNoatime   = 0x80
)

// readFlags reads path's user-modifiable flags through the local source.
func readFlags(path string) (uint32, error) {
	f, err := local.New().Flags(context.Background(), path)
	return f & UserFlags, err
}

// chattr runs chattr (e2fsprogs) on path.
func chattr(t *testing.T, arg, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", arg, path).CombinedOutput(); err != nil {
		t.Fatalf("chattr %s %s: %v\n%s", arg, path, err, out)
	}
}

// TestFlagsRoundTrip: inode flags set with chattr are captured and
// restored (immutable and append-only last, so the restore's own changes
// went through first), and not captured under SkipFlags or SkipMode.
func TestFlagsRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	file, dir := filepath.Join(src, "f"), filepath.Join(src, "d")
	if err := os.WriteFile(file, []byte("data"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if flags, err := readFlags(file); err != nil || flags != 0 {
		t.Fatalf("flags of a new file: %#x, %v", flags, err)
	}
	fileFlags, dirFlags := "+dA", "+d"
	want := map[string]uint32{"f": flNodump | flNoatime, "d": flNodump}
	if os.Getuid() == 0 { // CAP_LINUX_IMMUTABLE
		fileFlags, dirFlags = "+dAi", "+da"
		want["f"] |= flImmutable
		want["d"] |= flAppend
	}
	chattr(t, fileFlags, file)
	chattr(t, dirFlags, dir)
	t.Cleanup(func() {
		for _, p := range []string{file, dir, filepath.Join(dst, "f"), filepath.Join(dst, "d")} {
			_ = exec.Command("chattr", "-ia", p).Run() // so that TempDir can remove it; errors show in its cleanup
		}
	})

	c := NewCapturer(local.New())
	w, err := NewWriter(dst, WriterOptions{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // test
	for _, name := range []string{"f", "d"} {
		path := filepath.Join(src, name)
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Node(context.Background(), path, fi)
		if err != nil || n.Flags != want[name] {
			t.Fatalf("captured %s flags %#x (%v), want %#x", name, n.Flags, err, want[name])
		}
		restoreEntry(t, w, name, &n)
		if got, err := readFlags(filepath.Join(dst, name)); err != nil || got != want[name] {
			t.Errorf("restored %s flags %#x (%v), want %#x", name, got, err, want[name])
		}
	}

	for _, skip := range []Capturer{{src: local.New(), SkipFlags: true}, {src: local.New(), SkipMode: true}} {
		skip.names = newIDNames()
		fi, err := os.Lstat(file)
		if err != nil {
			t.Fatal(err)
		}
		n, err := skip.Node(context.Background(), file, fi)
		if err != nil || n.Flags != 0 {
			t.Errorf("SkipFlags %v SkipMode %v: flags %#x (%v), want none", skip.SkipFlags, skip.SkipMode, n.Flags, err)
		}
		if skip.SkipMode && (n.Mode != 0o644 || n.UID != 0 || n.User != "") {
			t.Errorf("SkipMode: mode %#o uid %d user %q, want 0644, 0, none", n.Mode, n.UID, n.User)
		}
	}
}

// restoreEntry writes n at rel as a restore does: a file's content and
// metadata, then its flags; a directory, then its metadata.
func restoreEntry(t *testing.T, w *Writer, rel string, n *tree.Node) {
	t.Helper()
	if n.Type == tree.TypeDir {
		if err := w.Mkdir(rel, n); err != nil {
			t.Fatal(err)
		}
		if err := w.ApplyMeta(rel, n); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := w.CreateFile(rel, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("data"); err != nil {
		t.Fatal(err)
	}
	if err := w.ApplyMetaFile(f, rel, n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.ApplyFlags(rel, n); err != nil {
		t.Fatal(err)
	}
}
