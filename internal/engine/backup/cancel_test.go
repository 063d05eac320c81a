package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
)

// TestCancelStopsReadingKnownChunks cancels a backup while it reads a
// 1 TiB sparse file. Its zeros are one chunk seen over and over, so no
// chunk is handed to a blob worker that would notice the cancellation: the
// reading loop itself must, or the run would go on for the whole file
// (and Ctrl-C would wait for it, holding the lock).
func TestCancelStopsReadingKnownChunks(t *testing.T) {
	t.Parallel()
	const size = 1 << 40
	src := t.TempDir()
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r := checktest.Open(t, checktest.NewRepo(t, t.TempDir()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &backup.Progress{}
	// Cancel once some of the file has been read: polled, as the run
	// offers no hook inside its reading loop.
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for progress.Bytes.Load() < 64<<20 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		cancel()
	}()
	_, err = backup.Run(ctx, r, lease(t, r), nil, backup.Options{Path: src, Progress: progress})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("backup.Run = %v, want context.Canceled", err)
	}
	if read := progress.Bytes.Load(); read >= size {
		t.Errorf("read all %d bytes of the file before stopping", read)
	}
}
