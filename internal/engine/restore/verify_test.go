package restore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// backedUp backs up files (name: size) and returns the repository, the
// snapshot's tree, a shared lease and the source directory.
func backedUp(t *testing.T, files map[string]int) (*repo.Repository, id.ID, *lock.Lock, string) {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	seed := uint64(1)
	for name, size := range files {
		checktest.WriteFile(t, src, name, seed, size)
		seed++
	}
	r, root, st := backupOf(t, src)
	l, err := lock.AcquireShared(ctx, st, "restore", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r, root, l, src
}

// TestRestoreVerify: -verify reads back every written file. A clean
// restore verifies them all; files changed on disk after being written
// (here by the test, between the writes and the verification) are each
// named, and the restore fails with restore.ErrVerify.
func TestRestoreVerify(t *testing.T) {
	t.Parallel()
	files := map[string]int{"a.txt": 100, "big.bin": 300 << 10, "dir/b.txt": 5000, "empty": 0}
	r, root, l, _ := backedUp(t, files)
	tests := []struct {
		name    string
		corrupt func(out string) error
		want    []string
	}{
		{"clean", func(string) error { return nil }, nil},
		{"one byte flipped, size kept", func(out string) error { return flipByte(filepath.Join(out, "big.bin"), 200<<10) }, []string{"big.bin"}},
		{"truncated, and replaced by a symlink", func(out string) error {
			if err := os.Truncate(filepath.Join(out, "dir/b.txt"), 10); err != nil {
				return err
			}
			if err := os.Remove(filepath.Join(out, "a.txt")); err != nil {
				return err
			}
			return os.Symlink("big.bin", filepath.Join(out, "a.txt"))
		}, []string{"a.txt", "dir/b.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var hookErr error
			opts := restore.Options{Output: out, Verify: true}
			restore.SetBeforeVerify(&opts, func() { hookErr = tc.corrupt(out) })
			res, err := restore.Run(context.Background(), r, l, root, opts)
			if hookErr != nil {
				t.Fatal(hookErr)
			}
			if (len(tc.want) > 0) != errors.Is(err, restore.ErrVerify) || (len(tc.want) == 0 && err != nil) {
				t.Fatalf("restore: %v", err)
			}
			slices.Sort(res.VerifyFailed)
			if !slices.Equal(res.VerifyFailed, tc.want) || res.Verified != int64(len(files)) {
				t.Errorf("verified %d, failed %q; want %d, %q", res.Verified, res.VerifyFailed, len(files), tc.want)
			}
		})
	}
}

func flipByte(path string, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		f.Close() //nolint:errcheck // already failing
		return err
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		f.Close() //nolint:errcheck // already failing
		return err
	}
	return f.Close()
}
