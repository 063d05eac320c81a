package restore_test

import (
	"archive/zip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/store"
)

// onPackRead runs fn once, when the blob at off in pack key is first read:
// the moment a restore is in the middle of a file.
type onPackRead struct {
	store.Store
	key  string
	off  int64
	once sync.Once
	fn   func()
}

func (s *onPackRead) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if key == s.key && off == s.off {
		s.once.Do(s.fn)
	}
	return s.Store.GetRange(ctx, key, off, n)
}

// TestZipRestoreAllOrNothing: a zip restore names its file only when it
// succeeded. A damaged pack, Ctrl-C in the middle of a file, or a file
// that appears at the output path meanwhile leave the output directory as
// it was: no zip, no temporary file, the appeared file untouched.
func TestZipRestoreAllOrNothing(t *testing.T) {
	t.Parallel()
	const appeared = "someone else's file"
	for _, tc := range []struct {
		name string
		// damage runs before the restore; during, when big.bin's first
		// blob is read. Either may be nil.
		damage func(t *testing.T, f *fixture)
		during func(cancel context.CancelFunc, out string)
		want   error
	}{
		{"complete", nil, nil, nil},
		{"damaged pack", func(t *testing.T, f *fixture) {
			path, loc := f.locate(t, f.node(t, "dir/c.bin").Content[0])
			flip(t, path, int64(loc.Offset)+int64(loc.Length)/2)
		}, nil, restore.ErrDamaged},
		{"interrupted in a file", nil, func(cancel context.CancelFunc, _ string) { cancel() }, context.Canceled},
		{"output appears meanwhile", nil, func(_ context.CancelFunc, out string) {
			if err := os.WriteFile(out, []byte(appeared), 0o600); err != nil {
				panic(err) // the test's own setup failed
			}
		}, restore.ErrOutputExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tc.damage != nil {
				tc.damage(t, f)
			}
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.zip")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st := f.st
			if tc.during != nil {
				path, loc := f.locate(t, f.node(t, "big.bin").Content[0])
				key, err := filepath.Rel(f.dir, path)
				if err != nil {
					t.Fatal(err)
				}
				st = &onPackRead{Store: f.st, key: filepath.ToSlash(key), off: int64(loc.Offset), fn: func() { tc.during(cancel, out) }}
			}
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := r.LoadSnapshot(ctx, f.sid)
			if err != nil {
				t.Fatal(err)
			}
			_, err = restore.Run(ctx, r, checktest.Lease(t, st), s.Tree, restore.Options{Output: out, Format: restore.FormatZip, Warnf: t.Logf})
			if !errors.Is(err, tc.want) {
				t.Fatalf("zip restore: %v, want %v", err, tc.want)
			}
			ents, err := os.ReadDir(outDir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			switch {
			case tc.want == nil:
				if len(names) != 1 || names[0] != "out.zip" {
					t.Fatalf("output directory holds %q, want [out.zip]", names)
				}
				zr, err := zip.OpenReader(out)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(zr.File); n != len(f.files)+1 { // and dir/
					t.Errorf("the zip has %d entries, want %d", n, len(f.files)+1)
				}
				if err := zr.Close(); err != nil {
					t.Error(err)
				}
			case errors.Is(tc.want, restore.ErrOutputExists):
				got, err := os.ReadFile(out)
				if len(names) != 1 || err != nil || string(got) != appeared {
					t.Fatalf("output directory holds %q, out.zip %q (%v); want only the file that appeared, untouched", names, got, err)
				}
			case len(names) != 0:
				t.Fatalf("a failed zip restore left %q", names)
			}
		})
	}
}

// TestZipRestoreMakesNoDirectory: a zip restore into a directory that does
// not exist fails, and creates none.
func TestZipRestoreMakesNoDirectory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r, root := f.open(t)
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: filepath.Join(missing, "out.zip"), Format: restore.FormatZip, Warnf: t.Logf})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("zip restore into a missing directory: %v, want ErrNotExist", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the restore created %s (%v)", missing, err)
	}
}
