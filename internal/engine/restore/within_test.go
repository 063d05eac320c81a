package restore

import (
	"archive/zip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestRestoreWithin: with Options.Within, a directory or zip restore lands
// inside that directory, and one whose way to the output leaves it (a
// symbolic link to elsewhere, as a local attacker could swap in after the
// dashboard checked the target, or "..") fails and writes nothing outside.
func TestRestoreWithin(t *testing.T) {
	ctx := context.Background()
	storeDir, src := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, l, res := backedUpInto(t, local.New(storeDir), src)
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	within, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer within.Close() //nolint:errcheck // a directory handle
	for _, tc := range []struct {
		name, output, format string
		ok                   bool
	}{
		{"directory", "a/b", FormatDir, true},
		{"the root itself", ".", FormatDir, true},
		{"zip file", "out.zip", FormatZip, true},
		{"directory through a link", "link/x", FormatDir, false},
		{"zip through a link", "link/x.zip", FormatZip, false},
		{"directory climbing out", "../x", FormatDir, false},
		{"zip climbing out", "../x.zip", FormatZip, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(ctx, r, l, res.Snapshot.Tree, Options{Output: tc.output, Format: tc.format, Within: within})
			if !tc.ok {
				if err == nil {
					t.Fatal("restored, want refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(root, tc.output)
			if tc.format == FormatZip {
				zr, err := zip.OpenReader(target)
				if err != nil {
					t.Fatal(err)
				}
				defer zr.Close() //nolint:errcheck // read only
				if len(zr.File) != 1 || zr.File[0].Name != "f" {
					t.Fatalf("zip holds %v, want f", zr.File)
				}
				return
			}
			if data, err := os.ReadFile(filepath.Join(target, "f")); err != nil || string(data) != "data" {
				t.Fatalf("restored f: %q, %v", data, err)
			}
		})
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("restores wrote outside the directory: %v %v", entries, err)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(root), "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a restore climbed out of the directory: %v", err)
	}
	_, err = Run(ctx, r, l, res.Snapshot.Tree, Options{Output: "d", DryRun: true, Within: within})
	if !errors.Is(err, ErrBadOptions) {
		t.Fatalf("dry run within a directory: %v, want %v", err, ErrBadOptions)
	}
}
