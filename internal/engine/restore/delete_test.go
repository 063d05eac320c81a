package restore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// TestRestoreDelete restores over a tree holding extra entries: a file, a
// directory with contents, a leftover temporary file and symlinks leading
// outside the output. -delete removes exactly the extras of the restored
// tree (with -path only below it), never what a symlink points to.
func TestRestoreDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name, path string
		want       string // the output afterwards, comma-separated
		deleted    int64
		listed     string // what a dry run says it would delete, comma-separated
	}{
		{"whole snapshot", "", "a.txt,big.bin,dir,dir/b.txt,dir/c.bin,z.txt", 5,
			".cloudstic-restore-0123456789abcdef.tmp,extra.txt,link-out,dir/extra,dir/link-out"},
		{"-path dir/", "dir/", "a.txt,big.bin,dir,dir/b.txt,dir/c.bin,extra.txt,link-out,z.txt", 2,
			"dir/extra,dir/link-out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, root := f.open(t)
			out := filepath.Join(t.TempDir(), "out")
			if _, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: out}); err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			checktest.WriteFile(t, outside, "keep/me.txt", 9, 100)
			checktest.WriteFile(t, out, "extra.txt", 10, 100)
			checktest.WriteFile(t, out, "dir/extra/deep.txt", 11, 100)
			checktest.WriteFile(t, out, ".cloudstic-restore-0123456789abcdef.tmp", 12, 100)
			for _, link := range []string{"link-out", "dir/link-out"} {
				if err := os.Symlink(filepath.Join(outside, "keep"), filepath.Join(out, link)); err != nil {
					t.Fatal(err)
				}
			}
			opts := restore.Options{Output: out, Path: tc.path, Delete: true, Overwrite: restore.OverwriteIfChanged}
			before := strings.Join(listTree(t, out), ",")
			dry := opts
			dry.DryRun = true
			res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, dry)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.DeletePaths, ","); got != tc.listed || res.Deleted != tc.deleted {
				t.Errorf("dry run would delete %d: %q, want %d: %q", res.Deleted, got, tc.deleted, tc.listed)
			}
			if after := strings.Join(listTree(t, out), ","); after != before {
				t.Errorf("the dry run changed the output: %q, was %q", after, before)
			}
			res, err = restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if tc.path != "" {
				want = ".cloudstic-restore-0123456789abcdef.tmp," + want
			}
			if got := strings.Join(listTree(t, out), ","); got != want {
				t.Errorf("output %q, want %q", got, want)
			}
			if res.Deleted != tc.deleted {
				t.Errorf("%d deleted, want %d", res.Deleted, tc.deleted)
			}
			if _, err := os.Stat(filepath.Join(outside, "keep/me.txt")); err != nil {
				t.Errorf("a file outside the output, behind a symlink, was touched: %v", err)
			}
			for _, rel := range f.files {
				wantSame(t, filepath.Join(f.src, rel), filepath.Join(out, rel))
			}
		})
	}
}
