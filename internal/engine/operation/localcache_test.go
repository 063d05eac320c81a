package operation_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo/cache"
)

// TestLocalStoreCache: a repository in a local store keeps the snapshot
// heads file in the cache directory, so that a backup into a repository of
// thousands of snapshots (many hosts into one disk or NAS) does not read
// every snapshot to find its parent, but never a copy of a snapshot, an
// index file or a pack: those are as cheap to read where they are.
func TestLocalStoreCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 10<<10)
	cacheDir := t.TempDir()
	opts := options(dir)
	opts.Cache = &cache.Options{Dir: cacheDir}
	for range 2 {
		r, err := operation.Open(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = operation.Backup(ctx, r, backup.Options{Path: src}, nil)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var heads int
	var copies []string
	err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(cacheDir, p) // p is under cacheDir
		switch {
		case d.Name() == "snapshot-heads":
			heads++
		case strings.Contains(filepath.ToSlash(rel), "/snapshots/"),
			strings.Contains(filepath.ToSlash(rel), "/index/"),
			strings.Contains(filepath.ToSlash(rel), "/data/"):
			copies = append(copies, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if heads != 1 {
		t.Errorf("%d snapshot heads files in the cache, want 1", heads)
	}
	if len(copies) > 0 {
		t.Errorf("the cache holds copies of a local store's objects: %v", copies)
	}
}
