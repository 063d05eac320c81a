package restore_test

import (
	"archive/zip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted restores the crafted snapshots to a directory, to a zip file
// and as a dry run: the one 100,000 levels deep and the one shared 2^40
// ways fail before anything is written; the twin directories (one tree)
// are both restored whole.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	lease, err := lock.AcquireShared(context.Background(), r.Rec.Store, "restore", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lease.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	tests := []struct {
		name string
		snap snapshot.WithID
		path string
		want error
	}{
		{"deep", h.Deep, "", tree.ErrTooDeep},
		{"deep from a subdirectory", h.Deep, "d/d", tree.ErrTooDeep},
		{"shared", h.Shared, "", tree.ErrTooManyEntries},
		{"shared from a subdirectory", h.Shared, "a/b", tree.ErrTooManyEntries},
	}
	for _, tc := range tests {
		for _, format := range []string{restore.FormatDir, restore.FormatZip, "dry run"} {
			t.Run(tc.name+" "+format, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				opts := restore.Options{Output: out, Format: format, Path: tc.path}
				if format == "dry run" {
					opts.Format, opts.DryRun = restore.FormatDir, true
				}
				_, err := restore.Run(walktest.Guard(t), r.Repository, lease, tc.snap.Tree, opts)
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				if format == restore.FormatDir {
					if entries, _ := os.ReadDir(out); len(entries) > 1 { // -path's first parent at most
						t.Errorf("%d entries written before the error", len(entries))
					}
				}
				if format == restore.FormatZip {
					if fi, err := os.Stat(out); err == nil && fi.Size() > 1024 {
						t.Errorf("%d bytes written before the error", fi.Size())
					}
				}
			})
		}
	}

	t.Run("twins", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		res, err := restore.Run(walktest.Guard(t), r.Repository, lease, h.Twins.Tree, restore.Options{Output: out})
		if err != nil {
			t.Fatal(err)
		}
		if res.Files != 4 || res.Dirs != 4 {
			t.Errorf("%d files, %d dirs restored; want 4 and 4", res.Files, res.Dirs)
		}
		for name, want := range map[string]string{"a/f": "twin\n", "a/d/g": "g\n", "b/f": "twin\n", "b/d/g": "g\n"} {
			if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != want {
				t.Errorf("%s: %q, %v; want %q", name, got, err, want)
			}
		}
		zipOut := filepath.Join(t.TempDir(), "out.zip")
		if _, err := restore.Run(walktest.Guard(t), r.Repository, lease, h.Twins.Tree, restore.Options{Output: zipOut, Format: restore.FormatZip}); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.OpenReader(zipOut)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close() //nolint:errcheck // read only
		if len(zr.File) != 8 {
			t.Errorf("%d zip entries, want 8 (4 files, 4 directories)", len(zr.File))
		}
	})
}
