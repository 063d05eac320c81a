//go:build linux

package fsmeta

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// TestNodeSince checks when a capture reuses an earlier node's extended
// attributes and symlink target (the entry's inode, device, type and change
// time are the earlier node's) and when it reads them again.
func TestNodeSince(t *testing.T) {
	t.Parallel()
	marker := []tree.Xattr{{Name: "user.from-prev", Value: []byte("prev")}}
	tests := []struct {
		name      string
		make      func(t *testing.T, path string)
		change    func(t *testing.T, path string, prev *tree.Node)
		wantReuse bool
	}{
		{"unchanged file", writeFile, func(*testing.T, string, *tree.Node) {}, true},
		{"xattr set since", writeFile, func(t *testing.T, path string, prev *tree.Node) {
			// Set it again until the change time moves past prev's: the
			// kernel keeps it in ticks of a few milliseconds.
			deadline := time.Now().Add(5 * time.Second)
			for i := 0; ; i++ {
				setUserXattr(t, path, "user.new", []byte{byte(i)})
				var st unix.Stat_t
				if err := unix.Lstat(path, &st); err != nil {
					t.Fatal(err)
				}
				if st.Ctim.Nano() != prev.CTime {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("change time did not move in 5 s")
				}
			}
		}, false},
		{"file replaced", writeFile, func(t *testing.T, path string, _ *tree.Node) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path)
		}, false},
		{"other change time", writeFile, func(_ *testing.T, _ string, prev *tree.Node) { prev.CTime-- }, false},
		{"other type", writeFile, func(_ *testing.T, _ string, prev *tree.Node) { prev.Type = tree.TypeFIFO }, false},
		{"unchanged symlink", makeLink, func(*testing.T, string, *tree.Node) {}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "entry")
			tc.make(t, path)
			c := NewCapturer(local.New())
			prev := capture(t, c, path)
			// Mark prev so that a reuse is visible.
			prev.Xattrs = marker
			if prev.Type == tree.TypeSymlink {
				prev.LinkTarget = "from-prev"
			}
			tc.change(t, path, &prev)
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.NodeSince(context.Background(), path, fi, &prev)
			if err != nil {
				t.Fatal(err)
			}
			reused := len(n.Xattrs) == 1 && n.Xattrs[0].Name == marker[0].Name
			if reused != tc.wantReuse {
				t.Errorf("xattrs %v: reused = %v, want %v", n.Xattrs, reused, tc.wantReuse)
			}
			if n.Type == tree.TypeSymlink && (n.LinkTarget == "from-prev") != tc.wantReuse {
				t.Errorf("link target %q: reused = %v, want %v", n.LinkTarget, !tc.wantReuse, tc.wantReuse)
			}
			if fresh := capture(t, c, path); !tc.wantReuse && !equalNodes(n, fresh) {
				t.Errorf("re-read node %+v differs from a fresh capture %+v", n, fresh)
			}
		})
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func makeLink(t *testing.T, path string) {
	t.Helper()
	if err := os.Symlink("target", path); err != nil {
		t.Fatal(err)
	}
}

// equalNodes compares the fields a capture fills.
func equalNodes(a, b tree.Node) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Mode == b.Mode && a.Size == b.Size && a.MTime == b.MTime &&
		a.CTime == b.CTime && a.Inode == b.Inode && a.LinkTarget == b.LinkTarget && equalXattrs(a.Xattrs, b.Xattrs) == nil
}
