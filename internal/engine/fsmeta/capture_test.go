//go:build linux

package fsmeta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// capture lstats path and returns its node.
func capture(t testing.TB, c *Capturer, path string) tree.Node {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Node(context.Background(), path, fi)
	if err != nil {
		t.Fatalf("Node(%s): %v", path, err)
	}
	return n
}

// setUserXattr sets a user.* attribute, skipping the test when the file
// system of the temp directory does not support them.
func setUserXattr(t *testing.T, path, name string, value []byte) {
	t.Helper()
	err := unix.Lsetxattr(path, name, value, 0)
	if isNotSupported(err) {
		t.Skipf("temp file system has no user xattrs: %v", err)
	}
	if err != nil {
		t.Fatalf("lsetxattr %s: %v", path, err)
	}
}

// captureCase is one kind of entry: how to make it, the type it must be
// captured as, and extra checks.
type captureCase struct {
	name  string
	make  func(path string) error
	want  tree.Type
	check func(t *testing.T, path string, n tree.Node)
}

func captureCases() []captureCase {
	return []captureCase{
		{"file", func(p string) error { return os.WriteFile(p, []byte("hello"), 0o640) }, tree.TypeFile,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Size != 5 || n.Mode != 0o640 || n.Links != 1 {
					t.Errorf("size %d mode %o links %d", n.Size, n.Mode, n.Links)
				}
			}},
		{"setuid", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return unix.Chmod(p, 0o4755)
		}, tree.TypeFile,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Mode != 0o4755 {
					t.Errorf("mode %o, want 4755", n.Mode)
				}
			}},
		{"dir", func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return unix.Chmod(p, 0o1777)
		}, tree.TypeDir,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Mode != 0o1777 || n.Size != 0 {
					t.Errorf("mode %o size %d", n.Mode, n.Size)
				}
			}},
		{"symlink", func(p string) error { return os.Symlink("../../does/not/exist", p) }, tree.TypeSymlink,
			func(t *testing.T, _ string, n tree.Node) {
				if n.LinkTarget != "../../does/not/exist" {
					t.Errorf("target %q", n.LinkTarget)
				}
			}},
		{"symlink-abs", func(p string) error { return os.Symlink("/etc", p) }, tree.TypeSymlink,
			func(t *testing.T, _ string, n tree.Node) {
				if n.LinkTarget != "/etc" || n.Size != 0 {
					t.Errorf("target %q size %d (followed?)", n.LinkTarget, n.Size)
				}
			}},
		{"fifo", func(p string) error {
			if err := unix.Mkfifo(p, 0o600); err != nil {
				return err
			}
			return unix.Chmod(p, 0o620) // past the umask
		}, tree.TypeFIFO,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Mode != 0o620 {
					t.Errorf("mode %o", n.Mode)
				}
			}},
		{"chardev", func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))) }, tree.TypeCharDev,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Rdev != unix.Mkdev(1, 3) {
					t.Errorf("rdev %#x", n.Rdev)
				}
			}},
		{"blockdev", func(p string) error { return unix.Mknod(p, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0))) }, tree.TypeBlkDev,
			func(t *testing.T, _ string, n tree.Node) {
				if n.Rdev != unix.Mkdev(7, 0) {
					t.Errorf("rdev %#x", n.Rdev)
				}
			}},
		{"socket", makeSocket, tree.TypeSocket, nil},
	}
}

func TestCaptureTypes(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Unix(1_600_000_000, 123_456_789)
	tests := captureCases()
	c := NewCapturer(local.New())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := tt.make(path); err != nil {
				if errors.Is(err, unix.EPERM) && (tt.want == tree.TypeCharDev || tt.want == tree.TypeBlkDev) {
					t.Skipf("cannot create devices here: %v", err)
				}
				t.Fatal(err)
			}
			ts := []unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
			if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				t.Fatal(err)
			}
			n := capture(t, c, path)
			var st unix.Stat_t
			if err := unix.Lstat(path, &st); err != nil {
				t.Fatal(err)
			}
			if n.Name != tt.name || n.Type != tt.want {
				t.Errorf("name %q type %q, want %q %q", n.Name, n.Type, tt.name, tt.want)
			}
			if n.MTime != mtime.UnixNano() || n.CTime != st.Ctim.Nano() {
				t.Errorf("mtime %d ctime %d, want %d %d", n.MTime, n.CTime, mtime.UnixNano(), st.Ctim.Nano())
			}
			if n.Device != st.Dev || n.Inode != st.Ino || n.UID != st.Uid || n.GID != st.Gid {
				t.Errorf("dev/ino/uid/gid %d/%d/%d/%d, want %d/%d/%d/%d", n.Device, n.Inode, n.UID, n.GID, st.Dev, st.Ino, st.Uid, st.Gid)
			}
			if os.Geteuid() == 0 && (n.User != "root" || n.Group == "") {
				t.Errorf("user %q group %q, want root and a name", n.User, n.Group)
			}
			if tt.check != nil {
				tt.check(t, path, n)
			}
		})
	}
}

