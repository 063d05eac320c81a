//go:build linux

package fsmeta

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestSDDLNotAppliedOnUnix: a Windows security descriptor in a snapshot
// is ignored by a restore here: not written as an xattr, not warned of
// per file, and the node's own xattrs are still set.
func TestSDDLNotAppliedOnUnix(t *testing.T) {
	const sddl = "O:S-1-5-21-1-2-3-1001G:S-1-5-21-1-2-3-513D:P(A;;FA;;;WD)"
	tests := []struct {
		name string
		typ  tree.Type
	}{
		{"file", tree.TypeFile},
		{"dir", tree.TypeDir},
		{"root", tree.TypeDir},
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
			n := tree.Node{Name: "e", Type: tt.typ, Mode: 0o755, MTime: 1_000_000_000, SDDL: sddl,
				Xattrs: []tree.Xattr{{Name: "user.k", Value: []byte("v")}}}
			path := filepath.Join(out, "e")
			switch tt.name {
			case "file":
				f, err := w.CreateFile("e", &n)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.ApplyMetaFile(f, "e", &n); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			case "dir":
				if err := w.Mkdir("e", &n); err != nil {
					t.Fatal(err)
				}
				if err := w.ApplyMeta("e", &n); err != nil {
					t.Fatal(err)
				}
			case "root":
				path = out
				if err := w.ApplyRootMeta(&n); err != nil {
					t.Fatal(err)
				}
			}
			buf := make([]byte, 1024)
			size, err := unix.Llistxattr(path, buf)
			if isNotSupported(err) {
				t.Skipf("xattrs not supported here: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Split(strings.TrimRight(string(buf[:size]), "\x00"), "\x00")
			if len(names) != 1 || names[0] != "user.k" {
				t.Errorf("xattrs %q, want only user.k", names)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
		})
	}
}
