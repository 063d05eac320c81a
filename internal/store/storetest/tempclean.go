package storetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// TempFile is a file a test plants in a store's directory, and whether
// RemoveStaleTemp must remove it.
type TempFile struct {
	Rel     string // slash-separated, relative to the store's root
	MTime   time.Time
	Removed bool
}

// RunTempCleaner checks RemoveStaleTemp on a store whose directory the test
// can reach: plant writes a file at rel with mtime, exists reports whether
// rel is still there. Old temp files go, a fresh one and other hidden files
// stay, and objects are untouched.
func RunTempCleaner(t *testing.T, st store.Store, plant func(rel string, mtime time.Time), exists func(rel string) bool) {
	t.Helper()
	ctx := context.Background()
	tc, ok := st.(store.TempCleaner)
	if !ok {
		t.Fatalf("%s does not implement store.TempCleaner", store.Describe(st))
	}
	mustPut(t, st, "data/ab/pack", []byte("p"))
	old := time.Now().Add(-48 * time.Hour)
	files := []TempFile{
		{"data/ab/.tmp-0123456789abcdef", old, true},
		{".tmp-fedcba9876543210", old, true},
		{"data/ab/.tmp-aaaaaaaaaaaaaaaa", time.Now(), false},
		{"data/ab/.other", old, false},
	}
	for _, f := range files {
		plant(f.Rel, f.MTime)
	}
	n, err := tc.RemoveStaleTemp(ctx, time.Now().Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("RemoveStaleTemp = %d, %v; want 2 removed", n, err)
	}
	for _, f := range files {
		if gone := !exists(f.Rel); gone != f.Removed {
			t.Errorf("%s: removed = %v, want %v", f.Rel, gone, f.Removed)
		}
	}
	if got := mustGet(t, st, "data/ab/pack"); string(got) != "p" {
		t.Fatalf("object changed to %q", got)
	}
}

// PlantIn returns a RunTempCleaner plant function for a store whose root is
// dir on this machine's disk.
func PlantIn(t *testing.T, dir string) func(rel string, mtime time.Time) {
	return func(rel string, mtime time.Time) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// ExistsIn returns a RunTempCleaner exists function for a store whose root
// is dir on this machine's disk.
func ExistsIn(dir string) func(rel string) bool {
	return func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		return !errors.Is(err, os.ErrNotExist)
	}
}