// makeSocket binds a Unix socket at p and leaves it on disk.
func makeSocket(p string) error {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(false)
	return l.Close()
}

func TestCaptureXattrs(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 3000) // larger than the first buffer: exercises ERANGE
	for i := range big {
		big[i] = byte(i)
	}
	tests := []struct {
		name   string
		xattrs []tree.Xattr
	}{
		{"none", nil},
		{"one", []tree.Xattr{{Name: "user.a", Value: []byte("1")}}},
		{"sorted", []tree.Xattr{{Name: "user.z", Value: []byte("z")}, {Name: "user.a", Value: []byte{}}, {Name: "user.m", Value: []byte{0, 1, 2}}}},
		{"big-value", []tree.Xattr{{Name: "user.big", Value: big}}},
		{"many-names", manyXattrs(40)},
	}
	c := NewCapturer(local.New())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, x := range tt.xattrs {
				setUserXattr(t, path, x.Name, x.Value)
			}
			want := append([]tree.Xattr(nil), tt.xattrs...)
			slices.SortFunc(want, func(a, b tree.Xattr) int { return strings.Compare(a.Name, b.Name) })
			got := capture(t, c, path).Xattrs
			if err := equalXattrs(got, want); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func manyXattrs(n int) []tree.Xattr {
	out := make([]tree.Xattr, n)
	for i := range out {
		out[i] = tree.Xattr{Name: fmt.Sprintf("user.attribute-with-a-long-name-%03d", i), Value: []byte{byte(i)}}
	}
	return out
}

// equalXattrs compares two attribute lists, treating nil and empty values
// as equal.
func equalXattrs(got, want []tree.Xattr) error {
	if len(got) != len(want) {
		return fmt.Errorf("xattrs %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Name != want[i].Name || string(got[i].Value) != string(want[i].Value) {
			return fmt.Errorf("xattr %d = %q=%q, want %q=%q", i, got[i].Name, got[i].Value, want[i].Name, want[i].Value)
		}
	}
	return nil
}

func TestCaptureHardlinks(t *testing.T) {
	dir := t.TempDir()
	a, b, other := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "other")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCapturer(local.New())
	na, nb, no := capture(t, c, a), capture(t, c, b), capture(t, c, other)
	if na.Device != nb.Device || na.Inode != nb.Inode || na.Links != 2 || nb.Links != 2 {
		t.Fatalf("a %d/%d/%d, b %d/%d/%d: want one inode with 2 links", na.Device, na.Inode, na.Links, nb.Device, nb.Inode, nb.Links)
	}
	if no.Inode == na.Inode || no.Links != 1 {
		t.Fatalf("other file shares inode %d or has %d links", no.Inode, no.Links)
	}
}

func TestCaptureMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gone")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCapturer(local.New()).Node(context.Background(), path, fi); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Node of a removed file = %v, want ErrNotExist", err)
	}
}

func TestCapturerConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := NewCapturer(local.New())
	done := make(chan tree.Node)
	for range 8 {
		go func() {
			fi, err := os.Lstat(path)
			if err != nil {
				done <- tree.Node{}
				return
			}
			n, err := c.Node(context.Background(), path, fi)
			if err != nil {
				n = tree.Node{}
			}
			done <- n
		}()
	}
	for range 8 {
		if n := <-done; n.Name != "f" {
			t.Errorf("concurrent Node failed: %+v", n)
		}
	}
}

func BenchmarkCapturerNode(b *testing.B) {
	dir := b.TempDir()
	const files = 10_000
	paths := make([]string, files)
	infos := make([]os.FileInfo, files)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%05d", i))
		if err := os.WriteFile(paths[i], nil, 0o644); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Lstat(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		infos[i] = fi
	}
	c := NewCapturer(local.New())
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range paths {
			if _, err := c.Node(context.Background(), p, infos[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files), "ns/file")
}
