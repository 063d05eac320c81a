//go:build linux

package fsmeta

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestApplyMetaFile checks that metadata applied through an open descriptor
// matches what ApplyMeta gives by path: mode (special bits kept after the
// owner change), ns mtime, xattrs and, as root, owners.
func TestApplyMetaFile(t *testing.T) {
	root := os.Geteuid() == 0
	tests := []struct {
		name string
		node tree.Node
	}{
		{"plain", tree.Node{Mode: 0o640, MTime: 1_234_567_890_123_456_789}},
		{"setuid", tree.Node{Mode: 0o4755, MTime: 1_000_000_001}},
		{"xattr", tree.Node{Mode: 0o600, MTime: 42, Xattrs: []tree.Xattr{{Name: "user.k", Value: []byte("v\x00w")}}}},
		{"owners", tree.Node{Mode: 0o2750, MTime: 7, UID: 4242, GID: 4343}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			w, err := NewWriter(out, WriterOptions{Owners: root})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() //nolint:errcheck // test cleanup.
			n := tt.node
			n.Type, n.Name = tree.TypeFile, "f"
			f, err := w.CreateFile("f", &n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("content"); err != nil {
				t.Fatal(err)
			}
			if err := w.ApplyMetaFile(f, "f", &n); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(out, "f"), &st); err != nil {
				t.Fatal(err)
			}
			if st.Mode&0o7777 != n.Mode || st.Mtim.Nano() != n.MTime {
				t.Errorf("mode %#o mtime %d, want %#o %d", st.Mode&0o7777, st.Mtim.Nano(), n.Mode, n.MTime)
			}
			if root && (st.Uid != n.UID || st.Gid != n.GID) {
				t.Errorf("owner %d:%d, want %d:%d", st.Uid, st.Gid, n.UID, n.GID)
			}
			for _, x := range n.Xattrs {
				buf := make([]byte, 64)
				m, err := unix.Lgetxattr(filepath.Join(out, "f"), x.Name, buf)
				if isNotSupported(err) {
					t.Skipf("xattrs not supported here: %v", err)
				}
				if err != nil || string(buf[:m]) != string(x.Value) {
					t.Errorf("xattr %s = %q, %v; want %q", x.Name, buf[:m], err, x.Value)
				}
			}
		})
	}
	t.Run("not a file", func(t *testing.T) {
		w, err := NewWriter(t.TempDir(), WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close() //nolint:errcheck // test cleanup.
		f, err := w.CreateFile("f", &tree.Node{Type: tree.TypeFile})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() //nolint:errcheck // test cleanup.
		if err := w.ApplyMetaFile(f, "f", &tree.Node{Type: tree.TypeSymlink}); !errors.Is(err, ErrTypeMismatch) {
			t.Fatalf("got %v, want ErrTypeMismatch", err)
		}
	})
}
