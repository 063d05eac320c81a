package restore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// listTree returns every path below dir, slash-separated and sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

// TestRestoreIncludeExclude restores parts of the fixture (a.txt, big.bin,
// dir/b.txt, dir/c.bin, z.txt) chosen by gitignore patterns: exactly the
// selected files and the directories leading to them are written, each
// byte for byte, in both output formats' walk.
func TestRestoreIncludeExclude(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name             string
		include, exclude []string
		path             string
		want             string // comma-separated paths in the output
	}{
		{"include by name at any depth", []string{"*.txt"}, nil, "", "a.txt,dir,dir/b.txt,z.txt"},
		{"include a directory", []string{"dir/"}, nil, "", "dir,dir/b.txt,dir/c.bin"},
		{"include anchored file: no other directory", []string{"/a.txt"}, nil, "", "a.txt"},
		{"include, last match wins", []string{"*.bin", "!big.bin"}, nil, "", "dir,dir/c.bin"},
		{"exclude by name", nil, []string{"*.bin"}, "", "a.txt,dir,dir/b.txt,z.txt"},
		{"exclude a directory", nil, []string{"dir/"}, "", "a.txt,big.bin,z.txt"},
		{"include and exclude", []string{"dir/"}, []string{"c.bin"}, "", "dir,dir/b.txt"},
		{"with -path, paths from the snapshot root", []string{"dir/b.txt"}, nil, "dir/", "dir,dir/b.txt"},
		{"nothing matches", []string{"*.pdf"}, nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, root := f.open(t)
			out := filepath.Join(t.TempDir(), "out")
			opts := restore.Options{Output: out, Include: tc.include, Exclude: tc.exclude, Path: tc.path}
			res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(listTree(t, out), ","); got != tc.want {
				t.Fatalf("restored %q, want %q", got, tc.want)
			}
			files := 0
			for _, rel := range strings.Split(tc.want, ",") {
				if strings.Contains(rel, ".") {
					files++
					wantSame(t, filepath.Join(f.src, rel), filepath.Join(out, rel))
				}
			}
			if res.Files != int64(files) {
				t.Errorf("result counts %d files, want %d", res.Files, files)
			}
			dry, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root,
				restore.Options{Output: out + ".dry", Include: tc.include, Exclude: tc.exclude, Path: tc.path, DryRun: true})
			if err != nil || dry.Files != res.Files || dry.Dirs != res.Dirs {
				t.Errorf("dry run: %v, %d files %d dirs, restore wrote %d and %d", err, dry.Files, dry.Dirs, res.Files, res.Dirs)
			}
		})
	}
}

// TestRestoreBadOptions: bad patterns, unknown modes and -delete with a
// filter are refused before anything is written.
func TestRestoreBadOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name string
		opts restore.Options
	}{
		{"bad include pattern", restore.Options{Include: []string{"[:alpha:]"}}},
		{"comment as exclude", restore.Options{Exclude: []string{"#x"}}},
		{"unknown overwrite mode", restore.Options{Overwrite: "sometimes"}},
		{"delete with include", restore.Options{Delete: true, Include: []string{"*.txt"}}},
		{"delete with exclude", restore.Options{Delete: true, Exclude: []string{"*.txt"}}},
		{"overwrite into a zip", restore.Options{Format: restore.FormatZip, Overwrite: restore.OverwriteAlways}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, root := f.open(t)
			tc.opts.Output = filepath.Join(t.TempDir(), "out")
			_, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, tc.opts)
			if !errors.Is(err, restore.ErrBadOptions) {
				t.Fatalf("got %v, want %v", err, restore.ErrBadOptions)
			}
			if _, err := os.Lstat(tc.opts.Output); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("refused restore created its output: %v", err)
			}
		})
	}
}

// wantSame fails unless the two files have the same content.
func wantSame(t *testing.T, want, got string) {
	t.Helper()
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s differs from %s", got, want)
	}
}
