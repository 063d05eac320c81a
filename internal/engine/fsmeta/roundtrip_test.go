//go:build linux

package fsmeta

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// entry is a captured node with its slash-separated path below the tree
// root.
type entry struct {
	rel  string
	node tree.Node
}

// captureTree captures every entry below root in lexical order.
func captureTree(t *testing.T, root string) []entry {
	t.Helper()
	c := NewCapturer(local.New())
	var out []entry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n, err := c.Node(context.Background(), path, fi)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out = append(out, entry{rel: filepath.ToSlash(rel), node: n})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreTree writes the captured entries of src into w the way a restore
// does: parents first, hard links of one inode linked to its first path,
// directory metadata last, deepest first.
func restoreTree(t *testing.T, w *Writer, src string, entries []entry) {
	t.Helper()
	type inode struct{ dev, ino uint64 }
	first := map[inode]string{}
	for _, e := range entries {
		n := &e.node
		if n.Links > 1 && n.Type != tree.TypeDir {
			key := inode{n.Device, n.Inode}
			if prev, ok := first[key]; ok {
				if err := w.Hardlink(prev, e.rel); err != nil {
					t.Fatal(err)
				}
				continue
			}
			first[key] = e.rel
		}
		var err error
		switch n.Type {
		case tree.TypeDir:
			err = w.Mkdir(e.rel, n)
		case tree.TypeFile:
			err = copyInto(w, filepath.Join(src, e.rel), e.rel, n)
		case tree.TypeSymlink:
			err = w.Symlink(e.rel, n)
		default:
			err = w.Special(e.rel, n)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n.Type != tree.TypeDir {
			if err := w.ApplyMeta(e.rel, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range slices.Backward(entries) {
		if e.node.Type == tree.TypeDir {
			if err := w.ApplyMeta(e.rel, &e.node); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func copyInto(w *Writer, srcPath, rel string, n *tree.Node) error {
	in, err := os.Open(srcPath)
	if err != nil {
		return err
	}
	defer in.Close() //nolint:errcheck // read-only.
	out, err := w.CreateFile(rel, n)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// buildSource makes a tree with one entry of every kind and odd metadata.
// It reports whether user xattrs are supported.
func buildSource(t *testing.T, src string) (xattrs bool) {
	t.Helper()
	root := os.Geteuid() == 0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(rel string) string { return filepath.Join(src, rel) }
	must(os.MkdirAll(p("dir/sub"), 0o755))
	must(os.Mkdir(p("sticky"), 0o755))
	must(os.WriteFile(p("dir/file"), []byte("content"), 0o644))
	must(os.WriteFile(p("dir/setuid"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(p("dir/sub/empty"), nil, 0o600))
	must(os.WriteFile(p("hard1"), []byte("shared"), 0o640))
	must(os.Link(p("hard1"), p("dir/hard2")))
	must(os.Symlink("/etc/passwd", p("abs-link")))
	must(os.Symlink("../../../escape", p("dir/up-link")))
	must(os.Symlink("file", p("dir/rel-link")))
	must(unix.Mkfifo(p("fifo"), 0o600))
	if root {
		must(unix.Lchown(p("dir/setuid"), 4242, 4343))
		must(unix.Lchown(p("dir/up-link"), 4242, 4343))
		must(unix.Lchown(p("dir/sub"), 4244, 4345))
		must(unix.Lchown(p("fifo"), 4242, 4343))
		err := unix.Mknod(p("null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		if err != nil && !errors.Is(err, unix.EPERM) {
			t.Fatal(err)
		}
	}
	must(unix.Chmod(p("dir/setuid"), 0o6755))
	must(unix.Chmod(p("sticky"), 0o1777))
	must(unix.Chmod(p("fifo"), 0o640))
	must(unix.Chmod(p("dir/sub"), 0o2750))
	err := unix.Lsetxattr(p("dir/file"), "user.one", []byte("1"), 0)
	if isNotSupported(err) {
		t.Logf("temp file system has no user xattrs: %v", err)
	} else {
		must(err)
		must(unix.Lsetxattr(p("dir/file"), "user.two", []byte{0, 0xff}, 0))
		must(unix.Lsetxattr(p("dir/sub"), "user.dir", []byte("d"), 0))
		xattrs = true
	}
	// Distinct nanosecond mtimes, set last (children first) on every entry.
	var rels []string
	must(filepath.WalkDir(src, func(path string, _ fs.DirEntry, err error) error {
		rels = append(rels, path)
		return err
	}))
	for i, path := range slices.Backward(rels) {
		ns := int64(1_500_000_000+i)*1e9 + int64(i)*1_234_567 + 89
		ts := []unix.Timespec{unix.NsecToTimespec(ns), unix.NsecToTimespec(ns)}
		must(unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW))
	}
	return xattrs
}

func TestRoundTrip(t *testing.T) {
	base := t.TempDir()
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	hasXattrs := buildSource(t, src)
	before := captureTree(t, src)

	w, err := NewWriter(dst, WriterOptions{Owners: os.Geteuid() == 0, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	restoreTree(t, w, src, before)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	after := captureTree(t, dst)

	if len(before) != len(after) {
		t.Fatalf("restored %d entries, want %d", len(after), len(before))
	}
	for i, b := range before {
		a := after[i]
		t.Run(b.rel, func(t *testing.T) {
			if a.rel != b.rel {
				t.Fatalf("entry %d is %q, want %q", i, a.rel, b.rel)
			}
			compareNodes(t, a.node, b.node, os.Geteuid() == 0)
		})
	}
	if hasXattrs && len(find(t, after, "dir/file").Xattrs) != 2 {
		t.Error("xattrs of dir/file not restored")
	}
	h1, h2 := find(t, after, "hard1"), find(t, after, "dir/hard2")
	if h1.Inode != h2.Inode || h1.Device != h2.Device || h1.Links != 2 {
		t.Errorf("hard links not restored as one inode: %d/%d, links %d", h1.Inode, h2.Inode, h1.Links)
	}
}

func find(t *testing.T, entries []entry, rel string) tree.Node {
	t.Helper()
	for _, e := range entries {
		if e.rel == rel {
			return e.node
		}
	}
	t.Fatalf("no entry %q", rel)
	return tree.Node{}
}

// compareNodes checks the fields a restore must reproduce.
func compareNodes(t *testing.T, got, want tree.Node, owners bool) {
	t.Helper()
	if got.Name != want.Name || got.Type != want.Type || got.Size != want.Size || got.Links != want.Links {
		t.Errorf("name/type/size/links = %q/%s/%d/%d, want %q/%s/%d/%d",
			got.Name, got.Type, got.Size, got.Links, want.Name, want.Type, want.Size, want.Links)
	}
	if got.Mode != want.Mode {
		t.Errorf("mode %#o, want %#o", got.Mode, want.Mode)
	}
	if got.MTime != want.MTime {
		t.Errorf("mtime %d, want %d", got.MTime, want.MTime)
	}
	if got.LinkTarget != want.LinkTarget || got.Rdev != want.Rdev {
		t.Errorf("target/rdev %q/%#x, want %q/%#x", got.LinkTarget, got.Rdev, want.LinkTarget, want.Rdev)
	}
	if err := equalXattrs(got.Xattrs, want.Xattrs); err != nil {
		t.Error(err)
	}
	if owners && (got.UID != want.UID || got.GID != want.GID || got.User != want.User || got.Group != want.Group) {
		t.Errorf("owner %d(%s):%d(%s), want %d(%s):%d(%s)",
			got.UID, got.User, got.GID, got.Group, want.UID, want.User, want.GID, want.Group)
	}
}

func TestApplyMetaOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("restoring owners needs root")
	}
	tests := []struct {
		name         string
		node         tree.Node
		uid, gid     uint32
		symlinkEntry bool
	}{
		{"by number", tree.Node{UID: 4242, GID: 4343}, 4242, 4343, false},
		{"name wins over number", tree.Node{User: "root", UID: 4242, Group: "root", GID: 4343}, 0, 0, false},
		{"unknown name falls back", tree.Node{User: "no-such-user-fsmeta", UID: 4242, Group: "no-such-group-fsmeta", GID: 4343}, 4242, 4343, false},
		{"symlink itself", tree.Node{UID: 4242, GID: 4343}, 4242, 4343, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			w, err := NewWriter(out, WriterOptions{Owners: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() //nolint:errcheck // test cleanup.
			n := tt.node
			n.Mode, n.MTime = 0o4750, 1_000_000_123
			if err := os.WriteFile(filepath.Join(out, "target"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			n.Type = tree.TypeFile
			if tt.symlinkEntry {
				n.Type, n.LinkTarget = tree.TypeSymlink, "target"
			}
			createEntry(t, w, "x", &n)
			if err := w.ApplyMeta("x", &n); err != nil {
				t.Fatal(err)
			}
			var st, target unix.Stat_t
			if err := unix.Lstat(filepath.Join(out, "x"), &st); err != nil {
				t.Fatal(err)
			}
			if err := unix.Lstat(filepath.Join(out, "target"), &target); err != nil {
				t.Fatal(err)
			}
			if st.Uid != tt.uid || st.Gid != tt.gid || st.Mtim.Nano() != n.MTime {
				t.Errorf("owner %d:%d mtime %d, want %d:%d %d", st.Uid, st.Gid, st.Mtim.Nano(), tt.uid, tt.gid, n.MTime)
			}
			if !tt.symlinkEntry && st.Mode&0o7777 != 0o4750 {
				t.Errorf("mode %#o, want 4750 kept after chown", st.Mode&0o7777)
			}
			if tt.symlinkEntry && (target.Uid != 0 || target.Mode&0o7777 != 0o600 || target.Mtim.Nano() == n.MTime) {
				t.Errorf("symlink target changed: %d %#o %d", target.Uid, target.Mode&0o7777, target.Mtim.Nano())
			}
		})
	}
}

// createEntry creates rel as a regular file or a symlink, as n says.
func createEntry(t *testing.T, w *Writer, rel string, n *tree.Node) {
	t.Helper()
	if n.Type == tree.TypeSymlink {
		if err := w.Symlink(rel, n); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := w.CreateFile(rel, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
