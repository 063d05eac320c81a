package backup_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// TestRootMetadata: the snapshot records the source directory's own mode and
// mtime, and a whole restore into a directory it creates gives them back;
// an existing output directory keeps its own.
func TestRootMetadata(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o710); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1_600_000_000, 123_456_700) // Windows keeps 100 ns
	if err := os.Chtimes(src, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	st := checktest.NewRepo(t, t.TempDir())
	res, _, err := run(t, st, src, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Windows has no mode bits: a directory is recorded with the usual
	// 0755, and Go shows every directory as 0777.
	recorded, created, existing := os.FileMode(0o710), os.FileMode(0o710), os.FileMode(0o755)
	if runtime.GOOS == "windows" {
		recorded, created, existing = 0o755, 0o777, 0o777
	}
	if res.Snapshot.Root == nil || res.Snapshot.Root.Mode != uint32(recorded) || res.Snapshot.Root.MTime != mtime.UnixNano() {
		t.Fatalf("snapshot root metadata = %+v", res.Snapshot.Root)
	}
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		existing  bool
		wantMode  os.FileMode
		wantMtime bool
	}{
		{"created by the restore", false, created, true},
		{"existing directory", true, existing, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if c.existing {
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			opts := restore.Options{Output: out, RootMeta: res.Snapshot.Root}
			if _, err := restore.Run(ctx, r, checktest.Lease(t, st), res.Snapshot.Tree, opts); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != c.wantMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), c.wantMode)
			}
			if got := fi.ModTime().Equal(mtime); got != c.wantMtime {
				t.Errorf("mtime %v restored = %v, want %v", fi.ModTime(), got, c.wantMtime)
			}
		})
	}
}
