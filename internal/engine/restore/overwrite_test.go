//go:build unix

package restore_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// inode is the inode number of path: a rewritten file (a new file renamed
// into place) gets a new one, a file left alone keeps its own.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRestoreOverwrite restores the fixture into a copy of itself where
// a.txt has other content (and size), z.txt is older and dir/b.txt newer
// than in the snapshot, then restores again with each -overwrite mode:
// the files counted as written, replaced, unchanged and skipped, the files
// rewritten (new inode) and the content afterwards are checked.
func TestRestoreOverwrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	past, future := time.Unix(1e9, 0), time.Now().Add(24*time.Hour)
	tests := []struct {
		mode                                restore.Overwrite
		written, replaced, unchanged, skips int64
		rewritten                           []string // files whose inode changes
		stale                               []string // files still differing from the source
	}{
		{restore.OverwriteNever, 0, 0, 0, 5, nil, []string{"a.txt"}},
		{restore.OverwriteAlways, 5, 5, 0, 0, []string{"a.txt", "big.bin", "dir/b.txt", "dir/c.bin", "z.txt"}, nil},
		{restore.OverwriteIfChanged, 3, 3, 2, 0, []string{"a.txt", "dir/b.txt", "z.txt"}, nil},
		{restore.OverwriteIfNewer, 1, 1, 0, 4, []string{"z.txt"}, []string{"a.txt"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			r, root := f.open(t)
			out := filepath.Join(t.TempDir(), "out")
			if _, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: out}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "a.txt"), []byte("edited since"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(out, "a.txt"), future, future); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(out, "z.txt"), past, past); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(out, "dir/b.txt"), future, future); err != nil {
				t.Fatal(err)
			}
			before := map[string]uint64{}
			for _, rel := range f.files {
				before[rel] = inode(t, filepath.Join(out, rel))
			}
			res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: out, Overwrite: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != tc.written || res.Replaced != tc.replaced || res.Unchanged != tc.unchanged || int64(len(res.Skipped)) != tc.skips {
				t.Errorf("written %d, replaced %d, unchanged %d, skipped %q; want %d, %d, %d, %d",
					res.Files, res.Replaced, res.Unchanged, res.Skipped, tc.written, tc.replaced, tc.unchanged, tc.skips)
			}
			rewritten := map[string]bool{}
			for _, rel := range tc.rewritten {
				rewritten[rel] = true
			}
			stale := map[string]bool{}
			for _, rel := range tc.stale {
				stale[rel] = true
			}
			for _, rel := range f.files {
				if got := inode(t, filepath.Join(out, rel)) != before[rel]; got != rewritten[rel] {
					t.Errorf("%s rewritten: %v, want %v", rel, got, rewritten[rel])
				}
				if !stale[rel] {
					wantSame(t, filepath.Join(f.src, rel), filepath.Join(out, rel))
				}
			}
			if tc.mode == restore.OverwriteIfChanged || tc.mode == restore.OverwriteAlways {
				// The metadata is the snapshot's again, also of files kept.
				for _, rel := range f.files {
					src, _ := os.Lstat(filepath.Join(f.src, rel))
					got, _ := os.Lstat(filepath.Join(out, rel))
					if !src.ModTime().Equal(got.ModTime()) || src.Mode() != got.Mode() {
						t.Errorf("%s: mtime %v mode %v, want %v %v", rel, got.ModTime(), got.Mode(), src.ModTime(), src.Mode())
					}
				}
			}
			wantNoTemp(t, out)
		})
	}
}

// wantNoTemp fails if a temporary file of the restore is left in dir.
func wantNoTemp(t *testing.T, dir string) {
	t.Helper()
	for _, rel := range listTree(t, dir) {
		if m, _ := filepath.Match(".cloudstic-restore-*.tmp", filepath.Base(rel)); m {
			t.Errorf("temporary file %s left behind", rel)
		}
	}
}

// TestRestoreOverwriteTypes: entries of another type in the way. A file
// where the snapshot has a directory is replaced by -overwrite always; a
// directory where it has a file is kept (and reported) unless -delete.
func TestRestoreOverwriteTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, del := range []bool{false, true} {
		r, root := f.open(t)
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, "dir"), []byte("a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(out, "a.txt", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		opts := restore.Options{Output: out, Overwrite: restore.OverwriteAlways, Delete: del}
		res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, opts)
		if err != nil {
			t.Fatal(err)
		}
		wantSame(t, filepath.Join(f.src, "dir/b.txt"), filepath.Join(out, "dir/b.txt"))
		fi, err := os.Lstat(filepath.Join(out, "a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if del != fi.Mode().IsRegular() || (!del && len(res.Skipped) != 1) {
			t.Errorf("-delete %v: a.txt is %v, skipped %q", del, fi.Mode(), res.Skipped)
		}
	}
}
