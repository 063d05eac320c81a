package restore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
)

// TestRestoreDamagedDiskIndex: a restore whose on-disk index (the local
// file derived from the index files) is damaged past what opening it
// checks restores every file (the file is rebuilt) and reports nothing
// damaged, and the rebuilt file stays for the next run; a rebuild that
// cannot read the index files fails the restore naming the local file.
// The old reader took the damaged block's blobs for missing.
func TestRestoreDamagedDiskIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storeDir, src := t.TempDir(), t.TempDir()
	st := checktest.NewRepo(t, storeDir)
	for i := range 6 {
		checktest.WriteFile(t, src, fmt.Sprintf("f%d", i), uint64(i), 1000+i*40_000) // up to a dozen chunks
	}
	sid := checktest.Backup(t, st, src)
	tests := []struct {
		name string
		opts restore.Options
	}{
		{"dir", restore.Options{Format: restore.FormatDir}},
		{"zip", restore.Options{Format: restore.FormatZip}},
		{"dry run", restore.Options{Format: restore.FormatDir, DryRun: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, path := repotest.OpenDamaged(t, func() *repo.Repository { return checktest.Open(t, st) })
			if tt.opts.Format == restore.FormatDir && !tt.opts.DryRun {
				checktest.RestoreEqualWith(t, st, r, sid, src)
			} else {
				if _, err := r.LoadIndex(ctx); err != nil {
					t.Fatal(err)
				}
				s, err := r.LoadSnapshot(ctx, sid)
				if err != nil {
					t.Fatal(err)
				}
				opts := tt.opts
				opts.Output = filepath.Join(t.TempDir(), "out.zip")
				res, err := restore.Run(ctx, r, checktest.Lease(t, st), s.Tree, opts)
				if err != nil || len(res.Damaged) > 0 || res.Files != 6 {
					t.Fatalf("restore: %v; %d files, damaged %v", err, res.Files, res.Damaged)
				}
			}
			if err := r.Index().Err(); err != nil {
				t.Fatal(err)
			}
			if files := repotest.DiskIndexFiles(t, filepath.Dir(path)); len(files) != 1 || files[0] != path {
				t.Fatalf("on-disk index files %v, want the rebuilt %s", files, path)
			}
		})
	}
	t.Run("rebuild fails", func(t *testing.T) {
		// Last: it deletes the index files.
		r, path := repotest.OpenDamaged(t, func() *repo.Repository { return checktest.Open(t, st) })
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := r.LoadSnapshot(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		repotest.DeleteIndexFiles(t, r, storeDir)
		_, err = restore.Run(ctx, r, checktest.Lease(t, st), s.Tree, restore.Options{Output: t.TempDir(), Format: restore.FormatDir})
		if !errors.Is(err, index.ErrDiskCorrupt) || errors.Is(err, repo.ErrBlobNotFound) || !strings.Contains(err.Error(), path) {
			t.Fatalf("restore: %v; want the damaged %s named", err, path)
		}
		t.Logf("restore: %v", err)
	})
}
