package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/test/winetest"
)

// TestRoot: a root is made absolute and followed when it is a symlink; a
// file or a missing path is refused.
func TestRoot(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(real) // t.TempDir may be below a symlink
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       error
	}{
		{"dir", filepath.Join(dir, "real"), nil},
		{"symlink", filepath.Join(dir, "link"), nil}, // made only where links can be
		{"file", filepath.Join(dir, "file"), source.ErrNotDir},
		{"missing", filepath.Join(dir, "none"), fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "symlink" {
				winetest.SkipWithoutSymlinks(t)
				if err := os.Symlink("real", tt.path); err != nil {
					t.Fatal(err)
				}
			}
			root, err := New().Root(context.Background(), tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Root(%s) = %v, want %v", tt.path, err, tt.want)
			}
			if err != nil {
				return
			}
			if root.Path != tt.path || root.Real != real || root.URI != "local:"+tt.path || !root.Info.IsDir() {
				t.Errorf("Root(%s) = %+v, want Real %s", tt.path, root, real)
			}
		})
	}
}
