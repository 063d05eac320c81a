package sftp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// TestRemoveStaleTemp plants temp files in the repository directory (the
// server runs on this machine) and checks only the old ones go.
func TestRemoveStaleTemp(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	s := mustOpen(t, cfg)
	if _, err := s.Put(ctx, "data/ab/pack", []byte("p"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	files := []struct {
		rel     string
		mtime   time.Time
		removed bool
	}{
		{"data/ab/.tmp-0123456789abcdef", old, true},
		{".tmp-fedcba9876543210", old, true},
		{"data/ab/.tmp-aaaaaaaaaaaaaaaa", time.Now(), false},
		{"data/ab/.other", old, false},
	}
	for _, f := range files {
		p := filepath.Join(cfg.Path, filepath.FromSlash(f.rel))
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.RemoveStaleTemp(ctx, time.Now().Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("RemoveStaleTemp = %d, %v; want 2 removed", n, err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(cfg.Path, filepath.FromSlash(f.rel)))
		if gone := errors.Is(err, os.ErrNotExist); gone != f.removed {
			t.Errorf("%s: removed = %v, want %v", f.rel, gone, f.removed)
		}
	}
	if _, err := s.Get(ctx, "data/ab/pack"); err != nil {
		t.Fatalf("object damaged: %v", err)
	}
}
