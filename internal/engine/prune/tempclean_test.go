package prune_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
)

// TestPruneRemovesStaleTempFiles: temp files a crashed writer left more than
// a day before prune began go; a fresh one (a writer still at work) stays,
// and the repository stays healthy.
func TestPruneRemovesStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 300<<10)
	sid := checktest.Backup(t, st, src)
	packDirs, err := filepath.Glob(filepath.Join(dir, "data", "*"))
	if err != nil || len(packDirs) == 0 {
		t.Fatalf("no pack directory: %v", err)
	}
	stale := filepath.Join(packDirs[0], ".tmp-0000000000000001")
	fresh := filepath.Join(packDirs[0], ".tmp-0000000000000002")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if res.TempFilesRemoved != 1 {
		t.Fatalf("removed %d temp files, want 1", res.TempFilesRemoved)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
	mustCheck(t, st)
	checktest.RestoreEqual(t, st, sid, src)
}
